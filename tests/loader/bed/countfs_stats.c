/* countfs_stats.c - per-process / per-node / total counters of countfs and
 * their JSON dump. See countfs_stats.h. */
#define _GNU_SOURCE
#include "countfs_stats.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

static const char *const op_names[CFS_NOPS] = {
    "lookup", "lookup_enoent", "getattr", "readlink", "open", "opendir", "readdir", "read", "read_bytes", "statfs",
};

struct node {
    uint64_t uts_ino; /* the first UTS namespace seen with this host name */
    char host[72];
    struct cfs_counts c;
};

struct proc {
    pid_t pid;
    size_t node; /* index into nodes */
    char comm[24];
    struct cfs_counts c;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct node *nodes;
static size_t nnodes, capnodes;
static struct proc *procs;
static size_t nprocs, capprocs;
static struct cfs_counts total;
static uint64_t dumps;
static FILE *tracef;

/* grow: make room for one more element of size sz in *arr */
static int grow(void **arr, size_t n, size_t *cap, size_t sz)
{
    if (n < *cap)
        return 0;
    size_t nc = *cap ? *cap * 2 : 64;
    void *p = realloc(*arr, nc * sz);
    if (!p)
        return -1;
    *arr = p;
    *cap = nc;
    return 0;
}

struct host_query {
    int nsfd;
    char host[72];
};

/* host_thread: enter the UTS namespace (only this thread) and read the name */
static void *host_thread(void *arg)
{
    struct host_query *q = arg;
    struct utsname u;
    if (setns(q->nsfd, CLONE_NEWUTS) == 0 && uname(&u) == 0)
        snprintf(q->host, sizeof q->host, "%s", u.nodename);
    return NULL;
}

/* host_of_ns: the host name inside the UTS namespace nsfile ("?" if unknown) */
static void host_of_ns(const char *nsfile, char *host, size_t n)
{
    struct host_query q = {.nsfd = open(nsfile, O_RDONLY | O_CLOEXEC)};
    snprintf(q.host, sizeof q.host, "?");
    if (q.nsfd >= 0) {
        pthread_t t;
        if (pthread_create(&t, NULL, host_thread, &q) == 0)
            pthread_join(t, NULL);
        close(q.nsfd);
    }
    snprintf(host, n, "%s", q.host);
}

/* node_of: index of the node of pid (created on first sight); SIZE_MAX on
 * out of memory. A node is a host name: processes in different UTS
 * namespaces with the same name (e.g. one namespace per rank) are one node. */
static size_t node_of(pid_t pid)
{
    static uint64_t *ns_ino; /* UTS namespaces seen, and their node */
    static size_t *ns_node, nns, capns, capns2;
    char p[64], host[72];
    struct stat st;
    uint64_t ino = 0;
    snprintf(p, sizeof p, "/proc/%d/ns/uts", (int)pid);
    if (stat(p, &st) == 0)
        ino = (uint64_t)st.st_ino;
    for (size_t i = 0; ino && i < nns; i++)
        if (ns_ino[i] == ino)
            return ns_node[i];
    if (ino)
        host_of_ns(p, host, sizeof host);
    else
        snprintf(host, sizeof host, "?");
    size_t nd = nnodes;
    for (size_t i = 0; i < nnodes; i++)
        if (strcmp(nodes[i].host, host) == 0)
            nd = i;
    if (nd == nnodes) {
        if (grow((void **)&nodes, nnodes, &capnodes, sizeof *nodes) != 0)
            return SIZE_MAX;
        memset(&nodes[nd], 0, sizeof nodes[nd]);
        nodes[nd].uts_ino = ino;
        snprintf(nodes[nd].host, sizeof nodes[nd].host, "%s", host);
        nnodes++;
    }
    if (ino) {
        size_t c1 = capns, c2 = capns2;
        if (grow((void **)&ns_ino, nns, &c1, sizeof *ns_ino) != 0 ||
            grow((void **)&ns_node, nns, &c2, sizeof *ns_node) != 0)
            return SIZE_MAX;
        capns = c1;
        capns2 = c2;
        ns_ino[nns] = ino;
        ns_node[nns++] = nd;
    }
    return nd;
}

static struct proc *proc_of(pid_t pid)
{
    static size_t last;
    if (last < nprocs && procs[last].pid == pid)
        return &procs[last];
    for (size_t i = nprocs; i-- > 0;)
        if (procs[i].pid == pid)
            return &procs[last = i];
    size_t nd = node_of(pid);
    if (nd == SIZE_MAX || grow((void **)&procs, nprocs, &capprocs, sizeof *procs) != 0)
        return NULL;
    struct proc *pr = &procs[nprocs];
    memset(pr, 0, sizeof *pr);
    pr->pid = pid;
    pr->node = nd;
    char p[64];
    snprintf(p, sizeof p, "/proc/%d/comm", (int)pid);
    snprintf(pr->comm, sizeof pr->comm, "?");
    int fd = open(p, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t r = read(fd, pr->comm, sizeof pr->comm - 1);
        pr->comm[r > 0 ? r : 0] = 0;
        pr->comm[strcspn(pr->comm, "\n")] = 0;
        close(fd);
    }
    last = nprocs;
    return &procs[nprocs++];
}

void cfs_count(pid_t pid, enum cfs_op op, uint64_t n)
{
    pthread_mutex_lock(&mu);
    total.v[op] += n;
    struct proc *pr = proc_of(pid);
    if (pr) {
        pr->c.v[op] += n;
        nodes[pr->node].c.v[op] += n;
    }
    pthread_mutex_unlock(&mu);
}

int cfs_trace_open(const char *path)
{
    tracef = fopen(path, "we");
    if (!tracef)
        return -1;
    fputs("op\tpid\tname\terrno\tbytes\n", tracef);
    return 0;
}

void cfs_trace(const char *op, pid_t pid, const char *name, int err, uint64_t bytes)
{
    if (!tracef)
        return;
    pthread_mutex_lock(&mu);
    fprintf(tracef, "%s\t%d\t%s\t%d\t%llu\n", op, (int)pid, name, err, (unsigned long long)bytes);
    pthread_mutex_unlock(&mu);
}

static void put_counts(FILE *f, const struct cfs_counts *c)
{
    for (int i = 0; i < CFS_NOPS; i++)
        fprintf(f, "%s\"%s\": %llu", i ? ", " : "", op_names[i], (unsigned long long)c->v[i]);
}

/* put_str: a JSON string (names here are comm and host names: escape the few
 * characters JSON needs, drop control characters) */
static void put_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fputc('\\', f);
        if ((unsigned char)*s >= 0x20)
            fputc(*s, f);
    }
    fputc('"', f);
}

