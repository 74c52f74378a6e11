/* copy.c - node-local copies of the original files, optionally stripped to the
 * extents the ELF program headers load (PT_LOAD): the other bytes (symbol
 * tables, debug information) become a hole of the same size, so offsets and
 * the file size stay as in the original, and a RAM disk stores no pages for them. */
#define _GNU_SOURCE
#include "loader.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SLD_MAX_EXTENTS 64

int sld_mkdirs(const char *path)
{
  char p[SLD_PATH_MAX];
  if (snprintf(p, sizeof p, "%s", path) >= (int)sizeof p) return ENAMETOOLONG;
  for (char *c = p + 1;; c++) {
    if (*c == '/' || !*c) {
      char save = *c;
      *c = 0;
      struct stat st;
      if (mkdir(p, 0700) && errno != EEXIST) return errno;
      /* an existing component must be a real directory of ours, not a symlink */
      if (lstat(p, &st)) return errno;
      if (!S_ISDIR(st.st_mode)) return ENOTDIR;
      *c = save;
      if (!save) break;
    }
  }
  return 0;
}

struct extent { uint64_t off, len; };

/* the PT_LOAD extents of an ELF64 file (plus its headers); 0 when it is not one */
static int elf_extents(int fd, uint64_t size, struct extent *ex)
{
  Elf64_Ehdr eh;
  if (pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh) return 0;
  if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 || eh.e_phnum > 256)
    return 0;
  uint64_t phend = eh.e_phoff + (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr);
  if (eh.e_phoff > size || phend > size) return 0;
  int n = 0;
  ex[n++] = (struct extent){ 0, phend > sizeof eh ? phend : sizeof eh };
  for (int i = 0; i < eh.e_phnum && n < SLD_MAX_EXTENTS; i++) {
    Elf64_Phdr ph;
    if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + (uint64_t)i * sizeof ph)) != (ssize_t)sizeof ph)
      return 0;
    if (ph.p_type != PT_LOAD && ph.p_type != PT_DYNAMIC && ph.p_type != PT_INTERP &&
        ph.p_type != PT_NOTE && ph.p_type != PT_GNU_EH_FRAME)
      continue;
    if (ph.p_offset > size || ph.p_filesz > size - ph.p_offset) return 0;
    ex[n++] = (struct extent){ ph.p_offset, ph.p_filesz };
  }
  return n < SLD_MAX_EXTENTS ? n : 0;
}

static int copy_range(struct sld_server *s, int in, int out, uint64_t off, uint64_t len)
{
  static unsigned char buf[1 << 20];
  while (len) {
    size_t want = len < sizeof buf ? (size_t)len : sizeof buf;
    ssize_t r = pread(in, buf, want, (off_t)off);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return r < 0 ? errno : EIO;
    s->c[SLD_C_BYTES] += (uint64_t)r;
    for (ssize_t w = 0; w < r;) {
      ssize_t k = pwrite(out, buf + w, (size_t)(r - w), (off_t)(off + (uint64_t)w));
      if (k < 0 && errno == EINTR) continue;
      if (k <= 0) return k < 0 ? errno : EIO;
      w += k;
    }
    off += (uint64_t)r;
    len -= (uint64_t)r;
  }
  return 0;
}

int sld_copy_file(struct sld_server *s, const char *src, const char *dst, mode_t mode)
{
  char tmp[SLD_PATH_MAX], dir[SLD_PATH_MAX];
  snprintf(dir, sizeof dir, "%s", dst);
  char *sl = strrchr(dir, '/');
  if (!sl) return EINVAL;
  *sl = 0;
  int err = sld_mkdirs(dir);
  if (err) return err;
  if (snprintf(tmp, sizeof tmp, "%s.tmp%lu", dst, ++s->seq) >= (int)sizeof tmp) return ENAMETOOLONG;
  s->c[SLD_C_READS]++;
  int in = open(src, O_RDONLY | O_CLOEXEC);
  if (in < 0) return errno;
  struct stat st;
  if (fstat(in, &st)) { err = errno; close(in); return err; }
  int out = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode & 0700);
  if (out < 0) { err = errno; close(in); return err; }
  struct extent ex[SLD_MAX_EXTENTS];
  int n = s->strip ? elf_extents(in, (uint64_t)st.st_size, ex) : 0;
  if (n > 0) {
    s->c[SLD_C_STRIPPED]++;
    for (int i = 0; !err && i < n; i++) err = copy_range(s, in, out, ex[i].off, ex[i].len);
    if (!err && ftruncate(out, st.st_size)) err = errno;
  } else {
    err = copy_range(s, in, out, 0, (uint64_t)st.st_size);
  }
  if (!err && fchmod(out, mode)) err = errno;
  close(in);
  if (close(out) && !err) err = errno;
  if (!err && rename(tmp, dst)) err = errno;
  if (err) unlink(tmp);
  return err;
}
