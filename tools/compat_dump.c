/* compat_dump.c - siondump-style metadata listing (lines start "siondump: "). */
#include "common.h"
#include <string.h>
#include <sys/stat.h>

#define P "siondump: "
#define MB (1024.0 * 1024.0)

static void print_size(int bytes, sion_int64 v)
{
    if (bytes)
        printf(" %12lld", (long long)v);
    else
        printf(" %10.4fMB", (double)v / MB);
}

/* -k: per task the number of keys, records and bytes, then one line per key;
 * -K: per task the list of keys. */
struct keysum { sion_int64 keys, recs, bytes; int list, stat; };

static void key_line(void *ctx, int t, const sion_key_stat_t *st)
{
    struct keysum *k = ctx;
    k->keys++;
    k->recs += st->num_blocks;
    k->bytes += st->total_size;
    if (k->stat)
        printf(P "  task %6d key %20llu: %8lld records %14lld bytes\n", t, (unsigned long long)st->key,
               (long long)st->num_blocks, (long long)st->total_size);
    else if (k->list)
        printf(" %llu", (unsigned long long)st->key);
}

static int dump_keys(tool_in *in, int keystat, int keylist)
{
    if (!tool_is_keyval(in)) {
        printf(P "key-value statistics: not a key-value container (keyval %s)\n",
               sion_keyval_type_to_str(sion_get_keyval_mode(in->sid)));
        return 0;
    }
    printf(P "key-value %s per task:\n", keystat ? "statistics" : "key list");
    for (int t = 0; t < in->ntasks; t++) {
        struct keysum k = {0, 0, 0, keylist && !keystat, keystat};
        if (!keystat)
            printf(P "task %6d keys:", t);
        int rc = tool_task_keys(in, t, key_line, &k);
        if (!keystat)
            printf("\n");
        if (rc)
            return -1;
        if (keystat)
            printf(P "task %6d: %lld keys, %lld records, %lld bytes\n", t, (long long)k.keys, (long long)k.recs,
                   (long long)k.bytes);
    }
    return 0;
}

