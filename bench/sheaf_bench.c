/* sheaf_bench.c - sheaf-bench: partest-style MPI benchmark of sheaf
 * containers against task-local files and MPI-IO (main, options, the
 * repetition loop). Usage: `sheaf-bench --help`; results: bench/RESULTS.md. */
#include "bench.h"
#include <mpi.h>
#include "sion.h"
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *mode_names[] = {"container",  "container-rank", "tasklocal", "mpiio-ind",
                                   "mpiio-coll", "manytask",       "openclose"};

const char *bench_mode_name(int mode) { return mode_names[mode]; }

static void usage(void)
{
    printf("usage: mpiexec -n N sheaf-bench [options]\n"
           "partest options:\n"
           "  -f FILE   container / shared file; task-local files go to FILE.tasks/ (partest_parfile.sion)\n"
           "  -n N      physical files of the container (1)\n"
           "  -r SIZE   chunk size per task (default: the task's size)\n"
           "  -q SIZE   file system block size (-1: detect; partest uses 2M)\n"
           "  -T N      0 container, 1 container read with sion_open_rank, 2 MPI-IO, 3 task-local files\n"
           "  -b SIZE   bytes per write/read call (10M)\n"
           "  -s SIZE   bytes per task (20M)      -g SIZE  global bytes (sets -s = SIZE/tasks)\n"
           "  -W 0|1    write phase (1)           -R 0|1   read phase (1)\n"
           "  -C        no checksum verification  -L       posix mode (container)\n"
           "  -M / -m   collective write / read (sion_coll_fwrite/fread, mode \",collective\")\n"
           "  -X        unlink the files at the end\n"
           "long options:\n"
           "  --mode=container|container-rank|tasklocal|mpiio-ind|mpiio-coll|manytask|openclose\n"
           "  --reps N (3)  --durable (fsync before close, page cache dropped before reading)  --cached (default)\n"
           "  --threads N   manytask: threads per rank (tasks = ranks x threads)\n"
           "  --manytask=container|tasklocal|both (both)\n"
           "  --manytask-api=hybrid|mapped  hybrid (default): threads x ranks, sion_paropen_ompi, one file per\n"
           "                thread; mapped: --threads tasks per rank without threads, sion_paropen_mapped_mpi,\n"
           "                files created one after the other\n"
           "  --stage-limit SIZE  per-task bytes up to which data is generated/verified outside the timing (1G)\n"
           "  --sleep-wait  sleeping barrier before collective closes (ranks that are done do not\n"
           "                busy-poll in MPI while others still write: for oversubscribed nodes)\n"
           "  --sync-barrier  container --durable: sleeping barrier after the writes, before the fsync (no\n"
           "                fsync of the shared file while other tasks still write into it)\n"
           "  --json FILE   --label TEXT   --quiet\n"
           "Sizes: k/K/M/G/T (1024-based, also KiB..), kB/MB/GB (1000-based).\n");
}

static int64_t size_arg(const char *s, const char *opt)
{
    int64_t v = bench_parse_size(s);
    if (v < 0) {
        fprintf(stderr, "sheaf-bench: bad size '%s' for %s\n", s, opt);
        exit(1);
    }
    return v;
}

