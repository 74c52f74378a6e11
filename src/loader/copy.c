/* copy.c - node-local copies of the original files, optionally stripped to the
 * extents the ELF program headers load (PT_LOAD): the other bytes (symbol
 * tables, debug information) become a hole of the same size, so offsets and
 * the file size stay as in the original, and a RAM disk stores no pages for them. */
#define _GNU_SOURCE
#include "loader.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SLD_MAX_EXTENTS 64

struct extent {
    uint64_t off, len;
};

#define SLD_SLURP_MAX (256u << 20) /* files up to this size are read in one go */

/* the PT_LOAD extents of an ELF64 file (plus its headers) held in memory;
 * 0 when it is not one */
static int elf_extents(const unsigned char *b, uint64_t size, struct extent *ex)
{
    Elf64_Ehdr eh;
    if (size < sizeof eh)
        return 0;
    memcpy(&eh, b, sizeof eh);
    if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
        eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 || eh.e_phnum > 256)
        return 0;
    if (eh.e_phoff > size || (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr) > size - eh.e_phoff)
        return 0;
    uint64_t phend = eh.e_phoff + (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr);
    int n = 0;
    ex[n++] = (struct extent){0, phend > sizeof eh ? phend : sizeof eh};
    for (int i = 0; i < eh.e_phnum && n < SLD_MAX_EXTENTS; i++) {
        Elf64_Phdr ph;
        memcpy(&ph, b + eh.e_phoff + (uint64_t)i * sizeof ph, sizeof ph);
        if (ph.p_type != PT_LOAD && ph.p_type != PT_DYNAMIC && ph.p_type != PT_INTERP && ph.p_type != PT_NOTE &&
            ph.p_type != PT_GNU_EH_FRAME)
            continue;
        if (ph.p_offset > size || ph.p_filesz > size - ph.p_offset)
            return 0;
        ex[n++] = (struct extent){ph.p_offset, ph.p_filesz};
    }
    return n < SLD_MAX_EXTENTS ? n : 0;
}

static int write_all(int out, const unsigned char *b, uint64_t off, uint64_t len)
{
    for (uint64_t w = 0; w < len;) {
        ssize_t k = pwrite(out, b + w, (size_t)(len - w), (off_t)(off + w));
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return k < 0 ? errno : EIO;
        w += (uint64_t)k;
    }
    return 0;
}

/* the whole original in memory with as few read calls as the kernel allows
 * (on a network file system every read call may cost a request) */
static int slurp(struct sld_server *s, int in, uint64_t size, unsigned char **bp)
{
    unsigned char *b = malloc(size ? (size_t)size : 1);
    if (!b)
        return ENOMEM;
    for (uint64_t got = 0; got < size;) {
        ssize_t r = read(in, b + got, (size_t)(size - got));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            int e = r < 0 ? errno : EIO;
            free(b);
            return e;
        }
        got += (uint64_t)r;
        s->c[SLD_C_BYTES] += (uint64_t)r;
    }
    *bp = b;
    return 0;
}

/* a large file: copied in pieces, unstripped */
static int copy_stream(struct sld_server *s, int in, int out, uint64_t len)
{
    static unsigned char buf[1 << 20];
    for (uint64_t off = 0; off < len;) {
        size_t want = len - off < sizeof buf ? (size_t)(len - off) : sizeof buf;
        ssize_t r = read(in, buf, want);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return r < 0 ? errno : EIO;
        s->c[SLD_C_BYTES] += (uint64_t)r;
        int err = write_all(out, buf, off, (uint64_t)r);
        if (err)
            return err;
        off += (uint64_t)r;
    }
    return 0;
}

int sld_copy_file(struct sld_server *s, const char *src, const char *dst, mode_t mode)
{
    char tmp[NAME_MAX + 1];
    const char *base;
    int dfd, err = sld_cache_parent(s, dst, &dfd, &base);
    if (err)
        return err;
    if (snprintf(tmp, sizeof tmp, "%s.tmp%lu", base, ++s->seq) >= (int)sizeof tmp) {
        close(dfd);
        return ENAMETOOLONG;
    }
    s->c[SLD_C_READS]++;
    int in = open(src, O_RDONLY | O_CLOEXEC);
    if (in < 0) {
        err = errno;
        close(dfd);
        return err;
    }
    struct stat st;
    int out = -1;
    if (fstat(in, &st))
        err = errno;
    else if ((out = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode & 0700)) < 0)
        err = errno;
    if (err) {
        close(in);
        close(dfd);
        return err;
    }
    uint64_t size = (uint64_t)st.st_size;
    unsigned char *b = NULL;
    if (size > SLD_SLURP_MAX) {
        err = copy_stream(s, in, out, size);
    } else if (!(err = slurp(s, in, size, &b))) {
        struct extent ex[SLD_MAX_EXTENTS];
        int n = s->strip ? elf_extents(b, size, ex) : 0;
        if (n > 0) {
            s->c[SLD_C_STRIPPED]++;
            for (int i = 0; !err && i < n; i++)
                err = write_all(out, b + ex[i].off, ex[i].off, ex[i].len);
            if (!err && ftruncate(out, st.st_size))
                err = errno;
        } else {
            err = write_all(out, b, 0, size);
        }
        free(b);
    }
    if (!err && fchmod(out, mode))
        err = errno;
    close(in);
    if (close(out) && !err)
        err = errno;
    /* renameat replaces a name of this directory (a planted symlink itself, never its target) */
    if (!err && renameat(dfd, tmp, dfd, base))
        err = errno;
    if (err)
        unlinkat(dfd, tmp, 0);
    close(dfd);
    return err;
}
