/* pack_dir.c - pack a directory of task-local files into one container and back.
 *
 * The task-local I/O pattern: an application writes one file per task
 * (out.0000, out.0001, ...). This example stores such a directory in a single
 * SIONlib-format container and restores it, using the SIONlib serial API only.
 *
 * Usage:
 *   pack_dir pack   <dir> <container>   regular files of <dir>, sorted by name
 *   pack_dir unpack <container> <dir>   recreates the files in <dir> (created)
 *   pack_dir list   <container>         names and sizes
 *
 * Layout of the container: with N files, task i (0 <= i < N) holds the i-th
 * file (chunk size = its size, rounded up to a multiple of 64 bytes; the
 * library then rounds to the file system block size). Task N holds the
 * manifest: the file names, one per line, in task order. Any SIONlib tool
 * (sheaf dump / siondump, sheaf split / sionsplit, ...) can read the result.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include "sion.h"

#define COPY_BUFSIZE (1 << 20)
#define MAX_MANIFEST (64 << 20) /* a longer last task is not a pack_dir manifest */

typedef struct {
    char *name;
    sion_int64 size;
} entry;

typedef struct {
    entry *e;
    int n;
} filelist;

static void free_list(filelist *l)
{
    for (int i = 0; i < l->n; i++)
        free(l->e[i].name);
    free(l->e);
    l->e = NULL;
    l->n = 0;
}

static int cmp_entries(const void *a, const void *b)
{
    return strcmp(((const entry *)a)->name, ((const entry *)b)->name);
}

static char *join(const char *dir, const char *name)
{
    size_t len = strlen(dir) + strlen(name) + 2;
    char *p = malloc(len);
    if (p)
        snprintf(p, len, "%s/%s", dir, name);
    return p;
}

/* A name from the manifest must stay inside the target directory. */
static int safe_name(const char *name)
{
    return name[0] != '\0' && strchr(name, '/') == NULL && strcmp(name, ".") != 0 && strcmp(name, "..") != 0;
}

static int scan_dir(const char *dir, filelist *l)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    int cap = 0;
    memset(l, 0, sizeof(*l));
    if (!d) {
        fprintf(stderr, "pack_dir: cannot open directory %s: %s\n", dir, strerror(errno));
        return 1;
    }
    while ((de = readdir(d)) != NULL) {
        struct stat st;
        char *path;
        if (!safe_name(de->d_name) || strchr(de->d_name, '\n'))
            continue;
        path = join(dir, de->d_name);
        if (!path || stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
            free(path);
            continue;
        }
        free(path);
        if (l->n == cap) {
            entry *ne = realloc(l->e, (cap ? 2 * cap : 64) * sizeof(*ne));
            if (!ne)
                break;
            l->e = ne;
            cap = cap ? 2 * cap : 64;
        }
        if (!(l->e[l->n].name = strdup(de->d_name)))
            break;
        l->e[l->n++].size = st.st_size;
    }
    closedir(d);
    if (de != NULL) {
        fprintf(stderr, "pack_dir: out of memory\n");
        free_list(l);
        return 1;
    }
    qsort(l->e, l->n, sizeof(*l->e), cmp_entries);
    return 0;
}

static int write_task(int sid, int task, const char *path, char *buf)
{
    FILE *in = fopen(path, "rb");
    size_t n;
    int rc = 0;
    if (!in) {
        fprintf(stderr, "pack_dir: cannot open %s: %s\n", path, strerror(errno));
        return 1;
    }
    if (sion_seek(sid, task, SION_CURRENT_BLK, SION_CURRENT_POS) != SION_SUCCESS) {
        fclose(in);
        return 1;
    }
    while ((n = fread(buf, 1, COPY_BUFSIZE, in)) > 0)
        if (sion_fwrite(buf, 1, n, sid) != n) {
            rc = 1;
            break;
        }
    if (ferror(in)) {
        fprintf(stderr, "pack_dir: cannot read %s\n", path);
        rc = 1;
    }
    fclose(in);
    return rc;
}

