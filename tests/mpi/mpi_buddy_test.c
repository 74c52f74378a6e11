/* mpi_buddy_test.c - buddy checkpointing over MPI, in the style of SIONlib's
 * test_buddy__1 (run with 4 ranks): ranks 0,1 are "node000" (file 0), ranks
 * 2,3 "node001" (file 1); each group works in its own directory (chdir), as
 * if each node had its own storage. "bw,buddy", chunk 1200, fsblksize 100,
 * three sion_coll_fwrite of rank, 500 and 1000 bytes of 'A' + rank.
 *
 * Asserts:
 *  - the four files are byte for byte what SIONlib 1.7.6 writes for this
 *    program (FNV-1a 64 of each file, taken from SIONlib's own run of
 *    test_buddy__1 with 4 ranks): node000/testB.out, node001/testB.out.000001
 *    and the copies, each written by the partner group into ITS directory:
 *    node001/testB.out_BUDDY_00 (copy of file 0) and
 *    node000/testB.out_BUDDY_00.000001 (copy of file 1); nothing else;
 *  - sion_get_io_info on each rank: its file (SION_ROLE_WRITER, its bytes) and
 *    the copy member its group writes (SION_ROLE_COLLECTOR on local rank 0,
 *    SION_ROLE_NOWRITER otherwise, 0 bytes), as SIONlib prints them;
 *  - with node000/testB.out deleted, all ranks in a directory holding links
 *    to every file (SIONlib's test makes the same "allnodes" directory): a
 *    "br" open fails on every rank, a "br,buddy" open reads every rank's
 *    blocks (500 + 1000 bytes, sizes and contents) from the copy;
 *  - the same read from the node directories (each group sees only its own
 *    files, as after losing node000's file): ranks 0 and 1 get their data
 *    from the copy that only ranks 2 and 3 see (the partner sends it);
 *  - with the copy of file 0 gone too, the read fails on every rank.
 * Exit 0 only when every check on every rank passed. */
#define _XOPEN_SOURCE 700
#include <mpi.h>
#include <sion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ONRANK if (rank == 0)
static int rank, size, fails;

#define CHECK(cond, ...)                                                                                               \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            fprintf(stderr, "FAIL rank %d line %d: ", rank, __LINE__);                                                 \
            fprintf(stderr, __VA_ARGS__);                                                                              \
            fprintf(stderr, "\n");                                                                                     \
            fails++;                                                                                                   \
        }                                                                                                              \
    } while (0)

static uint64_t fnv_file(const char *path, long *len)
{
    uint64_t h = 0xcbf29ce484222325ull;
    *len = -1;
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    int ch;
    *len = 0;
    while ((ch = fgetc(f)) != EOF) {
        h ^= (unsigned char)ch;
        h *= 0x100000001b3ull;
        (*len)++;
    }
    fclose(f);
    return h;
}

