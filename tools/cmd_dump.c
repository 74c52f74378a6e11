/* cmd_dump.c - `sheaf dump`: metadata as a human-readable table or JSON. */
#include "common.h"
#include <getopt.h>
#include <string.h>

static const char *kvname(int kv)
{
    switch (kv) {
    case SION_KEYVAL_NONE:
        return "none";
    case SION_KEYVAL_INLINE:
        return "inline";
    case SION_KEYVAL_META:
        return "meta";
    case SION_KEYVAL_HASH:
        return "hash";
    default:
        return "unknown";
    }
}

/* per-key statistics of keyval containers */
struct keyout {
    FILE *o;
    int json, n;
    sion_int64 keys, recs, bytes;
};

static void key_out(void *ctx, int t, const sion_key_stat_t *st)
{
    struct keyout *k = ctx;
    (void)t;
    if (k->json)
        fprintf(k->o, "%s{\"key\": %llu, \"records\": %lld, \"bytes\": %lld}", k->n ? ", " : "",
                (unsigned long long)st->key, (long long)st->num_blocks, (long long)st->total_size);
    else
        fprintf(k->o, "%8s   key %-20llu %8lld records %16lld\n", "", (unsigned long long)st->key,
                (long long)st->num_blocks, (long long)st->total_size);
    k->n++;
    k->keys++;
    k->recs += st->num_blocks;
    k->bytes += st->total_size;
}

static int keys_text(tool_in *in, FILE *o)
{
    fprintf(o, "\nkey-value records per task (key, records, payload bytes):\n");
    for (int t = 0; t < in->ntasks; t++) {
        struct keyout k = {o, 0, 0, 0, 0, 0};
        fprintf(o, "%8d\n", t);
        if (tool_task_keys(in, t, key_out, &k))
            return -1;
        fprintf(o, "%8s   %lld keys, %lld records, %lld payload bytes\n", "", (long long)k.keys, (long long)k.recs,
                (long long)k.bytes);
    }
    return 0;
}

static int dump_json(tool_in *in, FILE *o)
{
    int rc = 0;
    int kv = tool_is_keyval(in);
    int nf = in->nfiles_open;
    sheaf_file_info f0;
    int have0 = sheaf_get_file_info(in->sid, 0, &f0) == SION_SUCCESS;
    fprintf(o, "{\n  \"file\": ");
    tool_json_str(o, in->path);
    fprintf(o, ",\n  \"ntasks\": %d,\n  \"nfiles\": %d,\n  \"nfiles_open\": %d,\n  \"fsblksize\": %d,\n", in->ntasks,
            sion_get_number_of_files(in->sid), nf, (int)in->fsblksize);
    fprintf(o, "  \"globalskip\": %lld,\n  \"start_of_varheader\": %lld,\n  \"maxchunks\": %d,\n",
            (long long)in->globalskip, (long long)in->start_of_varheader, in->maxchunks);
    fprintf(o, "  \"data_endianness\": \"%s\",\n", sion_get_file_endianness(in->sid) ? "big" : "little");
    fprintf(o, "  \"keyval\": \"%s\",\n", kvname(sion_get_keyval_mode(in->sid)));
    fprintf(o, "  \"checksums\": %s,\n", have0 && (f0.flag2 & 1) ? "true" : "false");
    if (have0)
        fprintf(o, "  \"format_version\": %d,\n  \"lib_version\": \"%d.%d.%d\",\n", f0.format_version,
                f0.lib_version / 1000, f0.lib_version % 1000, f0.lib_patch);
    fprintf(o, "  \"total_bytes\": %lld,\n  \"files\": [", (long long)tool_all_bytes(in));
    for (int f = 0; f < nf; f++) {
        sheaf_file_info fi;
        if (sheaf_get_file_info(in->sid, f, &fi) != SION_SUCCESS)
            continue;
        fprintf(o, "%s\n    {\"filenumber\": %d, \"name\": ", f ? "," : "", fi.filenumber);
        tool_json_str(o, fi.name);
        fprintf(o, ", \"prefix\": ");
        tool_json_str(o, fi.prefix);
        fprintf(o,
                ", \"ntasks\": %d, \"fsblksize\": %d, \"maxchunks\": %d, \"globalskip\": %lld, "
                "\"start_of_varheader\": %lld, \"header_size\": %lld, \"data_start\": %lld, "
                "\"metadata_endianness\": \"%s\", \"flag1\": %lld, \"flag2\": %lld, \"format_version\": %d, "
                "\"lib_version\": \"%d.%d.%d\", \"mapping_size\": %d}",
                fi.ntasks, fi.fsblksize, fi.maxchunks, (long long)fi.globalskip, (long long)fi.start_of_varheader,
                (long long)fi.header_size, (long long)fi.data_start, fi.meta_big ? "big" : "little",
                (long long)fi.flag1, (long long)fi.flag2, fi.format_version, fi.lib_version / 1000,
                fi.lib_version % 1000, fi.lib_patch, fi.mapping_size);
    }
    fprintf(o, "\n  ],\n");
    int msize = -1, mfiles = 0;
    sion_int32 *map = NULL;
    if (sion_get_mapping(in->sid, &msize, &map, &mfiles) == SION_SUCCESS && msize > 0 && map) {
        fprintf(o, "  \"mapping\": [");
        for (int t = 0; t < msize; t++)
            fprintf(o, "%s{\"task\": %d, \"file\": %d, \"local_task\": %d}", t ? ", " : "", t, (int)map[2 * t],
                    (int)map[2 * t + 1]);
        fprintf(o, "],\n");
    } else {
        fprintf(o, "  \"mapping\": null,\n");
    }
    fprintf(o, "  \"tasks\": [");
    for (int t = 0; t < in->ntasks; t++) {
        fprintf(o,
                "%s\n    {\"task\": %d, \"globalrank\": %lld, \"chunksize\": %lld, \"blockcount\": %lld, "
                "\"bytes\": %lld, \"blocksizes\": [",
                t ? "," : "", t, (long long)in->granks[t], (long long)in->chunks[t], (long long)in->bcount[t],
                (long long)tool_task_bytes(in, t));
        for (int b = 0; b < in->bcount[t] && b < in->maxchunks; b++)
            fprintf(o, "%s%lld", b ? ", " : "", (long long)tool_block_bytes(in, t, b));
        fprintf(o, "]");
        if (kv) {
            struct keyout k = {o, 1, 0, 0, 0, 0};
            fprintf(o, ", \"keys\": [");
            if (tool_task_keys(in, t, key_out, &k))
                rc = -1;
            fprintf(o, "]");
        }
        fprintf(o, "}");
    }
    fprintf(o, "\n  ]\n}\n");
    return rc;
}

