/* errrec.h - the one error record of the checkpoint libraries (issue 31).
 * The message of sheaf_ckpt_errmsg() lives in libsheaf_ckpt_read (format.c);
 * libsheaf_ckpt.so has its own hidden copy of format.c, whose ckf_err hands
 * every message here instead of keeping a second record that no public call
 * reads. Exported from libsheaf_ckpt_read.so for libsheaf_ckpt.so only: not
 * an API (tests/install/check_exports.py allows sheaf__* names of this
 * header). */
#ifndef SHEAF_CKPT_ERRREC_H
#define SHEAF_CKPT_ERRREC_H
#include "sheaf_export.h"

/* Set this thread's message of sheaf_ckpt_errmsg() to msg. */
SHEAF_API void sheaf__ckpt_errset(const char *msg);
#endif
