/* keyval.c - key-value helpers of the tools: per-task key statistics (sheaf
 * dump, siondump -k/-K) and the payload of one key (sheaf cat -k). Public API
 * only: sion_key_list_iterator_*, sion_key_get_stat, sion_fread_key. */
#include "common.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int tool_is_keyval(const tool_in *in) { return sion_get_keyval_mode(in->sid) == SION_KEYVAL_INLINE; }

int tool_task_keys(tool_in *in, int t, tool_keyfn fn, void *ctx)
{
    if (sion_seek(in->sid, t, SION_CURRENT_BLK, SION_CURRENT_POS) != SION_SUCCESS ||
        sion_key_list_iterator_reset(in->sid) != SION_SUCCESS) {
        tool_err("%s: task %d: %s", in->path, t, sheaf_last_error());
        return -1;
    }
    uint64_t key;
    while (sion_key_list_iterator_next(in->sid, &key) == SION_SUCCESS) {
        sion_key_stat_t st;
        if (sion_key_get_stat(in->sid, key, &st) != SION_SUCCESS) {
            tool_err("%s: task %d: %s", in->path, t, sheaf_last_error());
            return -1;
        }
        fn(ctx, t, &st);
    }
    return 0;
}

int tool_sink_file(void *ctx, const void *buf, size_t n)
{
    if (fwrite(buf, 1, n, (FILE *)ctx) != n) {
        tool_err("write error: %s", strerror(errno));
        return -1;
    }
    return 0;
}

int tool_copy_key(tool_in *in, int t, uint64_t key, tool_sink sink, void *ctx)
{
    sion_key_stat_t st;
    if (sion_seek(in->sid, t, SION_CURRENT_BLK, SION_CURRENT_POS) != SION_SUCCESS ||
        sion_key_get_stat(in->sid, key, &st) != SION_SUCCESS) {
        tool_err("%s: task %d: %s", in->path, t, sheaf_last_error());
        return -1;
    }
    if (st.num_blocks == 0 || st.total_size == 0) /* nothing to copy (a seek must land inside the data) */
        return 0;
    if (sion_seek_key(in->sid, key, SION_ABSOLUTE_POS, 0) != SION_SUCCESS) {
        tool_err("%s: task %d: %s", in->path, t, sheaf_last_error());
        return -1;
    }
    enum { BUF = 1 << 20 };
    char *buf = malloc(BUF);
    if (!buf) {
        tool_err("out of memory");
        return -1;
    }
    sion_int64 done = 0;
    size_t n;
    int rc = 0;
    while (rc == 0 && (n = sion_fread_key(buf, key, 1, BUF, in->sid)) > 0) {
        rc = sink(ctx, buf, n);
        done += (sion_int64)n;
        progress_add((sion_int64)n);
    }
    free(buf);
    if (rc == 0 && done != st.total_size) {
        const char *m = sheaf_last_error();
        tool_err("%s: task %d key %llu: read %lld of %lld bytes%s%s", in->path, t, (unsigned long long)key,
                 (long long)done, (long long)st.total_size, m && *m ? ": " : "", m && *m ? m : "");
        rc = -1;
    }
    return rc;
}

int do_cat_key(const char *file, int task, uint64_t key, const char *out, int verbose)
{
    tool_in in;
    if (tool_open(file, &in))
        return TOOL_FAIL;
    int rc = TOOL_OK;
    if (!tool_is_keyval(&in)) {
        tool_err("%s: not a key-value container (key-value mode %s); -k needs one", file,
                 sion_keyval_type_to_str(sion_get_keyval_mode(in.sid)));
        tool_close(&in);
        return TOOL_FAIL;
    }
    if (task >= in.ntasks) {
        tool_err("%s: task %d out of range (container has tasks 0..%d)", file, task, in.ntasks - 1);
        tool_close(&in);
        return TOOL_FAIL;
    }
    FILE *o = stdout;
    if (out) {
        int fd = tool_open_output(&in, out);
        if (fd < 0 || !(o = fdopen(fd, "wb"))) {
            if (fd >= 0) {
                tool_err("%s: %s", out, strerror(errno));
                close(fd);
            }
            tool_close(&in);
            return TOOL_FAIL;
        }
    }
    int t0 = task < 0 ? 0 : task, t1 = task < 0 ? in.ntasks : task + 1;
    for (int t = t0; t < t1 && rc == TOOL_OK; t++) {
        if (verbose)
            fprintf(stderr, "%s: task %d key %llu\n", tool_prog, t, (unsigned long long)key);
        if (tool_copy_key(&in, t, key, tool_sink_file, o))
            rc = TOOL_FAIL;
    }
    if (fflush(o) != 0 && rc == TOOL_OK) {
        tool_err("write error: %s", strerror(errno));
        rc = TOOL_FAIL;
    }
    if (out && fclose(o) != 0 && rc == TOOL_OK) {
        tool_err("%s: write error: %s", out, strerror(errno));
        rc = TOOL_FAIL;
    }
    tool_close(&in);
    return rc;
}