static int pack(const char *dir, char *container)
{
    filelist l;
    sion_int64 *chunks;
    int *ranks, ntasks, nfiles = 1, sid, rc = 0;
    sion_int32 fsblksize = -1;
    sion_int64 manifest_len = 0;
    char *buf;
    FILE *fp = NULL;

    if (scan_dir(dir, &l))
        return 1;
    if (l.n == 0) {
        fprintf(stderr, "pack_dir: no regular files in %s\n", dir);
        free_list(&l);
        return 1;
    }
    ntasks = l.n + 1;
    chunks = malloc(ntasks * sizeof(*chunks));
    ranks = malloc(ntasks * sizeof(*ranks));
    buf = malloc(COPY_BUFSIZE);
    if (!chunks || !ranks || !buf) {
        fprintf(stderr, "pack_dir: out of memory\n");
        free(chunks);
        free(ranks);
        free(buf);
        free_list(&l);
        return 1;
    }
    for (int i = 0; i < l.n; i++) {
        chunks[i] = l.e[i].size > 0 ? (l.e[i].size + 63) / 64 * 64 : 64;
        ranks[i] = i;
        manifest_len += (sion_int64)strlen(l.e[i].name) + 1;
    }
    chunks[l.n] = (manifest_len + 63) / 64 * 64;
    ranks[l.n] = l.n;

    sid = sion_open(container, "wb", &ntasks, &nfiles, &chunks, &fsblksize, &ranks, &fp);
    if (sid < 0) {
        fprintf(stderr, "pack_dir: cannot create %s\n", container);
        free(chunks);
        free(ranks);
        free(buf);
        free_list(&l);
        return 1;
    }
    for (int i = 0; i < l.n && rc == 0; i++) {
        char *path = join(dir, l.e[i].name);
        rc = !path || write_task(sid, i, path, buf);
        free(path);
    }
    if (rc == 0 && sion_seek(sid, l.n, SION_CURRENT_BLK, SION_CURRENT_POS) == SION_SUCCESS) {
        for (int i = 0; i < l.n && rc == 0; i++) {
            size_t len = strlen(l.e[i].name);
            rc = sion_fwrite(l.e[i].name, 1, len, sid) != len || sion_fwrite("\n", 1, 1, sid) != 1;
        }
    } else {
        rc = 1;
    }
    if (sion_close(sid) != SION_SUCCESS)
        rc = 1;
    if (rc == 0)
        printf("pack_dir: packed %d files from %s into %s (fs block size %d)\n", l.n, dir, container, (int)fsblksize);
    else
        fprintf(stderr, "pack_dir: packing %s into %s failed\n", dir, container);
    free(chunks);
    free(ranks);
    free(buf);
    free_list(&l);
    return rc;
}

/* Read the rest of the current task into a malloc'd, NUL-terminated buffer
 * (used for the manifest). NULL on error or if it holds more than max bytes. */
static char *read_task(int sid, sion_int64 max, sion_int64 *len)
{
    size_t cap = 256, n = 0;
    char *s = malloc(cap);
    while (s && !sion_feof(sid)) {
        sion_int64 avail = sion_bytes_avail_in_block(sid);
        if (avail < 0 || (sion_int64)n + avail > max) {
            free(s);
            return NULL;
        }
        if (n + (size_t)avail + 1 > cap) {
            char *ns;
            while (n + (size_t)avail + 1 > cap)
                cap *= 2;
            ns = realloc(s, cap);
            if (!ns) {
                free(s);
                return NULL;
            }
            s = ns;
        }
        if (sion_fread(s + n, 1, (size_t)avail, sid) != (size_t)avail) {
            free(s);
            return NULL;
        }
        n += (size_t)avail;
    }
    if (s)
        s[n] = '\0';
    *len = (sion_int64)n;
    return s;
}

