/* sheaf-launch - runs a launch line under sheaf's loader (doc/loader.md).
 *   sheaf-launch [options] -- <launch line>
 * Starts the node's load server, pushes the --preload files, puts the static
 * bootstrapper (sheaf-boot) in front of the executable of the launch line
 * (mpiexec/mpirun/srun lines or a bare program), runs it, and stops the server
 * (which removes its cache). Exit status: the launch line's. */
#define _GNU_SOURCE
#include "launch_net.h"
#include "launch_py.h"
#include "sheaf_loader.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

struct opts {
    const char *cache_dir, *preload, *log, *stats_file, *exe;
    char prefixes[PATH_MAX * 4], suffixes[1024], pydirs[4096]; /* pydirs: SLD_PATH_MAX, the client's */
    int strip, boot, stats, timeout, no_infer;
    struct net_opts net; /* across nodes: --hosts/--hostfile */
    const char *preload_list;
    const char *net_opt; /* the first option that needs the overlay */
};

static pid_t child = -1;

static void usage(FILE *f)
{
    fprintf(f, "usage: sheaf-launch [options] -- <launch line>\n"
               "  e.g. sheaf-launch -- mpiexec -n 8 ./app    sheaf-launch -- ./app args\n"
               "options:\n"
               "  --cache-dir DIR      where the node cache goes (default /dev/shm if tmpfs, else $TMPDIR or /tmp)\n"
               "  --preload FILE       push these files before the start: one path a line, or ldd output\n"
               "  --python-prefix DIR  serve every file and directory listing below DIR (repeatable;\n"
               "                       without it, when the executable is Python: inferred from the\n"
               "                       script's directory, PYTHONPATH and the interpreter's prefixes)\n"
               "  --no-python-infer    no inferred --python-prefix\n"
               "  --suffixes LIST      more file suffixes to serve, ':'-separated (.so .py .pyc always)\n"
               "  --strip=yes|no       copies of ELF files hold only their loaded extents (default yes)\n"
               "  --exe PATH           the word of the launch line that is the executable (default: found)\n"
               "  --no-boot            no bootstrapper: LD_AUDIT and SHEAF_LD_* in the environment of the\n"
               "                       whole launch line (the executable itself is then read directly)\n"
               "  --timeout MS         a client waits at most this long for the server (default 20000)\n"
               "  --log FILE           test mode: every client appends each resolved path to FILE\n"
               "  --stats              print the server's counters to stderr at the end\n"
               "  --stats-file FILE    write them to FILE (\"name value\" lines)\n");
    if (!sheaf_loader_has_overlay()) {
        fprintf(f, "across nodes: not in this build (sheaf was built without libsodium)\n");
        return;
    }
    fprintf(f, "across nodes (one load server per host, linked into an authenticated overlay):\n"
               "  --hosts H1,H2,...    the hosts (host or host:port; the first is the root), or\n"
               "  --hostfile FILE      one host a line (\"host slots=N\" and # comments allowed)\n"
               "  --server-launch rsh|mpich|openmpi|srun  how the servers start (default: rsh with --rsh,\n"
               "                       srun when SLURM_JOB_ID is set, else mpich: mpiexec -ppn 1)\n"
               "  --starter CMD        the command of the mpich/openmpi/srun modes instead of\n"
               "                       mpiexec/mpirun/srun (e.g. mpiexec.mpich, or a wrapper)\n"
               "  --rsh CMD            rsh-like command, run as `CMD HOST sheaf-ld-server ...` (e.g. ssh)\n"
               "  --overlay push|pull  push (SPMD, default): what one node reads goes to every node;\n"
               "                       pull (MPMD): only to the nodes that ask\n"
               "  --preload-list FILE  paths (one a line, or ldd output) pushed to every node before the start\n"
               "  --secret-file FILE   the job's secret (0600; created when missing, default\n"
               "                       $HOME/.sheaf-ld.PID.secret, removed at the end)\n"
               "  --port N             the servers' TCP port for hosts without one (default 47730)\n"
               "  --roots K            K trees, each root owning a hash range of paths (default 1)\n"
               "  --socket PATH        the clients' socket on every host (default\n"
               "                       <cache base>/sheaf-ldjob.UID.PID/sock; %%r: the server's rank)\n"
               "  --server PATH        sheaf-ld-server on the hosts (default: next to sheaf-launch)\n"
               "  --copy-all           no classification: every file read once and sent to every node\n"
               "                       (also node-local ones: only for trees identical everywhere;\n"
               "                       alias --no-fgfs). Default: the servers classify each mount\n"
               "                       point once at start-up with the global file status: node-local,\n"
               "                       per-node and well-distributed files are read by each node\n"
               "                       itself, unique ones from the root (--fgfs: the default)\n");
}

