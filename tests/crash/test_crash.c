/* test_crash.c - crash consistency: writers killed at random moments lose
 * nothing they flushed.
 *
 * Each trial forks a child that runs P = 1..8 tasks (threads of the generic
 * API over tests/par/threadcomm) writing random-sized pieces of a known
 * pattern into a container (1 or 2 physical files, random chunk sizes, so
 * tasks go through several blocks). With flushes on, a task calls
 * sion_flush now and then and, once it returned, reports its byte count
 * through a pipe. The parent SIGKILLs the child after a random delay (some
 * children finish and close first), then runs sheaf_recover and reads every
 * task back with the serial API: each task must hold at least the bytes it
 * reported as flushed, and every byte it holds must be the pattern. Trials
 * without flushes check that recovery never crashes or invents data; every
 * third trial writes with "checksum": recovery must verify every recovered
 * block against the CRCs the tasks journaled (none damaged or unverifiable).
 * Prints trials, kills, flushed and recovered bytes and losses; exit 0 only
 * with 0 losses and no unexpected error.
 *   test_crash [TRIALS]   (default 200, ctest runs 500; env SHEAF_TEST_SEED changes the run) */
#include "partest.h"
#include "sheaf.h"
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#define MAXP 8

typedef struct trial {
    char fname[4200];
    int P, nf, flush, salt, cksum;
    int64_t chunk[MAXP];
    uint64_t seed;
    int pipefd;
    int aid;
} trial;

typedef struct {
    int32_t task, pad;
    int64_t bytes;
} report;

static void writer(tc_task *t)
{
    trial *tr = t->arg;
    int g = t->grank;
    uint64_t rs = tr->seed * 131 + (uint64_t)g;
    sion_int64 chunk = tr->chunk[g];
    sion_int32 fsblk = 4096;
    int nf = tr->nf, fn = g % nf, ls = 0, lr = 0;
    for (int k = 0; k < tr->P; k++) /* file of task k: k % nf; local rank: its index there */
        if (k % nf == fn) {
            if (k == g)
                lr = ls;
            ls++;
        }
    FILE *fp = NULL;
    int sid = sion_generic_paropen(tr->aid, tr->fname, tr->cksum ? "bw,checksum" : "bw", &chunk, &fsblk, t->world, g,
                                   tr->P, &fn, &nf, &lr, &ls, &fp, NULL);
    if (sid < 0)
        _exit(3);
    unsigned char buf[6000];
    int64_t total = 0, limit = pt_range(&rs, 50000, 1000000);
    while (total < limit) {
        size_t n = (size_t)pt_range(&rs, 1, 6000);
        pt_fill(buf, (unsigned)tr->salt, g, total, n);
        if (sion_fwrite(buf, 1, n, sid) != n)
            _exit(4);
        total += (int64_t)n;
        if (tr->flush && pt_range(&rs, 0, 7) == 0) {
            if (sion_flush(sid) != SION_SUCCESS)
                _exit(5);
            report r = {g, 0, total};
            if (write(tr->pipefd, &r, sizeof r) != (ssize_t)sizeof r)
                _exit(6);
        }
    }
    if (sion_generic_parclose(sid) != SION_SUCCESS)
        _exit(7);
}

/* Read task t's stream and check it; returns bytes held, -1 on a wrong byte. */
static int64_t check_task(int sid, int t, int salt)
{
    if (sion_seek(sid, t, SION_ABSOLUTE_POS, 0) != SION_SUCCESS)
        return -2;
    unsigned char buf[8192];
    int64_t off = 0;
    while (!sion_feof(sid)) {
        size_t n = sion_fread(buf, 1, sizeof buf, sid);
        if (n == 0)
            return -2;
        if (pt_mismatch(buf, (unsigned)salt, t, off, n) >= 0)
            return -1;
        off += (int64_t)n;
    }
    return off;
}

