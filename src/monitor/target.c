/* target.c - storage targets: the file system (and its server) each record's
 * files are on. A path is resolved once, when its record is made, through
 * FGFS's mount table (sheaf_fgfs_resolve: realpath, longest mount point);
 * the mount's global name (the URI of its root: nfs://SERVER:/EXPORT,
 * lustre://NIDS/FSNAME, gpfs://DEVICE, fuse.TYPE://FSNAME,
 * file://HOST/MOUNTPOINT for node-local ones) names the target, so two
 * mounts of one export are one target. The table is loaded at the first
 * resolution and the target of each mount entry is cached. Targets past
 * SHEAF_MONITOR_MAX_TARGETS fold into "(other targets)"; a path no mount
 * covers (or "(dirfd N)/..." names) is "(unresolved)". Memory: the mount
 * table (bounded by FGFS: 16 MiB, 65536 entries), one index per entry and
 * max_targets + 1 targets. Everything here runs under mon_g.lock with
 * mon_busy set (FGFS's own reads pass the wrappers untouched). */
#define _GNU_SOURCE
#include "mon.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef MON_HAVE_FGFS
#include "sheaf_fgfs.h"
static sheaf_fgfs_mounts *tg_mounts;
static uint32_t *tg_bymount; /* target index + 1 per mount entry, 0: not yet */
static int tg_nmounts;
static sheaf_fgfs_name tg_nm; /* 8 KiB: static, under the lock */
#endif
static int tg_loaded; /* 1: tried (the table may still be NULL) */
static char tg_host[256];

int mon_targets_init(void)
{
    mon_g.targets = calloc((size_t)mon_g.max_targets + 1, sizeof *mon_g.targets);
    if (!mon_g.targets)
        return -1;
    mon_target *fold = &mon_g.targets[mon_g.max_targets];
    fold->kind = MON_TGT_UNKNOWN;
    strcpy(fold->name, "(other targets)");
    mon_g.ntargets = 0;
    return 0;
}

/* the index of the target (kind, fstype, name), added while there is room, else the fold */
static uint32_t add_target(uint32_t kind, const char *fstype, const char *name)
{
    for (uint32_t i = 0; i < mon_g.ntargets; i++)
        if (!strcmp(mon_g.targets[i].name, name))
            return i;
    if (mon_g.ntargets >= mon_g.max_targets)
        return mon_g.max_targets;
    mon_target *t = &mon_g.targets[mon_g.ntargets];
    t->kind = kind;
    snprintf(t->fstype, sizeof t->fstype, "%s", fstype);
    snprintf(t->name, sizeof t->name, "%s", name);
    if (strlen(name) >= sizeof t->name) /* a name past 439 bytes: cut, marked */
        memcpy(t->name + sizeof t->name - 4, "...", 4);
    return mon_g.ntargets++;
}

static uint32_t unresolved(void) { return add_target(MON_TGT_UNKNOWN, "", "(unresolved)"); }

#ifdef MON_HAVE_FGFS
static void load(void)
{
    tg_loaded = 1;
    if (gethostname(tg_host, sizeof tg_host - 1) != 0)
        strcpy(tg_host, "localhost");
    if (sheaf_fgfs_mounts_load(&tg_mounts) != SHEAF_FGFS_OK) {
        dprintf(2, "sheaf monitor: storage targets unknown: %s\n", sheaf_fgfs_last_error());
        tg_mounts = NULL;
        return;
    }
    tg_nmounts = sheaf_fgfs_mounts_count(tg_mounts);
    tg_bymount = calloc((size_t)tg_nmounts + 1, sizeof *tg_bymount);
    if (!tg_bymount) {
        sheaf_fgfs_mounts_free(tg_mounts);
        tg_mounts = NULL;
    }
}

uint32_t mon_target_of(const char *path)
{
    if (!tg_loaded)
        load();
    if (!tg_mounts || path[0] != '/')
        return unresolved();
    if (sheaf_fgfs_resolve(tg_mounts, tg_host, path, 0, &tg_nm) != SHEAF_FGFS_OK || tg_nm.mount < 0 ||
        tg_nm.mount >= tg_nmounts)
        return unresolved();
    int i = tg_nm.mount;
    if (tg_bymount[i])
        return tg_bymount[i] - 1;
    sheaf_fgfs_kind kind = tg_nm.kind;
    const char *mp = sheaf_fgfs_mount_point(tg_mounts, i), *fstype = sheaf_fgfs_mount_fstype(tg_mounts, i);
    /* the mount's own name: its mount point resolved lexically (no file-system access) */
    if (sheaf_fgfs_resolve(tg_mounts, tg_host, mp, SHEAF_FGFS_NOREALPATH, &tg_nm) != SHEAF_FGFS_OK)
        return unresolved();
    size_t l = strlen(tg_nm.uri);
    if (l > 1 && tg_nm.uri[l - 1] == '/' && tg_nm.uri[l - 2] != '/')
        tg_nm.uri[l - 1] = 0;
    uint32_t t = add_target((uint32_t)kind, fstype ? fstype : "", tg_nm.uri);
    tg_bymount[i] = t + 1; /* also the fold: targets are never freed, so no room comes later */
    return t;
}
#else
uint32_t mon_target_of(const char *path)
{
    (void)path;
    (void)tg_loaded;
    (void)tg_host;
    return add_target(MON_TGT_UNKNOWN, "", "(unresolved: built without FGFS)");
}
#endif
