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
        case 'a':
            a = 1;
            break;
        case 'l':
            l = 1;
            break;
        case 'm':
            m = 1;
            break;
        case 'M':
            M = 1;
            break;
        case 'k':
            k = 1;
            break;
        case 'K':
            K = 1;
            break;
        case 'S':
            S = 1;
            break;
        case 'v':
            v = 1;
            break;
        case 'V':
            return print_V();
        default:
            return usage_dump(); /* -h too */
        }
    }
    return do_siondump(argv[argc - 1], a, l, m, M, k, K, S, v);
}

/* ---- sioncat ---- */
static int usage_cat(FILE *o, int rc)
{
    fprintf(o,
            "%s [options] sionfile\n"
            "  -t <task>   write only data of this task\n"
            "  -b <block>  write only data of this block (of each selected task)\n"
            "  -o <file>   write to file instead of stdout\n"
            "  -v verbose (on stderr)\n  -V show version\n  -h help\n",
            argv0);
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

/* ---- SIONlib's progress lines of sionsplit and siondefrag (stdout) ----
 * Printed as SIONlib 1.7.6 prints them, with its statistics; the input's
 * numbers come from sion_get_locations. */
struct sion_lines {
    const char *tool, *in, *out; /* tool name; input file; prefix (split) or output file (defrag) */
    int digits, grank, verbose;
    int keyval;
};

#define MBF(x) ((double)(x) / 1024.0 / 1024.0)

static void common_head(struct sion_lines *L, tool_in *in)
{
    L->keyval = sion_get_keyval_mode(in->sid);
    printf("%s: keyval:                    %d (%s)\n", L->tool, L->keyval, sion_keyval_type_to_str(L->keyval));
    printf("%s: current endianness:        %s\n", L->tool, sion_get_endianness() ? "big" : "little");
    printf("%s: file endianness:           %s\n", L->tool, sion_get_file_endianness(in->sid) ? "big" : "little");
}

static void split_opened(void *ctx, tool_in *in)
{
    struct sion_lines *L = ctx;
    int n = in->ntasks, maxb = in->maxchunks;
    printf("sionsplit: sid:                       %d\n", in->sid);
    printf("sionsplit: filename:                  %-30s\n", L->in);
    printf("sionsplit: number of tasks:           %d\n", n);
    printf("sionsplit: number of files:           %d\n", in->nfiles);
    printf("sionsplit: number of digits:          %d\n", L->digits);
    printf("sionsplit: use global ranks:          %d\n", L->grank);
    printf("sionsplit: keyval:                    %d (%s)\n", sion_get_keyval_mode(in->sid),
           sion_keyval_type_to_str(sion_get_keyval_mode(in->sid)));
    L->keyval = sion_get_keyval_mode(in->sid);
    printf("sionsplit: current endianness:        %s\n", sion_get_endianness() ? "big" : "little");
    printf("sionsplit: file endianness:           %s\n", sion_get_file_endianness(in->sid) ? "big" : "little");
    printf("sionsplit: fsblksize:                 %lu bytes (%6.2f MB)\n", (unsigned long)in->fsblksize,
           MBF(in->fsblksize));
    printf("sionsplit: max number of chunks:      %d\n", maxb);
    sion_int64 sum = 0; /* SIONlib sums every block slot, present or not */
    for (int r = 0; r < n; r++)
        for (int b = 0; b < maxb; b++)
            sum += in->bsizes[(sion_int64)n * b + r];
    printf("sionsplit: datasize in file (aggr.):  %lld bytes  (%6.2f MB)\n", (long long)sum, MBF(sum));
    sion_int64 fsize = in->start_of_varheader + (sion_int64)(maxb + 1) * n * (sion_int64)sizeof(sion_int64);
    printf("sionsplit: start_of_varheader:        %lld bytes  (%6.2f MB)\n", (long long)in->start_of_varheader,
           MBF(in->start_of_varheader));
    printf("sionsplit: size of file:              %lld bytes  (%6.2f MB)\n", (long long)fsize, MBF(fsize));
    if (fsize > 0)
        printf("sionsplit: file usage:                %8.6f%%\n", (double)sum / (double)fsize * 100.0);
    printf("sionsplit: filename mask:             %s%%0%dd\n", L->out, L->digits);
    printf("sionsplit: filename key mask:         %s%%0%dd_%%012ld\n", L->out, L->digits);
    if (L->keyval == SION_KEYVAL_NONE) {
        sion_int64 mx = 0;
        for (int r = 0; r < n; r++) {
            if (mx < in->chunks[r])
                mx = in->chunks[r];
            if (maxb > 0 && mx < in->bsizes[r])
                mx = in->bsizes[r];
        }
        printf("sionsplit: max chunksize:             %lld\n", (long long)mx);
    } else {
        printf("sionsplit: buffer size:             %d\n", (int)in->fsblksize);
    }
}

/* key-value split and every defrag: one line per task (-v) or "[t]" every 16 tasks */
static void kv_task(void *ctx, tool_in *in, int t)
{
    struct sion_lines *L = ctx;
    (void)in;
    if (L->keyval == SION_KEYVAL_NONE && !strcmp(L->tool, "sionsplit"))
        return;
    if (L->verbose)
        printf("siondefrag: ->rank:                    %d\n", t); /* SIONlib's sionsplit says siondefrag too */
    else if (t % 16 == 0) {
        printf("[%d]", t);
        fflush(stdout);
    }
}

static void split_file(void *ctx, tool_in *in, int t, int by_key, uint64_t key)
{
    struct sion_lines *L = ctx;
    long long r = L->grank ? (long long)in->granks[t] : t;
    if (by_key)
        printf("sionsplit: generating file:           '%s%0*lld_%012ld'\n", L->out, L->digits, r, (long)key);
    else
        printf("sionsplit: generating file:           %s%0*lld\n", L->out, L->digits, r);
}

static void split_block(void *ctx, tool_in *in, int t, int b, sion_int64 bytes)
{
    (void)ctx;
    (void)in;
    (void)t;
    (void)b;
    if (bytes > 0) /* SIONlib reads a block with one call */
        printf("sionsplit:                            %lld read left=0 \n", (long long)bytes);
    printf("sionsplit:                            %lld wrote of left=%lld \n", (long long)bytes, (long long)bytes);
}

static void split_key(void *ctx, tool_in *in, int t, uint64_t key, sion_int64 bytes)
{
    struct sion_lines *L = ctx;
    if (!L->verbose)
        return;
    (void)bytes;
    /* SIONlib reads a key's data record by record, in pieces of at most the
     * file system block size */
    if (sion_seek(in->sid, t, SION_CURRENT_BLK, SION_CURRENT_POS) != SION_SUCCESS ||
        sion_fread_key_iterator_reset(in->sid) != SION_SUCCESS)
        return;
    sion_int64 piece = in->fsblksize > 0 ? in->fsblksize : 1;
    uint64_t k;
    size_t len;
    while (sion_fread_key_iterator_next(in->sid, &k, &len) == SION_SUCCESS) {
        if (k != key)
            continue;
        for (sion_int64 left = (sion_int64)len; left > 0; left -= piece) {
            sion_int64 n = left < piece ? left : piece;
            printf("sionsplit:                               extracting now data of key[%12ld] (%lld bytes) (%lld "
                   "bytes written)\n",
                   (long)key, (long long)n, (long long)n);
        }
    }
}

static void defrag_opened(void *ctx, tool_in *in)
{
    struct sion_lines *L = ctx;
    int n = in->ntasks;
    printf("siondefrag: sid:                       %d\n", in->sid);
    printf("siondefrag: filename:                  %-30s\n", L->in);
    printf("siondefrag: nfiles:                    %d\n", in->nfiles);
    printf("siondefrag: fsblksize:                 %lu bytes (%6.2f MB)\n", (unsigned long)in->fsblksize,
           MBF(in->fsblksize));
    L->tool = "siondefrag";
    common_head(L, in);
    printf("siondefrag: max number of blocks:      %d\n", in->maxchunks);
    sion_int64 sum = 0, sum_chunks = 0, mx = 0;
    for (int r = 0; r < n; r++) {
        sum += tool_task_bytes(in, r);
        sum_chunks += in->chunks[r];
        if (in->chunks[r] > mx)
            mx = in->chunks[r];
        for (int b = 0; b < in->bcount[r] && b < in->maxchunks; b++)
            if (tool_block_bytes(in, r, b) > mx)
                mx = tool_block_bytes(in, r, b);
    }
    sion_int64 fsize = in->start_of_varheader + (sion_int64)(in->maxchunks + 1) * n * (sion_int64)sizeof(sion_int64);
    printf("siondefrag: datasize in file (aggr.):  %lld bytes  (%6.2f MB)\n", (long long)sum, MBF(sum));
    printf("siondefrag: start_of_varheader:        %lld bytes  (%6.2f MB)\n", (long long)in->start_of_varheader,
           MBF(in->start_of_varheader));
    printf("siondefrag: size of chunks:            %lld bytes  (%6.2f MB)\n", (long long)sum_chunks, MBF(sum_chunks));
    if (fsize > 0)
        printf("siondefrag: file usage:                %8.6f%%\n", (double)sum / (double)sum_chunks * 100.0);
    if (L->keyval == SION_KEYVAL_NONE)
        printf("siondefrag: max chunksize:             %lld\n", (long long)mx);
}

static void defrag_out_opened(void *ctx, tool_in *in, int osid, sion_int32 fsblk)
{
    struct sion_lines *L = ctx;
    (void)in;
    if (L->keyval != SION_KEYVAL_NONE)
        return;
    printf("siondefrag: outsid:                    %d\n", osid);
    printf("siondefrag: fsblksize outfile:         %lu\n", (unsigned long)fsblk);
}

static void defrag_task(void *ctx, tool_in *in, int t)
{
    struct sion_lines *L = ctx;
    kv_task(ctx, in, t);
    if (!L->verbose)
        return;
    if (L->keyval == SION_KEYVAL_NONE) {
        printf("siondefrag:                            copy now %lld blocks on rank=%d \n", (long long)in->bcount[t],
               t);
        for (int b = 0; b < in->bcount[t] && b < in->maxchunks; b++)
            printf("siondefrag:                               copy now block #%d with %lld bytes \n", b,
                   (long long)tool_block_bytes(in, t, b));
    } else if (sion_seek(in->sid, t, SION_CURRENT_BLK, SION_CURRENT_POS) == SION_SUCCESS &&
               sion_fread_key_iterator_reset(in->sid) == SION_SUCCESS) {
        uint64_t key;
        size_t len;
        while (sion_fread_key_iterator_next(in->sid, &key, &len) == SION_SUCCESS)
            printf("siondefrag:                               copy now key[%12ld] with %zu bytes \n", (long)key, len);
    }
}

/* ---- sionsplit ---- */
static int usage_split(FILE *o, int rc)
{
    fprintf(o,
            "%s [options] sionfile prefix\n"
            "  -d <digits>  number of digits in file names (default 5)\n"
            "  -g           use stored global rank instead of the task index\n"
            "  -v verbose\n  -V show version\n  -h help\n",
            argv0);
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
        case 'g':
            g = 1;
            break;
        case 'v':
            v = 1;
            break;
        case 'V':
            return print_V();
        case 'h':
            return usage_split(stdout, 0);
        default:
            return usage_split(stderr, 1);
        }
    }
    if (argc - i != 2)
        return usage_split(stderr, 1);
    struct sion_lines L = {"sionsplit", argv[i], argv[i + 1], (int)d, g, v, 0};
    printf("sionsplit: filename:                  %-30s\n", L.in);
    printf("sionsplit: prefix:                    %-30s\n", L.out);
    tool_report rep = {&L, split_opened, NULL, kv_task, split_file, split_block, split_key};
    int rc = do_split(argv[i], argv[i + 1], (int)d, g, 0, 0, &rep);
    fflush(stdout);
    return rc;
}

