/* common.h - shared helpers of the sheaf command-line tools. The tools use
 * only the public API (sion.h, sheaf.h), exactly as a user program would. */
#ifndef SHEAF_TOOLS_COMMON_H
#define SHEAF_TOOLS_COMMON_H
#include "sion.h"
#include "sheaf.h"
#include <stdint.h>
#include <stdio.h>

/* Exit codes */
#define TOOL_OK 0
#define TOOL_FAIL 1
#define TOOL_USAGE 2

/* An input container opened for reading, with its block tables. */
typedef struct tool_in {
    const char *path;
    int sid;
    int ntasks, nfiles, maxchunks;
    int nfiles_open; /* physical files opened (1 for a lone set member) */
    sion_int32 fsblksize;
    sion_int64 globalskip, start_of_varheader;
    sion_int64 *chunks, *granks, *bcount, *bsizes; /* owned by the sid */
} tool_in;

/* Program name used in messages. */
extern const char *tool_prog;

void tool_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* s as a JSON string (quotes, backslashes escaped; control and non-ASCII bytes as \u00XX) */
void tool_json_str(FILE *o, const char *s);
/* Open `path` read-only ("rb,posix"); on failure print "<prog>: <cause>" and
 * return -1 (the library's message names the file and the cause). */
int tool_open(const char *path, tool_in *in);
void tool_close(tool_in *in);
/* Total payload bytes of task t; size of block b of task t (0 if absent). */
sion_int64 tool_task_bytes(const tool_in *in, int t);
sion_int64 tool_block_bytes(const tool_in *in, int t, int b);
sion_int64 tool_all_bytes(const tool_in *in);

/* Copy task t (block b, or all blocks when b < 0) to fd/FILE via callback.
 * Returns 0, or -1 after printing a message (read error, short data, write
 * error). Bytes are counted into *progress_done if progress is active. */
typedef int (*tool_sink)(void *ctx, const void *buf, size_t n);
int tool_copy_task(tool_in *in, int t, int b, tool_sink sink, void *ctx);
int tool_sink_fd(void *ctx, const void *buf, size_t n); /* ctx = int* fd */

/* Option parsing shared by the sheaf subcommands: getopt_long over argv
 * (argv[0] = command name) with `shortopts`/`longopts`; 'h' and --help print
 * usage to stdout. Every other option goes to on_opt(opt, optarg, ctx), which
 * returns 0 or TOOL_USAGE after printing why. Then the number of positional
 * arguments must lie in [min_pos, max_pos] (max_pos < 0: no limit).
 * Returns TOOL_OK with *first = index of the first positional argument,
 * TOOL_USAGE after printing usage, or -1 when help was printed. */
struct option;
int tool_getopt(int argc, char **argv, const char *shortopts, const struct option *longopts,
                int (*on_opt)(int opt, const char *arg, void *ctx), void *ctx, void (*usage)(FILE *o), int min_pos,
                int max_pos, int *first);

/* Create (or truncate) the -o output file `out` for writing, refusing to
 * truncate any physical file of the open input container. fd, or -1 after a
 * message. */
int tool_open_output(tool_in *in, const char *out);

/* Parse a non-negative / any integer; return 0 on success, -1 if malformed. */
int tool_parse_i64(const char *s, long long *out);

/* Progress line on stderr, only when stderr is a terminal. */
void progress_start(const char *what, sion_int64 total);
void progress_add(sion_int64 n);
void progress_end(void);
void progress_start_in(const char *what, sion_int64 total, const char *unit); /* counting units, not bytes */

/* Commands: argc/argv start at the command's own arguments (argv[0] = name). */
int cmd_dump(int argc, char **argv);
int cmd_cat(int argc, char **argv);
int cmd_split(int argc, char **argv);
int cmd_defrag(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_recover(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_ckpt(int argc, char **argv); /* cmd_ckpt.c: checkpoints (sheaf_ckpt_read.h) */
/* Progress reporting of split and defrag: sionsplit and siondefrag print
 * SIONlib's lines through these hooks (compat.c); sheaf's own commands pass
 * NULL (and get sheaf's terminal progress line instead). Any hook may be NULL.
 *   opened:     the input is open (before anything is written)
 *   out_opened: defrag: the output container is open (sid, fs block size)
 *   task:       task t is about to be copied
 *   file:       split: the output file of task t (of one key if by_key) is created
 *   block:      split: block b of task t (bytes) was copied
 *   key:        split: all records of `key` of task t (bytes in all) were copied */
typedef struct tool_report {
    void *ctx;
    void (*opened)(void *ctx, tool_in *in);
    void (*out_opened)(void *ctx, tool_in *in, int osid, sion_int32 fsblk);
    void (*task)(void *ctx, tool_in *in, int t);
    void (*file)(void *ctx, tool_in *in, int t, int by_key, uint64_t key);
    void (*block)(void *ctx, tool_in *in, int t, int b, sion_int64 bytes);
    void (*key)(void *ctx, tool_in *in, int t, uint64_t key, sion_int64 bytes);
} tool_report;

/* Core operations shared with the sion* compat front ends. */
int do_cat(const char *file, int task, int block, const char *out, int verbose);
int do_split(const char *file, const char *prefix, int digits, int use_grank, int force, int verbose,
             const tool_report *rep);
int do_defrag(const char *in, const char *out, sion_int64 fsblk, int verbose, const tool_report *rep);
/* siondump-style text output. */
int do_siondump(const char *file, int all, int bytes, int multi, int maptab, int keystat, int keylist, int sizes,
                int verbose);
int compat_main(const char *name, int argc, char **argv); /* -1 if not a compat name */

/* Key-value containers (keyval.c). */
int tool_is_keyval(const tool_in *in); /* 1 for an inline key-value container */
/* Call fn for every distinct key of task t (order of first occurrence) with its
 * statistics; 0, or -1 after printing a message (corrupt records). */
typedef void (*tool_keyfn)(void *ctx, int t, const sion_key_stat_t *st);
int tool_task_keys(tool_in *in, int t, tool_keyfn fn, void *ctx);
/* Copy all payload of `key` of task t, in record order, to sink. A key the
 * task does not have copies nothing. Returns 0, or -1 after a message. */
int tool_copy_key(tool_in *in, int t, uint64_t key, tool_sink sink, void *ctx);
int tool_sink_file(void *ctx, const void *buf, size_t n); /* ctx = FILE* */
/* Payload of `key` of one task (task >= 0) or of every task in order. */
int do_cat_key(const char *file, int task, uint64_t key, const char *out, int verbose);
#endif
