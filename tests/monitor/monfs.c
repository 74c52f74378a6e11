/* monfs.c - a writable, counting FUSE file system (libfuse3, high-level API)
 * standing in for one storage server in the monitor's test bed: files live
 * in memory as sizes only (their bytes are counted, not kept), and the
 * server counts the bytes and WRITE requests it received.
 *
 *   monfs MOUNTPOINT FSNAME STATSFILE [LATENCY_US]
 *
 * mounts MOUNTPOINT with source FSNAME (e.g. "srvA:/export") and type
 * fuse.monfs, serves in the foreground (one thread) until unmounted, then
 * writes "bytes_written N\nwrites M\n" to STATSFILE. LATENCY_US: sleep that
 * long in every WRITE (a slow server). Test code only. */
#define _GNU_SOURCE
#define FUSE_USE_VERSION 31
#include <fuse.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAXF 4096
static struct {
    char name[256];
    off_t size;
} files[MAXF];
static int nfiles;
static unsigned long long bytes_written, writes;
static const char *stats_path;
static unsigned latency_us;

static int find(const char *path)
{
    for (int i = 0; i < nfiles; i++)
        if (!strcmp(files[i].name, path + 1))
            return i;
    return -1;
}

static int fs_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
    (void)fi;
    memset(st, 0, sizeof *st);
    if (!strcmp(path, "/")) {
        st->st_mode = S_IFDIR | 0777;
        st->st_nlink = 2;
        return 0;
    }
    int i = find(path);
    if (i < 0)
        return -ENOENT;
    st->st_mode = S_IFREG | 0666;
    st->st_nlink = 1;
    st->st_size = files[i].size;
    return 0;
}

static int fs_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off, struct fuse_file_info *fi,
                      enum fuse_readdir_flags fl)
{
    (void)off, (void)fi, (void)fl;
    if (strcmp(path, "/"))
        return -ENOTDIR;
    fill(buf, ".", NULL, 0, 0);
    fill(buf, "..", NULL, 0, 0);
    for (int i = 0; i < nfiles; i++)
        fill(buf, files[i].name, NULL, 0, 0);
    return 0;
}

static int fs_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
    (void)mode, (void)fi;
    if (find(path) >= 0)
        return 0;
    if (strchr(path + 1, '/') || strlen(path + 1) >= sizeof files[0].name)
        return -EINVAL;
    if (nfiles == MAXF)
        return -ENOSPC;
    strcpy(files[nfiles].name, path + 1);
    files[nfiles++].size = 0;
    return 0;
}

static int fs_open(const char *path, struct fuse_file_info *fi)
{
    int i = find(path);
    if (i < 0)
        return -ENOENT;
    if (fi->flags & O_TRUNC)
        files[i].size = 0;
    fi->direct_io = 1; /* every write reaches the server as the program made it */
    return 0;
}

static int fs_write(const char *path, const char *buf, size_t n, off_t off, struct fuse_file_info *fi)
{
    (void)buf, (void)fi;
    int i = find(path);
    if (i < 0)
        return -ENOENT;
    if (latency_us)
        usleep(latency_us);
    bytes_written += n;
    writes++;
    if (off + (off_t)n > files[i].size)
        files[i].size = off + (off_t)n;
    return (int)n;
}

static int fs_read(const char *path, char *buf, size_t n, off_t off, struct fuse_file_info *fi)
{
    (void)fi;
    int i = find(path);
    if (i < 0)
        return -ENOENT;
    if (off >= files[i].size)
        return 0;
    if ((off_t)n > files[i].size - off)
        n = (size_t)(files[i].size - off);
    memset(buf, 'm', n);
    return (int)n;
}

static int fs_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
    (void)fi;
    int i = find(path);
    if (i < 0)
        return -ENOENT;
    files[i].size = size;
    return 0;
}

static int fs_utimens(const char *path, const struct timespec tv[2], struct fuse_file_info *fi)
{
    (void)tv, (void)fi;
    return find(path) >= 0 || !strcmp(path, "/") ? 0 : -ENOENT;
}

static void fs_destroy(void *data)
{
    (void)data;
    FILE *f = fopen(stats_path, "w");
    if (f) {
        fprintf(f, "bytes_written %llu\nwrites %llu\n", bytes_written, writes);
        fclose(f);
    }
}

static const struct fuse_operations ops = {
    .getattr = fs_getattr,
    .readdir = fs_readdir,
    .create = fs_create,
    .open = fs_open,
    .read = fs_read,
    .write = fs_write,
    .truncate = fs_truncate,
    .utimens = fs_utimens,
    .destroy = fs_destroy,
};

int main(int argc, char **argv)
{
    if (argc < 4 || argc > 5) {
        fprintf(stderr, "usage: monfs MOUNTPOINT FSNAME STATSFILE [LATENCY_US]\n");
        return 1;
    }
    stats_path = argv[3];
    latency_us = argc == 5 ? (unsigned)atoi(argv[4]) : 0;
    char opt[600];
    snprintf(opt, sizeof opt, "fsname=%s,subtype=monfs,allow_other,default_permissions", argv[2]);
    char *args[] = {argv[0], "-f", "-s", "-o", opt, argv[1], NULL};
    return fuse_main(6, args, &ops, NULL);
}
