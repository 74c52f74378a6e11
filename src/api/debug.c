/* debug.c - SIONlib's debug interface: mask-filtered messages to a file. */
#include "sion_debug.h"
#include <stdarg.h>
#include <string.h>
#include <time.h>

static FILE *g_dfile;
static int g_mask;
static int (*g_thread_num)(void);

void sion_debug_on(int mask, const char *filename)
{
    sion_dclose();
    g_mask = mask;
    if (!filename || !strcmp(filename, "stderr"))
        g_dfile = stderr;
    else if (!strcmp(filename, "stdout"))
        g_dfile = stdout;
    else
        g_dfile = fopen(filename, "a");
    if (!g_dfile)
        g_mask = 0;
}

void sion_debug_off(void) { sion_dclose(); }
int sion_isdebug(void) { return g_dfile != NULL; }
FILE *sion_get_dfile(void) { return g_dfile; }

void sion_dclose(void)
{
    if (g_dfile && g_dfile != stderr && g_dfile != stdout)
        fclose(g_dfile);
    g_dfile = NULL;
    g_mask = 0;
}

double sheaf_debug_time(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_REALTIME, &ts))
        return 0.0;
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int sion_dprintf(int mask, const char *format, ...)
{
    if (!g_dfile || !(mask & g_mask))
        return 0;
    va_list ap;
    va_start(ap, format);
    int n = vfprintf(g_dfile, format, ap);
    va_end(ap);
    return n;
}

int sion_dprintfp(int mask, const char *callingfunction, int rank, const char *format, ...)
{
    if (!g_dfile || !(mask & g_mask))
        return 0;
    if (rank < 0 && g_thread_num)
        rank = g_thread_num();
    flockfile(g_dfile); /* prefix and message stay together */
    int n = fprintf(g_dfile, "SION[%2d][%s] ", rank, callingfunction);
    va_list ap;
    va_start(ap, format);
    n += vfprintf(g_dfile, format, ap);
    va_end(ap);
    funlockfile(g_dfile);
    return n;
}

int _lsion_debug_init(void) { return 1; }

int _lsion_debug_set_query_thread_num_function(int (*get_thread_num)(void))
{
    g_thread_num = get_thread_num;
    return 1;
}

void _sion_debug_set_lock_cb(void (*set_lock)(void), void (*unset_lock)(void))
{
    (void)set_lock;
    (void)unset_lock;
}
