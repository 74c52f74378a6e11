/* resolve.c - the whole search of a bare library name, answered at once at
 * la_objsearch(LA_SER_ORIG) from the server's listings, the way ld.so
 * (glibc 2.36) would search it: the loader's DT_RPATH (and the executable's),
 * LD_LIBRARY_PATH, the loader's DT_RUNPATH, /etc/ld.so.cache, the default
 * directories. ld.so then opens the node-local copy directly and never walks
 * its search path, so it never stats the search directories and their
 * hwcaps subdirectories on the shared tree (which it does for every candidate
 * whose open failed, outside the audit interface).
 *
 * Where the answer could differ from ld.so's (a DT_RPATH chain through other
 * objects, $LIB, a hit in a relative or empty directory, hwcaps or legacy subdirectories that
 * exist, an ld.so.cache entry with hwcaps, secure mode, DF_1_NODEFLIB, a
 * non-ELF64 file), slc_resolve returns 1 and ld.so searches itself, asking
 * for each candidate as before. */
#define _GNU_SOURCE
#include "client.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_OBJS 4096
#define MAX_DIRS 256

struct obj {
    struct link_map *map;
    int base;
    int has_rpath;
};
static struct obj objs[MAX_OBJS];
static size_t nobjs;
static struct link_map *main_map;
static int objs_overflow;

/* per search directory: 1 = plain (no hwcaps/legacy subdirectories), -1 = unsure */
static struct {
    char path[SLD_PATH_MAX];
    int state;
} dirs[MAX_DIRS];
static size_t ndirs;

static char llp[SLD_PATH_MAX]; /* LD_LIBRARY_PATH as ld.so read it at the start */
static int llp_set, llp_bad;

void slc_resolve_init(void)
{
    const char *e = getenv("LD_LIBRARY_PATH");
    if (e) {
        llp_set = 1;
        if (strlen(e) >= sizeof llp)
            llp_bad = 1;
        else
            strcpy(llp, e);
    }
}

/* the dynamic entry `tag` of map (d_ptr adjusted as ld.so does), or NULL */
static const ElfW(Dyn) * dyn_of(const struct link_map *m, ElfW(Sxword) tag)
{
    if (!m->l_ld)
        return NULL;
    for (const ElfW(Dyn) *d = m->l_ld; d->d_tag != DT_NULL; d++)
        if (d->d_tag == tag)
            return d;
    return NULL;
}

static const char *strtab_of(const struct link_map *m)
{
    const ElfW(Dyn) *d = dyn_of(m, DT_STRTAB);
    if (!d)
        return NULL;
    ElfW(Addr) a = d->d_un.d_ptr;
    /* ld.so relocates the entry in place when the dynamic section is writable */
    if (a < m->l_addr)
        a += m->l_addr;
    return (const char *)a;
}

int slc_hidden_version(const struct link_map *m, unsigned int ndx)
{
    const ElfW(Dyn) *d = m ? dyn_of(m, DT_VERSYM) : NULL;
    if (!d)
        return 0;
    ElfW(Addr) a = d->d_un.d_ptr;
    if (a < m->l_addr)
        a += m->l_addr;
    return (((const ElfW(Half) *)a)[ndx] & 0x8000) != 0; /* VERSYM_HIDDEN */
}

/* DT_RPATH is ignored when DT_RUNPATH is there (as ld.so does) */
static const char *path_of(const struct link_map *m, ElfW(Sxword) tag)
{
    const ElfW(Dyn) *rp = dyn_of(m, DT_RUNPATH);
    if (tag == DT_RPATH && rp)
        return NULL;
    const ElfW(Dyn) *d = tag == DT_RUNPATH ? rp : dyn_of(m, DT_RPATH);
    const char *st = d ? strtab_of(m) : NULL;
    return st ? st + d->d_un.d_val : NULL;
}

static struct obj *find_obj(const struct link_map *m)
{
    for (size_t i = 0; i < nobjs; i++)
        if (objs[i].map == m)
            return &objs[i];
    return NULL;
}

void slc_resolve_objopen(struct link_map *map, int base)
{
    if (base && !main_map && map->l_name && !map->l_name[0])
        main_map = map;
    struct obj *o = find_obj(map); /* an address reused after dlclose */
    if (o) {
        o->base = base;
        o->has_rpath = path_of(map, DT_RPATH) != NULL;
        return;
    }
    if (nobjs == MAX_OBJS) {
        objs_overflow = 1;
        return;
    }
    objs[nobjs].map = map;
    objs[nobjs].base = base;
    objs[nobjs].has_rpath = path_of(map, DT_RPATH) != NULL;
    nobjs++;
}

/* the original directory of an object ($ORIGIN) */
static int origin_of(const struct link_map *m, char *out, size_t cap)
{
    char tmp[SLD_PATH_MAX];
    if (m == main_map) {
        ssize_t n = readlink("/proc/self/exe", tmp, sizeof tmp - 1);
        if (n <= 0)
            return -1;
        tmp[n] = 0;
    } else {
        if (!m->l_name || m->l_name[0] != '/' || strlen(m->l_name) >= sizeof tmp)
            return -1;
        strcpy(tmp, m->l_name);
    }
    if (slc_original(tmp, out, cap))
        return -1;
    char *sl = strrchr(out, '/');
    if (sl == out)
        sl[1] = 0;
    else
        *sl = 0;
    return 0;
}