/* ---- siondefrag ---- */
static int usage_defrag(FILE *o, int rc)
{
    fprintf(o,
            "%s [options] infile outfile\n"
            "  -q <bytes>  fs block size of the output (default: the input's)\n"
            "  -Q <MiB>    same, in MiB\n"
            "  -n <nfiles> number of output files (only 1 is supported)\n"
            "  -v verbose\n  -V show version\n  -h help\n",
            argv0);
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
        fprintf(stderr, "%s: writing %lld output files is not supported (serial multi-file write); use -n 1\n", argv0,
                n);
        return 1;
    }
    struct sion_lines L = {"siondefrag", argv[i], argv[i + 1], 0, 0, v, 0};
    printf("siondefrag: infilename:                %-30s\n", L.in);
    printf("siondefrag: outfilename:               %-30s\n", L.out);
    tool_report rep = {&L, defrag_opened, defrag_out_opened, defrag_task, NULL, NULL, NULL};
    int rc = do_defrag(argv[i], argv[i + 1], q, 0, &rep);
    if (rc == 0 && !v)
        printf("\n");
    fflush(stdout);
    return rc;
}

static int main_version(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    /* SIONlib's line; where SIONlib names its build (git revision), sheaf names itself */
    printf("SIONlib Version %d.%d.%d (git_rev sheaf-%s), fileformat version %d (%s)\n", SION_MAIN_VERSION,
           SION_SUB_VERSION, SION_VERSION_PATCHLEVEL, SHEAF_VERSION_STRING, SION_FILEFORMAT_VERSION, argv0);
    return 0;
}

int compat_main(const char *name, int argc, char **argv)
{
    static const struct {
        const char *name;
        int (*fn)(int, char **);
    } tab[] = {
        {"siondump", main_dump},     {"sioncat", main_cat},         {"sionsplit", main_split},
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
