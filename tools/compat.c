/* compat.c - SIONlib 1.7 command-line front ends: siondump, sioncat,
 * sionsplit, siondefrag, sionversion (the sheaf binary called through a
 * symlink of that name). Option syntax as SIONlib: one dash + one letter,
 * values in the next argument, file argument(s) last. -V prints the utility
 * version to stderr and exits 1; -h prints usage. */
#include "common.h"
#include <stdlib.h>
#include <string.h>

static const char *argv0;

static int print_V(void)
{
    fprintf(stderr, "SIONlib utility %s (Version %d.%dp%d, fileformat version %d)\n", argv0, SION_MAIN_VERSION,
            SION_SUB_VERSION, SION_VERSION_PATCHLEVEL, SION_FILEFORMAT_VERSION);
    return 1;
}

static int bad_value(const char *opt, const char *v)
{
    fprintf(stderr, "%s: invalid value '%s' for %s\n", argv0, v ? v : "(missing)", opt);
    return 1;
}

/* ---- siondump ----
 * As SIONlib's: every argument starting with '-' is an option (only its first
 * letter counts, so "-al" is "-a"), the file is the last argument; usage (also
 * for -h) goes to stderr with exit code 1. */
static int usage_dump(void)
{
    fprintf(stderr, "Usage: %s options <sionfn>\n\n", argv0);
    fprintf(stderr, "Dump meta data information of SIONlib file <sionfn>.\n\n");
    fprintf(stderr, "Options:\n");
    fprintf(stderr, "  [-a]   print all information about all blocks\n");
    fprintf(stderr, "  [-m]   print all mapping information\n");
    fprintf(stderr, "  [-M]   print all mapping information (table) \n");
    fprintf(stderr, "  [-l]   print all sizes in number of bytes\n");
    fprintf(stderr, "  [-k]   print key-value statistic for each task\n");
    fprintf(stderr, "  [-K]   print key-value list for each task\n");
    fprintf(stderr, "  [-S]   print size of internal data structure in memory\n");
    fprintf(stderr, "  [-V]   show version number of SIONlib\n");
    fprintf(stderr, "  [-v]   verbose mode\n");
    fprintf(stderr, "  [-h]   show this help\n");
    return 1;
}

static int main_dump(int argc, char **argv)
{
    int a = 0, l = 0, m = 0, M = 0, k = 0, K = 0, S = 0, v = 0;
    if (argc < 2)
        return usage_dump();
    for (int i = 1; i < argc; i++) {
        if (argv[i][0] != '-')
            continue;
        switch (argv[i][1]) {
        case 'a': a = 1; break;
        case 'l': l = 1; break;
        case 'm': m = 1; break;
        case 'M': M = 1; break;
        case 'k': k = 1; break;
        case 'K': K = 1; break;
        case 'S': S = 1; break;
        case 'v': v = 1; break;
        case 'V': return print_V();
        default: return usage_dump(); /* -h too */
        }
    }
    return do_siondump(argv[argc - 1], a, l, m, M, k, K, S, v);
}

/* ---- sioncat ---- */
static int usage_cat(FILE *o, int rc)
{
    fprintf(o, "%s [options] sionfile\n"
               "  -t <task>   write only data of this task\n"
               "  -b <block>  write only data of this block (of each selected task)\n"
               "  -o <file>   write to file instead of stdout\n"
               "  -v verbose (on stderr)\n  -V show version\n  -h help\n", argv0);
    return rc;
}

static int main_cat(int argc, char **argv)
{
    long long t = -1, b = -1;
    const char *out = NULL;
    int v = 0, i;
    for (i = 1; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
        if (!strcmp(argv[i], "--help"))
            return usage_cat(stdout, 0);
        if (argv[i][2])
            return usage_cat(stderr, 1);
        char c = argv[i][1];
        if (c == 't' || c == 'b' || c == 'o') {
            if (i + 1 >= argc)
                return bad_value(argv[i], NULL);
            const char *val = argv[++i];
            if (c == 'o')
                out = val;
            else if (tool_parse_i64(val, c == 't' ? &t : &b) || (c == 't' ? t : b) < 0 ||
                     (c == 't' ? t : b) > 0x7fffffff)
                return bad_value(argv[i - 1], val);
        } else if (c == 'v') {
            v = 1;
        } else if (c == 'V') {
            return print_V();
        } else if (c == 'h') {
            return usage_cat(stdout, 0);
        } else {
            return usage_cat(stderr, 1);
        }
    }
    if (argc - i != 1)
        return usage_cat(stderr, 1);
    return do_cat(argv[i], (int)t, (int)b, out, v);
}