/* one element of a search path with $ORIGIN expanded; -1: cannot be sure */
static int expand(const char *el, size_t n, const struct link_map *owner, char *out, size_t cap)
{
    size_t w = 0;
    for (size_t i = 0; i < n;) {
        if (el[i] == '$') {
            size_t k;
            if (n - i >= 7 && !memcmp(el + i, "$ORIGIN", 7) &&
                (n - i == 7 || !(el[i + 7] == '_' || (el[i + 7] >= 'A' && el[i + 7] <= 'Z') ||
                                 (el[i + 7] >= 'a' && el[i + 7] <= 'z') || (el[i + 7] >= '0' && el[i + 7] <= '9'))))
                k = 7;
            else if (n - i >= 9 && !memcmp(el + i, "${ORIGIN}", 9))
                k = 9;
            else
                return -1; /* $LIB, $PLATFORM, anything else */
            char o[SLD_PATH_MAX];
            if (!owner || origin_of(owner, o, sizeof o))
                return -1;
            size_t ol = strlen(o);
            if (w + ol >= cap)
                return -1;
            memcpy(out + w, o, ol);
            w += ol;
            i += k;
            continue;
        }
        if (w + 1 >= cap)
            return -1;
        out[w++] = el[i++];
    }
    out[w] = 0;
    while (w > 1 && out[w - 1] == '/')
        out[--w] = 0;
    return 0; /* absolute, or relative to the working directory */
}

/* a relative directory (ld.so reads an empty element as "./") as the path it
 * names now: the working directory (physical, as getcwd gives it) joined with it */
static int from_cwd(char *dir, size_t cap)
{
    char cwd[SLD_PATH_MAX];
    if (!getcwd(cwd, sizeof cwd) || cwd[0] != '/')
        return -1;
    const char *rest = strcmp(dir, ".") ? dir : "";
    if (!strncmp(rest, "./", 2))
        rest += 2;
    char tmp[SLD_PATH_MAX];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s%s%s", cwd, rest[0] && strcmp(cwd, "/") ? "/" : "", rest) >= sizeof tmp ||
        strlen(tmp) >= cap)
        return -1;
    strcpy(dir, tmp);
    return 0;
}

/* whether ld.so would look in subdirectories of dir: 1 plain, -1 unsure */
static int dir_state(const char *dir)
{
    for (size_t i = 0; i < ndirs; i++)
        if (!strcmp(dirs[i].path, dir))
            return dirs[i].state;
    static const char *subs[] = {"glibc-hwcaps", "tls", "x86_64", "avx512_1", "haswell", "xeon_phi"};
    int state = 1;
    char p[SLD_PATH_MAX];
    struct sld_reply rp;
    const char *plat = (const char *)getauxval(AT_PLATFORM);
    for (size_t i = 0; state == 1 && i <= sizeof subs / sizeof *subs; i++) {
        const char *s = i < sizeof subs / sizeof *subs ? subs[i] : plat;
        if (!s)
            continue;
        if ((size_t)snprintf(p, sizeof p, "%s/%s", strcmp(dir, "/") ? dir : "", s) >= sizeof p ||
            slc_ask(SLD_OP_STAT, p, &rp) || (rp.status != ENOENT && rp.status != ENOTDIR))
            state = -1;
    }
    if (ndirs < MAX_DIRS && strlen(dir) < SLD_PATH_MAX) {
        strcpy(dirs[ndirs].path, dir);
        dirs[ndirs++].state = state;
    }
    return state;
}

