/* vecread - test helper: write the logical bytes of one task (or all tasks,
 * concatenated) of a container to stdout, through the public C API, reading in
 * pieces of varying size so that reads cross block ends.
 * usage: vecread <file> <task|-1> [piece-size] [open_rank]  ; exit 0 on success */
#include <sion.h>
#include <stdio.h>
#include <stdlib.h>

static int dump_task(int sid, int task, size_t piece)
{
    if (sion_seek(sid, task, SION_CURRENT_BLK, SION_CURRENT_POS) != SION_SUCCESS)
        return 1;
    char *buf = malloc(piece);
    if (!buf)
        return 1;
    size_t step = 1;
    while (!sion_feof(sid)) {
        size_t want = step % piece + 1; /* 1..piece, varying */
        size_t got = sion_fread(buf, 1, want, sid);
        if (got == 0) {
            free(buf);
            return 1;
        }
        fwrite(buf, 1, got, stdout);
        step = step * 31 + 7;
    }
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: vecread <file> <task|-1> [piece-size] [open_rank]\n");
        return 2;
    }
    int task = atoi(argv[2]);
    size_t piece = argc > 3 ? (size_t)atol(argv[3]) : 7000;
    int sid, ntasks = 0, nfiles = 0;
    sion_int32 bs = 0;
    if (argc > 4 && task >= 0) {
        sion_int64 cs;
        sid = sion_open_rank(argv[1], "rb", &cs, &bs, &task, NULL);
        if (sid < 0)
            return 1;
        int rc = dump_task(sid, SION_CURRENT_RANK, piece);
        return sion_close(sid) == SION_SUCCESS ? rc : 1;
    }
    sid = sion_open(argv[1], "rb", &ntasks, &nfiles, NULL, &bs, NULL, NULL);
    if (sid < 0)
        return 1;
    int rc = 0;
    for (int t = 0; t < ntasks && !rc; t++)
        if (task < 0 || t == task)
            rc = dump_task(sid, t, piece);
    if (sion_close(sid) != SION_SUCCESS)
        rc = 1;
    return rc;
}