static int add_list(char *list, size_t cap, const char *v)
{
    size_t n = strlen(list);
    if (n + strlen(v) + 2 > cap)
        return -1;
    snprintf(list + n, cap - n, "%s%s", n ? ":" : "", v);
    return 0;
}

/* notes an option of the overlay across nodes (always true) */
static int net_opt(struct opts *o, const char *a)
{
    if (!o->net_opt)
        o->net_opt = a;
    return 1;
}

/* --timeout MS: a positive number of milliseconds */
static int set_timeout(struct opts *o, const char *v)
{
    o->timeout = atoi(v);
    if (o->timeout <= 0) {
        fprintf(stderr, "sheaf-launch: --timeout needs a positive number of milliseconds\n");
        return -1;
    }
    return 0;
}

/* --overlay push|pull */
static int set_overlay(struct opts *o, const char *v)
{
    if (strcmp(v, "push") && strcmp(v, "pull")) {
        fprintf(stderr, "sheaf-launch: --overlay is push or pull\n");
        return -1;
    }
    o->net.push = !strcmp(v, "push");
    return 0;
}

static int parse(int argc, char **argv, struct opts *o)
{
    int i;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define VAL(name) (!strcmp(a, name) && v && (i++, 1))
        if (!strcmp(a, "--"))
            return i + 1;
        else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            exit(0);
        } else if (VAL("--cache-dir"))
            o->cache_dir = v;
        else if (VAL("--preload"))
            o->preload = v;
        else if (VAL("--python-prefix")) {
            char r[PATH_MAX];
            if (add_list(o->prefixes, sizeof o->prefixes, realpath(v, r) ? r : v))
                return -1;
        } else if (VAL("--suffixes")) {
            if (add_list(o->suffixes, sizeof o->suffixes, v))
                return -1;
        } else if (!strcmp(a, "--no-python-infer"))
            o->no_infer = 1;
        else if (!strcmp(a, "--strip=no"))
            o->strip = 0;
        else if (!strcmp(a, "--strip=yes") || !strcmp(a, "--strip"))
            o->strip = 1;
        else if (VAL("--exe"))
            o->exe = v;
        else if (!strcmp(a, "--no-boot"))
            o->boot = 0;
        else if (VAL("--timeout")) {
            if (set_timeout(o, v))
                return -1;
        } else if (VAL("--log"))
            o->log = v;
        else if (VAL("--hosts") && net_opt(o, a))
            o->net.hosts = v;
        else if (VAL("--hostfile") && net_opt(o, a))
            o->net.hostfile = v;
        else if (VAL("--server-launch") && net_opt(o, a))
            o->net.how = v;
        else if (VAL("--rsh") && net_opt(o, a))
            o->net.rsh = v;
        else if (VAL("--starter") && net_opt(o, a))
            o->net.starter = v;
        else if (VAL("--overlay") && net_opt(o, a)) {
            if (set_overlay(o, v))
                return -1;
        } else if (VAL("--preload-list"))
            o->preload_list = v;
        else if (VAL("--secret-file") && net_opt(o, a))
            o->net.secret = v;
        else if (VAL("--port") && net_opt(o, a))
            o->net.port = atoi(v);
        else if (VAL("--roots") && net_opt(o, a))
            o->net.roots = atoi(v);
        else if (VAL("--socket"))
            o->net.socket = v;
        else if (VAL("--server") && net_opt(o, a))
            o->net.server = v;
        else if (!strcmp(a, "--fgfs") && net_opt(o, a))
            o->net.copy_all = 0; /* the default */
        else if ((!strcmp(a, "--copy-all") || !strcmp(a, "--no-fgfs")) && net_opt(o, a))
            o->net.copy_all = 1;
        else if (!strcmp(a, "--stats"))
            o->stats = 1;
        else if (VAL("--stats-file"))
            o->stats_file = v;
        else {
            fprintf(stderr, "sheaf-launch: unknown option or missing value: %s\n", a);
            return -1;
        }
