/* progress.c - a single self-overwriting progress line on stderr, shown only
 * when stderr is a terminal (never in pipes, logs or tests). */
#include "common.h"
#include <time.h>
#include <unistd.h>

static int active;
static const char *label, *unit = "bytes";
static sion_int64 total, done;
static time_t last;

static void draw(int force)
{
    time_t now = time(NULL);
    if (!force && now == last)
        return;
    last = now;
    if (total > 0)
        fprintf(stderr, "\r%s: %lld / %lld %s (%3d%%)", label, (long long)done, (long long)total, unit,
                (int)(done * 100 / total));
    else
        fprintf(stderr, "\r%s: %lld %s", label, (long long)done, unit);
    fflush(stderr);
}

void progress_start_in(const char *what, sion_int64 t, const char *u)
{
    active = isatty(STDERR_FILENO);
    label = what;
    unit = u;
    total = t;
    done = 0;
    last = 0;
    if (active)
        draw(1);
}

void progress_start(const char *what, sion_int64 t) { progress_start_in(what, t, "bytes"); }

void progress_add(sion_int64 n)
{
    done += n;
    if (active)
        draw(0);
}

void progress_end(void)
{
    if (active) {
        draw(1);
        fputc('\n', stderr);
    }
    active = 0;
}
