/* test_ckpt_paths.c - removal of a step directory and over-long paths
 * (src/ckpt/paths.c, serial):
 *   plant    symlinks planted in the tree (to a directory and to a file
 *            outside it) are removed as links: their targets keep their bytes
 *   race     a subdirectory is swapped for a symlink to an outside directory
 *            at the moment the walk has found it to be a directory (unlinkat
 *            refused it / lstat said so; interposed below): the outside
 *            directory's file keeps its bytes, the moved directory is intact
 *   long     ckf_rmtree, sheaf_ckpt_open, sheaf_ckpt_open_dir and
 *            sheaf_ckpt_list with paths past 4095 bytes: ENAMETOOLONG with a
 *            message naming the path, nothing opened or removed
 * usage: test_ckpt_paths WORKDIR (fresh, absolute) */
#define _GNU_SOURCE
#include "format.h"
#include "sheaf_ckpt_read.h"
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

static char root[1024];
static int swapped; /* the race was staged */

static void path(char *out, const char *rel) { snprintf(out, 2048, "%s/%s", root, rel); }

static void put(const char *rel, const char *text)
{
    char p[2048];
    path(p, rel);
    FILE *f = fopen(p, "w");
    if (!f || fputs(text, f) < 0 || fclose(f)) {
        printf("cannot write %s\n", p);
        exit(2);
    }
}

static void mk(const char *rel)
{
    char p[2048];
    path(p, rel);
    if (mkdir(p, 0777)) {
        printf("mkdir %s: %s\n", p, strerror(errno));
        exit(2);
    }
}

static void link_to(const char *target_rel, const char *rel)
{
    char t[2048], p[2048];
    path(t, target_rel);
    path(p, rel);
    if (symlink(t, p)) {
        printf("symlink %s: %s\n", p, strerror(errno));
        exit(2);
    }
}

static int has(const char *rel, const char *text)
{
    char p[2048], b[256] = {0};
    path(p, rel);
    FILE *f = fopen(p, "r");
    if (!f)
        return 0;
    size_t n = fread(b, 1, sizeof b - 1, f);
    fclose(f);
    return n == strlen(text) && !memcmp(b, text, n);
}

static int exists(const char *rel)
{
    char p[2048];
    struct stat st;
    path(p, rel);
    return lstat(p, &st) == 0;
}

/* the race, staged: step/victim becomes a symlink to out/ (the real
 * directory moves to moved/) just after the walk learned it is a directory */
static void swap_victim(void)
{
    char v[2048], m[2048], o[2048];
    path(v, "step/victim");
    path(m, "moved");
    path(o, "out");
    if (rename(v, m) || symlink(o, v)) {
        printf("staging the swap: %s\n", strerror(errno));
        exit(2);
    }
    swapped = 1;
}

int unlinkat(int fd, const char *name, int flags)
{
    static int (*real)(int, const char *, int);
    if (!real)
        real = (int (*)(int, const char *, int))dlsym(RTLD_NEXT, "unlinkat");
    int r = real(fd, name, flags);
    int e = errno;
    if (r && !flags && !swapped && !strcmp(name, "victim") && (e == EISDIR || e == EPERM))
        swap_victim();
    errno = e;
    return r;
}

int lstat(const char *p, struct stat *st) /* a walk that looks before it opens */
{
    int r = fstatat(AT_FDCWD, p, st, AT_SYMLINK_NOFOLLOW);
    size_t n = strlen(p);
    if (!r && !swapped && n >= 7 && !strcmp(p + n - 7, "/victim") && S_ISDIR(st->st_mode))
        swap_victim();
    return r;
}

static void test_plant_and_race(void)
{
    mk("out");
    put("out/keep", "outside\n");
    put("outfile", "outside file\n");
    mk("step");
    put("step/a", "a\n");
    mk("step/d0");
    put("step/d0/b", "b\n");
    mk("step/victim");
    put("step/victim/v", "v\n");
    link_to("out", "step/link");
    link_to("outfile", "step/d0/flink");
    char p[2048];
    path(p, "step");
    int rc = ckf_rmtree(p);
    CHECK(rc == 0, "ckf_rmtree: %d %s", rc, ckf_errmsg());
    CHECK(swapped, "the swap was not staged (the walk never met victim as a directory)");
    CHECK(!exists("step"), "the step directory is still there");
    CHECK(has("out/keep", "outside\n"), "a file behind a symlink was removed or changed");
    CHECK(has("outfile", "outside file\n"), "the target of a planted file symlink was removed");
    CHECK(has("moved/v", "v\n"), "the directory moved away was touched");
    /* a symlink given as the directory itself: the link goes, not its target */
    link_to("out", "steplink");
    path(p, "steplink");
    CHECK(ckf_rmtree(p) == 0 && !exists("steplink") && has("out/keep", "outside\n"), "rmtree of a symlink: %s",
          ckf_errmsg());
    CHECK(ckf_rmtree(p) == 0, "rmtree of an absent path: %s", ckf_errmsg());
}