#undef VAL
    }
    return -1;
}

/* launchers and wrappers that come before the executable in a launch line */
static int is_launcher(const char *word)
{
    static const char *const names[] = {"mpiexec", "mpirun",  "orterun", "prterun",        "srun",
                                        "jsrun",   "aprun",   "flux",    "sheaf-mpiexec",  "loopback-only.sh",
                                        "env",     "nice",    "taskset", "numactl",        "timeout",
                                        "time",    "unshare", "nsenter", "hydra_pmi_proxy"};
    const char *b = strrchr(word, '/');
    b = b ? b + 1 : word;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        size_t n = strlen(names[i]);
        if (!strncmp(b, names[i], n) && (!b[n] || b[n] == '.'))
            return 1;
    }
    return 0;
}

static int executable(const char *w)
{
    struct stat st;
    char p[PATH_MAX];
    if (strchr(w, '/'))
        return !stat(w, &st) && S_ISREG(st.st_mode) && !access(w, X_OK);
    const char *path = getenv("PATH");
    for (const char *s = path ? path : ""; *s;) {
        const char *e = strchr(s, ':');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        if (n && snprintf(p, sizeof p, "%.*s/%s", (int)n, s, w) < (int)sizeof p && !stat(p, &st) &&
            S_ISREG(st.st_mode) && !access(p, X_OK))
            return 1;
        s += n;
        if (*s == ':')
            s++;
    }
    return 0;
}

/* how many words after a launcher's option are its values (issue 26: hydra's
 * `-launcher-exec RSH` made RSH the executable); 0 for a flag or unknown
 * (srun's -u and -s are flags: not listed, though env/timeout take values) */
static int option_values(const char *w)
{
    static const char two[] = " -env -genv --mca -mca -gmca --gmca ";
    static const char one[] = " -launcher -launcher-exec -bootstrap -bootstrap-exec -rsh --launch-agent -hosts -host "
                              "--host -H -f -hostfile --hostfile -machinefile --machinefile -n -np --np -ppn --ppn -N "
                              "--npernode -wdir --wdir -envlist -genvlist -rmk -iface -configfile -bind-to --bind-to "
                              "-map-by --map-by --rank-by -x --prefix -p --partition -t -A --account -w --nodelist "
                              "-c -o -e ";
    char key[64];
    if (strlen(w) > 60 || strchr(w, ' '))
        return 0;
    snprintf(key, sizeof key, " %s ", w);
    return strstr(two, key) ? 2 : strstr(one, key) ? 1 : 0;
}

/* index of the executable in the launch line, or -1: the first executable
 * word that is not a launcher, an option, an option's value or NAME=VALUE */
static int find_exe(char **line, int n, const char *exe)
{
    for (int i = 0; i < n; i++) {
        if (exe) {
            if (!strcmp(line[i], exe))
                return i;
            continue;
        }
        if (line[i][0] == '-') {
            i += option_values(line[i]);
            continue;
        }
        if (strchr(line[i], '=') || is_launcher(line[i]))
            continue;
        if (executable(line[i]))
            return i;
    }
    return -1;
}

static pid_t start_server(const struct opts *o, char *sock, size_t cap)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC))
        return -1;
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        char err[512];
        close(p[0]);
        prctl(PR_SET_PDEATHSIG, SIGTERM); /* the launcher died: stop and clean up */
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0) {
            dup2(devnull, 0);
            close(devnull);
        }
        if (sheaf_loader_serve(o->cache_dir, o->strip, p[1], err, sizeof err)) {
            fprintf(stderr, "%s\n", err);
            _exit(1);
        }
        _exit(0);
    }
    close(p[1]);
    struct pollfd pf = {p[0], POLLIN, 0};
    ssize_t r = -1;
    if (poll(&pf, 1, 30000) == 1)
        r = read(p[0], sock, cap - 1);
    close(p[0]);
    if (r <= 1 || sock[r - 1] != '\n') {
        kill(pid, SIGTERM);
        waitpid(pid, NULL, 0);
        return -1;
    }
    sock[r - 1] = 0;
    return pid;
}

