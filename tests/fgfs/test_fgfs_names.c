/* test_fgfs_names.c - global names from mount tables (cmocka): the corpus in
 * tests/fgfs/mountinfo (real-world-style mountinfo files written from
 * proc(5)) against expect.txt, malformed and hostile input, the injected
 * table (SHEAF_FGFS_MOUNTINFO), the real table of this machine. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "sheaf_fgfs.h"

static const char *corpus_dir(void)
{
    const char *d = getenv("FGFS_CORPUS");
    return d ? d : "mountinfo";
}

static sheaf_fgfs_mounts *load(const char *name)
{
    char p[1024];
    snprintf(p, sizeof p, "%s/%s", corpus_dir(), name);
    FILE *f = fopen(p, "rb");
    assert_non_null(f);
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    sheaf_fgfs_mounts *m = NULL;
    assert_int_equal(sheaf_fgfs_mounts_parse(buf, n, p, &m), SHEAF_FGFS_OK);
    sheaf_fgfs_mounts_set_loop(m, "/dev/loop0", "/usr/gapps/images/sw.sqsh");
    sheaf_fgfs_mounts_set_loop(m, "/dev/loop7", "/srv/local.img");
    return m;
}

static void unescape(char *s)
{
    char *o = s;
    for (; *s; s++) {
        if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] && s[3]) {
            *o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
            s += 3;
        } else
            *o++ = *s;
    }
    *o = 0;
}

static void corpus(void **state)
{
    char p[1024], line[8192];
    snprintf(p, sizeof p, "%s/expect.txt", corpus_dir());
    FILE *f = fopen(p, "r");
    assert_non_null(f);
    int checked = 0, failed = 0;
    sheaf_fgfs_name *nm = malloc(sizeof *nm);
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[0] == '\n')
            continue;
        line[strcspn(line, "\n")] = 0;
        char file[256], host[256], path[4096], kind[32];
        int local, off = 0;
        assert_int_equal(sscanf(line, "%255s %255s %4095s %31s %d %n", file, host, path, kind, &local, &off), 5);
        const char *uri = line + off;
        unescape(path);
        sheaf_fgfs_mounts *m = load(file);
        int rc = sheaf_fgfs_resolve(m, host, path, SHEAF_FGFS_NOREALPATH, nm);
        if (rc || strcmp(nm->uri, uri) || strcmp(sheaf_fgfs_kind_name(nm->kind), kind) || nm->local != local) {
            printf("MISMATCH %s %s: rc %d uri '%s' kind %s local %d; expected '%s' %s %d (%s)\n", file, path, rc,
                   rc ? "" : nm->uri, sheaf_fgfs_kind_name(nm->kind), nm->local, uri, kind, local,
                   rc ? sheaf_fgfs_last_error() : "");
            failed++;
        }
        checked++;
        sheaf_fgfs_mounts_free(m);
    }
    fclose(f);
    free(nm);
    printf("corpus: %d names checked, %d wrong\n", checked, failed);
    assert_true(checked >= 40);
    assert_int_equal(failed, 0);
}

static void malformed(void **state)
{
    sheaf_fgfs_mounts *m = load("malformed.txt");
    assert_int_equal(sheaf_fgfs_mounts_count(m), 2);
    assert_int_equal(sheaf_fgfs_mounts_skipped(m), 8);
    sheaf_fgfs_mounts_free(m);
    m = load("cluster-node.txt");
    assert_int_equal(sheaf_fgfs_mounts_count(m), 23);
    assert_string_equal(sheaf_fgfs_mount_point(m, 17), "/var/tmp/with space");
    assert_string_equal(sheaf_fgfs_mount_fstype(m, 7), "nfs4");
    assert_string_equal(sheaf_fgfs_mount_root(m, 15), "/projects/x");
    assert_null(sheaf_fgfs_mount_point(m, 99));
    sheaf_fgfs_mounts_free(m);
}

static void hostile(void **state)
{
    sheaf_fgfs_mounts *m = NULL;
    assert_int_equal(sheaf_fgfs_mounts_parse("", 0, "empty", &m), SHEAF_FGFS_EPARSE);
    assert_non_null(strstr(sheaf_fgfs_last_error(), "empty"));
    const char nul[] = "1 0 0:1 / / rw - ext4 /dev/x rw\0\n";
    assert_int_equal(sheaf_fgfs_mounts_parse(nul, sizeof nul - 1, "nul", &m), SHEAF_FGFS_EPARSE);
    /* a line of 1 MiB of spaces and fields, and many optional fields */
    size_t big = 1 << 20;
    char *b = malloc(big);
    memset(b, 'a', big);
    for (size_t i = 0; i < big; i += 7)
        b[i] = ' ';
    assert_int_equal(sheaf_fgfs_mounts_parse(b, big, "big", &m), SHEAF_FGFS_EPARSE);
    free(b);
    assert_int_equal(sheaf_fgfs_mounts_parse(NULL, 5, "x", &m), SHEAF_FGFS_EINVAL);
    /* escapes at the very end of the input, truncated */
    const char esc[] = "1 0 0:1 / /a\\04";
    assert_int_equal(sheaf_fgfs_mounts_parse(esc, sizeof esc - 1, "esc", &m), SHEAF_FGFS_EPARSE);
    const char ok[] = "1 0 0:1 / / rw - ext4 /dev/x rw";
    assert_int_equal(sheaf_fgfs_mounts_parse(ok, sizeof ok - 1, "ok", &m), SHEAF_FGFS_OK);
    sheaf_fgfs_name *nm = malloc(sizeof *nm);
    char *lp = malloc(6000);
    memset(lp, 'x', 5999);
    lp[0] = '/';
    lp[5999] = 0;
    assert_int_equal(sheaf_fgfs_resolve(m, "h", lp, SHEAF_FGFS_NOREALPATH, nm), SHEAF_FGFS_EINVAL);
    assert_non_null(strstr(sheaf_fgfs_last_error(), "xxxx"));
    assert_int_equal(sheaf_fgfs_resolve(m, "h", "", 0, nm), SHEAF_FGFS_EINVAL);
    assert_int_equal(sheaf_fgfs_resolve(m, "h", "/a/../../b", SHEAF_FGFS_NOREALPATH, nm), SHEAF_FGFS_OK);
    assert_string_equal(nm->uri, "file://h/b");
    free(lp);
    free(nm);
    sheaf_fgfs_mounts_free(m);
    /* a table without "/" does not cover every path */
    const char part[] = "1 0 0:1 / /only rw - ext4 /dev/x rw";
    assert_int_equal(sheaf_fgfs_mounts_parse(part, sizeof part - 1, "part", &m), SHEAF_FGFS_OK);
    nm = malloc(sizeof *nm);
    assert_int_equal(sheaf_fgfs_resolve(m, "h", "/elsewhere/f", SHEAF_FGFS_NOREALPATH, nm), SHEAF_FGFS_EPARSE);
    assert_non_null(strstr(sheaf_fgfs_last_error(), "/elsewhere/f"));
    free(nm);
    sheaf_fgfs_mounts_free(m);
    /* loop maps are bounded */
    assert_int_equal(sheaf_fgfs_mounts_parse(ok, sizeof ok - 1, "ok", &m), SHEAF_FGFS_OK);
    int rc = 0;
    for (int i = 0; i < 70 && !rc; i++)
        rc = sheaf_fgfs_mounts_set_loop(m, "/dev/loopX", "/f");
    assert_int_equal(rc, SHEAF_FGFS_ELIMIT);
    sheaf_fgfs_mounts_free(m);
}

