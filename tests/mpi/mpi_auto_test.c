/* mpi_auto_test - the files=auto mode key of sion_paropen_mpi (one physical
 * file per storage group, from FGFS) on simulated nodes.
 *
 * usage: mpiexec -n N mpi_auto_test COMMAND NAME [key=value ...]
 *   NAME is the container's name as every rank passes it (it may be
 *   relative: the drivers run each simulated node in its own directory or
 *   mount namespace, so the same name can mean different storage).
 *   write files=F [numfiles=Q] [expect=local|shared]
 *        writes with "bw,files=auto" (numFiles = Q, default 0), every rank
 *        its own bytes (several blocks); checks numFiles == F written back,
 *        the lComm output (the ranks of my physical file: the same member
 *        name; F of them in all), with expect=local that ranks of other
 *        host names write other members than mine, and after the close the
 *        members this rank sees next to NAME: local: exactly those written
 *        by the ranks of its host name; shared: all F members.
 *   read files=F
 *        reads with "br,files=auto": numFiles == F, lComm as above, every
 *        rank's bytes back exactly, sion_feof at the end.
 *   fail mode=M expect=TEXT
 *        sion_paropen_mpi(NAME, M, ...) must fail on every rank with a last
 *        error containing TEXT (writes: numFiles 0).
 *   others
 *        files=auto elsewhere is refused with a message (serial open,
 *        sion_paropen_mapped_mpi), other files= values too, and ranks that
 *        disagree on files=auto fail on every rank.
 * The host name of a rank is $SHEAF_FGFS_HOST or gethostname (as FGFS sees
 * it). Exit status 0 when every check passed on every rank. */
#include <mpi.h>
#include <sion.h>
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mpicheck.h"

static const char *arg(int argc, char **argv, const char *key, const char *dflt)
{
    size_t n = strlen(key);
    for (int i = 3; i < argc; i++)
        if (!strncmp(argv[i], key, n) && argv[i][n] == '=')
            return argv[i] + n + 1;
    return dflt;
}

/* The bytes rank r writes: 3000 + 1500 r, several 1 KiB-chunk blocks. */
static size_t data_len(int r) { return 3000 + 1500 * (size_t)r; }
static unsigned char data_at(int r, size_t i) { return (unsigned char)((r * 131 + i * 7 + i / 251) & 0xff); }

static void host_of(char *h, size_t n)
{
    const char *e = getenv("SHEAF_FGFS_HOST");
    if (e && *e)
        snprintf(h, n, "%s", e);
    else if (gethostname(h, n))
        snprintf(h, n, "?");
    h[n - 1] = '\0';
}

static unsigned long hash_str(const char *s)
{
    unsigned long h = 1469598103934665603ul;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ul;
    return h;
}