/* ---- sionsplit ---- */
static int usage_split(FILE *o, int rc)
{
    fprintf(o, "%s [options] sionfile prefix\n"
               "  -d <digits>  number of digits in file names (default 5)\n"
               "  -g           use stored global rank instead of the task index\n"
               "  -v verbose\n  -V show version\n  -h help\n", argv0);
    return rc;
}

static int main_split(int argc, char **argv)
{
    long long d = 5;
    int g = 0, v = 0, i;
    for (i = 1; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
        if (!strcmp(argv[i], "--help"))
            return usage_split(stdout, 0);
        if (argv[i][2])
            return usage_split(stderr, 1);
        switch (argv[i][1]) {
        case 'd':
            if (i + 1 >= argc || tool_parse_i64(argv[i + 1], &d) || d < 1 || d > 30)
                return bad_value("-d", i + 1 < argc ? argv[i + 1] : NULL);
            i++;
            break;
        case 'g': g = 1; break;
        case 'v': v = 1; break;
        case 'V': return print_V();
        case 'h': return usage_split(stdout, 0);
        default: return usage_split(stderr, 1);
        }
    }
    if (argc - i != 2)
        return usage_split(stderr, 1);
    return do_split(argv[i], argv[i + 1], (int)d, g, 0, v);
}

/* ---- siondefrag ---- */
static int usage_defrag(FILE *o, int rc)
{
    fprintf(o, "%s [options] infile outfile\n"
               "  -q <bytes>  fs block size of the output (default: the input's)\n"
               "  -Q <MiB>    same, in MiB\n"
               "  -n <nfiles> number of output files (only 1 is supported)\n"
               "  -v verbose\n  -V show version\n  -h help\n", argv0);
    return rc;
}

static int main_defrag(int argc, char **argv)
{
    long long q = -1, n = 1, val;
    int v = 0, i;
    for (i = 1; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
        if (!strcmp(argv[i], "--help"))
            return usage_defrag(stdout, 0);
        if (argv[i][2])
            return usage_defrag(stderr, 1);
        char c = argv[i][1];
        if (c == 'q' || c == 'Q' || c == 'n') {
            if (i + 1 >= argc || tool_parse_i64(argv[i + 1], &val) || val <= 0)
                return bad_value(argv[i], i + 1 < argc ? argv[i + 1] : NULL);
            i++;
            if (c == 'q')
                q = val;
            else if (c == 'Q')
                q = val > SION_MAX_FSBLOCKSIZE / (1024 * 1024) ? SION_MAX_FSBLOCKSIZE + 1LL : val * 1024 * 1024;
            else
                n = val;
            if (q > SION_MAX_FSBLOCKSIZE)
                return bad_value(argv[i - 1], argv[i]);
        } else if (c == 'v') {
            v = 1;
        } else if (c == 'V') {
            return print_V();
        } else if (c == 'h') {
            return usage_defrag(stdout, 0);
        } else {
            return usage_defrag(stderr, 1);
        }
    }
    if (argc - i != 2)
        return usage_defrag(stderr, 1);
    if (n > 1) {
        fprintf(stderr, "%s: writing %lld output files is not supported (serial multi-file write); use -n 1\n",
                argv0, n);
        return 1;
    }
    return do_defrag(argv[i], argv[i + 1], q, v);
}

static int main_version(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    printf("SIONlib Version %d.%d.%d (git_rev sheaf), fileformat version %d (%s)\n", SION_MAIN_VERSION,
           SION_SUB_VERSION, SION_VERSION_PATCHLEVEL, SION_FILEFORMAT_VERSION, argv0);
    printf("implemented by sheaf %s (a SIONlib-compatible library)\n", SHEAF_VERSION_STRING);
    return 0;
}

int compat_main(const char *name, int argc, char **argv)
{
    static const struct { const char *name; int (*fn)(int, char **); } tab[] = {
        {"siondump", main_dump}, {"sioncat", main_cat}, {"sionsplit", main_split},
        {"siondefrag", main_defrag}, {"sionversion", main_version},
    };
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
        if (!strcmp(name, tab[i].name)) {
            argv0 = argc > 0 ? argv[0] : name;
            tool_prog = tab[i].name;
            return tab[i].fn(argc, argv);
        }
    return -1;
}
