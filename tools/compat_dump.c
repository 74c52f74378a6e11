/* compat_dump.c - siondump: the metadata listing in SIONlib 1.7's format, line
 * for line (scripts and SIONlib's own test suite grep it). The numbers are
 * computed as SIONlib's siondump computes them; `sheaf dump` has sheaf's own
 * format. */
#include "common.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

/* the header lines, up to the number of blocks (and -S: the struct sizes) */
static void print_header(const tool_in *in, const char *file, const sheaf_file_info *f0, int keyval, int nfiles,
                         const char *prefix, int sizes)
{
    printf("siondump: sid:                       %d\n", in->sid);
    printf("siondump: filename:                  %-30s\n", file);
    printf("siondump: prefix:                    %-30s\n", prefix);
    printf("siondump: number of tasks:           %d\n", in->ntasks);
    printf("siondump: current endianness:        %s\n", sion_get_endianness() ? "big" : "little");
    printf("siondump: file endianness:           %s\n", sion_get_file_endianness(in->sid) ? "big" : "little");
    printf("siondump: filesystem blocksize:      %lu bytes (%6.2f MB)\n", (unsigned long)in->fsblksize,
           MB(in->fsblksize));
    /* a set member opened alone is still part of a set (SIONlib's open reports the set's size) */
    printf("siondump: file set:                  %s\n", nfiles > 1 ? "Yes" : "No");
    printf("siondump: file number:               %d\n", f0->filenumber);
    printf("siondump: number of files:           %d\n", nfiles);
    printf("siondump: flag1:                     %lld (%d+%d)\n", (long long)f0->flag1, (int)(f0->flag1 >> 32),
           (int)(unsigned int)(f0->flag1 & 0xffffffffLL));
    printf("siondump: flag2:                     %lld\n", (long long)f0->flag2);
    printf("siondump: keyval:                    %d (%s)\n", keyval, sion_keyval_type_to_str(keyval));
    printf("siondump: file format version:       %d\n", f0->format_version);
    printf("siondump: file SIONlib version:      %d.%dp%d (current %d.%dp%d)\n", f0->lib_version / 1000,
           f0->lib_version % 1000, f0->lib_patch, SION_MAIN_VERSION, SION_SUB_VERSION, SION_VERSION_PATCHLEVEL);
    printf("siondump: number of blocks:           %d\n", in->maxchunks);
    if (sizes) {
        int nb = 0, nfd = 0;
        sion_get_sizeof(in->sid, &nb, &nfd);
        printf("siondump: sizeof internal struct:    %d bytes %d file descriptors\n", nb, nfd);
    }
}

/* the statistics, computed as SIONlib's siondump does */
typedef struct dump_stats {
    sion_int64 full_fsblocks, part_fsblocks, bytes_in_part;
    sion_int64 nfull, nempty, npartly, full_size, empty_size, partly_size;
    sion_int64 all_fsblocks, sum_chunks, sum_bytes;
} dump_stats;

/* task_bytes[r]: the bytes of task r (ntasks entries, zeroed by the caller) */
static void compute_stats(const tool_in *in, sion_int64 *task_bytes, dump_stats *st)
{
    int size = in->ntasks, blocks = in->maxchunks;
    sion_int64 fsblk = in->fsblksize > 0 ? in->fsblksize : 1;
    memset(st, 0, sizeof *st);
    for (int r = 0; r < size; r++) {
        for (int b = 0; b < in->bcount[r] && b < blocks; b++) {
            sion_int64 blksize = in->bsizes[(sion_int64)size * b + r];
            task_bytes[r] += blksize;
            if (blksize == in->chunks[r]) {
                st->nfull++;
                st->full_size += blksize;
            } else if (blksize > 0) {
                st->npartly++;
                st->partly_size += blksize;
            } else {
                st->nempty++;
                st->empty_size += in->chunks[r];
            }
            st->full_fsblocks += (int)(blksize / fsblk);
            if (blksize - fsblk * (blksize / fsblk) > 0) {
                st->bytes_in_part += blksize - fsblk * (int)(blksize / fsblk);
                st->part_fsblocks++;
            }
        }
        st->nempty += blocks - in->bcount[r];
        st->empty_size += (blocks - in->bcount[r]) * in->chunks[r];
    }
    st->all_fsblocks = st->full_fsblocks + st->part_fsblocks;
    for (int r = 0; r < size; r++) {
        st->sum_bytes += task_bytes[r];
        st->sum_chunks += in->chunks[r] * in->bcount[r];
    }
}

