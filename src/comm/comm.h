/* comm.h - internal declarations of libsheaf_comm (src/comm). */
#ifndef SHEAF_SRC_COMM_H
#define SHEAF_SRC_COMM_H
#include "sheaf_comm.h"
#include <stdarg.h>

/* record the thread's message (printf-style) and return code */
int comm_err(int code, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 2, 3)))
#endif
    ;
int comm_verr(int code, const char *fmt, va_list ap);

/* allmin from reduce + bcast, for implementations without their own */
int comm_allmin_generic(sheaf_comm *c, int64_t *v, int n);

#endif
