/* audit.c - the rtld-audit entry points of libsheaf_audit.so (LD_AUDIT).
 *   la_version   negotiates the interface version with the running ld.so
 *   la_objsearch answers each candidate path from the server's listings: the
 *                node-local copy on a hit, a path under a prefix that does not
 *                exist on a miss (never NULL: ld.so then goes on searching)
 *   la_objopen   asks for symbol-binding callbacks of every object
 *   la_symbind64 replaces the libc calls that find and read modules by the
 *                wrappers of wrap.c and wrap_realpath.c (no la_pltenter: it
 *                would slow every call)
 */
#define _GNU_SOURCE
#include "client.h"
#include "sheaf_audit.h"

#include <errno.h>
#include <link.h>
#include <string.h>

/* candidate names handed back to ld.so must outlive the call */
static char answer[SLD_PATH_MAX + sizeof SLC_NX_PREFIX];
/* the original of the last copy answered at LA_SER_ORIG: ld.so names the
 * object by the copy (l_name), la_objopen gives it the original name back */
static char answered_orig[SLD_PATH_MAX];

static void remember(const char *copy, const char *orig)
{
    memcpy(answer, copy, strlen(copy) + 1);
    memcpy(answered_orig, orig, strlen(orig) + 1);
}

unsigned int la_version(unsigned int version)
{
    slc_init();
    slc_resolve_init();
    return version < LAV_CURRENT ? version : LAV_CURRENT;
}

unsigned int la_objopen(struct link_map *map, Lmid_t lmid, uintptr_t *cookie)
{
    /* la_objsearch is handed the cookie of the object whose dependency is
   * searched: it names that object's link map */
    *cookie = (uintptr_t)map;
    /* an object ld.so opened by the copy we named at LA_SER_ORIG: its name
   * (dladdr, dl_iterate_phdr, later matches by path) becomes the original's;
   * written in place (ld.so owns and frees the string; the original is the
   * shorter name, the copy being <cache>/f/<real path>) */
    if (map->l_name && answered_orig[0] && !strcmp(map->l_name, answer) && strlen(answered_orig) <= strlen(map->l_name))
        strcpy(map->l_name, answered_orig);
    answered_orig[0] = 0;
    if (slc_enabled())
        slc_resolve_objopen(map, lmid == LM_ID_BASE);
    return lmid == LM_ID_BASE ? LA_FLG_BINDTO | LA_FLG_BINDFROM : 0;
}

char *la_objsearch(const char *name, uintptr_t *cookie, unsigned int flag)
{
    if (!slc_enabled() || !name)
        return (char *)name;
    char orig[SLD_PATH_MAX];
    if (flag == LA_SER_ORIG && !strchr(name, '/')) {
        /* a bare name: the whole search answered here, else ld.so searches,
     * asking for each candidate */
        char copy[SLD_PATH_MAX];
        if (slc_resolve(name, cookie, copy, sizeof copy, orig))
            return (char *)name;
        slc_log("resolve", orig, copy);
        remember(copy, orig);
        return answer;
    }
    struct sld_reply rp;
    if (slc_original(name, orig, sizeof orig) || slc_ask(SLD_OP_LOOKUP, orig, &rp))
        return (char *)name;
    if (rp.status == 0) {
        slc_log("search", orig, rp.path);
        if (flag == LA_SER_ORIG)
            remember(rp.path, orig);
        else
            memcpy(answer, rp.path, strlen(rp.path) + 1);
        return answer;
    }
    if ((rp.status == ENOENT || rp.status == ENOTDIR) && flag != LA_SER_ORIG) {
        slc_nx(orig, answer, sizeof answer);
        return answer;
    }
    /* a path the program named itself, or an error the listing cannot tell:
   * ld.so tries the original and reports exactly what it would without us */
    return (char *)name;
}

uintptr_t la_symbind64(Elf64_Sym *sym, unsigned int ndx, uintptr_t *refcook, uintptr_t *defcook, unsigned int *flags,
                       const char *symname)
{
    (void)refcook;
    /* a binding to an old version (realpath@GLIBC_2.2.5) keeps its own semantics:
   * the wrappers follow the default version's (ndx: the symbol's index in the
   * defining object, whose link map is its cookie) */
    uintptr_t w = 0;
    if (slc_enabled() && !(defcook && slc_hidden_version((struct link_map *)*defcook, ndx)))
        w = slc_wrapper_for(symname, sym->st_value);
    if (flags)
        *flags |= LA_SYMB_NOPLTENTER | LA_SYMB_NOPLTEXIT;
    return w ? w : sym->st_value;
}
