/* sheaf_audit.h - libsheaf_audit.so, sheaf's LD_AUDIT client of the load
 * server (src/loader, doc/loader.md). It is not called by programs: ld.so
 * calls these rtld-audit entry points (see rtld-audit(7)) when the library is
 * named in LD_AUDIT. The environment it reads is in sheaf_loader.h. */
#ifndef SHEAF_AUDIT_H
#define SHEAF_AUDIT_H

#include <link.h>
#include <stdint.h>

#include "sheaf_export.h"

SHEAF_API unsigned int la_version(unsigned int version);
SHEAF_API unsigned int la_objopen(struct link_map *map, Lmid_t lmid, uintptr_t *cookie);
SHEAF_API char *la_objsearch(const char *name, uintptr_t *cookie, unsigned int flag);
SHEAF_API uintptr_t la_symbind64(Elf64_Sym *sym, unsigned int ndx, uintptr_t *refcook, uintptr_t *defcook,
                                 unsigned int *flags, const char *symname);

#endif
