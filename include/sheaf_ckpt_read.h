/* sheaf_ckpt_read.h - reading sheaf checkpoints without MPI (libsheaf_ckpt_read).
 *
 * A checkpoint is a directory <base>/step-<N> (20 digits) holding a text
 * manifest and one or more "units": field-major files (doc/ckpt.md gives the
 * byte layout), each holding every field of a contiguous range of ranks,
 * either as a plain file or as one task of a sheaf (SIONlib) container.
 * While being written it is <base>/step-<N>.tmp; only a renamed directory with
 * a manifest is a checkpoint (sheaf_ckpt_list never shows anything else).
 *
 * Every function returns 0 or a negative code, -errno (positive errno values
 * before issue 29; sheaf's one sign); the message of the last failure on
 * this thread (naming the file and the cause) is sheaf_ckpt_errmsg().
 * Nothing here aborts, and bad files give -EINVAL/-EIO. */
#ifndef SHEAF_CKPT_READ_H
#define SHEAF_CKPT_READ_H
#include "sheaf_export.h"
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* element types (stored little-endian in the files) */
enum sheaf_ckpt_type {
    SHEAF_CKPT_U8 = 1,
    SHEAF_CKPT_I8,
    SHEAF_CKPT_I16,
    SHEAF_CKPT_U16,
    SHEAF_CKPT_I32,
    SHEAF_CKPT_U32,
    SHEAF_CKPT_I64,
    SHEAF_CKPT_U64,
    SHEAF_CKPT_F32,
    SHEAF_CKPT_F64
};
#define SHEAF_CKPT_NAME_MAX 39 /* longest field name (bytes) */
#define SHEAF_CKPT_APP_MAX 63  /* longest application name */

typedef struct sheaf_ckpt sheaf_ckpt; /* an opened checkpoint */

typedef struct sheaf_ckpt_field_info {
    char name[SHEAF_CKPT_NAME_MAX + 1];
    int type;        /* enum sheaf_ckpt_type */
    size_t elemsize; /* bytes per element */
    uint64_t count;  /* elements over all ranks */
} sheaf_ckpt_field_info;

/* Message of the last failure on this thread ("" if none). */
SHEAF_API const char *sheaf_ckpt_errmsg(void);
/* Bytes of one element of `type`, 0 for an unknown type; name ("f64", ...). */
SHEAF_API size_t sheaf_ckpt_type_size(int type);
SHEAF_API const char *sheaf_ckpt_type_name(int type);
/* Type by name ("f64"), 0 if unknown. */
SHEAF_API int sheaf_ckpt_type_by_name(const char *name);

/* Complete checkpoints under `base`, ascending by step: fills up to `max`
 * steps, *n = how many exist. Directories still named *.tmp, without a
 * manifest, or with an unreadable one are never listed. */
SHEAF_API int sheaf_ckpt_list(const char *base, uint64_t *steps, size_t max, size_t *n);
/* The newest complete checkpoint under base: -ENOENT if there is none. */
SHEAF_API int sheaf_ckpt_latest(const char *base, uint64_t *step);

/* Open checkpoint `step` under `base` (reads the manifest and every unit's
 * header, checks that the units agree and cover the ranks 0..nranks-1). */
SHEAF_API int sheaf_ckpt_open(const char *base, uint64_t step, sheaf_ckpt **ck);
/* Open a checkpoint directory by its path (as the tool does). */
SHEAF_API int sheaf_ckpt_open_dir(const char *dir, sheaf_ckpt **ck);
SHEAF_API void sheaf_ckpt_close(sheaf_ckpt *ck);

SHEAF_API uint64_t sheaf_ckpt_step(const sheaf_ckpt *ck);
SHEAF_API const char *sheaf_ckpt_app(const sheaf_ckpt *ck);
SHEAF_API const char *sheaf_ckpt_strategy(const sheaf_ckpt *ck);
SHEAF_API int sheaf_ckpt_nranks(const sheaf_ckpt *ck); /* ranks that wrote it */
SHEAF_API int sheaf_ckpt_nfields(const sheaf_ckpt *ck);
SHEAF_API int sheaf_ckpt_nunits(const sheaf_ckpt *ck);
SHEAF_API int sheaf_ckpt_field(const sheaf_ckpt *ck, int f, sheaf_ckpt_field_info *info);
/* Index of the field called name, or -1. */
SHEAF_API int sheaf_ckpt_field_index(const sheaf_ckpt *ck, const char *name);
/* Elements of field f that writer rank r held. */
SHEAF_API uint64_t sheaf_ckpt_rank_count(const sheaf_ckpt *ck, int f, int r);

/* Read elements [first, first+n) of field f, numbered over all writer ranks
 * in rank order (rank 0's elements first): restart with any number of ranks,
 * each reading the range it is given. Values are in host byte order. Every
 * rank part the range touches is checked whole against its checksum, also
 * one read only in part (-EIO on mismatch: no damaged byte is returned by a
 * call that succeeds). */
SHEAF_API int sheaf_ckpt_read(sheaf_ckpt *ck, int f, uint64_t first, uint64_t n, void *buf);
/* Read every byte of every unit and check all checksums; *bad = rank parts
 * whose checksum differs (0 for a good checkpoint). */
SHEAF_API int sheaf_ckpt_verify(sheaf_ckpt *ck, uint64_t *bad);

#ifdef __cplusplus
}
#endif
#endif