/* one path a line, or `ldd` output ("name => /path (0x..)", "\t/path (0x..)") */
static int preload(const struct opts *o, const char *sock, const char *list)
{
    FILE *f = fopen(list, "r");
    if (!f) {
        fprintf(stderr, "sheaf-launch: cannot read the preload list %s: %s\n", list, strerror(errno));
        return -1;
    }
    char line[PATH_MAX + 256];
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        char *s = strstr(line, "=> ");
        s = s ? s + 3 : line;
        while (*s == ' ' || *s == '\t')
            s++;
        if (*s != '/')
            continue;
        s[strcspn(s, " \t\r\n")] = 0;
        if (sheaf_loader_request(sock, SHEAF_LOADER_LOOKUP, s, NULL, 0, o->timeout) == 0)
            n++;
    }
    fclose(f);
    return n;
}

/* "%r" in a socket path: the rank of the server (several simulated nodes on
 * one host); this host's clients use rank 0's unless SHEAF_LD_RANK says */
static void expand_rank(const char *in, char *out, size_t cap)
{
    const char *r = getenv("SHEAF_LD_RANK");
    size_t k = 0;
    for (const char *p = in; *p && k + 12 < cap; p++) {
        if (p[0] == '%' && p[1] == 'r') {
            k += (size_t)snprintf(out + k, cap - k, "%s", r ? r : "0");
            p++;
        } else
            out[k++] = *p;
    }
    out[k] = 0;
}

static void forward(int sig)
{
    if (child > 0)
        kill(child, sig);
}

/* the counters of this host's server; across nodes, when this host runs none
 * (the launcher on a front end), the root's through the overlay link fe
 * (-1: none), and a last line "server_rank R" says whose they are */
static void report(const struct opts *o, const char *sock, int fe)
{
    unsigned long long c[SHEAF_LOADER_NCOUNTERS];
    const char *r = getenv("SHEAF_LD_RANK");
    int rank = r ? atoi(r) : 0;
    if (sheaf_loader_stats(sock, c, SHEAF_LOADER_NCOUNTERS, o->timeout) &&
        (fe < 0 || sheaf_loader_fe_stats(fe, c, SHEAF_LOADER_NCOUNTERS, &rank))) {
        fprintf(stderr, "sheaf-launch: the load server did not answer for its counters%s\n",
                fe >= 0 ? " (neither this host's nor the overlay's root)" : "");
        return;
    }
    FILE *f = o->stats_file ? fopen(o->stats_file, "w") : NULL;
    if (o->stats_file && !f)
        fprintf(stderr, "sheaf-launch: cannot write %s: %s\n", o->stats_file, strerror(errno));
    for (int i = 0; i < SHEAF_LOADER_NCOUNTERS; i++) {
        if (o->stats)
            fprintf(stderr, "sheaf-launch: %s %llu\n", sheaf_loader_counter_name(i), c[i]);
        if (f)
            fprintf(f, "%s %llu\n", sheaf_loader_counter_name(i), c[i]);
    }
    if (fe != -2) { /* across nodes */
        if (o->stats)
            fprintf(stderr, "sheaf-launch: server_rank %d\n", rank);
        if (f)
            fprintf(f, "server_rank %d\n", rank);
    }
    if (f)
        fclose(f);
}

/* the directory of this program: sheaf-boot and libsheaf_audit.so are found
 * next to it (build tree: ../../src/loader; installed: ../lib) */