/* The lComm output: a communicator of the ranks of my physical file. */
static void check_lcomm(MPI_Comm lc, const char *member, int nfiles, const char *what)
{
    CHECK(lc != MPI_COMM_NULL, "%s: lComm output is MPI_COMM_NULL", what);
    if (lc == MPI_COMM_NULL)
        return;
    int lr = -1, roots = 0;
    MPI_Comm_rank(lc, &lr);
    unsigned long h = hash_str(member), h0 = h;
    MPI_Bcast(&h0, 1, MPI_UNSIGNED_LONG, 0, lc);
    CHECK(h0 == h, "%s: the ranks of my lComm write other members than mine (%s)", what, member);
    int isroot = lr == 0;
    MPI_Allreduce(&isroot, &roots, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(roots == nfiles, "%s: %d lComm outputs in all, numFiles %d", what, roots, nfiles);
    MPI_Comm_free(&lc);
}

/* Members of the set NAME visible in its directory (NAME, NAME.NNNNNN). */
static int count_members(const char *name, const char *mine, int *have_mine)
{
    char dir[4096], base[1024];
    const char *sl = strrchr(name, '/');
    snprintf(dir, sizeof dir, "%.*s", sl ? (int)(sl - name) : 1, sl ? name : ".");
    snprintf(base, sizeof base, "%s", sl ? sl + 1 : name);
    const char *msl = strrchr(mine, '/');
    const char *mbase = msl ? msl + 1 : mine;
    size_t bl = strlen(base);
    int n = 0;
    *have_mine = 0;
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    struct dirent *e;
    while ((e = readdir(d))) {
        const char *s = e->d_name;
        if (strncmp(s, base, bl))
            continue;
        if (s[bl] == '\0' || (s[bl] == '.' && strlen(s + bl + 1) == 6 && strspn(s + bl + 1, "0123456789") == 6)) {
            n++;
            if (!strcmp(s, mbase))
                *have_mine = 1;
        }
    }
    closedir(d);
    return n;
}

static void do_write(const char *name, int files, int req, const char *expect)
{
    sion_int64 chunk = 1024;
    sion_int32 fsblk = -1;
    int nf = req, grank = -1;
    MPI_Comm lc = MPI_COMM_NULL;
    FILE *fp = NULL;
    char *member = NULL;
    int sid = sion_paropen_mpi(name, "bw,files=auto", &nf, MPI_COMM_WORLD, &lc, &chunk, &fsblk, &grank, &fp, &member);
    CHECK(sid >= 0, "write open of %s with files=auto", name);
    if (sid < 0)
        return;
    CHECK(nf == files, "numFiles written back: %d, expected %d", nf, files);
    CHECK(grank == g_rank, "globalrank %d", grank);
    CHECK(member != NULL, "newfname is NULL");
    if (!member)
        return;
    check_lcomm(lc, member, nf, "write");
    size_t len = data_len(g_rank);
    unsigned char *buf = malloc(len);
    for (size_t i = 0; i < len; i++)
        buf[i] = data_at(g_rank, i);
    size_t done = 0;
    while (done < len) { /* pieces of up to 700 bytes: several blocks of 1 KiB chunks */
        size_t n = len - done < 700 ? len - done : 700;
        size_t got = sion_fwrite(buf + done, 1, n, sid);
        CHECK(got == n, "sion_fwrite(%zu) returned %zu", n, got);
        if (got != n)
            break;
        done += n;
    }
    free(buf);
    CHECK(sion_parclose_mpi(sid) == SION_SUCCESS, "close after writing");

    /* one file per node: ranks with the same host name share a member, ranks
     * with different ones do not (expect=local); one set of members otherwise */
    char host[256];
    host_of(host, sizeof host);
    unsigned long mine[2] = {hash_str(host), hash_str(member)}, *all = malloc(sizeof mine * (size_t)g_size);
    MPI_Allgather(mine, 2, MPI_UNSIGNED_LONG, all, 2, MPI_UNSIGNED_LONG, MPI_COMM_WORLD);
    int here = 0; /* distinct members written by the ranks of my host */
    for (int r = 0; r < g_size; r++) {
        int same_host = all[2 * r] == mine[0], same_member = all[2 * r + 1] == mine[1];
        if (!strcmp(expect, "local"))
            CHECK(same_host || !same_member, "rank %d (other host) writes my member (%s)", r, member);
        int first = 1;
        for (int q = 0; q < r && same_host; q++)
            if (all[2 * q] == mine[0] && all[2 * q + 1] == all[2 * r + 1])
                first = 0;
        here += same_host && first;
    }
    free(all);
    MPI_Barrier(MPI_COMM_WORLD);
    int have = 0, n = count_members(name, member, &have);
    CHECK(have, "my member %s is not in my storage", member);
    if (!strcmp(expect, "local"))
        CHECK(n == here, "node-local storage holds %d members of %s here, expected %d (those of this node)", n, name,
              here);
    else
        CHECK(n == files, "shared storage holds %d members of %s, expected %d", n, name, files);
    struct stat st;
    CHECK(stat(member, &st) == 0 && st.st_size > (off_t)data_len(g_rank), "member %s size %lld", member,
          (long long)st.st_size);
    if (g_rank == 0)
        printf("write %s: %d physical file(s), rank 0 wrote %s, %d member(s) in its storage\n", name, nf, member, n);
    free(member);
}

static void do_read(const char *name, int files)
{
    sion_int64 chunk = 0;
    sion_int32 fsblk = 0;
    int nf = -7, grank = -1;
    MPI_Comm lc = MPI_COMM_NULL;
    FILE *fp = NULL;
    char *member = NULL;
    int sid = sion_paropen_mpi(name, "br,files=auto", &nf, MPI_COMM_WORLD, &lc, &chunk, &fsblk, &grank, &fp, &member);
    CHECK(sid >= 0, "read open of %s with files=auto", name);
    if (sid < 0)
        return;
    CHECK(nf == files, "numFiles %d, expected %d", nf, files);
    if (member)
        check_lcomm(lc, member, nf, "read");
    size_t len = data_len(g_rank);
    unsigned char *buf = malloc(len + 100);
    size_t got = sion_fread(buf, 1, len + 100, sid);
    CHECK(got == len, "read %zu bytes, wrote %zu", got, len);
    size_t bad = 0;
    for (size_t i = 0; i < got && i < len; i++)
        bad += buf[i] != data_at(g_rank, i);
    CHECK(bad == 0, "%zu bytes differ", bad);
    CHECK(sion_feof(sid) == 1, "sion_feof at the end");
    free(buf);
    CHECK(sion_parclose_mpi(sid) == SION_SUCCESS, "close after reading");
    if (g_rank == 0)
        printf("read %s: %d physical file(s), every rank's %s bytes back\n", name, nf, got == len ? "exact" : "WRONG");
    free(member);
}

static void do_fail(const char *name, const char *mode, const char *expect)
{
    sion_int64 chunk = 1024;
    sion_int32 fsblk = -1;
    int nf = 0, grank = -1;
    MPI_Comm lc = MPI_COMM_NULL;
    int sid = sion_paropen_mpi(name, mode, &nf, MPI_COMM_WORLD, &lc, &chunk, &fsblk, &grank, NULL, NULL);
    CHECK(sid < 0, "open of %s with \"%s\" should fail", name, mode);
    CHECK(strstr(sheaf_last_error(), expect) != NULL, "the message should mention \"%s\"", expect);
    CHECK(lc == MPI_COMM_NULL, "lComm set by a failed open");
    if (sid >= 0)
        sion_parclose_mpi(sid);
    if (g_rank == 0)
        printf("failed as expected on rank 0: %s\n", sheaf_last_error());
    MPI_Barrier(MPI_COMM_WORLD); /* every rank came back */
}

static void do_others(const char *name)
{
    /* serial open: refused (the key means nothing there) */
    char sname[4200];
    snprintf(sname, sizeof sname, "%s.serial%d", name, g_rank);
    int ntasks = 1, nfiles = 1;
    sion_int64 cs = 1024, *chunks = &cs;
    sion_int32 fsblk = -1;
    int gr = 0, *granks = &gr;
    FILE *fp = NULL;
    int sid = sion_open(sname, "bw,files=auto", &ntasks, &nfiles, &chunks, &fsblk, &granks, &fp);
    CHECK(sid < 0, "serial open with files=auto should fail");
    CHECK(strstr(sheaf_last_error(), "taken only by sion_paropen_mpi") != NULL, "serial open message");
    if (sid >= 0)
        sion_close(sid);
    unlink(sname);
    /* another files= value */
    sid = sion_open(sname, "bw,files=4", &ntasks, &nfiles, &chunks, &fsblk, &granks, &fp);
    CHECK(sid < 0 && strstr(sheaf_last_error(), "the only value is auto"), "files=4 should be refused");
    if (sid >= 0)
        sion_close(sid);
    unlink(sname);
    /* the mapped open: refused on every rank */
    int nl = 1, *glob = malloc(sizeof(int)), *mf = malloc(sizeof(int)), *ml = malloc(sizeof(int));
    sion_int64 *mcs = malloc(sizeof(sion_int64));
    glob[0] = g_rank;
    mf[0] = 0;
    ml[0] = g_rank;
    mcs[0] = 1024;
    int mnf = 1;
    fsblk = -1;
    sid = sion_paropen_mapped_mpi((char *)name, "bw,files=auto", &mnf, MPI_COMM_WORLD, &nl, &glob, &mcs, &mf, &ml,
                                  &fsblk, NULL);
    CHECK(sid < 0, "mapped open with files=auto should fail");
    CHECK(strstr(sheaf_last_error(), "taken only by sion_paropen_mpi") != NULL, "mapped open message");
    if (sid >= 0)
        sion_parclose_mapped_mpi(sid);
    free(glob);
    free(mf);
    free(ml);
    free(mcs);
    /* ranks disagree: rank 0 asks for files=auto, the others give numFiles 1 */
    sion_int64 chunk = 1024;
    int nf = g_rank == 0 ? 0 : 1, grank = -1;
    fsblk = -1;
    sid = sion_paropen_mpi(name, g_rank == 0 ? "bw,files=auto" : "bw", &nf, MPI_COMM_WORLD, NULL, &chunk, &fsblk,
                           &grank, NULL, NULL);
    CHECK(sid < 0, "ranks that disagree on files=auto should fail");
    CHECK(strstr(sheaf_last_error(), "disagree on files=auto") != NULL, "disagreement message");
    if (sid >= 0)
        sion_parclose_mpi(sid);
    /* files=auto with buddy: refused on every rank */
    nf = 0;
    sid = sion_paropen_mpi(name, "bw,buddy,files=auto", &nf, MPI_COMM_WORLD, NULL, &chunk, &fsblk, &grank, NULL, NULL);
    CHECK(sid < 0 && strstr(sheaf_last_error(), "files=auto and buddy"), "files=auto with buddy should fail");
    if (sid >= 0)
        sion_parclose_mpi(sid);
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    if (argc < 3) {
        if (g_rank == 0)
            fprintf(stderr, "usage: mpi_auto_test write|read|fail|others NAME [key=value ...]\n");
        MPI_Finalize();
        return 2;
    }
    const char *cmd = argv[1], *name = argv[2];
    sheaf_set_error_printing(0); /* expected failures are checked, not printed */
    if (!strcmp(cmd, "write"))
        do_write(name, atoi(arg(argc, argv, "files", "0")), atoi(arg(argc, argv, "numfiles", "0")),
                 arg(argc, argv, "expect", "shared"));
    else if (!strcmp(cmd, "read"))
        do_read(name, atoi(arg(argc, argv, "files", "0")));
    else if (!strcmp(cmd, "fail"))
        do_fail(name, arg(argc, argv, "mode", "bw,files=auto"), arg(argc, argv, "expect", "files=auto"));
    else if (!strcmp(cmd, "others"))
        do_others(name);
    else
        CHECK(0, "unknown command %s", cmd);
    int fails = 0;
    MPI_Allreduce(&g_fail, &fails, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (g_rank == 0)
        printf("%s %s: %s (%d failed checks over all ranks)\n", cmd, name, fails ? "FAILED" : "ok", fails);
    MPI_Finalize();
    return fails ? 1 : 0;
}