static void injected_and_real(void **state)
{
    char p[1024];
    snprintf(p, sizeof p, "%s/container.txt", corpus_dir());
    setenv("SHEAF_FGFS_MOUNTINFO", p, 1);
    sheaf_fgfs_mounts *m = NULL;
    assert_int_equal(sheaf_fgfs_mounts_load(&m), SHEAF_FGFS_OK);
    assert_int_equal(sheaf_fgfs_mounts_count(m), 10);
    sheaf_fgfs_mounts_free(m);
    setenv("SHEAF_FGFS_MOUNTINFO", "/nonexistent/mountinfo", 1);
    assert_int_equal(sheaf_fgfs_mounts_load(&m), SHEAF_FGFS_EIO);
    assert_non_null(strstr(sheaf_fgfs_last_error(), "/nonexistent/mountinfo"));
    unsetenv("SHEAF_FGFS_MOUNTINFO");
    assert_int_equal(sheaf_fgfs_mounts_load(&m), SHEAF_FGFS_OK);
    sheaf_fgfs_name *nm = malloc(sizeof *nm);
    char cwd[4096];
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(sheaf_fgfs_resolve(m, NULL, ".", 0, nm), SHEAF_FGFS_OK);
    assert_string_equal(nm->path, cwd);
    printf("this machine: %s -> %s (%s)\n", cwd, nm->uri, sheaf_fgfs_kind_name(nm->kind));
    assert_int_equal(sheaf_fgfs_resolve(m, "h", "/proc/self", 0, nm), SHEAF_FGFS_OK); /* a symlink, resolved */
    assert_int_equal(nm->kind, SHEAF_FGFS_PSEUDO);
    free(nm);
    sheaf_fgfs_mounts_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(corpus),
        cmocka_unit_test(malformed),
        cmocka_unit_test(hostile),
        cmocka_unit_test(injected_and_real),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