static void dump_text(tool_in *in, int all_blocks, FILE *o)
{
    int nf = in->nfiles_open;
    sheaf_file_info f0;
    memset(&f0, 0, sizeof f0);
    sheaf_get_file_info(in->sid, 0, &f0);
    fprintf(o, "container:        %s\n", in->path);
    fprintf(o, "tasks:            %d\n", in->ntasks);
    if (nf < sion_get_number_of_files(in->sid))
        fprintf(o, "physical files:   %d (this member opened alone: %d of them shown)\n",
                sion_get_number_of_files(in->sid), nf);
    else
        fprintf(o, "physical files:   %d\n", nf);
    fprintf(o, "fs block size:    %d\n", (int)in->fsblksize);
    fprintf(o, "data endianness:  %s (host %s)\n", sion_get_file_endianness(in->sid) ? "big" : "little",
            sion_get_endianness() ? "big" : "little");
    fprintf(o, "metadata order:   %s\n", f0.meta_big ? "big" : "little");
    fprintf(o, "key-value mode:   %s\n", kvname(sion_get_keyval_mode(in->sid)));
    fprintf(o, "checksums:        %s\n", f0.flag2 & 1 ? "CRC-32C per task and block, verified on read" : "none");
    fprintf(o, "file format:      %d (library version field %d.%d.%d; sheaf stores 1.7.6 too)\n", f0.format_version,
            f0.lib_version / 1000, f0.lib_version % 1000, f0.lib_patch);
    fprintf(o, "max blocks/task:  %d\n", in->maxchunks);
    for (int f = 0; f < nf; f++) {
        sheaf_file_info fi;
        if (sheaf_get_file_info(in->sid, f, &fi) == SION_SUCCESS)
            fprintf(o, "file %d: %s: %d tasks, globalskip %lld, data at %lld, metadata at %lld\n", f, fi.name,
                    fi.ntasks, (long long)fi.globalskip, (long long)fi.data_start, (long long)fi.start_of_varheader);
    }
    fprintf(o, "\n%8s %12s %14s %8s %16s\n", "task", "global rank", "chunk size", "blocks", "bytes");
    sion_int64 used = 0, cap = 0;
    for (int t = 0; t < in->ntasks; t++) {
        sion_int64 b = tool_task_bytes(in, t);
        used += b;
        cap += in->chunks[t] * (in->bcount[t] > 0 ? in->bcount[t] : 1);
        fprintf(o, "%8d %12lld %14lld %8lld %16lld\n", t, (long long)in->granks[t], (long long)in->chunks[t],
                (long long)in->bcount[t], (long long)b);
        if (all_blocks)
            for (int k = 0; k < in->bcount[t] && k < in->maxchunks; k++)
                fprintf(o, "%8s   block %-6d %16lld\n", "", k, (long long)tool_block_bytes(in, t, k));
    }
    fprintf(o, "%8s %12s %14lld %8s %16lld\n", "total", "", (long long)cap, "", (long long)used);
    fprintf(o, "file usage:       %.2f%% of allocated chunk space holds data\n",
            cap > 0 ? 100.0 * (double)used / (double)cap : 0.0);
}

static void usage(FILE *o)
{
    fprintf(o, "usage: sheaf dump [--json] [-a|--all-blocks] FILE\n"
               "  --json            machine-readable output\n"
               "  -a, --all-blocks  list the size of every block of every task\n");
}

struct dump_opts {
    int json, all;
};

static int dump_opt(int opt, const char *arg, void *ctx)
{
    struct dump_opts *o = ctx;
    (void)arg;
    if (opt == 'j')
        o->json = 1;
    else
        o->all = 1;
    return 0;
}

int cmd_dump(int argc, char **argv)
{
    static const struct option longopts[] = {{"json", no_argument, NULL, 'j'},
                                             {"all-blocks", no_argument, NULL, 'a'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    struct dump_opts o = {0, 0};
    int first, rc = tool_getopt(argc, argv, "ah", longopts, dump_opt, &o, usage, 1, 1, &first);
    if (rc)
        return rc < 0 ? TOOL_OK : rc;
    tool_in in;
    if (tool_open(argv[first], &in))
        return TOOL_FAIL;
    int krc = 0;
    if (o.json) {
        krc = dump_json(&in, stdout);
    } else {
        dump_text(&in, o.all, stdout);
        if (tool_is_keyval(&in))
            krc = keys_text(&in, stdout);
    }
    tool_close(&in);
    if (krc) {
        fflush(stdout);
        return TOOL_FAIL;
    }
    if (fflush(stdout) != 0) {
        tool_err("write error on standard output");
        return TOOL_FAIL;
    }
    return TOOL_OK;
}
