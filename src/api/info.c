/* info.c - sheaf_get_file_info: header fields of one physical file of an open
 * container, for inspection tools (siondump, sheaf dump/verify). Read-only. */
#include "../sid/sid.h"
#include "../core/error.h"
#include "sion.h"
#include "sheaf.h"
#include <string.h>

int sheaf_get_file_info(int sid, int filenr, sheaf_file_info *info)
{
    core_clear_error();
    core_container *c = api_lookup(sid, "sheaf_get_file_info");
    if (!c) {
        core_report_error(-1);
        return SION_NOT_SUCCESS;
    }
    if (!info || filenr < 0 || filenr >= c->nfiles) {
        core_fail(SHEAF_E_ARG, "%s: sheaf_get_file_info: file number %d out of range (0..%d)", c->name, filenr,
                  (int)c->nfiles - 1);
        core_report_error(-1);
        return SION_NOT_SUCCESS;
    }
    const core_pfile *pf = &c->files[filenr];
    const core_meta *m = &pf->m;
    memset(info, 0, sizeof *info);
    info->name = pf->f.name ? pf->f.name : c->name;
    info->prefix = m->prefix;
    info->format_version = m->format;
    info->lib_version = m->version;
    info->lib_patch = m->patch;
    info->fsblksize = m->fsblksize;
    info->ntasks = m->ntasks;
    info->nfiles = m->nfiles;
    info->nfiles_open = c->nfiles;
    info->filenumber = m->filenumber;
    info->maxchunks = m->maxchunks;
    info->meta_big = m->meta_big;
    info->data_big = m->data_big;
    info->keyval = c->keyval;
    info->mapping_size = m->mapping_size;
    info->flag1 = m->flag1;
    info->flag2 = m->flag2;
    info->start_of_varheader = m->start_of_varheader;
    info->header_size = m->header_size;
    info->data_start = m->data_start;
    info->globalskip = m->globalskip;
    return SION_SUCCESS;
}