int do_siondump(const char *file, int all, int bytes, int multi, int maptab, int keystat, int keylist, int sizes,
                int verbose)
{
    tool_in in;
    if (tool_open(file, &in))
        return 1;
    int nf = in.nfiles_open;
    sheaf_file_info f0;
    memset(&f0, 0, sizeof f0);
    sheaf_get_file_info(in.sid, 0, &f0);
    printf(P "sid:                      %d\n", in.sid);
    printf(P "filename:                 %s\n", file);
    printf(P "prefix:                   %s\n", f0.prefix ? f0.prefix : "");
    printf(P "number of tasks:          %d\n", in.ntasks);
    printf(P "current endianness:       %s\n", sion_get_endianness() ? "big" : "little");
    printf(P "file endianness:          %s\n", sion_get_file_endianness(in.sid) ? "big" : "little");
    printf(P "fsblksize:                %lu bytes (%6.2f MB)\n", (unsigned long)in.fsblksize,
           (double)in.fsblksize / MB);
    printf(P "current file set:         %s\n", sion_get_number_of_files(in.sid) > 1 ? "yes" : "no");
    printf(P "file number:              %d\n", f0.filenumber);
    printf(P "number of files:          %d\n", sion_get_number_of_files(in.sid));
    printf(P "flag1:                    %lld (%lld+%lld)\n", (long long)f0.flag1,
           (long long)((unsigned long long)f0.flag1 >> 32), (long long)(f0.flag1 & 0xffffffffLL));
    printf(P "flag2:                    %lld\n", (long long)f0.flag2);
    printf(P "keyval:                   %s\n", sion_keyval_type_to_str(sion_get_keyval_mode(in.sid)));
    printf(P "file format version:      %d\n", f0.format_version);
    printf(P "file SIONlib version:     %d.%dp%d\n", f0.lib_version / 1000, f0.lib_version % 1000, f0.lib_patch);
    printf(P "number of blocks:         %d\n", in.maxchunks);

    sion_int64 chunks = 0, data = 0, full = 0, partly = 0, empty = 0, fsblocks = 0, fsused = 0, fsize = 0;
    for (int t = 0; t < in.ntasks; t++) {
        for (int b = 0; b < in.maxchunks; b++) {
            sion_int64 s = tool_block_bytes(&in, t, b);
            if (b < in.bcount[t]) {
                chunks += in.chunks[t];
                data += s;
                if (s == 0)
                    empty++;
                else if (s >= in.chunks[t])
                    full++;
                else
                    partly++;
                if (in.fsblksize > 0) {
                    fsblocks += in.chunks[t] / in.fsblksize;
                    fsused += (s + in.fsblksize - 1) / in.fsblksize;
                }
            }
        }
    }
    for (int f = 0; f < nf; f++) {
        sheaf_file_info fi;
        struct stat st;
        if (sheaf_get_file_info(in.sid, f, &fi) == SION_SUCCESS && stat(fi.name, &st) == 0)
            fsize += st.st_size;
    }
    printf(P "statistics:\n");
    printf(P "size of chunks:           %14lld bytes (%10.4f MB)\n", (long long)chunks, (double)chunks / MB);
    printf(P "datasize in file:         %14lld bytes (%10.4f MB)\n", (long long)data, (double)data / MB);
    printf(P "size of file(s):          %14lld bytes (%10.4f MB)\n", (long long)fsize, (double)fsize / MB);
    printf(P "chunks: full %lld, partly filled %lld, empty %lld\n", (long long)full, (long long)partly,
           (long long)empty);
    printf(P "overhead vs task-local:   %14lld bytes (%6.2f%%)\n", (long long)(fsize - data),
           data > 0 ? 100.0 * (double)(fsize - data) / (double)data : 0.0);
    printf(P "file usage:               %6.2f%%\n", fsize > 0 ? 100.0 * (double)data / (double)fsize : 0.0);
    printf(P "fsblocks: allocated %lld, used %lld\n", (long long)fsblocks, (long long)fsused);

    if (all) {
        printf(P "per task (global rank, chunk size, blocks, block sizes%s):\n", bytes ? " in bytes" : " in MB");
        for (int t = 0; t < in.ntasks; t++) {
            printf(P "task %6d grank %6lld chunk", t, (long long)in.granks[t]);
            print_size(bytes, in.chunks[t]);
            printf(" blocks %lld total", (long long)in.bcount[t]);
            print_size(bytes, tool_task_bytes(&in, t));
            printf("\n");
            for (int b = 0; b < in.bcount[t] && b < in.maxchunks; b += 10) {
                printf(P "  blk %4d-%-4d:", b, b + 9 < in.bcount[t] - 1 ? b + 9 : (int)in.bcount[t] - 1);
                for (int k = b; k < b + 10 && k < in.bcount[t] && k < in.maxchunks; k++)
                    print_size(bytes, tool_block_bytes(&in, t, k));
                printf("\n");
            }
        }
    }
    if (multi || maptab) {
        for (int f = 0; f < nf; f++) {
            sheaf_file_info fi;
            if (sheaf_get_file_info(in.sid, f, &fi) == SION_SUCCESS)
                printf(P "file %4d: %s (%d tasks)\n", f, fi.name, fi.ntasks);
        }
        int msize = -1, mfiles = 0;
        sion_int32 *map = NULL;
        if (sion_get_mapping(in.sid, &msize, &map, &mfiles) == SION_SUCCESS && msize > 0 && map) {
            if (multi)
                for (int t = 0; t < msize; t++)
                    printf(P "mapping: task %6d -> file %4d local task %6d\n", t, (int)map[2 * t],
                           (int)map[2 * t + 1]);
            if (maptab)
                for (int f = 0; f < mfiles; f++) {
                    printf(P "file %4d: tasks", f);
                    for (int t = 0; t < msize; t++)
                        if (map[2 * t] == f)
                            printf(" %d", t);
                    printf("\n");
                }
        } else {
            printf(P "mapping: none (single file)\n");
        }
    }
    if ((keystat || keylist) && dump_keys(&in, keystat, keylist)) {
        tool_close(&in);
        return 1;
    }
    if (sizes) {
        int nb = 0, nfd = 0;
        sion_get_sizeof(in.sid, &nb, &nfd);
        printf(P "size of internal structures: %d bytes, %d file descriptors\n", nb, nfd);
    }
    if (verbose)
        printf(P "globalskip %lld, start_of_varheader %lld\n", (long long)in.globalskip,
               (long long)in.start_of_varheader);
    tool_close(&in);
    return 0;
}