static int write_json(FILE *f, int final)
{
    fprintf(f, "{\"seq\": %llu, \"final\": %s,\n \"total\": {", (unsigned long long)++dumps, final ? "true" : "false");
    put_counts(f, &total);
    fputs("},\n \"nodes\": [", f);
    for (size_t i = 0; i < nnodes; i++) {
        fprintf(f, "%s\n  {\"node\": %zu, \"uts_ns\": %llu, \"host\": ", i ? "," : "", i,
                (unsigned long long)nodes[i].uts_ino);
        put_str(f, nodes[i].host);
        fputs(", ", f);
        put_counts(f, &nodes[i].c);
        fputc('}', f);
    }
    fputs("],\n \"procs\": [", f);
    for (size_t i = 0; i < nprocs; i++) {
        fprintf(f, "%s\n  {\"pid\": %d, \"node\": %zu, \"comm\": ", i ? "," : "", (int)procs[i].pid, procs[i].node);
        put_str(f, procs[i].comm);
        fputs(", ", f);
        put_counts(f, &procs[i].c);
        fputc('}', f);
    }
    fputs("]}\n", f);
    return ferror(f) ? -1 : 0;
}

int cfs_dump(const char *path, int final)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp) {
        errno = ENAMETOOLONG;
        return -1;
    }
    pthread_mutex_lock(&mu);
    if (tracef)
        fflush(tracef);
    int rc = -1;
    FILE *f = fopen(tmp, "we");
    if (f) {
        rc = write_json(f, final);
        if (fclose(f) != 0)
            rc = -1;
        if (rc == 0)
            rc = rename(tmp, path);
    }
    pthread_mutex_unlock(&mu);
    return rc;
}
