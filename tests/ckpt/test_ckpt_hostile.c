/* test_ckpt_hostile.c - the checkpoint reader (libsheaf_ckpt_read) on hostile
 * manifests, in a child whose address space is limited (RLIMIT_AS 384 MiB;
 * ASan builds: max_allocation_size_mb in the test's environment instead):
 *   big    a 60 MiB manifest of ~2.5 million unit lines, all naming one real
 *          unit file: parsed within the limit (the unit table is ~40 bytes a
 *          line), then refused at the first unit whose header disagrees
 *          (EINVAL naming the unit), not ENOMEM, no crash, in seconds
 *   huge   a manifest larger than the 64 MiB cap: EFBIG naming the file
 *   count  a short manifest claiming 16 million units: EINVAL, nothing allocated
 *   sparse a unit whose header claims 1 GiB (a sparse file): EINVAL for its
 *          checksum, within the limit (the old reader: ENOMEM)
 * usage: test_ckpt_hostile SEED WORKDIR  (SEED: tests/fuzz/corpus/ckpt-coio-2ranks.bin,
 * a packed checkpoint: flags byte, manifest, NUL, unit file bytes) */
#include "sheaf_ckpt_read.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define T_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define T_ASAN 1
#endif
#endif

static int fails;
#define CHECK(c, ...)                                                                                                  \
    do {                                                                                                               \
        if (!(c)) {                                                                                                    \
            fails++;                                                                                                   \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                                                                \
            printf(__VA_ARGS__);                                                                                       \
            printf("\n");                                                                                              \
        }                                                                                                              \
    } while (0)

static void put(const char *dir, const char *name, const void *d, size_t n)
{
    char p[4200];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "wb");
    if (!f || fwrite(d, 1, n, f) != n || fclose(f)) {
        printf("cannot write %s\n", p);
        exit(2);
    }
}

/* Opens dir in a child with a bounded address space; the child writes the
 * code and message into a pipe. Returns the child's exit status (100+signal). */