static void print_stats(const tool_in *in, const dump_stats *st)
{
    sion_int64 fsb = in->fsblksize, sum_chunks = st->sum_chunks, sum_bytes = st->sum_bytes;
    printf("siondump: size of chunks:                        %12lld bytes  (%8.2f MB)\n", (long long)sum_chunks,
           MB(sum_chunks));
    printf("siondump: datasize in file (aggr.):              %12lld bytes  (%8.2f MB)\n", (long long)sum_bytes,
           MB(sum_bytes));
    printf("siondump: size of full chunks:                   %12lld bytes  (%8.2f MB) # %6lld\n",
           (long long)st->full_size, MB(st->full_size), (long long)st->nfull);
    printf("siondump: size of partly filled chunks:          %12lld bytes  (%8.2f MB) # %6lld\n",
           (long long)st->partly_size, MB(st->partly_size), (long long)st->npartly);
    printf("siondump: size of empty chunks:                  %12lld bytes  (%8.2f MB) # %6lld\n",
           (long long)st->empty_size, MB(st->empty_size), (long long)st->nempty);
    printf("siondump: overhead compared to task-local file:  %12lld bytes  (%8.2f MB)\n",
           (long long)(sum_chunks - sum_bytes), MB(sum_chunks - sum_bytes));
    if (sum_chunks > 0)
        printf("siondump: file usage (user data/chunk size):   %14.6f%%\n",
               (double)sum_bytes / (double)sum_chunks * 100.0);
    printf("siondump: fsblocks, size of used blocks:         %12lld bytes  (%8.2f MB, %ld blocks)\n",
           (long long)(st->all_fsblocks * fsb), MB(st->all_fsblocks * fsb), (long)st->all_fsblocks);
    printf("siondump: fsblocks, size of fully used blocks:   %12lld bytes  (%8.2f MB, %ld blocks)\n",
           (long long)(st->full_fsblocks * fsb), MB(st->full_fsblocks * fsb), (long)st->full_fsblocks);
    printf("siondump: fsblocks, size of partly used blocks:  %12lld bytes of %12lld bytes (%6.2f MB of %6.2f MB, %ld "
           "blocks)\n",
           (long long)st->bytes_in_part, (long long)(st->part_fsblocks * fsb), MB(st->bytes_in_part),
           MB(st->part_fsblocks * fsb), (long)st->part_fsblocks);
    if (sum_chunks > 0)
        printf("siondump: fsblocks, used fsblocks/chunk size:   %14.6f%%\n",
               (double)st->all_fsblocks * (double)fsb / (double)sum_chunks * 100.0);
    if (st->all_fsblocks * fsb > 0)
        printf("siondump: fsblocks, user data/used blocks:      %14.6f%%\n",
               (double)sum_bytes / (double)(st->all_fsblocks * fsb) * 100.0);
}

/* one -k / -K section: SIONlib prints its error line with the task count as
 * "rank"; 0, or -1 when a task's keys could not be read */
static int print_key_section(tool_in *in, int keyval, int (*print)(tool_in *))
{
    int rc = 0;
    if (keyval != SION_KEYVAL_NONE) {
        printf("%s\n", DASHES);
        fflush(stdout);
        rc = print(in);
    } else {
        fflush(stdout);
        fprintf(stderr, "on rank %d: error sid = %d\n", in->ntasks, in->sid);
    }
    printf("%s\n", DASHES);
    return rc;
}

