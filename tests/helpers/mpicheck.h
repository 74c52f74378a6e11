/* mpicheck.h - the CHECK of the MPI test programs (header-only). A failed
 * check prints "[rank r] FAIL file:line: check: detail (last error: ...)"
 * to stderr and counts in g_fail; g_checks counts every check (CHECK is for
 * one thread: a threaded test checks after its parallel region). The program
 * sets g_rank and g_size after MPI_Init and sums g_fail over the ranks.
 * fill: a task's test pattern. With <mpi.h> included first: mc_tempdir and
 * mc_finish, a program's scratch directory and its verdict (PMPI calls, so
 * programs that count MPI calls do not count these). */
#ifndef SHEAF_MPICHECK_H
#define SHEAF_MPICHECK_H
#include <stdarg.h>
#include <stdio.h>
#include "sion.h"

static int g_rank, g_size, g_fail, g_checks;

static void fail_at(const char *file, int line, const char *cond, const char *fmt, ...)
{
    char msg[1400]; /* one fprintf: the line is not torn between ranks */
    int n = snprintf(msg, sizeof msg, "[rank %d] FAIL %s:%d: %s: ", g_rank, file, line, cond);
    va_list ap;
    va_start(ap, fmt);
    if (n >= 0 && (size_t)n < sizeof msg)
        vsnprintf(msg + n, sizeof msg - (size_t)n, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s (last error: \"%s\")\n", msg, sheaf_last_error());
    fflush(stderr);
    g_fail++;
}
#define CHECK(cond, ...)                                                                                               \
    do {                                                                                                               \
        g_checks++;                                                                                                    \
        if (!(cond))                                                                                                   \
            fail_at(__FILE__, __LINE__, #cond, __VA_ARGS__);                                                           \
    } while (0)

/* n bytes of task `task`'s pattern: byte i is task * a + i * c (mod 256). */
static inline void fill(char *b, int n, int task, int a, int c)
{
    for (int i = 0; i < n; i++)
        b[i] = (char)(task * a + i * c);
}

#ifdef MPI_VERSION
#include <errno.h>
#include <stdlib.h>
#include <string.h>
/* rank 0 makes base/prefix.XXXXXX; every rank gets its name in dir. A
 * failure aborts the job (nothing to test in). */
static inline void mc_tempdir(const char *base, const char *prefix, char *dir, int size)
{
    dir[0] = '\0';
    if (g_rank == 0) {
        snprintf(dir, (size_t)size, "%s/%s.XXXXXX", base, prefix);
        if (!mkdtemp(dir)) {
            fprintf(stderr, "mkdtemp %s: %s\n", dir, strerror(errno));
            dir[0] = '\0';
        }
    }
    PMPI_Bcast(dir, size, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (!dir[0])
        MPI_Abort(MPI_COMM_WORLD, 2);
}

/* the verdict over every rank: rank 0 removes dir and prints OK or FAILED;
 * the program's exit code (call before MPI_Finalize) */
static inline int mc_finish(const char *dir)
{
    int bad = g_fail, anybad = 0;
    PMPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (g_rank == 0) {
        char cmd[4300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd) != 0)
            fprintf(stderr, "could not remove %s\n", dir);
        printf("%s\n", anybad ? "FAILED" : "OK");
    }
    return anybad ? 1 : 0;
}
#endif

#endif
