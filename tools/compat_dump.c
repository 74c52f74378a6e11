/* compat_dump.c - siondump: the metadata listing in SIONlib 1.7's format, line
 * for line (scripts and SIONlib's own test suite grep it). The numbers are
 * computed as SIONlib's siondump computes them; `sheaf dump` has sheaf's own
 * format. */
#include "common.h"
#include <stdlib.h>
#include <string.h>

#define MB(x) ((double)(x) / 1024.0 / 1024.0)

static const char DASHES[] = "-----------------------------------------------------------------------------------------"
                             "------------------------------------------------------------------";
static const char DASHES60[] = "------------------------------------------------------------";

/* -a: the per-task table, ten blocks per row group. Absent blocks show what
 * sion_get_locations reports for them. */
static void print_table(const tool_in *in, const sion_int64 *task_bytes, int longspec)
{
    int size = in->ntasks, blocks = in->maxchunks;
    printf("\n%s\n", DASHES);
    for (int g = 0; g < blocks; g += 10) {
        printf("%70s", " ");
        for (int b = g; b < g + 10 && b < blocks; b++)
            printf("BLK%03d    ", b);
        printf("\n");
        for (int r = 0; r < size; r++) {
            if (!longspec) {
                printf("Task %02d: size=%8.2f MB glblrnk=%4lld #blks=%2lld lsz=%8.2f MB:  ", r, MB(task_bytes[r]),
                       (long long)in->granks[r], (long long)in->bcount[r], MB(in->chunks[r]));
                for (int b = g; b < g + 10 && b < blocks; b++)
                    printf(" %6.2f MB ", MB((long)in->bsizes[(sion_int64)size * b + r]));
            } else {
                printf("Task %02d: size=%10ld B glblrnk=%4lld #blks=%2lld lsz=%10ld B: ", r, (long)task_bytes[r],
                       (long long)in->granks[r], (long long)in->bcount[r], (long)in->chunks[r]);
                for (int b = g; b < g + 10 && b < blocks; b++)
                    printf("%9ld ", (long)in->bsizes[(sion_int64)size * b + r]);
            }
            printf("\n");
        }
        printf("\n");
    }
    printf("%s\n", DASHES);
}

/* -k: key statistics of every task */
static void key_stat_line(void *ctx, int t, const sion_key_stat_t *st)
{
    int *i = ctx;
    printf("Task %02d: key[%02d]=%8ld: #blocks=%6d totalsize=%10ld\n", t, (*i)++, (long)st->key, (int)st->num_blocks,
           (long)st->total_size);
}

static int print_keystat(tool_in *in)
{
    for (int r = 0; r < in->ntasks; r++) {
        int i = 0;
        if (tool_task_keys(in, r, key_stat_line, &i))
            return -1;
    }
    return 0;
}

/* -K: every record of every task, five per line */
static int print_keylist(tool_in *in)
{
    for (int r = 0; r < in->ntasks; r++) {
        if (sion_seek(in->sid, r, SION_CURRENT_BLK, SION_CURRENT_POS) != SION_SUCCESS ||
            sion_fread_key_iterator_reset(in->sid) != SION_SUCCESS) {
            tool_err("%s: task %d: %s", in->path, r, sheaf_last_error());
            return -1;
        }
        printf("Task %02d:", r);
        uint64_t key;
        size_t vsize;
        for (int i = 0; sion_fread_key_iterator_next(in->sid, &key, &vsize) == SION_SUCCESS; i++) {
            if (i % 5 == 0 && i > 0)
                printf("\n       :");
            printf(" [%02d:k=<%ld>,size=%ld]", i, (long)key, (long)vsize);
        }
        printf("\n");
    }
    return 0;
}

