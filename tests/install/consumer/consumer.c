/* consumer.c - minimal sheaf user: write two tasks serially, read them back.
 * Usage: consumer <container>; exit status 0 if the data round-trips. */
#include <stdio.h>
#include <string.h>
#include "sion.h"

int main(int argc, char **argv)
{
    const char *msg[2] = {"hello from task 0\n", "and from task 1\n"};
    sion_int64 chunks[2] = {100, 100}, *chunkp = chunks;
    int ranks[2] = {0, 1}, *rankp = ranks;
    int ntasks = 2, nfiles = 1, sid;
    sion_int32 fsblksize = -1;
    FILE *fp;
    char buf[64];

    if (argc != 2)
        return 2;
    sid = sion_open(argv[1], "wb", &ntasks, &nfiles, &chunkp, &fsblksize, &rankp, &fp);
    if (sid < 0)
        return 1;
    for (int t = 0; t < 2; t++) {
        sion_seek(sid, t, SION_CURRENT_BLK, SION_CURRENT_POS);
        if (sion_fwrite(msg[t], 1, strlen(msg[t]), sid) != strlen(msg[t]))
            return 1;
    }
    if (sion_close(sid) != SION_SUCCESS)
        return 1;

    sid = sion_open(argv[1], "rb", &ntasks, &nfiles, NULL, &fsblksize, NULL, &fp);
    if (sid < 0 || ntasks != 2)
        return 1;
    for (int t = 0; t < 2; t++) {
        size_t n;
        sion_seek(sid, t, 0, 0);
        n = sion_fread(buf, 1, sizeof(buf), sid);
        if (n != strlen(msg[t]) || memcmp(buf, msg[t], n) != 0 || !sion_feof(sid))
            return 1;
    }
    sion_close(sid);
    printf("consumer: ok (%s)\n", SHEAF_VERSION_STRING);
    return 0;
}
