/* ldapp.c - the program of the loader tests (compiled by run_loader.py with
 * the system's cc, against the generated libraries). It prints what a program
 * sees of its libraries and files: the output must be identical with and
 * without the loader. With LDAPP_ORACLE=<file> it appends every mapped shared
 * object (from /proc/self/maps) to that file, for the oracle check. Modes:
 *   ldapp            call the linked libraries, dlopen one, stat/open/errno probes
 *   ldapp child      print a line (started by fork+exec and by a #! script)
 *   ldapp kill N     after start, SIGKILL the load server (pid from
 *                    SHEAF_LD_SOCKET) or SIGSTOP it with N=stop, then go on */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

int chain_top(void);   /* libchain0 -> ... (generated) */
int origin_user(void); /* uses a library found through $ORIGIN */

static void oracle(void)
{
    const char *o = getenv("LDAPP_ORACLE");
    if (!o)
        return;
    FILE *m = fopen("/proc/self/maps", "r"), *out = fdopen(open(o, O_WRONLY | O_APPEND | O_CREAT, 0600), "a");
    char line[4096];
    while (m && out && fgets(line, sizeof line, m)) {
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
}

static void probe(const char *path)
{
    struct stat st;
    errno = 0;
    int r = stat(path, &st);
    printf("stat %s: %d %s", strrchr(path, '/') + 1, r, r ? strerror(errno) : "");
    if (!r)
        printf(" size=%lld mode=%o ino=%llu dev=%llu", (long long)st.st_size, (unsigned)st.st_mode,
               (unsigned long long)st.st_ino, (unsigned long long)st.st_dev);
    errno = 0;
    r = lstat(path, &st);
    printf(" | lstat %d %s", r, r ? strerror(errno) : "");
    errno = 0;
    int fd = open(path, O_RDONLY);
    printf(" | open %s", fd >= 0 ? "ok" : strerror(errno));
    if (fd >= 0) {
        char b[4];
        printf(" %zd", read(fd, b, 4));
        close(fd);
    }
    errno = 0;
    FILE *f = fopen(path, "r");
    printf(" | fopen %s", f ? "ok" : strerror(errno));
    if (f)
        fclose(f);
    errno = 0;
    printf(" | access %d %s", access(path, F_OK), errno ? strerror(errno) : "");
    /* realpath with a buffer (__realpath_chk in the _FORTIFY_SOURCE build), with
   * NULL (the application's malloc), canonicalize_file_name: the result and
   * the errno left, also on success */
    char rb[4096];
    errno = 0;
    ssize_t k = readlink(path, rb, sizeof rb - 1);
    printf(" | readlink %zd %s", k, strerror(errno));
    errno = 0;
    char *rp = realpath(path, rb);
    printf(" | realpath %s %s", rp ? rp : "NULL", strerror(errno));
    errno = 0;
    rp = realpath(path, NULL);
    printf(" | NULL %s %s", rp ? rp : "NULL", strerror(errno));
    free(rp);
    errno = 0;
    rp = canonicalize_file_name(path);
    printf(" | canon %s %s\n", rp ? rp : "NULL", strerror(errno));
    free(rp);
}

static void kill_server(const char *how)
{
    const char *s = getenv("SHEAF_LD_SOCKET");
    const char *p = s ? strstr(s, "sheaf-ld.") : NULL;
    p = p ? strchr(p + 9, '.') : NULL;
    if (!p) {
        printf("no server\n");
        return;
    }
    pid_t pid = (pid_t)atol(p + 1);
    kill(pid, !strcmp(how, "stop") ? SIGSTOP : SIGKILL);
    /* until it is gone (a zombie: its sockets are closed) */
    for (int i = 0; strcmp(how, "stop") && i < 5000; i++) {
        char f[64], st[512];
        snprintf(f, sizeof f, "/proc/%d/stat", (int)pid);
        FILE *fp = fopen(f, "r");
        size_t n = fp ? fread(st, 1, sizeof st - 1, fp) : 0;
        if (fp)
            fclose(fp);
        st[n] = 0;
        char *e = strrchr(st, ')');
        if (!fp || (e && e[2] == 'Z'))
            break;
        usleep(1000);
    }
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "child")) {
        printf("child %d\n", chain_top());
        oracle();
        return 0;
    }
    printf("chain %d origin %d\n", chain_top(), origin_user());
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = 0;
    printf("exe %s\n", self);
    const char *tree = getenv("LDAPP_TREE");
    if (argc > 2 && !strcmp(argv[1], "kill"))
        kill_server(argv[2]);
    void *h = dlopen("libplug.so", RTLD_NOW);
    printf("dlopen plug: %s\n", h ? "ok" : dlerror());
    if (h) {
        int (*fn)(void) = (int (*)(void))dlsym(h, "plug");
        Dl_info di;
        printf("plug %d dladdr %s\n", fn ? fn() : -1,
               fn && dladdr((void *)fn, &di) && di.dli_fname ? strrchr(di.dli_fname, '/') + 1 : "?");
    }
    void *m = dlopen("libmissing.so", RTLD_NOW);
    printf("dlopen missing: %s\n", m ? "loaded?" : dlerror());
    char p[4096];
    if (tree) {
        const char *names[] = {"d1/libchain0.so", "d1/libnothere.so",      "d2/mod.py",
                               "d2/nothere.py",   "d2/libchain1.so/x.so",  "nodir/libx.so",
                               "d3/libplug.so",   "d2/../d1/libchain0.so", "d2/mod.py/"};
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
            snprintf(p, sizeof p, "%s/%s", tree, names[i]);
            probe(p);
        }
    }
    fflush(stdout);
    pid_t c = fork();
    if (c == 0) {
        execl("/proc/self/exe", argv[0], "child", (char *)NULL);
        _exit(127);
    }
    int st = 0;
    waitpid(c, &st, 0);
    printf("fork+exec child exit %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    oracle();
    return 0;
}
