/* sheaf_main.c - the `sheaf` tool: dispatch to subcommands, or to the SIONlib
 * compatible front ends when called as siondump, sioncat, ... (symlinks). */
#include "common.h"
#include <string.h>

static void usage(FILE *o)
{
    fprintf(o, "usage: sheaf <command> [options] ...\n"
               "commands:\n"
               "  dump [--json] [-a|--all-blocks] FILE      show the container's metadata\n"
               "  cat [-t TASK] [-b BLOCK] [-o OUT] FILE     write raw task payload\n"
               "  split [-d DIGITS] [-g] [--force] FILE OUTDIR_OR_PREFIX\n"
               "                                             one file per task\n"
               "  defrag [-q BYTES] FILE OUT                 rewrite with one block per task\n"
               "  verify FILE                                check structure and read all data\n"
               "  recover [--salvage] [--dry-run] FILE       close a container whose writers crashed\n"
               "  ckpt list|info|verify|extract ...          checkpoints of libsheaf_ckpt\n"
               "  stats run|env|summary ...                  job I/O monitoring (doc/monitor.md)\n"
               "  version                                    print versions\n"
               "  help                                       this text\n"
               "Run 'sheaf <command> --help' for the options of a command.\n"
               "Also installed as siondump, sioncat, sionsplit, siondefrag, sionversion.\n");
}

static int version(void)
{
    int ma, mi, pa, ff;
    sion_get_version(&ma, &mi, &pa, &ff);
    printf("sheaf %s (SIONlib %d.%d.%d compatible, file format version %d)\n", SHEAF_VERSION_STRING, ma, mi, pa, ff);
    return TOOL_OK;
}

int main(int argc, char **argv)
{
    const char *base = argc > 0 && argv[0] ? strrchr(argv[0], '/') : NULL;
    base = base ? base + 1 : (argc > 0 && argv[0] ? argv[0] : "sheaf");
    int rc = compat_main(base, argc, argv);
    if (rc >= 0)
        return rc;
    tool_prog = "sheaf";
    if (argc < 2) {
        usage(stderr);
        return TOOL_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
        usage(stdout);
        return TOOL_OK;
    }
    if (!strcmp(cmd, "version") || !strcmp(cmd, "--version") || !strcmp(cmd, "-V"))
        return version();
    static const struct {
        const char *name;
        int (*fn)(int, char **);
    } cmds[] = {
        {"dump", cmd_dump},     {"cat", cmd_cat},         {"split", cmd_split}, {"defrag", cmd_defrag},
        {"verify", cmd_verify}, {"recover", cmd_recover}, {"ckpt", cmd_ckpt},   {"stats", cmd_stats},
    };
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
        if (!strcmp(cmd, cmds[i].name)) {
            static char prog[64];
            snprintf(prog, sizeof prog, "sheaf %s", cmds[i].name);
            tool_prog = prog;
            return cmds[i].fn(argc - 1, argv + 1);
        }
    fprintf(stderr, "sheaf: unknown command '%s'\n", cmd);
    usage(stderr);
    return TOOL_USAGE;
}
