/* fusesrv.c - a tiny FUSE file system speaking the kernel protocol on
 * /dev/fuse directly (no libfuse), standing in for an NFS server in the
 * namespace test bed: it mounts MOUNTPOINT with source FSNAME (e.g.
 * "srvA:/export") and type fuse.fgfsnfs, and serves one read-only file
 * "data" with CONTENT. Two mounts with the same FSNAME and CONTENT act as
 * one server seen from two nodes. Test code only.
 *   fusesrv MOUNTPOINT FSNAME CONTENT PIDFILE
 * Mounts, then forks the serving process (its pid is appended to PIDFILE),
 * which serves until unmounted or killed; the parent returns 0. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *content;
static size_t clen;

static void fill_attr(struct fuse_attr *a, uint64_t ino)
{
    memset(a, 0, sizeof *a);
    a->ino = ino;
    a->mode = ino == 1 ? (S_IFDIR | 0755) : (S_IFREG | 0444);
    a->nlink = ino == 1 ? 2 : 1;
    a->size = ino == 1 ? 0 : clen;
    a->blocks = (a->size + 511) / 512;
    a->blksize = 4096;
}

static void reply(int fd, uint64_t unique, int error, const void *data, size_t len)
{
    struct fuse_out_header h = {(uint32_t)(sizeof h + (error ? 0 : len)), error, unique};
    char buf[sizeof h + 65536];
    if (len > 65536)
        len = 65536;
    memcpy(buf, &h, sizeof h);
    if (!error && len)
        memcpy(buf + sizeof h, data, len);
    if (write(fd, buf, h.len) < 0 && errno != ENOENT) /* ENOENT: the request was interrupted */
        perror("fusesrv: write");
}

static void serve(int fd)
{
    size_t cap = 1 << 20;
    char *buf = malloc(cap);
    for (;;) {
        ssize_t n = read(fd, buf, cap);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n < (ssize_t)sizeof(struct fuse_in_header)) {
            if (!(n < 0 && errno == ENODEV)) /* ENODEV: unmounted */
                fprintf(stderr, "fusesrv %d: read from /dev/fuse: %zd (%s)\n", (int)getpid(), n, strerror(errno));
            break;
        }
        struct fuse_in_header *in = (void *)buf;
        void *arg = buf + sizeof *in;
        switch (in->opcode) {
        case FUSE_INIT: {
            struct fuse_init_in *ii = arg;
            struct fuse_init_out o;
            memset(&o, 0, sizeof o);
            o.major = FUSE_KERNEL_VERSION;
            o.minor = ii->minor < FUSE_KERNEL_MINOR_VERSION ? ii->minor : FUSE_KERNEL_MINOR_VERSION;
            o.max_readahead = ii->max_readahead;
            o.max_write = 65536;
            o.max_background = 4;
            o.congestion_threshold = 2;
            reply(fd, in->unique, 0, &o, sizeof o);
            break;
        }
        case FUSE_GETATTR: {
            struct fuse_attr_out o;
            memset(&o, 0, sizeof o);
            fill_attr(&o.attr, in->nodeid);
            reply(fd, in->unique, in->nodeid <= 2 ? 0 : -ENOENT, &o, sizeof o);
            break;
        }
        case FUSE_LOOKUP: {
            struct fuse_entry_out o;
            memset(&o, 0, sizeof o);
            int ok = in->nodeid == 1 && !strcmp((char *)arg, "data");
            o.nodeid = 2;
            o.generation = 1;
            fill_attr(&o.attr, 2);
            reply(fd, in->unique, ok ? 0 : -ENOENT, &o, sizeof o);
            break;
        }
        case FUSE_OPEN:
        case FUSE_OPENDIR: {
            struct fuse_open_out o;
            memset(&o, 0, sizeof o);
            reply(fd, in->unique, 0, &o, sizeof o);
            break;
        }
        case FUSE_READ: {
            struct fuse_read_in *r = arg;
            size_t off = r->offset < clen ? (size_t)r->offset : clen, len = clen - off;
            if (len > r->size)
                len = r->size;
            reply(fd, in->unique, 0, content + off, len);
            break;
        }
        case FUSE_READDIR:
            reply(fd, in->unique, 0, NULL, 0); /* empty listing */
            break;
        case FUSE_STATFS: {
            struct fuse_statfs_out o;
            memset(&o, 0, sizeof o);
            o.st.blocks = o.st.bfree = o.st.bavail = 1u << 20;
            o.st.bsize = o.st.frsize = 4096;
            o.st.namelen = 255;
            reply(fd, in->unique, 0, &o, sizeof o);
            break;
        }
        case FUSE_RELEASE:
        case FUSE_RELEASEDIR:
        case FUSE_FLUSH:
        case FUSE_ACCESS:
            reply(fd, in->unique, 0, NULL, 0);
            break;
        case FUSE_FORGET:
        case FUSE_BATCH_FORGET:
        case FUSE_INTERRUPT:
            break; /* no reply */
        case FUSE_DESTROY:
            reply(fd, in->unique, 0, NULL, 0);
            free(buf);
            return;
        default:
            reply(fd, in->unique, -ENOSYS, NULL, 0);
        }
    }
    free(buf);
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: fusesrv MOUNTPOINT FSNAME CONTENT PIDFILE\n");
        return 2;
    }
    content = argv[3];
    clen = strlen(content);
    int fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        perror("fusesrv: /dev/fuse");
        return 1;
    }
    char opts[128];
    snprintf(opts, sizeof opts, "fd=%d,rootmode=40755,user_id=0,group_id=0,allow_other", fd);
    /* mount first: reading /dev/fuse before the mount attached it fails
     * with EPERM. The kernel queues INIT until the server reads it. */
    if (mount(argv[2], argv[1], "fuse.fgfsnfs", MS_NOSUID | MS_NODEV, opts)) {
        fprintf(stderr, "fusesrv: mount %s on %s: %s\n", argv[2], argv[1], strerror(errno));
        return 1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        umount2(argv[1], MNT_DETACH);
        return 1;
    }
    if (pid == 0) {
        serve(fd);
        _exit(0);
    }
    FILE *pf = fopen(argv[4], "a");
    if (pf) {
        fprintf(pf, "%d\n", (int)pid);
        fclose(pf);
    }
    return 0;
}
