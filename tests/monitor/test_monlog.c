/* test_monlog.c - the monitor log reader on good and bad input (public
 * sheaf_monitor_parse / sheaf_monitor_read / sheaf_monitor_print): a valid
 * stream gives its counters; truncated, hostile and inconsistent streams and
 * files give SHEAF_E_FORMAT (or the right code) with a message saying what,
 * never a crash; ids past the declared budget are refused before anything
 * is allocated for them. usage: test_monlog SCRATCHDIR */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "record.h"
#include "sheaf.h"
#include "sheaf_monitor.h"

static int fails;
#define CHECK(c, ...)                                                                                                  \
    do {                                                                                                               \
        if (!(c)) {                                                                                                    \
            fails++;                                                                                                   \
            printf("FAIL line %d: ", __LINE__);                                                                        \
            printf(__VA_ARGS__);                                                                                       \
            printf("\n");                                                                                              \
        }                                                                                                              \
    } while (0)

#include <stdint.h>

static unsigned char stream[64 * MON_REC_SIZE];
static size_t nrec;

static void add(const mon_rec *r) { mon_rec_pack(r, stream + nrec++ * MON_REC_SIZE); }

/* HEAD, NAME, TGT (version 2 only), FILE, FILE, SNAP */
static void build_version(uint32_t version)
{
    nrec = 0;
    mon_rec h = {.type = MON_T_HEAD};
    h.u.head.version = version;
    h.u.head.rank = 3;
    h.u.head.max_files = 4;
    h.u.head.max_dirs = 2;
    h.u.head.max_targets = version >= 2 ? 2 : 0;
    h.u.head.pid = 42;
    strcpy(h.u.head.host, "node1");
    add(&h);
    mon_rec n = {.type = MON_T_NAME};
    n.u.name.id = 1;
    n.u.name.total = n.u.name.len = 7;
    memcpy(n.u.name.seg, "/a/file", 7);
    add(&n);
    if (version >= 2) {
        mon_rec t = {.type = MON_T_TGT};
        t.u.tgt.id = 1;
        t.u.tgt.kind = 2; /* nfs */
        strcpy(t.u.tgt.fstype, "nfs4");
        strcpy(t.u.tgt.name, "nfs://srvA:/export");
        add(&t);
    }
    mon_rec f = {.type = MON_T_FILE};
    f.u.file.id = 1;
    f.u.file.tgt = version >= 2 ? 2 : 0;
    f.u.file.kind = MON_K_FILE;
    f.u.file.c[MC_WRITES] = 5;
    f.u.file.c[MC_BYTES_WRITTEN] = 500;
    f.u.file.c[MC_FILES] = 1;
    add(&f);
    f.u.file.snap = 1; /* a later snapshot: cumulative, replaces the first */
    f.u.file.c[MC_WRITES] = 7;
    f.u.file.c[MC_BYTES_WRITTEN] = 700;
    add(&f);
    mon_rec s = {.type = MON_T_SNAP};
    s.u.snap.nfile = 1;
    s.u.snap.final = 1;
    add(&s);
}

static void build_valid(void) { build_version(MON_VERSION); }

static int parse_code(const void *buf, size_t len, char *err, size_t errlen)
{
    sheaf_monitor_job *job = NULL;
    int rc = sheaf_monitor_parse(buf, len, &job, err, errlen);
    CHECK((rc == 0) == (job != NULL), "job set exactly on success");
    sheaf_monitor_free(job);
    return rc;
}