static void write_test(void)
{
    sion_int64 chunksize = 1200;
    sion_int32 fsblksize = 100;
    int globalrank = rank, numfiles = -1, filenum = rank < 2 ? 0 : 1, lrank;
    char *newfname = NULL, dirname[80], buffer[1000];
    FILE *fp;
    MPI_Comm lcomm;
    for (int i = 0; i < 1000; i++)
        buffer[i] = (char)('A' + rank);
    MPI_Comm_split(MPI_COMM_WORLD, filenum, rank, &lcomm);
    MPI_Comm_rank(lcomm, &lrank);
    snprintf(dirname, sizeof dirname, "node%03d", filenum);
    if (lrank == 0)
        mkdir(dirname, 0751);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(chdir(dirname) == 0, "chdir %s", dirname);
    int sid = sion_paropen_mpi("testB.out", "bw,buddy", &numfiles, MPI_COMM_WORLD, &lcomm, &chunksize, &fsblksize,
                               &globalrank, &fp, &newfname);
    CHECK(sid >= 0, "write open: %d", sid);
    if (sid >= 0) {
        size_t w = sion_coll_fwrite(buffer, 1, (size_t)rank, sid);
        w += sion_coll_fwrite(buffer, 1, 500, sid);
        w += sion_coll_fwrite(buffer, 1, 1000, sid);
        CHECK(w == (size_t)(rank + 1500), "wrote %zu", w);
        CHECK(sion_get_bytes_written(sid) == rank + 1500, "bytes_written %lld", (long long)sion_get_bytes_written(sid));
        sion_io_stat_t *p = sion_get_io_info(sid);
        if (p) {
            for (int c = 0; c < p->nfiles; c++)
                printf("on rank %2d: io_info [#%02d: fn=%-30s size=%6d role=%d]\n", rank, c, p->names[c],
                       (int)p->sizes[c], p->roles[c]);
            CHECK(p->nfiles == 2, "io_info: %d files", p->nfiles);
            if (p->nfiles == 2) {
                CHECK(!strcmp(p->names[0], filenum ? "testB.out.000001" : "testB.out") &&
                          p->sizes[0] == (size_t)(rank + 1500) && p->roles[0] == SION_ROLE_WRITER,
                      "io_info #0");
                CHECK(!strcmp(p->names[1], filenum ? "testB.out_BUDDY_00" : "testB.out_BUDDY_00.000001") &&
                          p->sizes[1] == 0 && p->roles[1] == (lrank == 0 ? SION_ROLE_COLLECTOR : SION_ROLE_NOWRITER),
                      "io_info #1: %s %zu %d", p->names[1], p->sizes[1], p->roles[1]);
            }
            sion_free_io_info(p);
        } else {
            CHECK(0, "sion_get_io_info returned NULL");
        }
        CHECK(sion_parclose_mpi(sid) == SION_SUCCESS, "close");
    }
    free(newfname);
    CHECK(chdir("..") == 0, "chdir ..");
    MPI_Comm_free(&lcomm);
    MPI_Barrier(MPI_COMM_WORLD);
}

static void check_files(void)
{
    static const struct {
        const char *path;
        uint64_t fnv;
        long len;
    } want[] = {
        {"node000/testB.out", 0xaeb32e8e9063ce4eull, 6084},
        {"node001/testB.out.000001", 0xb3c0d2c451f555bbull, 6048},
        {"node001/testB.out_BUDDY_00", 0x50076764eda5413dull, 6132},
        {"node000/testB.out_BUDDY_00.000001", 0x254c705e37f93294ull, 6096},
    };
    for (int i = 0; i < 4; i++) {
        long len;
        uint64_t h = fnv_file(want[i].path, &len);
        CHECK(len == want[i].len && h == want[i].fnv,
              "%s: %ld bytes, fnv %016llx; SIONlib 1.7.6 writes %ld bytes, "
              "fnv %016llx",
              want[i].path, len, (unsigned long long)h, want[i].len, (unsigned long long)want[i].fnv);
    }
    struct stat st;
    CHECK(stat("node000/testB.out_BUDDY_00", &st) != 0 && stat("node001/testB.out_BUDDY_00.000001", &st) != 0,
          "a copy in its own file's directory");
}

/* Read in directory dir (all ranks there, or each group in its node directory
 * when dir is NULL); expect_ok: every rank reads its 500 + 1000 bytes. */
