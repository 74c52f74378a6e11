/* mode.h - the SIONlib file_mode string ("bw,posix,keyval=inline,...").
 * Thread-safe (pure). */
#ifndef CORE_MODE_H
#define CORE_MODE_H

typedef struct core_mode {
    int write;       /* 1: w/wb/bw; 0: read */
    int explicit_rw; /* a read or write key was present */
    int posix;       /* 1: file descriptors; 0: ANSI FILE* (default) */
    int keyval;      /* SION_KEYVAL_* ; SION_KEYVAL_NOTSET when absent */
    int data_big;    /* declared user data order: -1 host, 0 little, 1 big */
    int collective;  /* 'collective' present (collsize / cmerge alone do not switch
                       * coalescing on, as in SIONlib 1.7) */
    int collsize;    /* collsize=N, -1 if absent */
    int cmerge;      /* collectivemerge / cmerge (applies when coalescing is on) */
    int buddy;       /* buddy levels, 0 if absent */
    int checksum;    /* 'checksum': write block and metadata checksums (checksum.h) */
    int nochecksum;  /* 'nochecksum': read without verifying stored checksums */
    int packed;      /* internal, set by the parallel layer (never parsed): chunk sizes are
                       * a collective layout (core_coll_layout), stored as given */
} core_mode;

/* Parse `mode` (NULL counts as ""). Unknown keys are ignored, as in SIONlib.
 * Fails only on a value that cannot be meant (e.g. endianness=middle), and
 * on sheaf's key files=... (files=auto is taken by sion_paropen_mpi alone,
 * which removes it before parsing): returns SHEAF_E_ARG with a message. */
int core_mode_parse(const char *mode, core_mode *out);
#endif