/* a valid stream with field `patch` applied to record k, must fail with a message containing want */
static void bad(int k, size_t off, const void *bytes, size_t n, const char *want)
{
    build_valid();
    memcpy(stream + (size_t)k * MON_REC_SIZE + off, bytes, n);
    char err[512] = "";
    int rc = parse_code(stream, nrec * MON_REC_SIZE, err, sizeof err);
    CHECK(rc == SHEAF_E_FORMAT, "record %d patched at %zu: rc %d (want format error)", k, off, rc);
    CHECK(strstr(err, want) != NULL, "message '%s' lacks '%s'", err, want);
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    char err[512];
    /* valid: the latest snapshot's counters */
    build_valid();
    sheaf_monitor_job *job = NULL;
    int rc = sheaf_monitor_parse(stream, nrec * MON_REC_SIZE, &job, err, sizeof err);
    CHECK(rc == 0, "valid stream: %s", err);
    if (job) {
        char *out = NULL;
        size_t outlen = 0;
        FILE *o = open_memstream(&out, &outlen);
        CHECK(sheaf_monitor_print(job, o, 1, err, sizeof err) == 0, "print");
        fclose(o);
        CHECK(strstr(out, "\"name\":\"/a/file\"") && strstr(out, "\"writes\":7,") &&
                  strstr(out, "\"bytes_written\":700,") && strstr(out, "\"rank\":3,"),
              "valid stream's summary: %s", out);
        /* the record's bytes under its storage target */
        const char *tg =
            strstr(out, "\"targets\":[{\"name\":\"nfs://srvA:/export\",\"kind\":\"nfs\",\"fstype\":\"nfs4\"");
        CHECK(tg && strstr(tg, "\"bytes_written\":700,") && strstr(tg, "\"records\":1,"), "per target: %s", out);
        free(out);
        sheaf_monitor_free(job);
    }
    /* a version 1 log (no storage targets) still reads: no targets listed */
    build_version(1);
    job = NULL;
    rc = sheaf_monitor_parse(stream, nrec * MON_REC_SIZE, &job, err, sizeof err);
    CHECK(rc == 0, "version 1 stream: %s", err);
    if (job) {
        char *out = NULL;
        size_t outlen = 0;
        FILE *o = open_memstream(&out, &outlen);
        CHECK(sheaf_monitor_print(job, o, 1, err, sizeof err) == 0, "print v1");
        fclose(o);
        CHECK(strstr(out, "\"targets\":[]") && strstr(out, "\"bytes_written\":700,"), "v1 summary: %s", out);
        free(out);
        sheaf_monitor_free(job);
    }
    /* a version 1 FILE record naming a target is refused */
    {
        uint32_t one = 1;
        memcpy(stream + 2 * MON_REC_SIZE + 400, &one, 4);
        err[0] = 0;
        CHECK(parse_code(stream, nrec * MON_REC_SIZE, err, sizeof err) == SHEAF_E_FORMAT && strstr(err, "target"),
              "v1 with a target: %s", err);
    }
    /* empty input: a job with no processes' records, not an error */
    CHECK(parse_code(stream, 0, err, sizeof err) == 0, "empty stream");
    /* truncated: not a whole number of records */
    build_valid();
    for (size_t cut = 1; cut < MON_REC_SIZE; cut += 37) {
        err[0] = 0;
        CHECK(parse_code(stream, 2 * MON_REC_SIZE + cut, err, sizeof err) == SHEAF_E_FORMAT, "cut %zu", cut);
        CHECK(strstr(err, "truncated") != NULL, "cut message: %s", err);
    }
    uint32_t v;
    v = 0x12345678u;
    bad(2, 0, &v, 4, "magic");
    uint16_t t = 99;
    bad(2, 4, &t, 2, "unknown record type");
    v = MON_VERSION + 1;
    bad(0, 8, &v, 4, "version");
    v = 0;
    bad(0, 8, &v, 4, "version");
    v = MON_IDS_MAX; /* a budget past the reader's limit */
    bad(0, 16, &v, 4, "past the limit");
    v = MON_TGT_MAX + 1; /* more targets than a reader takes (head: 8 + 56 + 64 + 128 = 256) */
    bad(0, 256, &v, 4, "past the limit");
    v = 9; /* id 9 past the budget of 4 + 2 + 2 + 1 */
    bad(3, 8, &v, 4, "past the log's budget");
    /* storage targets: FILE's target at byte 400; TGT: id 8, kind 12, fstype 16, name 48 */
    v = 1; /* target 0 was never declared */
    bad(3, 400, &v, 4, "not declared");
    v = 0; /* a version 2 record without a target */
    bad(3, 400, &v, 4, "not declared");
    v = MON_TGT_MAX + 2;
    bad(3, 400, &v, 4, "out of bounds");
    v = 3; /* target id 3 past the log's 2 + 1 */
    bad(2, 8, &v, 4, "past the log's");
    v = 100;
    bad(2, 12, &v, 4, "target record");
    char full[MON_TGT_NAME];
    memset(full, 'x', sizeof full); /* a name without its terminating NUL */
    bad(2, 48, full, sizeof full, "not terminated");
    bad(2, 16, full, MON_FSTYPE_MAX, "not terminated");
    bad(2, 48, "", 1, "not terminated"); /* an empty name */
    /* a target renamed, an "(other)" aggregate under another target's id */
    build_valid();
    {
        mon_rec tr = {.type = MON_T_TGT};
        tr.u.tgt.id = 1;
        strcpy(tr.u.tgt.name, "nfs://srvB:/other");
        mon_rec_pack(&tr, stream + 4 * MON_REC_SIZE);
        err[0] = 0;
        CHECK(parse_code(stream, nrec * MON_REC_SIZE, err, sizeof err) == SHEAF_E_FORMAT && strstr(err, "named twice"),
              "renamed target: %s", err);
        build_valid();
        mon_rec f = {.type = MON_T_FILE};
        f.u.file.id = 6; /* the "(other)" of target 0 (4 + 2 + 0) */
        f.u.file.kind = MON_K_OTHER;
        f.u.file.tgt = 2; /* names target 1 */
        mon_rec_pack(&f, stream + 4 * MON_REC_SIZE);
        err[0] = 0;
        CHECK(parse_code(stream, nrec * MON_REC_SIZE, err, sizeof err) == SHEAF_E_FORMAT && strstr(err, "(other)"),
              "other of another target: %s", err);
    }
    v = 0xffffffffu;
    bad(1, 8, &v, 4, "out of bounds");
    v = 4000; /* name segment past its total */
    bad(1, 12, &v, 4, "out of bounds");
    v = 5000; /* name longer than MON_NAME_MAX */
    bad(1, 16, &v, 4, "out of bounds");
    v = MON_K_DIR; /* id 1 is a file record under this budget */
    bad(3, 12, &v, 4, "kind");
    v = 9;
    bad(3, 12, &v, 4, "out of bounds");
    uint64_t big = 1000;
    bad(5, 24, &big, 8, "claims");
    /* no head first, a second head */
    build_valid();
    char e2[512] = "";
    CHECK(parse_code(stream + MON_REC_SIZE, 4 * MON_REC_SIZE, e2, sizeof e2) == SHEAF_E_FORMAT && strstr(e2, "head"),
          "no head: %s", e2);
    memcpy(stream + 3 * MON_REC_SIZE, stream, MON_REC_SIZE);
    CHECK(parse_code(stream, nrec * MON_REC_SIZE, e2, sizeof e2) == SHEAF_E_FORMAT && strstr(e2, "second head"),
          "second head: %s", e2);
    /* files: not a log, a missing path */
    mkdir(argv[1], 0755);
    char path[1024];
    snprintf(path, sizeof path, "%s/junk.smon", argv[1]);
    FILE *f = fopen(path, "w");
    fputs("this is not a container\n", f);
    fclose(f);
    rc = sheaf_monitor_read(path, 0, &job, e2, sizeof e2);
    CHECK(rc != 0 && job == NULL && strstr(e2, "junk.smon"), "junk file: rc %d %s", rc, e2);
    rc = sheaf_monitor_read(argv[1], 0, &job, e2, sizeof e2);
    CHECK(rc != 0 && strstr(e2, "junk.smon"), "directory with a junk log: rc %d %s", rc, e2);
    snprintf(path, sizeof path, "%s/missing", argv[1]);
    CHECK(sheaf_monitor_read(path, 0, &job, e2, sizeof e2) == SHEAF_E_NOTFOUND, "missing path");
    CHECK(sheaf_monitor_parse(NULL, 5, &job, e2, sizeof e2) == SHEAF_E_ARG, "NULL buffer");
    printf("test_monlog: %s\n", fails ? "FAILED" : "ok");
    return fails ? 1 : 0;
}