static int open_bounded(const char *dir, int *code, char *msg, size_t mn, double *secs)
{
    int pf[2];
    if (pipe(pf))
        exit(2);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pid_t pid = fork();
    if (pid == 0) {
        close(pf[0]);
#ifndef T_ASAN
        struct rlimit rl = {(rlim_t)384 << 20, (rlim_t)384 << 20};
        setrlimit(RLIMIT_AS, &rl);
#endif
        sheaf_ckpt *ck = NULL;
        int rc = sheaf_ckpt_open_dir(dir, &ck);
        char out[1024];
        int n = snprintf(out, sizeof out, "%d %s", rc, rc ? sheaf_ckpt_errmsg() : "");
        if (write(pf[1], out, (size_t)n + 1) < 0)
            _exit(3);
        sheaf_ckpt_close(ck);
        _exit(0);
    }
    close(pf[1]);
    char in[1024] = "";
    ssize_t got = read(pf[0], in, sizeof in - 1);
    close(pf[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    *secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    in[got > 0 ? got : 0] = 0;
    *code = 1; /* no code read (every code is 0 or negative) */
    int off = 0;
    if (sscanf(in, "%d %n", code, &off) < 1)
        off = 0;
    snprintf(msg, mn, "%s", in + off);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 100 + WTERMSIG(st);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        printf("usage: %s SEED WORKDIR\n", argv[0]);
        return 2;
    }
    static unsigned char seed[1 << 16];
    FILE *f = fopen(argv[1], "rb");
    size_t n = f ? fread(seed, 1, sizeof seed, f) : 0;
    if (f)
        fclose(f);
    unsigned char *nul = n > 1 ? memchr(seed + 1, 0, n - 1) : NULL;
    if (!nul) {
        printf("bad seed %s\n", argv[1]);
        return 2;
    }
    const unsigned char *unit = nul + 1;
    size_t ulen = n - (size_t)(unit - seed);
    char dir[4096], msg[1024];
    int code, st;
    double secs;

    /* big: unit 0 is the real unit of ranks 0+2 of 2; the rest name it again */
    snprintf(dir, sizeof dir, "%s/big", argv[2]);
    mkdir(argv[2], 0777);
    mkdir(dir, 0777);
    put(dir, "u0", unit, ulen);
    const unsigned nunits = 2500000;
    size_t cap = (size_t)nunits * 32 + 256, o = 0;
    char *t = malloc(cap);
    if (!t)
        return 2;
    o += (size_t)snprintf(t + o, cap - o,
                          "sheaf-ckpt-manifest 1\napp ckpt_test\nstrategy coio\nstep 1\nranks %u\n"
                          "units %u\nunit plain u0 -1 0 2\n",
                          nunits + 1, nunits);
    for (unsigned u = 1; u < nunits; u++)
        o += (size_t)snprintf(t + o, cap - o, "unit plain u0 -1 %u 1\n", u + 1);
    o += (size_t)snprintf(t + o, cap - o, "end\n");
    put(dir, "manifest", t, o);
    free(t);
    st = open_bounded(dir, &code, msg, sizeof msg, &secs);
    printf("big (%zu bytes, %u units): status %d, code %d, %.2f s: %s\n", o, nunits, st, code, secs, msg);
    CHECK(o > (55u << 20) && o < (64u << 20), "manifest size %zu", o);
    CHECK(st == 0, "the reader died (status %d)", st);
    CHECK(code == -EINVAL, "code %d, not -EINVAL (ENOMEM = %d: the unit table is not bounded)", code, ENOMEM);
    CHECK(strstr(msg, "/big/u0") && strstr(msg, "disagrees with the manifest"), "message: %s", msg);
    CHECK(secs < 100, "took %.1f s (quadratic parsing?)", secs); /* ~2 s idle; a scan per line: hours */

    /* huge: above the cap (a sparse file) */
    snprintf(dir, sizeof dir, "%s/huge", argv[2]);
    mkdir(dir, 0777);
    put(dir, "u0", unit, ulen);
    char mp[4200];
    snprintf(mp, sizeof mp, "%s/manifest", dir);
    put(dir, "manifest", "sheaf-ckpt-manifest 1\n", 22);
    if (truncate(mp, (off_t)(65 << 20))) {
        printf("truncate %s failed\n", mp);
        return 2;
    }
    st = open_bounded(dir, &code, msg, sizeof msg, &secs);
    printf("huge: status %d, code %d: %s\n", st, code, msg);
    CHECK(st == 0 && code == -EFBIG, "status %d code %d", st, code);
    CHECK(strstr(msg, "/huge/manifest") && strstr(msg, "larger than"), "message: %s", msg);

    /* count: more units than the text can hold */
    snprintf(dir, sizeof dir, "%s/count", argv[2]);
    mkdir(dir, 0777);
    const char *m3 = "sheaf-ckpt-manifest 1\napp a\nstrategy coio\nstep 1\nranks 16000000\nunits 16000000\n"
                     "unit plain u0 -1 0 2\nend\n";
    put(dir, "manifest", m3, strlen(m3));
    st = open_bounded(dir, &code, msg, sizeof msg, &secs);
    printf("count: status %d, code %d: %s\n", st, code, msg);
    CHECK(st == 0 && code == -EINVAL && strstr(msg, "/count/manifest") && strstr(msg, "unit or rank count"),
          "status %d code %d: %s", st, code, msg);

    /* sparse: a unit whose header claims 64 fields x 2^20 ranks (a 1 GiB
     * header), a hole past its first 112 bytes: refused (header checksum)
     * within the 384 MiB limit, not ENOMEM (the old reader allocated the 1
     * GiB header before checking it) */
    snprintf(dir, sizeof dir, "%s/sparse", argv[2]);
    mkdir(dir, 0777);
    const unsigned snf = 64, snr = 1u << 20;
    uint64_t need = 112 + 64ull * snf + 16ull * snf * snr + 8;
    unsigned char hdr[112] = "SHEAFCK1";
    const uint64_t vals[][3] = {{8, 4, 1},    {12, 4, need}, {16, 8, 1},  {24, 4, snf},
                                {28, 4, snr}, {32, 8, 0},    {40, 8, snr}};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++)
        for (uint64_t b = 0; b < vals[i][1]; b++)
            hdr[vals[i][0] + b] = (unsigned char)(vals[i][2] >> (8 * b));
    put(dir, "u0", hdr, sizeof hdr);
    snprintf(mp, sizeof mp, "%s/u0", dir);
    if (truncate(mp, (off_t)(need + 16 * snf))) {
        printf("truncate %s failed\n", mp);
        return 2;
    }
    char m4[256];
    snprintf(m4, sizeof m4,
             "sheaf-ckpt-manifest 1\napp a\nstrategy coio\nstep 1\nranks %u\nunits 1\n"
             "unit plain u0 -1 0 %u\nend\n",
             snr, snr);
    put(dir, "manifest", m4, strlen(m4));
    st = open_bounded(dir, &code, msg, sizeof msg, &secs);
    printf("sparse (%llu-byte header claimed): status %d, code %d, %.2f s: %s\n", (unsigned long long)need, st, code,
           secs, msg);
    CHECK(st == 0 && code == -EINVAL && strstr(msg, "/sparse/u0") && strstr(msg, "header checksum"),
          "status %d code %d (ENOMEM = %d: the header allocated before it is checked): %s", st, code, ENOMEM, msg);

    printf("test_ckpt_hostile: %s\n", fails ? "FAILED" : "OK");
    return fails ? 1 : 0;
}