static int find_parts(char *boot, char *audit, size_t cap)
{
    char self[PATH_MAX];
    ssize_t r = readlink("/proc/self/exe", self, sizeof self - 1);
    if (r <= 0)
        return -1;
    self[r] = 0;
    char *dir = dirname(self);
    const char *env = getenv("SHEAF_LD_AUDIT_LIB");
    snprintf(boot, cap, "%s/sheaf-boot", dir);
    const char *cand[] = {"%s/../../src/loader/libsheaf_audit.so", "%s/../lib/libsheaf_audit.so",
                          "%s/../lib64/libsheaf_audit.so", "%s/../lib/x86_64-linux-gnu/libsheaf_audit.so"};
    if (env) {
        snprintf(audit, cap, "%s", env);
        return access(boot, X_OK);
    }
    for (size_t i = 0; i < sizeof cand / sizeof cand[0]; i++) {
        char p[PATH_MAX];
        snprintf(p, sizeof p, cand[i], dir);
        if (realpath(p, audit))
            return access(boot, X_OK);
    }
    return -1;
}

/* The load servers: across hosts (net_start, job) or one on this host
 * (*server); then the preload lists. 0, or 2 (the exit status) after a
 * message. sock: the socket of this host's clients. */
static int start_servers(struct opts *o, const char *boot, int across, struct net_job *job, char *server_path,
                         pid_t *server, char *sock, size_t cap)
{
    if (across) {
        snprintf(server_path, PATH_MAX, "%.*s/sheaf-ld-server", (int)(strrchr(boot, '/') - boot), boot);
        o->net.server = o->net.server ? o->net.server : server_path;
        o->net.timeout = o->timeout;
        o->net.strip = o->strip;
        o->net.cache_dir = o->cache_dir;
        if (o->net.roots < 1)
            o->net.roots = 1;
        if (net_start(&o->net, job))
            return 2;
        /* the clients of this host: its server's socket (with %r: rank 0's) */
        expand_rank(job->socket, sock, cap);
        const char *lists[] = {o->preload_list, o->preload};
        for (int i = 0; i < 2; i++)
            if (lists[i] && net_preload(job, lists[i]) < 0) {
                net_stop(job, o->timeout);
                return 2;
            }
        return 0;
    }
    *server = start_server(o, sock, cap);
    if (*server < 0) {
        fprintf(stderr, "sheaf-launch: the load server did not start\n");
        return 2;
    }
    if ((o->preload && preload(o, sock, o->preload) < 0) ||
        (o->preload_list && preload(o, sock, o->preload_list) < 0)) {
        sheaf_loader_request(sock, SHEAF_LOADER_SHUTDOWN, NULL, NULL, 0, o->timeout);
        waitpid(*server, NULL, 0);
        return 2;
    }
    return 0;
}

/* The launch line with sheaf-boot and its options before the executable
 * (line[at]; at < 0: unchanged); NULL when out of memory. */
static char **boot_line(const struct opts *o, char **line, int n, int at, char *boot, char *sock, char *audit,
                        char *tmo)
{
    char **cmd = calloc((size_t)n + 20, sizeof *cmd);
    if (!cmd)
        return NULL;
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (i == at) {
            cmd[k++] = boot;
            cmd[k++] = "--socket";
            cmd[k++] = sock;
            cmd[k++] = "--audit";
            cmd[k++] = audit;
            cmd[k++] = "--timeout";
            cmd[k++] = tmo;
            if (o->prefixes[0]) {
                cmd[k++] = "--prefixes";
                cmd[k++] = (char *)o->prefixes;
            }
            if (o->pydirs[0]) {
                cmd[k++] = "--pydirs";
                cmd[k++] = (char *)o->pydirs;
            }
            if (o->suffixes[0]) {
                cmd[k++] = "--suffixes";
                cmd[k++] = (char *)o->suffixes;
            }
            if (o->log) {
                cmd[k++] = "--log";
                cmd[k++] = (char *)o->log;
            }
            cmd[k++] = "--";
        }
        cmd[k++] = line[i];
    }
    return cmd;
}