static void read_test(const char *mode, const char *dir, int expect_ok)
{
    sion_int64 chunksize = 0;
    sion_int32 fsblksize = 0;
    int globalrank = rank, numfiles = 1, filenum = rank < 2 ? 0 : 1;
    char *newfname = NULL, dirname[80], buffer[1000];
    FILE *fp;
    MPI_Comm lcomm;
    MPI_Comm_split(MPI_COMM_WORLD, filenum, rank, &lcomm);
    snprintf(dirname, sizeof dirname, "node%03d", filenum);
    CHECK(chdir(dir ? dir : dirname) == 0, "chdir");
    MPI_Barrier(MPI_COMM_WORLD);
    int sid = sion_paropen_mpi("testB.out", mode, &numfiles, MPI_COMM_WORLD, &lcomm, &chunksize, &fsblksize,
                               &globalrank, &fp, &newfname);
    ONRANK printf("on rank %2d: %s in %s: sid=%s\n", rank, mode, dir ? dir : "node dirs", sid >= 0 ? "ok" : "-1");
    CHECK((sid >= 0) == expect_ok, "%s in %s: sid %d", mode, dir ? dir : "node dirs", sid);
    if (sid >= 0) {
        static const int want[2] = {500, 1000};
        int b = 0;
        long sum = 0;
        while (!sion_feof(sid) && b < 3) {
            sion_int64 avail = sion_bytes_avail_in_block(sid);
            size_t got = sion_coll_fread(buffer, 1, (size_t)avail, sid);
            int ok = b < 2 && avail == want[b] + (b == 0 ? rank : 0) && got == (size_t)avail;
            for (size_t i = 0; i < got; i++)
                ok = ok && buffer[i] == 'A' + rank;
            CHECK(ok, "block %d: %lld bytes available, %zu read", b, (long long)avail, got);
            sum += (long)got;
            b++;
        }
        CHECK(b == 2 && sum == 1500 + rank, "%d blocks, %ld bytes", b, sum);
        if (rank == 0) /* SIONlib's test prints rank 0's: the name opened, also when reading a copy */
            CHECK(newfname && !strcmp(newfname, "testB.out"), "newfname %s", newfname ? newfname : "(null)");
        CHECK(sion_parclose_mpi(sid) == SION_SUCCESS, "close");
    }
    free(newfname);
    CHECK(chdir("..") == 0, "chdir ..");
    MPI_Comm_free(&lcomm);
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (size != 4) {
        ONRANK fprintf(stderr, "run with 4 ranks\n");
        MPI_Finalize();
        return 2;
    }
    char dir[] = "buddy_XXXXXX";
    if (rank == 0 && !mkdtemp(dir))
        dir[0] = 0;
    MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (!dir[0] || chdir(dir)) {
        ONRANK fprintf(stderr, "cannot make a test directory\n");
        MPI_Finalize();
        return 1;
    }
    write_test();
    ONRANK check_files();
    ONRANK
    {
        mkdir("allnodes", 0755); /* as SIONlib's run script: links to every file */
        CHECK(symlink("../node000/testB.out", "allnodes/testB.out") == 0 &&
                  symlink("../node001/testB.out.000001", "allnodes/testB.out.000001") == 0 &&
                  symlink("../node001/testB.out_BUDDY_00", "allnodes/testB.out_BUDDY_00") == 0 &&
                  symlink("../node000/testB.out_BUDDY_00.000001", "allnodes/testB.out_BUDDY_00.000001") == 0,
              "links");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    read_test("br,buddy", "allnodes", 1); /* intact: the container */
    ONRANK CHECK(rename("node000/testB.out", "node000/testB.out_deleted") == 0, "rename");
    MPI_Barrier(MPI_COMM_WORLD);
    read_test("br", "allnodes", 0);
    read_test("br,buddy", "allnodes", 1); /* from the copy */
    read_test("br,buddy", NULL, 1);       /* each group sees only its node's files: the partners send the data */
    ONRANK CHECK(rename("node001/testB.out_BUDDY_00", "node001/testB.out_BUDDY_00_deleted") == 0, "rename");
    MPI_Barrier(MPI_COMM_WORLD);
    read_test("br,buddy", NULL, 0); /* file 0 and its copy lost: fails on every rank */
    ONRANK CHECK(rename("node001/testB.out_BUDDY_00_deleted", "node001/testB.out_BUDDY_00") == 0, "rename");
    int all = 0;
    MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    ONRANK
    {
        if (!all) { /* leave nothing behind */
            const char *rm[] = {"allnodes/testB.out",          "allnodes/testB.out.000001",
                                "allnodes/testB.out_BUDDY_00", "allnodes/testB.out_BUDDY_00.000001",
                                "node000/testB.out_deleted",   "node001/testB.out.000001",
                                "node001/testB.out_BUDDY_00",  "node000/testB.out_BUDDY_00.000001"};
            for (size_t i = 0; i < sizeof rm / sizeof rm[0]; i++)
                unlink(rm[i]);
            rmdir("allnodes");
            rmdir("node000");
            rmdir("node001");
            if (chdir("..") == 0)
                rmdir(dir);
        }
        printf("mpi_buddy_test: %s (%d failures)\n", all ? "FAIL" : "OK", all);
    }
    MPI_Finalize();
    return all ? 1 : 0;
}