static void test_long(void)
{
    size_t n = 4200;
    char *lp = malloc(n + 1);
    snprintf(lp, n + 1, "%s/", root);
    for (size_t i = strlen(lp); i < n; i++)
        lp[i] = i % 2 ? '/' : 'x';
    lp[n] = 0;
    int rc = ckf_rmtree(lp);
    CHECK(rc == ENAMETOOLONG && strstr(ckf_errmsg(), "longer than the limit") && strstr(ckf_errmsg(), root),
          "rmtree long: %d '%s'", rc, ckf_errmsg());
    sheaf_ckpt *ck = NULL;
    rc = sheaf_ckpt_open_dir(lp, &ck);
    CHECK(rc == -ENAMETOOLONG && !ck && strstr(sheaf_ckpt_errmsg(), "longer than the limit"), "open_dir long: %d '%s'",
          rc, sheaf_ckpt_errmsg());
    lp[4080] = 0; /* 4080 bytes + "/step-<20 digits>" is past the limit */
    rc = sheaf_ckpt_open(lp, 1, &ck);
    CHECK(rc == -ENAMETOOLONG && !ck && strstr(sheaf_ckpt_errmsg(), "step-00000000000000000001"), "open long: %d '%s'",
          rc, sheaf_ckpt_errmsg());
    free(lp);
    /* a real directory whose path is 4075 bytes holding a step directory:
     * the list cannot build the step's path and says so (was: cut) */
    char rel[4096] = "";
    size_t at = 0;
    if (chdir(root)) {
        printf("chdir: %s\n", strerror(errno));
        exit(2);
    }
    const size_t T = 4075, R = strlen(root); /* the directory's path: T bytes */
    while (R + 1 + at + 200 < T - 50) {
        memset(rel + at, 'd', 199);
        rel[at + 199] = 0;
        if (mkdir(rel, 0777)) {
            printf("mkdir: %s\n", strerror(errno));
            exit(2);
        }
        rel[at + 199] = '/';
        at += 200;
        rel[at] = 0;
    }
    size_t k = T - R - 1 - at;
    memset(rel + at, 'e', k);
    rel[at + k] = 0;
    if (mkdir(rel, 0777)) {
        printf("mkdir: %s\n", strerror(errno));
        exit(2);
    }
    char step[4200];
    snprintf(step, sizeof step, "%s/step-00000000000000000001", rel);
    if (mkdir(step, 0777)) {
        printf("mkdir step: %s\n", strerror(errno));
        exit(2);
    }
    char full[4200];
    snprintf(full, sizeof full, "%s/%s", root, rel);
    size_t cnt = 9;
    rc = sheaf_ckpt_list(full, NULL, 0, &cnt);
    CHECK(rc == -ENAMETOOLONG && cnt == 0 && strstr(sheaf_ckpt_errmsg(), "longer than the limit"),
          "list long (%zu bytes): %d '%s'", strlen(full), rc, sheaf_ckpt_errmsg());
}

int main(int argc, char **argv)
{
    if (argc != 2 || argv[1][0] != '/' || strlen(argv[1]) > 900) {
        printf("usage: test_ckpt_paths ABSOLUTE-WORKDIR\n");
        return 2;
    }
    snprintf(root, sizeof root, "%s", argv[1]);
    if (mkdir(root, 0777) && errno != EEXIST)
        return printf("mkdir %s: %s\n", root, strerror(errno)), 2;
    test_plant_and_race();
    test_long();
    if (fails)
        return printf("test_ckpt_paths: %d failures\n", fails), 1;
    printf("test_ckpt_paths: OK\n");
    return 0;
}
