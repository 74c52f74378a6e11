/* ldmpi.c - the MPI program of the loader tests: calls a generated library,
 * reduces over the ranks, and (LDAPP_ORACLE) lists its mapped objects. */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int chain_top(void);

int main(int argc, char **argv)
{
    int r, n, t = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    int s = chain_top() + r;
    MPI_Allreduce(&s, &t, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    printf("rank %d of %d sum %d\n", r, n, t);
    const char *o = getenv("LDAPP_ORACLE");
    FILE *m = o ? fopen("/proc/self/maps", "r") : NULL,
         *out = m ? fdopen(open(o, O_WRONLY | O_APPEND | O_CREAT, 0600), "a") : NULL;
    char line[4096];
    while (out && fgets(line, sizeof line, m)) {
        char *p = strchr(line, '/');
        if (!p)
            continue;
        p[strcspn(p, "\n")] = 0;
        if (strstr(p, ".so") || access(p, X_OK) == 0) {
            char b[4200];
            int k = snprintf(b, sizeof b, "%d %s\n", (int)getpid(), p);
            if (k > 0 && write(fileno(out), b, (size_t)k) < 0)
                break; /* one line, one write */
        }
    }
    if (m)
        fclose(m);
    if (out)
        fclose(out);
    MPI_Finalize();
    return 0;
}