/* --no-boot: the audit library and its settings through the environment */
static void boot_env(const struct opts *o, const char *sock, const char *audit, const char *tmo)
{
    setenv(SHEAF_LOADER_ENV_SOCKET, sock, 1);
    setenv("LD_AUDIT", audit, 1);
    setenv(SHEAF_LOADER_ENV_TIMEOUT, tmo, 1);
    if (o->prefixes[0])
        setenv(SHEAF_LOADER_ENV_PREFIXES, o->prefixes, 1);
    if (o->pydirs[0])
        setenv(SHEAF_LOADER_ENV_PYDIRS, o->pydirs, 1);
    if (o->suffixes[0])
        setenv(SHEAF_LOADER_ENV_SUFFIXES, o->suffixes, 1);
    if (o->log)
        setenv(SHEAF_LOADER_ENV_LOG, o->log, 1);
}

/* Run cmd as the child (signals forwarded to it); its exit status (128 +
 * the signal that ended it; 127: it could not be started). */
static int run_child(char **cmd)
{
    signal(SIGINT, forward);
    signal(SIGTERM, forward);
    signal(SIGHUP, forward);
    child = fork();
    if (child == 0) {
        execvp(cmd[0], cmd);
        fprintf(stderr, "sheaf-launch: cannot execute %s: %s\n", cmd[0], strerror(errno));
        _exit(127);
    }
    int st = 0, rc = 127;
    if (child > 0) {
        while (waitpid(child, &st, 0) < 0 && errno == EINTR) {
        }
        rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    }
    return rc;
}

int main(int argc, char **argv)
{
    struct opts o = {.strip = 1, .boot = 1, .timeout = 20000, .net = {.port = 47730, .roots = 1, .push = 1}};
    int first = parse(argc, argv, &o);
    if (first < 0 || first >= argc) {
        usage(stderr);
        return 2;
    }
    if (o.net_opt && !sheaf_loader_has_overlay()) {
        fprintf(stderr,
                "sheaf-launch: %s: the overlay across nodes is not in this build (sheaf was built "
                "without libsodium: install libsodium-dev and rebuild)\n",
                o.net_opt);
        return 2;
    }
    char boot[PATH_MAX], audit[PATH_MAX], sock[PATH_MAX];
    if (find_parts(boot, audit, sizeof boot)) {
        fprintf(stderr, "sheaf-launch: sheaf-boot or libsheaf_audit.so not found next to this program\n");
        return 2;
    }
    int n = argc - first;
    char **line = argv + first;
    int at = o.boot ? find_exe(line, n, o.exe) : -1;
    if (o.boot && at < 0) {
        fprintf(stderr, "sheaf-launch: no executable found in the launch line (name it with --exe, "
                        "or use --no-boot)\n");
        return 2;
    }
    int across = o.net.hosts || o.net.hostfile;
    struct net_job job;
    char server_path[PATH_MAX];
    pid_t server = -1;
    if (start_servers(&o, boot, across, &job, server_path, &server, sock, sizeof sock))
        return 2;
    /* issue 26: a Python program without --python-prefix gets the directories CPython searches */
    int exe_at = at >= 0 ? at : find_exe(line, n, o.exe);
    if (!o.prefixes[0] && !o.no_infer && lpy_infer(line, n, exe_at, sock, o.timeout, o.pydirs, sizeof o.pydirs))
        fprintf(stderr, "sheaf-launch: too many Python directories: the inferred --python-prefix list is cut\n");
    char tmo[32];
    snprintf(tmo, sizeof tmo, "%d", o.timeout);
    char **cmd = boot_line(&o, line, n, at, boot, across ? job.socket : sock, audit, tmo);
    if (!cmd)
        return 2;
    if (!o.boot)
        boot_env(&o, sock, audit, tmo);
    int rc = run_child(cmd);
    if (o.stats || o.stats_file)
        report(&o, sock, across ? job.fe : -2);
    if (across) {
        net_stop(&job, o.timeout);
        free(cmd);
        return rc;
    }
    if (sheaf_loader_request(sock, SHEAF_LOADER_SHUTDOWN, NULL, NULL, 0, o.timeout) < 0) {
        kill(server, SIGTERM); /* stuck or stopped: it cleans up on SIGTERM */
        kill(server, SIGCONT);
    }
    waitpid(server, NULL, 0);
    free(cmd);
    return rc;
}