int main(int argc, char **argv)
{
    int trials = argc > 1 ? atoi(argv[1]) : 200;
    sheaf_set_error_printing(0);
    signal(SIGPIPE, SIG_IGN);
    const char *dir = pt_mkdtemp();
    uint64_t seed = pt_seed();
    int aid = tc_create_api("crash");
    long long kills = 0, completed = 0, flushed_bytes = 0, recovered = 0, losses = 0, errors = 0, noflush = 0;
    long long cks_trials = 0, cks_verified = 0;
    for (int k = 0; k < trials; k++) {
        trial tr;
        memset(&tr, 0, sizeof tr);
        tr.seed = seed + (uint64_t)k * 7919;
        uint64_t rs = tr.seed;
        tr.P = (int)pt_range(&rs, 1, MAXP);
        tr.nf = tr.P > 1 && pt_range(&rs, 0, 3) == 0 ? 2 : 1;
        tr.flush = k % 5 != 4; /* every fifth trial: no flushes */
        tr.cksum = k % 3 == 1; /* every third: checksum mode (recovery must keep and pass the CRCs) */
        tr.salt = k + 1;
        tr.aid = aid;
        for (int g = 0; g < tr.P; g++)
            tr.chunk[g] = pt_range(&rs, 1000, 40000);
        snprintf(tr.fname, sizeof tr.fname, "%s/crash%d.sion", dir, k);
        int pfd[2];
        if (pipe(pfd) != 0) {
            perror("pipe");
            return 2;
        }
        pid_t pid = fork();
        if (pid == 0) {
            close(pfd[0]);
            tr.pipefd = pfd[1];
            tc_set_leak_check(0);
            tc_run(tr.P, writer, &tr);
            _exit(0);
        }
        close(pfd[1]);
        struct timespec d = {0, (long)pt_range(&rs, 0, 8000) * 1000L}; /* 0-8 ms: most writers die mid-run */
        nanosleep(&d, NULL);
        kill(pid, SIGKILL);
        int status = 0;
        waitpid(pid, &status, 0);
        if (WIFSIGNALED(status))
            kills++;
        else if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
            completed++;
        else {
            fprintf(stderr, "trial %d: writer exited with status %d\n", k, WEXITSTATUS(status));
            errors++;
        }
        int64_t flushed[MAXP] = {0};
        report r;
        while (read(pfd[0], &r, sizeof r) == (ssize_t)sizeof r)
            if (r.task >= 0 && r.task < tr.P && r.bytes > flushed[r.task])
                flushed[r.task] = r.bytes;
        close(pfd[0]);
        int64_t want = 0;
        for (int g = 0; g < tr.P; g++)
            want += flushed[g];
        flushed_bytes += want;
        sheaf_recover_summary s;
        int rc = pt_exists(tr.fname) ? sheaf_recover(tr.fname, 0, NULL, NULL, &s) : SHEAF_E_NOTFOUND;
        if (rc) {
            /* acceptable only when nothing was flushed (killed before any flush, or during the open) */
            if (want > 0) {
                fprintf(stderr, "trial %d (P=%d nf=%d): recover failed with %lld bytes flushed: %s\n", k, tr.P, tr.nf,
                        (long long)want, sheaf_last_error());
                losses += want;
            } else {
                noflush++;
            }
            continue;
        }
        if (tr.cksum) {
            cks_trials++;
            cks_verified += s.blocks_verified;
            if (s.blocks_damaged || s.blocks_unverifiable || (s.blocks > 0 && !s.checksums)) {
                fprintf(stderr,
                        "trial %d (P=%d nf=%d, checksum): %lld damaged, %lld unverifiable blocks of %lld "
                        "(checksums %d)\n",
                        k, tr.P, tr.nf, (long long)s.blocks_damaged, (long long)s.blocks_unverifiable,
                        (long long)s.blocks, s.checksums);
                errors++;
            }
        }
        int ntasks = 0, nfiles = 0, *gr = NULL;
        sion_int64 *chunks = NULL;
        sion_int32 fsblk = 0;
        FILE *fp = NULL;
        int sid = sion_open(tr.fname, "rb", &ntasks, &nfiles, &chunks, &fsblk, &gr, &fp);
        if (sid < 0 || ntasks != tr.P) {
            fprintf(stderr, "trial %d: recovered container unreadable: %s\n", k, sheaf_last_error());
            losses += want;
            errors++;
            if (sid >= 0)
                sion_close(sid);
            free(chunks);
            free(gr);
            continue;
        }
        for (int g = 0; g < tr.P; g++) {
            int64_t have = check_task(sid, g, tr.salt);
            if (have < 0) {
                fprintf(stderr, "trial %d task %d: %s\n", k, g, have == -1 ? "wrong bytes" : "read error");
                errors++;
                losses += flushed[g];
            } else if (have < flushed[g]) {
                fprintf(stderr, "trial %d (P=%d nf=%d) task %d: %lld bytes flushed, %lld recovered\n", k, tr.P, tr.nf,
                        g, (long long)flushed[g], (long long)have);
                losses += flushed[g] - have;
            } else {
                recovered += have;
            }
        }
        sion_close(sid);
        free(chunks);
        free(gr);
        char j[4300];
        snprintf(j, sizeof j, "%s.sheafj", tr.fname);
        if (pt_exists(j)) {
            fprintf(stderr, "trial %d: journal left behind after recovery\n", k);
            errors++;
        }
        remove(tr.fname);
        snprintf(j, sizeof j, "%s.000001", tr.fname);
        remove(j);
    }
    sion_generic_free_api(aid);
    pt_rmtree(dir);
    printf("crash test: %d trials (%lld killed, %lld completed, %lld without a recoverable container and nothing "
           "flushed); flushed %lld bytes, recovered %lld bytes; lost flushed bytes: %lld; errors: %lld; "
           "checksum trials recovered: %lld, their blocks verified against the journaled CRCs: %lld\n",
           trials, kills, completed, noflush, flushed_bytes, recovered, losses, errors, cks_trials, cks_verified);
    return losses || errors ? 1 : 0;
}