/* a file set: its members, and (-m) the mapping, (-M) the mapping per file */
static void print_files(const tool_in *in, int nfiles, const char *prefix, int multi, int maptab)
{
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
    if ((multi || maptab) && sion_get_mapping(in->sid, &msize, &map, &mfiles) != SION_SUCCESS) {
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

/* A member of a set opened alone (file 0 opened the whole set, and the
 * library checked the set's count against its mapping): the header's count of
 * files is believed only as far as the files on disk bear it out, so that the
 * listing of member names stays bounded by the real size of the files (a 7.8
 * KB member claiming 2^30 files made this print 2^30 names, ~64 GB). File 0
 * of the set holds a mapping of at least one task per file (8 bytes each), so
 * the count must fit in its size; when file 0 is missing (or cannot be
 * located: the member was renamed), the set's last member must exist or the
 * count fit in the member's own size at 8 bytes a file. 0, or 1
 * after a message naming the file and the cause. */
static int check_set_claim(const char *file, const sheaf_file_info *f0)
{
    if (f0->nfiles <= 1 || f0->nfiles_open != 1)
        return 0;
    size_t n = strlen(file);
    char suffix[32];
    snprintf(suffix, sizeof suffix, ".%06d", f0->filenumber);
    size_t sl = f0->filenumber > 0 ? strlen(suffix) : 0;
    struct stat st = {0};
    if (f0->filenumber > 0 && (n <= sl || strcmp(file + n - sl, suffix) != 0)) {
        if (stat(file, &st) == 0 && st.st_size / 8 >= (off_t)f0->nfiles)
            return 0;
        tool_err("%s: its header names a set of %d files, more than its %lld bytes can belong to (file 0 of the "
                 "set cannot be located: the name does not end in %s); the header is damaged",
                 file, f0->nfiles, (long long)st.st_size, suffix);
        return 1;
    }
    char *base = malloc(n - sl + 1), *last = malloc(n - sl + 32);
    if (!base || !last) {
        free(base);
        free(last);
        tool_err("%s: out of memory", file);
        return 1;
    }
    memcpy(base, file, n - sl);
    base[n - sl] = 0;
    snprintf(last, n - sl + 32, "%s.%06d", base, f0->nfiles - 1);
    int rc = 0;
    if (stat(base, &st) == 0) {
        if ((st.st_size - 1092) / 8 < (off_t)f0->nfiles) {
            tool_err("%s: its header names a set of %d files, but file 0 of the set, %s, has %lld bytes: too small "
                     "for the mapping of that many files (8 bytes a file at least); the header is damaged",
                     file, f0->nfiles, base, (long long)st.st_size);
            rc = 1;
        }
    } else if (stat(last, &st) != 0 && !(stat(file, &st) == 0 && st.st_size / 8 >= (off_t)f0->nfiles)) {
        tool_err("%s: its header names a set of %d files, more than its %lld bytes can belong to, and neither file 0 "
                 "of the set (%s) nor its last member (%s) exists; the header is damaged",
                 file, f0->nfiles, (long long)st.st_size, base, last);
        rc = 1;
    }
    free(base);
    free(last);
    return rc;
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
    if (check_set_claim(file, &f0)) {
        tool_close(&in);
        return 1;
    }
    int keyval = sion_get_keyval_mode(in.sid);
    int nfiles = f0.nfiles > 0 ? f0.nfiles : in.nfiles;
    const char *prefix = f0.prefix ? f0.prefix : "";
    print_header(&in, file, &f0, keyval, nfiles, prefix, sizes);

    sion_int64 *task_bytes = calloc((size_t)(in.ntasks > 0 ? in.ntasks : 1), sizeof *task_bytes);
    if (!task_bytes) {
        tool_err("out of memory");
        tool_close(&in);
        return 1;
    }
    dump_stats st;
    compute_stats(&in, task_bytes, &st);
    print_stats(&in, &st);
    if (all)
        print_table(&in, task_bytes, bytes);
    free(task_bytes);

    int rc = 0;
    if (keystat)
        rc |= print_key_section(&in, keyval, print_keystat);
    if (keylist && !rc)
        rc |= print_key_section(&in, keyval, print_keylist);
    if (nfiles > 1 && !rc)
        print_files(&in, nfiles, prefix, multi, maptab);
    tool_close(&in);
    return rc ? 1 : 0;
}