int do_siondump(const char *file, int all, int bytes, int multi, int maptab, int keystat, int keylist, int sizes,
                int verbose)
{
    (void)verbose; /* accepted, prints nothing more (as SIONlib's) */
    tool_in in;
    if (tool_open(file, &in))
        return 1;
    sheaf_file_info f0;
    memset(&f0, 0, sizeof f0);
    sheaf_get_file_info(in.sid, 0, &f0);
    int keyval = sion_get_keyval_mode(in.sid);
    int nfiles = f0.nfiles > 0 ? f0.nfiles : in.nfiles;
    const char *prefix = f0.prefix ? f0.prefix : "";

    printf("siondump: sid:                       %d\n", in.sid);
    printf("siondump: filename:                  %-30s\n", file);
    printf("siondump: prefix:                    %-30s\n", prefix);
    printf("siondump: number of tasks:           %d\n", in.ntasks);
    printf("siondump: current endianness:        %s\n", sion_get_endianness() ? "big" : "little");
    printf("siondump: file endianness:           %s\n", sion_get_file_endianness(in.sid) ? "big" : "little");
    printf("siondump: filesystem blocksize:      %lu bytes (%6.2f MB)\n", (unsigned long)in.fsblksize,
           MB(in.fsblksize));
    /* a set member opened alone is still part of a set (SIONlib's open reports the set's size) */
    printf("siondump: file set:                  %s\n", nfiles > 1 ? "Yes" : "No");
    printf("siondump: file number:               %d\n", f0.filenumber);
    printf("siondump: number of files:           %d\n", nfiles);
    printf("siondump: flag1:                     %lld (%d+%d)\n", (long long)f0.flag1, (int)(f0.flag1 >> 32),
           (int)(unsigned int)(f0.flag1 & 0xffffffffLL));
    printf("siondump: flag2:                     %lld\n", (long long)f0.flag2);
    printf("siondump: keyval:                    %d (%s)\n", keyval, sion_keyval_type_to_str(keyval));
    printf("siondump: file format version:       %d\n", f0.format_version);
    printf("siondump: file SIONlib version:      %d.%dp%d (current %d.%dp%d)\n", f0.lib_version / 1000,
           f0.lib_version % 1000, f0.lib_patch, SION_MAIN_VERSION, SION_SUB_VERSION, SION_VERSION_PATCHLEVEL);
    printf("siondump: number of blocks:           %d\n", in.maxchunks);
    if (sizes) {
        int nb = 0, nfd = 0;
        sion_get_sizeof(in.sid, &nb, &nfd);
        printf("siondump: sizeof internal struct:    %d bytes %d file descriptors\n", nb, nfd);
    }

    /* the statistics, computed as SIONlib's siondump does */
    int size = in.ntasks, blocks = in.maxchunks;
    sion_int64 fsblk = in.fsblksize > 0 ? in.fsblksize : 1;
    sion_int64 full_fsblocks = 0, part_fsblocks = 0, bytes_in_part = 0;
    sion_int64 nfull = 0, nempty = 0, npartly = 0, full_size = 0, empty_size = 0, partly_size = 0;
    sion_int64 *task_bytes = calloc((size_t)(size > 0 ? size : 1), sizeof *task_bytes);
    if (!task_bytes) {
        tool_err("out of memory");
        tool_close(&in);
        return 1;
    }
    for (int r = 0; r < size; r++) {
        for (int b = 0; b < in.bcount[r] && b < blocks; b++) {
            sion_int64 blksize = in.bsizes[(sion_int64)size * b + r];
            task_bytes[r] += blksize;
            if (blksize == in.chunks[r]) {
                nfull++;
                full_size += blksize;
            } else if (blksize > 0) {
                npartly++;
                partly_size += blksize;
            } else {
                nempty++;
                empty_size += in.chunks[r];
            }
            full_fsblocks += (int)(blksize / fsblk);
            if (blksize - fsblk * (blksize / fsblk) > 0) {
                bytes_in_part += blksize - fsblk * (int)(blksize / fsblk);
                part_fsblocks++;
            }
        }
        nempty += blocks - in.bcount[r];
        empty_size += (blocks - in.bcount[r]) * in.chunks[r];
    }
    sion_int64 all_fsblocks = full_fsblocks + part_fsblocks, sum_chunks = 0, sum_bytes = 0;
    for (int r = 0; r < size; r++) {
        sum_bytes += task_bytes[r];
        sum_chunks += in.chunks[r] * in.bcount[r];
    }
    printf("siondump: size of chunks:                        %12lld bytes  (%8.2f MB)\n", (long long)sum_chunks,
           MB(sum_chunks));
    printf("siondump: datasize in file (aggr.):              %12lld bytes  (%8.2f MB)\n", (long long)sum_bytes,
           MB(sum_bytes));
    printf("siondump: size of full chunks:                   %12lld bytes  (%8.2f MB) # %6lld\n",
           (long long)full_size, MB(full_size), (long long)nfull);
    printf("siondump: size of partly filled chunks:          %12lld bytes  (%8.2f MB) # %6lld\n",
           (long long)partly_size, MB(partly_size), (long long)npartly);
    printf("siondump: size of empty chunks:                  %12lld bytes  (%8.2f MB) # %6lld\n",
           (long long)empty_size, MB(empty_size), (long long)nempty);
    printf("siondump: overhead compared to task-local file:  %12lld bytes  (%8.2f MB)\n",
           (long long)(sum_chunks - sum_bytes), MB(sum_chunks - sum_bytes));
    if (sum_chunks > 0)
        printf("siondump: file usage (user data/chunk size):   %14.6f%%\n",
               (double)sum_bytes / (double)sum_chunks * 100.0);
    printf("siondump: fsblocks, size of used blocks:         %12lld bytes  (%8.2f MB, %ld blocks)\n",
           (long long)(all_fsblocks * in.fsblksize), MB(all_fsblocks * in.fsblksize), (long)all_fsblocks);
    printf("siondump: fsblocks, size of fully used blocks:   %12lld bytes  (%8.2f MB, %ld blocks)\n",
           (long long)(full_fsblocks * in.fsblksize), MB(full_fsblocks * in.fsblksize), (long)full_fsblocks);
    printf("siondump: fsblocks, size of partly used blocks:  %12lld bytes of %12lld bytes (%6.2f MB of %6.2f MB, %ld "
           "blocks)\n",
           (long long)bytes_in_part, (long long)(part_fsblocks * in.fsblksize), MB(bytes_in_part),
           MB(part_fsblocks * in.fsblksize), (long)part_fsblocks);
    if (sum_chunks > 0)
        printf("siondump: fsblocks, used fsblocks/chunk size:   %14.6f%%\n",
               (double)all_fsblocks * (double)in.fsblksize / (double)sum_chunks * 100.0);
    if (all_fsblocks * in.fsblksize > 0)
        printf("siondump: fsblocks, user data/used blocks:      %14.6f%%\n",
               (double)sum_bytes / (double)(all_fsblocks * in.fsblksize) * 100.0);

    if (all)
        print_table(&in, task_bytes, bytes);
    free(task_bytes);

    int rc = 0;
    /* -k / -K: SIONlib prints its error line with the task count as "rank" */
    if (keystat) {
        if (keyval != SION_KEYVAL_NONE) {
            printf("%s\n", DASHES);
            fflush(stdout);
            rc |= print_keystat(&in);
        } else {
            fflush(stdout);
            fprintf(stderr, "on rank %d: error sid = %d\n", size, in.sid);
        }
        printf("%s\n", DASHES);
    }
    if (keylist && !rc) {
        if (keyval != SION_KEYVAL_NONE) {
            printf("%s\n", DASHES);
            fflush(stdout);
            rc |= print_keylist(&in);
        } else {
            fflush(stdout);
            fprintf(stderr, "on rank %d: error sid = %d\n", size, in.sid);
        }
        printf("%s\n", DASHES);
    }

    if (nfiles > 1 && !rc) {
        printf("%s\n", DASHES60);
        printf("siondump: number of files:           %d\n", nfiles);
        for (int i = 0; i < nfiles; i++) {
            if (i > 0)
                printf("siondump: file %3d:                    %s.%06d \n", i + 1, prefix, i);
            else
                printf("siondump: file %3d:                    %s \n", i + 1, prefix);
        }
        printf("%s\n", DASHES60);
        int msize = 0, mfiles = 0;
        sion_int32 *map = NULL;
        if ((multi || maptab) && sion_get_mapping(in.sid, &msize, &map, &mfiles) != SION_SUCCESS) {
            msize = 0;
            map = NULL;
        }
        if (!map)
            msize = 0;
        if (multi) {
            printf("  mapping: ");
            for (int i = 0; i < msize; i++) {
                printf("[%05d -> (f%03d,t%03d)] ", i, (int)map[i * 2], (int)map[i * 2 + 1]);
                if (i % 16 == 15)
                    printf("\n        ");
            }
            printf("\n%s\n", DASHES60);
        }
        if (maptab) {
            for (int f = 0; f < mfiles; f++) {
                printf("  file[%03d]: ", f);
                for (int i = 0; i < msize; i++)
                    if (map[i * 2] == f)
                        printf("%2d:%05d ", (int)map[i * 2 + 1], i);
                printf("\n");
            }
            printf("%s\n", DASHES60);
        }
    }
    tool_close(&in);
    return rc ? 1 : 0;
}