/* Open a container written by `pack` and return its file names (manifest). */
static int open_packed(char *container, int *sid, filelist *l)
{
    int ntasks = 0, nfiles = 0;
    sion_int32 fsblksize = 0;
    FILE *fp = NULL;
    sion_int64 len = 0, *chunks = NULL;
    char *manifest, *p;

    memset(l, 0, sizeof(*l));
    *sid = sion_open(container, "rb", &ntasks, &nfiles, &chunks, &fsblksize, NULL, &fp);
    if (*sid < 0) {
        fprintf(stderr, "pack_dir: cannot open %s\n", container);
        return 1;
    }
    free(chunks);
    if (ntasks < 2 || sion_seek(*sid, ntasks - 1, 0, 0) != SION_SUCCESS ||
        !(manifest = read_task(*sid, MAX_MANIFEST, &len))) {
        fprintf(stderr, "pack_dir: %s was not written by pack_dir (no manifest)\n", container);
        sion_close(*sid);
        return 1;
    }
    /* text without NUL bytes; checked before the newlines become NULs */
    l->e = strlen(manifest) == (size_t)len ? calloc(ntasks - 1, sizeof(*l->e)) : NULL;
    for (p = manifest; l->e && l->n < ntasks - 1 && *p;) {
        char *nl = strchr(p, '\n');
        if (!nl)
            break;
        *nl = '\0';
        if (!safe_name(p) || !(l->e[l->n].name = strdup(p)))
            break;
        l->n++;
        p = nl + 1;
    }
    if (l->n != ntasks - 1 || *p != '\0') {
        fprintf(stderr, "pack_dir: %s: manifest (task %d) does not list %d valid file names\n", container, ntasks - 1,
                ntasks - 1);
        free(manifest);
        free_list(l);
        sion_close(*sid);
        return 1;
    }
    free(manifest);
    return 0;
}

static int unpack(char *container, const char *dir)
{
    filelist l;
    int sid, rc = 0;
    char *buf;

    if (open_packed(container, &sid, &l))
        return 1;
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "pack_dir: cannot create directory %s: %s\n", dir, strerror(errno));
        free_list(&l);
        sion_close(sid);
        return 1;
    }
    buf = malloc(COPY_BUFSIZE);
    for (int i = 0; i < l.n && rc == 0 && buf; i++) {
        char *path = join(dir, l.e[i].name);
        FILE *out = path ? fopen(path, "wb") : NULL;
        if (!out || sion_seek(sid, i, 0, 0) != SION_SUCCESS) {
            fprintf(stderr, "pack_dir: cannot extract task %d to %s\n", i, path ? path : "?");
            rc = 1;
        }
        while (rc == 0 && !sion_feof(sid)) {
            sion_int64 avail = sion_bytes_avail_in_block(sid);
            size_t want = avail < COPY_BUFSIZE ? (size_t)avail : COPY_BUFSIZE;
            if (sion_fread(buf, 1, want, sid) != want || fwrite(buf, 1, want, out) != want) {
                fprintf(stderr, "pack_dir: copying task %d to %s failed\n", i, path);
                rc = 1;
            }
        }
        if (out && fclose(out) != 0)
            rc = 1;
        free(path);
    }
    if (!buf)
        rc = 1;
    if (rc == 0)
        printf("pack_dir: extracted %d files from %s into %s\n", l.n, container, dir);
    free(buf);
    free_list(&l);
    sion_close(sid);
    return rc;
}

static int list(char *container)
{
    filelist l;
    int sid, ntasks, maxblocks;
    sion_int64 globalskip, start, *chunks, *ranks, *blockcount, *blocksizes;
    if (open_packed(container, &sid, &l))
        return 1;
    if (sion_get_locations(sid, &ntasks, &maxblocks, &globalskip, &start, &chunks, &ranks, &blockcount, &blocksizes) !=
        SION_SUCCESS) {
        free_list(&l);
        sion_close(sid);
        return 1;
    }
    printf("  task        bytes name\n");
    for (int i = 0; i < l.n; i++) {
        sion_int64 bytes = 0; /* bytes of task i = sum of its block sizes */
        for (sion_int64 b = 0; b < blockcount[i]; b++)
            bytes += blocksizes[ntasks * b + i];
        printf("%6d %12lld %s\n", i, (long long)bytes, l.e[i].name);
    }
    free_list(&l);
    sion_close(sid);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "pack") == 0)
        return pack(argv[2], argv[3]);
    if (argc == 4 && strcmp(argv[1], "unpack") == 0)
        return unpack(argv[2], argv[3]);
    if (argc == 3 && strcmp(argv[1], "list") == 0)
        return list(argv[2]);
    fprintf(stderr,
            "usage: %s pack <dir> <container>\n"
            "       %s unpack <container> <dir>\n"
            "       %s list <container>\n",
            argv[0], argv[0], argv[0]);
    return 1;
}