static int parse(int argc, char **argv, bench_opts *o, int ntasks_ranks)
{
    static struct option lo[] = {{"filename", 1, 0, 'f'},
                                 {"numfiles", 1, 0, 'n'},
                                 {"chunksize", 1, 0, 'r'},
                                 {"fsblksize", 1, 0, 'q'},
                                 {"testtype", 1, 0, 'T'},
                                 {"bufsize", 1, 0, 'b'},
                                 {"localsize", 1, 0, 's'},
                                 {"totalsize", 1, 0, 'g'},
                                 {"write", 1, 0, 'W'},
                                 {"read", 1, 0, 'R'},
                                 {"nochecksum", 0, 0, 'C'},
                                 {"posix", 0, 0, 'L'},
                                 {"collwrite", 0, 0, 'M'},
                                 {"collread", 0, 0, 'm'},
                                 {"unlinkfiles", 0, 0, 'X'},
                                 {"verbose", 0, 0, 'v'},
                                 {"mode", 1, 0, 1000},
                                 {"reps", 1, 0, 1001},
                                 {"durable", 0, 0, 1002},
                                 {"cached", 0, 0, 1003},
                                 {"threads", 1, 0, 1004},
                                 {"manytask", 1, 0, 1005},
                                 {"json", 1, 0, 1006},
                                 {"label", 1, 0, 1007},
                                 {"quiet", 0, 0, 1008},
                                 {"stage-limit", 1, 0, 1009},
                                 {"manytask-api", 1, 0, 1010},
                                 {"sleep-wait", 0, 0, 1011},
                                 {"sync-barrier", 0, 0, 1012},
                                 {"help", 0, 0, 'h'},
                                 {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "f:n:r:q:T:b:s:g:W:R:CLMmXvh", lo, NULL)) != -1) {
        switch (c) {
        case 'f':
            o->fname = optarg;
            break;
        case 'n':
            o->numfiles = atoi(optarg);
            break;
        case 'r':
            o->chunksize = size_arg(optarg, "-r");
            break;
        case 'q':
            o->fsblksize = strcmp(optarg, "-1") ? (int)size_arg(optarg, "-q") : -1;
            break;
        case 'T': {
            static const int tt[] = {M_CONTAINER, M_CONTAINER_RANK, M_MPIIO_IND, M_TASKLOCAL};
            int v = atoi(optarg);
            if (v < 0 || v > 3) {
                fprintf(stderr, "sheaf-bench: -T %s: use 0..3\n", optarg);
                return -1;
            }
            o->mode = tt[v];
            break;
        }
        case 'b':
            o->bufsize = size_arg(optarg, "-b");
            break;
        case 's':
            o->localsize = size_arg(optarg, "-s");
            break;
        case 'g':
            o->totalsize = size_arg(optarg, "-g");
            break;
        case 'W':
            o->do_write = atoi(optarg) != 0;
            break;
        case 'R':
            o->do_read = atoi(optarg) != 0;
            break;
        case 'C':
            o->checksum = 0;
            break;
        case 'L':
            o->posix = 1;
            break;
        case 'M':
            o->collwrite = 1;
            break;
        case 'm':
            o->collread = 1;
            break;
        case 'X':
            o->unlink_files = 1;
            break;
        case 'v':
            break;
        case 1000: {
            int k, n = (int)(sizeof mode_names / sizeof mode_names[0]);
            for (k = 0; k < n && strcmp(optarg, mode_names[k]); k++)
                ;
            if (k == n) {
                fprintf(stderr, "sheaf-bench: unknown --mode=%s\n", optarg);
                return -1;
            }
            o->mode = k;
            break;
        }
        case 1001:
            o->reps = atoi(optarg);
            break;
        case 1002:
            o->durable = 1;
            break;
        case 1003:
            o->durable = 0;
            break;
        case 1004:
            o->threads = atoi(optarg);
            break;
        case 1005:
            o->manytask_what = !strcmp(optarg, "container") ? 1 : !strcmp(optarg, "tasklocal") ? 2 : 0;
            break;
        case 1006:
            o->json = optarg;
            break;
        case 1007:
            o->label = optarg;
            break;
        case 1008:
            o->quiet = 1;
            break;
        case 1009:
            o->stage_limit = size_arg(optarg, "--stage-limit");
            break;
        case 1011:
            o->sleepwait = 1;
            break;
        case 1012:
            o->syncbarrier = 1;
            break;
        case 1010:
            o->mapped = !strcmp(optarg, "mapped");
            break;
        case 'h':
            usage();
            return 1;
        default:
            return -1;
        }
    }
    if (o->reps < 1 || o->reps > MAX_REPS || o->threads < 1 || o->numfiles < 1 || o->bufsize < 1) {
        fprintf(stderr, "sheaf-bench: need 1 <= --reps <= %d, --threads >= 1, -n >= 1, -b >= 1\n", MAX_REPS);
        return -1;
    }
    if (o->mode != M_MANYTASK)
        o->threads = 1;
    if (o->totalsize > 0)
        o->localsize = o->totalsize / ((int64_t)ntasks_ranks * o->threads);
    if (o->mode == M_OPENCLOSE)
        o->localsize = 0;
    if ((o->mode == M_MPIIO_IND || o->mode == M_MPIIO_COLL) && o->bufsize > (1LL << 30)) {
        fprintf(stderr, "sheaf-bench: MPI-IO modes need -b <= 1G\n");
        return -1;
    }
    return 0;
}