/* an ELF file ld.so would accept for this process (64-bit, this machine) */
static int elf_ok(const char *local)
{
    int fd = open(local, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ElfW(Ehdr) h;
    ssize_t n = read(fd, &h, sizeof h);
    close(fd);
    return n == (ssize_t)sizeof h && !memcmp(h.e_ident, ELFMAG, SELFMAG) && h.e_ident[EI_CLASS] == ELFCLASS64 &&
           h.e_machine == EM_X86_64;
}

/* looks for name in dir (and, with caps, in the subdirectories ld.so would
 * try first): 0 found (copy in out), 1 not there, -1 unsure */
static int try_dir(const char *dir, int caps, const char *name, char *orig, char *out, size_t cap)
{
    struct sld_reply rp;
    if (caps && dir_state(dir) != 1)
        return -1;
    if ((size_t)snprintf(orig, SLD_PATH_MAX, "%s/%s", strcmp(dir, "/") ? dir : "", name) >= SLD_PATH_MAX)
        return -1;
    if (slc_ask(SLD_OP_LOOKUP, orig, &rp))
        return -1;
    if (rp.status == ENOENT || rp.status == ENOTDIR)
        return 1;
    if (rp.status)
        return -1;
    if (!elf_ok(rp.path) || strlen(rp.path) >= cap)
        return -1;
    strcpy(out, rp.path);
    return 0;
}

/* every directory of a ':'-separated list (seps) in order. An empty element
 * is the working directory, as ld.so reads it ("./", glibc's fillin_rpath),
 * and so is every relative one (the working directory joined with it): searched
 * here like the others. A hit there goes back to ld.so (-1), which names the
 * object by the relative path; a miss - the common case, a trailing ':' left by
 * a module system - lets the search go on without ld.so's own walk. */
static int try_list(const char *list, const char *seps, const struct link_map *owner, const char *name, char *orig,
                    char *out, size_t cap)
{
    if (!list[0])
        return 1; /* an empty list */
    for (const char *p = list;;) {
        size_t n = strcspn(p, seps);
        char dir[SLD_PATH_MAX];
        if (n ? expand(p, n, owner, dir, sizeof dir) : (strcpy(dir, "."), 0))
            return -1;
        int rel = dir[0] != '/';
        if (rel && from_cwd(dir, sizeof dir))
            return -1;
        int r = try_dir(dir, 1, name, orig, out, cap);
        if (r == 0 && rel)
            return -1;
        if (r <= 0)
            return r;
        if (!p[n])
            return 1;
        p += n + 1;
    }
}

/* /etc/ld.so.cache (new format): 1 and the path, 0 absent, -1 unsure */
static int ldcache(const char *name, char *path, size_t cap)
{
    int fd = open("/etc/ld.so.cache", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    struct stat st;
    if (fstat(fd, &st) || st.st_size < 48) {
        close(fd);
        return -1;
    }
    size_t size = (size_t)st.st_size;
    const char *m = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (m == MAP_FAILED)
        return -1;
    int r = -1;
    if (!memcmp(m, "glibc-ld.so.cache1.1", 20)) {
        uint32_t nlibs;
        memcpy(&nlibs, m + 20, 4);
        if (nlibs <= (size - 48) / 24) {
            r = 0;
            for (uint32_t i = 0; i < nlibs; i++) {
                const char *e = m + 48 + (size_t)i * 24;
                int32_t flags;
                uint32_t key, value;
                uint64_t hwcap;
                memcpy(&flags, e, 4);
                memcpy(&key, e + 4, 4);
                memcpy(&value, e + 8, 4);
                memcpy(&hwcap, e + 16, 8);
                if (key >= size || value >= size || !memchr(m + key, 0, size - key) ||
                    !memchr(m + value, 0, size - value)) {
                    r = -1;
                    break;
                }
                if (strcmp(m + key, name))
                    continue;
                if (flags != 0x0303)
                    continue; /* FLAG_ELF_LIBC6 | FLAG_X8664_LIB64 */
                if (hwcap) {
                    r = -1;
                    break;
                } /* hwcaps selection: ld.so's own */
                if (strlen(m + value) >= cap) {
                    r = -1;
                    break;
                }
                strcpy(path, m + value);
                r = 1;
                break;
            }
        }
    }
    munmap((void *)m, size);
    return r;
}

int slc_resolve(const char *name, uintptr_t *cookie, char *out, size_t cap, char *orig)
{
    if (!cookie || objs_overflow || llp_bad || getauxval(AT_SECURE) || !main_map)
        return 1;
    const struct obj *lo = find_obj((const struct link_map *)*cookie);
    if (!lo || !lo->base)
        return 1;
    const struct link_map *l = lo->map;
    const char *runpath = path_of(l, DT_RUNPATH);
    const ElfW(Dyn) *f1 = dyn_of(l, DT_FLAGS_1);
    if (f1 && (f1->d_un.d_val & DF_1_NODEFLIB))
        return 1;
    int r = 1;
    if (!runpath) {
        /* the DT_RPATH chain: sure only when no object but the loader and the
     * executable has one (the chain then adds nothing else) */
        for (size_t i = 0; i < nobjs; i++)
            if (objs[i].has_rpath && objs[i].map != l && objs[i].map != main_map)
                return 1;
        const char *rp = path_of(l, DT_RPATH);
        if (rp && l != main_map)
            r = try_list(rp, ":", l, name, orig, out, cap);
        const char *mrp = path_of(main_map, DT_RPATH);
        if (r == 1 && mrp)
            r = try_list(mrp, ":", main_map, name, orig, out, cap);
    }
    if (r == 1 && llp_set)
        r = try_list(llp, ":;", main_map, name, orig, out, cap);
    if (r == 1 && runpath)
        r = try_list(runpath, ":", l, name, orig, out, cap);
    if (r == 1) {
        char cached[SLD_PATH_MAX];
        int c = ldcache(name, cached, sizeof cached);
        if (c < 0)
            return 1;
        if (c == 1) {
            char *sl = strrchr(cached, '/');
            if (!sl)
                return 1;
            *sl = 0;
            r = try_dir(sl == cached ? "/" : cached, 0, sl + 1, orig, out, cap);
        }
    }
    if (r == 1)
        r = try_list("/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu:/lib:/usr/lib", ":", NULL, name, orig, out, cap);
    return r == 0 ? 0 : 1;
}