static void unlink_all(const bench_opts *o, int rank, int size)
{
    char p[4096];
    MPI_Barrier(MPI_COMM_WORLD);
    for (int t = 0; t < o->threads; t++) {
        snprintf(p, sizeof p, "%s.tasks/task.%06d", o->fname, rank * o->threads + t);
        unlink(p);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        unlink(o->fname);
        for (int k = 1; k < o->numfiles; k++) {
            snprintf(p, sizeof p, "%s.%06d", o->fname, k);
            unlink(p);
        }
        snprintf(p, sizeof p, "%s.tasks", o->fname);
        rmdir(p);
    }
    (void)size;
}

int main(int argc, char **argv)
{
    int provided, rank, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    bench_opts o = {.fname = "partest_parfile.sion",
                    .numfiles = 1,
                    .fsblksize = -1,
                    .mode = M_CONTAINER,
                    .bufsize = 10LL << 20,
                    .localsize = 20LL << 20,
                    .do_write = 1,
                    .do_read = 1,
                    .checksum = 1,
                    .reps = 3,
                    .threads = 1,
                    .stage_limit = 1LL << 30};
    if (rank != 0)
        opterr = 0;
    int pr = parse(argc, argv, &o, size);
    if (pr != 0) {
        if (pr < 0 && rank == 0)
            usage();
        MPI_Finalize();
        return pr < 0 ? 1 : 0;
    }
    FILE *json = NULL;
    if (rank == 0 && o.json) {
        json = fopen(o.json, "w");
        if (!json) {
            perror(o.json);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        fprintf(json, "{\"tool\": \"sheaf-bench\", \"sheaf_version\": \"%s\", \"ranks\": %d, \"argv\": \"",
                SHEAF_VERSION_STRING, size);
        for (int i = 0; i < argc; i++)
            fprintf(json, "%s%s", i ? " " : "", argv[i]);
        fprintf(json, "\",\n \"runs\": [\n");
    }
    bench_result *res = calloc(1, sizeof *res);
    phase_times *tw = calloc((size_t)o.threads, sizeof *tw), *tr = calloc((size_t)o.threads, sizeof *tr);
    res->coll_pair = bench_coll_pair(MPI_COMM_WORLD);
    int nruns = o.mode == M_MANYTASK && o.manytask_what == 0 ? 2 : 1, any_bad = 0;
    for (int run = 0; run < nruns; run++) {
        int cont = o.mode == M_MANYTASK ? (o.manytask_what == 2 ? 0 : o.manytask_what == 1 ? 1 : run == 0) : 1;
        char name[64];
        snprintf(name, sizeof name, "%s%s%s", mode_names[o.mode], o.mode == M_MANYTASK && o.mapped ? "-mapped" : "",
                 o.mode == M_MANYTASK ? (cont ? "-container" : "-tasklocal") : "");
        res->nreps = o.reps;
        for (int rep = 0; rep < o.reps; rep++) {
            long long mism = 0;
            int nloc = o.threads;
            if (o.mode == M_MANYTASK && o.mapped)
                bench_run_mapped(&o, cont, tw, tr, &mism), nloc = 1;
            else if (o.mode == M_MANYTASK)
                bench_run_manytask(&o, cont, tw, tr, &mism);
            else
                bench_run_rank_mode(&o, rep, tw, tr, &mism);
            double b = (double)o.localsize * o.threads;
            if (o.do_write)
                bench_reduce(tw, nloc, b, 0, o.threads, MPI_COMM_WORLD, &res->w[rep]);
            if (o.do_read)
                bench_reduce(tr, nloc, b, mism, o.threads, MPI_COMM_WORLD, &res->r[rep]);
            if (o.do_read && res->r[rep].mismatches)
                any_bad = 1;
        }
        if (rank == 0) {
            if (json && run)
                fprintf(json, ",\n");
            bench_report(&o, name, res, size, (long long)size * o.threads, json);
        }
        if (o.unlink_files)
            unlink_all(&o, rank, size);
    }
    if (json) {
        fprintf(json, "\n]}\n");
        fclose(json);
    }
    free(tw);
    free(tr);
    free(res);
    MPI_Finalize();
    return any_bad ? 3 : 0;
}
