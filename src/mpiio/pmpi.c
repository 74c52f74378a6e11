/* pmpi.c - libsheaf-mpiio-pmpi.so: sheaf's MPI-IO layer under unmodified
 * MPI-IO programs, through the MPI profiling interface.
 *
 * MPI_File_open takes a file over when its info has sheaf_cache=pfr (or
 * nocache/none/dache) or the environment has SHEAF_MPIIO=pfr or dache. On a
 * dache file the blocking independent reads and writes (read, write, read_at,
 * write_at, and their MPI-4 _c forms up to INT_MAX items) go through sheaf as
 * well (DACHe is coherent for them); the other fallbacks below stay on the
 * real handle. The real MPI-IO
 * handle is opened too, with the same view kept on it, and is the handle
 * the program sees: the calls sheaf implements (open/close, set_view, read/
 * write _all and _at_all, seek, get_position, sync, get_size, set_size,
 * preallocate) go to the sheaf file; every other data call (independent
 * ones included: they would break a realm's single owner) falls back to the
 * real handle. For that to be right, taken-over files write through (dirty
 * realm pages reach the file at the end of every collective write; pages stay
 * cached for reads), the individual pointer is copied to the real handle
 * before a fallback and back after it, and a fallback that writes tells the
 * layer (sheaf_file_note_external_write: every cache is dropped at the next
 * collective call). set_view with a data representation other than "native"
 * and set_atomicity(true) hand the file back to the real handle for good
 * (collectively, after a sync). Uses the public API of libsheaf_mpiio only.
 * SHEAF_MPIIO_REPORT=1: rank 0 reports each taken-over file at close. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>
#include "sheaf_mpiio.h"

#define MAXF 256
/* served: MPI_File_* calls sheaf answered; fellback: calls passed to the real
 * handle of a taken-over file (SHEAF_MPIIO_REPORT prints rank 0's) */
typedef struct entry { MPI_File real; sheaf_file sf; int rank, dache; char name[256]; unsigned long served, fellback; } entry;
static entry table[MAXF];

static entry *lookup(MPI_File f) {
  if (f == MPI_FILE_NULL) return NULL;
  for (int i = 0; i < MAXF; i++)
    if (table[i].sf && table[i].real == f) return &table[i];
  return NULL;
}
/* find: a call sheaf serves when the file is taken over; find_fb: one that falls back */
static entry *find(MPI_File f) {
  entry *e = lookup(f);
  if (e) e->served++;
  return e;
}
static entry *find_fb(MPI_File f) {
  entry *e = lookup(f);
  if (e) e->fellback++;
  return e;
}

static int to_mpi(entry *e, int rc) {
  if (rc == 0) return MPI_SUCCESS;
  if (getenv("SHEAF_MPIIO_VERBOSE")) fprintf(stderr, "sheaf-mpiio: %s\n", sheaf_file_errmsg(e ? e->sf : NULL));
  switch (rc) {
  case SHEAF_MPIIO_EARG: return MPI_ERR_ARG;
  case SHEAF_MPIIO_ENOMEM: return MPI_ERR_NO_MEM;
  case SHEAF_MPIIO_EMODE: return MPI_ERR_AMODE;
  default: return MPI_ERR_IO;
  }
}

static int wanted(MPI_Info info) {
  char v[MPI_MAX_INFO_VAL + 1];
  int flag = 0;
  if (info != MPI_INFO_NULL) {
    MPI_Info_get(info, "sheaf_cache", MPI_MAX_INFO_VAL, v, &flag);
    if (flag) return strcmp(v, "pfr") == 0 || strcmp(v, "nocache") == 0 || strcmp(v, "none") == 0 ||
                     strcmp(v, "dache") == 0;
  }
  const char *env = getenv("SHEAF_MPIIO");
  return env && (strcmp(env, "pfr") == 0 || strcmp(env, "dache") == 0);
}

/* DACHe serves independent calls too (its cache is coherent) */
static int wants_dache(MPI_Info info) {
  char v[MPI_MAX_INFO_VAL + 1];
  int flag = 0;
  if (info != MPI_INFO_NULL) {
    MPI_Info_get(info, "sheaf_cache", MPI_MAX_INFO_VAL, v, &flag);
    if (flag) return strcmp(v, "dache") == 0;
  }
  const char *env = getenv("SHEAF_MPIIO");
  return env && strcmp(env, "dache") == 0;
}

int MPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh) {
  int rc = PMPI_File_open(comm, filename, amode, info, fh);
  if (rc != MPI_SUCCESS || !wanted(info)) return rc;
  int slot = -1;
  for (int i = 0; i < MAXF && slot < 0; i++)
    if (!table[i].sf) slot = i;
  MPI_Info mine;
  if (info != MPI_INFO_NULL) MPI_Info_dup(info, &mine);
  else MPI_Info_create(&mine);
  int dache = wants_dache(info);
  if (dache) MPI_Info_set(mine, "sheaf_cache", "dache");
  else MPI_Info_set(mine, "sheaf_write_through", "true");
  /* the real open created the file; delete-on-close is the real handle's */
  int samode = amode & ~(MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_DELETE_ON_CLOSE | MPI_MODE_UNIQUE_OPEN |
                         MPI_MODE_SEQUENTIAL);
  sheaf_file sf = NULL;
  int src = 0, any = 0, ok = slot >= 0;
  MPI_Allreduce(&ok, &any, 1, MPI_INT, MPI_MIN, comm);
  if (any) src = sheaf_file_open(comm, filename, samode, mine, &sf);
  MPI_Info_free(&mine);
  if (!any || src != 0) {  /* not taken over: the real handle serves everything */
    if (getenv("SHEAF_MPIIO_VERBOSE"))
      fprintf(stderr, "sheaf-mpiio: %s not taken over: %s\n", filename, any ? sheaf_mpiio_open_errmsg() : "table full");
    return MPI_SUCCESS;
  }
  table[slot].real = *fh;
  table[slot].sf = sf;
  table[slot].dache = dache;
  MPI_Comm_rank(comm, &table[slot].rank);
  table[slot].served = 1, table[slot].fellback = 0;
  snprintf(table[slot].name, sizeof table[slot].name, "%s", filename);
  return MPI_SUCCESS;
}

static void report(entry *e) {
  if (e->rank != 0 || !getenv("SHEAF_MPIIO_REPORT")) return;
  sheaf_mpiio_stats st;
  sheaf_file_stats(e->sf, &st);
  fprintf(stderr, "sheaf-mpiio: %s served by sheaf (%llu collective calls, %llu rounds, %d aggregators; "
          "rank 0's MPI_File calls: %lu served, %lu fell back)\n", e->name, (unsigned long long)st.coll_calls,
          (unsigned long long)st.rounds_total, st.naggs, e->served, e->fellback);
}

/* give the file back to the real handle for good (collective) */
static int demote(entry *e) {
  report(e);
  int rc = sheaf_file_close(&e->sf);
  e->sf = NULL;
  return rc == 0 ? MPI_SUCCESS : MPI_ERR_IO;
}

int MPI_File_close(MPI_File *fh) {
  entry *e = fh ? find(*fh) : NULL;
  if (e) {
    report(e);
    int rc = sheaf_file_close(&e->sf);
    e->sf = NULL;
    int r2 = PMPI_File_close(fh);
    return rc ? MPI_ERR_IO : r2;
  }
  return PMPI_File_close(fh);
}

int MPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype, const char *datarep,
                      MPI_Info info) {
  int rc = PMPI_File_set_view(fh, disp, etype, filetype, datarep, info);
  entry *e = find(fh);
  if (!e) return rc;
  if (datarep && strcmp(datarep, "native") != 0) {
    demote(e);
    return rc;
  }
  int src = sheaf_file_set_view(e->sf, disp, etype, filetype);
  return rc != MPI_SUCCESS ? rc : to_mpi(e, src);
}

int MPI_File_set_atomicity(MPI_File fh, int flag) {
  entry *e = find(fh);
  if (e && flag) demote(e);
  return PMPI_File_set_atomicity(fh, flag);
}

/* both MPICH and Open MPI keep a byte count in the status: count items of t */
static void set_status(MPI_Status *st, MPI_Datatype t, int count) {
  int size = 0;
  if (st == MPI_STATUS_IGNORE) return;
  MPI_Type_size(t, &size);
  st->MPI_ERROR = MPI_SUCCESS;
  MPI_Status_set_cancelled(st, 0);
  MPI_Status_set_elements_x(st, MPI_BYTE, (MPI_Count)size * count);
}

#define DATA_CALL(NAME, SHEAF, CONST, ...)                                                            \
  int MPI_File_##NAME(MPI_File fh, CONST void *buf, int count, MPI_Datatype t, MPI_Status *st) {     \
    entry *e = find(fh);                                                                             \
    if (!e) return PMPI_File_##NAME(fh, buf, count, t, st);                                          \
    int rc = SHEAF(e->sf, buf, count, t);                                                            \
    if (rc == 0) set_status(st, t, count);                                                           \
    return to_mpi(e, rc);                                                                            \
  }
#define DATA_CALL_AT(NAME, SHEAF, CONST)                                                              \
  int MPI_File_##NAME(MPI_File fh, MPI_Offset off, CONST void *buf, int count, MPI_Datatype t,       \
                      MPI_Status *st) {                                                              \
    entry *e = find(fh);                                                                             \
    if (!e) return PMPI_File_##NAME(fh, off, buf, count, t, st);                                     \
    int rc = SHEAF(e->sf, off, buf, count, t);                                                       \
    if (rc == 0) set_status(st, t, count);                                                           \
    return to_mpi(e, rc);                                                                            \
  }
#define NOCONST
DATA_CALL(read_all, sheaf_file_read_all, NOCONST)
DATA_CALL(write_all, sheaf_file_write_all, const)
DATA_CALL_AT(read_at_all, sheaf_file_read_at_all, NOCONST)
DATA_CALL_AT(write_at_all, sheaf_file_write_at_all, const)

int MPI_File_seek(MPI_File fh, MPI_Offset off, int whence) {
  entry *e = find(fh);
  if (!e) return PMPI_File_seek(fh, off, whence);
  return to_mpi(e, sheaf_file_seek(e->sf, off, whence));
}
int MPI_File_get_position(MPI_File fh, MPI_Offset *off) {
  entry *e = find(fh);
  if (!e) return PMPI_File_get_position(fh, off);
  return to_mpi(e, sheaf_file_get_position(e->sf, off));
}
int MPI_File_sync(MPI_File fh) {
  entry *e = find(fh);
  int rc = e ? to_mpi(e, sheaf_file_sync(e->sf)) : MPI_SUCCESS;
  int r2 = PMPI_File_sync(fh);
  return rc ? rc : r2;
}
int MPI_File_get_size(MPI_File fh, MPI_Offset *size) {
  entry *e = find(fh);
  if (!e) return PMPI_File_get_size(fh, size);
  return to_mpi(e, sheaf_file_get_size(e->sf, size));
}
int MPI_File_set_size(MPI_File fh, MPI_Offset size) {
  entry *e = find(fh);
  if (!e) return PMPI_File_set_size(fh, size);
  return to_mpi(e, sheaf_file_set_size(e->sf, size));
}
int MPI_File_preallocate(MPI_File fh, MPI_Offset size) {
  entry *e = find(fh);
  if (!e) return PMPI_File_preallocate(fh, size);
  return to_mpi(e, sheaf_file_preallocate(e->sf, size));
}

/* ---- fallbacks: the real handle, with the individual pointer carried over ---- */
static void ptr_to_real(entry *e, MPI_File fh) {
  MPI_Offset p;
  if (e && sheaf_file_get_position(e->sf, &p) == 0) PMPI_File_seek(fh, p, MPI_SEEK_SET);
}
static void ptr_from_real(entry *e, MPI_File fh) {
  MPI_Offset p;
  if (e && PMPI_File_get_position(fh, &p) == MPI_SUCCESS) sheaf_file_seek(e->sf, p, MPI_SEEK_SET);
}
static void wrote(entry *e) {
  if (e) sheaf_file_note_external_write(e->sf);
}

#define FB_PTR_N(NAME, CONST, W, COUNT_T, REQ_T, REQ)                                                 \
  int MPI_File_##NAME(MPI_File fh, CONST void *buf, COUNT_T count, MPI_Datatype t, REQ_T REQ) {       \
    entry *e = find_fb(fh);                                                                          \
    ptr_to_real(e, fh);                                                                              \
    int rc = PMPI_File_##NAME(fh, buf, count, t, REQ);                                               \
    ptr_from_real(e, fh);                                                                            \
    if (W) wrote(e);                                                                                 \
    return rc;                                                                                       \
  }
#define FB_AT_N(NAME, CONST, W, COUNT_T, REQ_T, REQ)                                                  \
  int MPI_File_##NAME(MPI_File fh, MPI_Offset off, CONST void *buf, COUNT_T count, MPI_Datatype t,   \
                      REQ_T REQ) {                                                                   \
    entry *e = find_fb(fh);                                                                          \
    int rc = PMPI_File_##NAME(fh, off, buf, count, t, REQ);                                          \
    if (W) wrote(e);                                                                                 \
    return rc;                                                                                       \
  }
#define FB_PTR(NAME, CONST, W, REQ_T, REQ) FB_PTR_N(NAME, CONST, W, int, REQ_T, REQ)
#define FB_AT(NAME, CONST, W, REQ_T, REQ) FB_AT_N(NAME, CONST, W, int, REQ_T, REQ)
/* blocking independent I/O: through DACHe on a dache file; otherwise it would
 * break the single owner of a realm: the real handle does it (the written
 * bytes drop every cache at the next collective call) */
#define IND_PTR_N(NAME, SHEAF, CONST, W, COUNT_T)                                                     \
  int MPI_File_##NAME(MPI_File fh, CONST void *buf, COUNT_T count, MPI_Datatype t, MPI_Status *st) { \
    entry *e = lookup(fh);                                                                           \
    if (e) e->dache && count <= INT_MAX ? e->served++ : e->fellback++;                               \
    if (e && e->dache && count <= INT_MAX) {                                                         \
      int rc = SHEAF(e->sf, buf, (int)count, t);                                                     \
      if (rc == 0) set_status(st, t, (int)count);                                                    \
      return to_mpi(e, rc);                                                                          \
    }                                                                                                \
    ptr_to_real(e, fh);                                                                              \
    int rc = PMPI_File_##NAME(fh, buf, count, t, st);                                                \
    ptr_from_real(e, fh);                                                                            \
    if (W) wrote(e);                                                                                 \
    return rc;                                                                                       \
  }
#define IND_AT_N(NAME, SHEAF, CONST, W, COUNT_T)                                                      \
  int MPI_File_##NAME(MPI_File fh, MPI_Offset off, CONST void *buf, COUNT_T count, MPI_Datatype t,   \
                      MPI_Status *st) {                                                              \
    entry *e = lookup(fh);                                                                           \
    if (e) e->dache && count <= INT_MAX ? e->served++ : e->fellback++;                               \
    if (e && e->dache && count <= INT_MAX) {                                                         \
      int rc = SHEAF(e->sf, off, buf, (int)count, t);                                                \
      if (rc == 0) set_status(st, t, (int)count);                                                    \
      return to_mpi(e, rc);                                                                          \
    }                                                                                                \
    int rc = PMPI_File_##NAME(fh, off, buf, count, t, st);                                           \
    if (W) wrote(e);                                                                                 \
    return rc;                                                                                       \
  }
#define IND_PTR(NAME, SHEAF, CONST, W) IND_PTR_N(NAME, SHEAF, CONST, W, int)
#define IND_AT(NAME, SHEAF, CONST, W) IND_AT_N(NAME, SHEAF, CONST, W, int)
IND_PTR(read, sheaf_file_read, NOCONST, 0)
IND_PTR(write, sheaf_file_write, const, 1)
IND_AT(read_at, sheaf_file_read_at, NOCONST, 0)
IND_AT(write_at, sheaf_file_write_at, const, 1)
FB_PTR(iread, NOCONST, 0, MPI_Request *, req)
FB_PTR(iwrite, const, 1, MPI_Request *, req)
FB_PTR(iread_all, NOCONST, 0, MPI_Request *, req)
FB_PTR(iwrite_all, const, 1, MPI_Request *, req)
FB_AT(iread_at, NOCONST, 0, MPI_Request *, req)
FB_AT(iwrite_at, const, 1, MPI_Request *, req)
FB_AT(iread_at_all, NOCONST, 0, MPI_Request *, req)
FB_AT(iwrite_at_all, const, 1, MPI_Request *, req)

/* shared and ordered pointers: sheaf has none, the real handle keeps them */
int MPI_File_write_shared(MPI_File fh, const void *buf, int count, MPI_Datatype t, MPI_Status *st) {
  int rc = PMPI_File_write_shared(fh, buf, count, t, st);
  wrote(find_fb(fh));
  return rc;
}
int MPI_File_write_ordered(MPI_File fh, const void *buf, int count, MPI_Datatype t, MPI_Status *st) {
  int rc = PMPI_File_write_ordered(fh, buf, count, t, st);
  wrote(find_fb(fh));
  return rc;
}
int MPI_File_iwrite_shared(MPI_File fh, const void *buf, int count, MPI_Datatype t, MPI_Request *req) {
  int rc = PMPI_File_iwrite_shared(fh, buf, count, t, req);
  wrote(find_fb(fh));
  return rc;
}
int MPI_File_write_all_begin(MPI_File fh, const void *buf, int count, MPI_Datatype t) {
  entry *e = find_fb(fh);
  ptr_to_real(e, fh);
  int rc = PMPI_File_write_all_begin(fh, buf, count, t);
  ptr_from_real(e, fh);
  wrote(e);
  return rc;
}
int MPI_File_read_all_begin(MPI_File fh, void *buf, int count, MPI_Datatype t) {
  entry *e = find_fb(fh);
  ptr_to_real(e, fh);
  int rc = PMPI_File_read_all_begin(fh, buf, count, t);
  ptr_from_real(e, fh);
  return rc;
}
int MPI_File_write_at_all_begin(MPI_File fh, MPI_Offset off, const void *buf, int count, MPI_Datatype t) {
  int rc = PMPI_File_write_at_all_begin(fh, off, buf, count, t);
  wrote(find_fb(fh));
  return rc;
}
int MPI_File_write_ordered_begin(MPI_File fh, const void *buf, int count, MPI_Datatype t) {
  int rc = PMPI_File_write_ordered_begin(fh, buf, count, t);
  wrote(find_fb(fh));
  return rc;
}

/* ---- MPI-4 large-count variants (_c): the real handle, as the calls above ----
 * sheaf implements none of them; without these wrappers they would reach the
 * real handle with no pointer hand-over and, for writes, without dropping the
 * caches of a taken-over file: a later collective read could return cached
 * bytes older than the file's. Open MPI 4.1 (MPI 3.1) has no _c calls. */
#if MPI_VERSION >= 4
#define FB_PTR_C(NAME, CONST, W, REQ_T, REQ) FB_PTR_N(NAME, CONST, W, MPI_Count, REQ_T, REQ)
#define FB_AT_C(NAME, CONST, W, REQ_T, REQ) FB_AT_N(NAME, CONST, W, MPI_Count, REQ_T, REQ)
#define FB_BEGIN_PTR_C(NAME, CONST, W)                                                                \
  int MPI_File_##NAME(MPI_File fh, CONST void *buf, MPI_Count count, MPI_Datatype t) {               \
    entry *e = find_fb(fh);                                                                          \
    ptr_to_real(e, fh);                                                                              \
    int rc = PMPI_File_##NAME(fh, buf, count, t);                                                    \
    ptr_from_real(e, fh);                                                                            \
    if (W) wrote(e);                                                                                 \
    return rc;                                                                                       \
  }
#define FB_BEGIN_AT_C(NAME, CONST, W)                                                                 \
  int MPI_File_##NAME(MPI_File fh, MPI_Offset off, CONST void *buf, MPI_Count count, MPI_Datatype t) { \
    entry *e = find_fb(fh);                                                                          \
    int rc = PMPI_File_##NAME(fh, off, buf, count, t);                                               \
    if (W) wrote(e);                                                                                 \
    return rc;                                                                                       \
  }
IND_PTR_N(read_c, sheaf_file_read, NOCONST, 0, MPI_Count)
IND_PTR_N(write_c, sheaf_file_write, const, 1, MPI_Count)
FB_PTR_C(read_all_c, NOCONST, 0, MPI_Status *, st)
FB_PTR_C(write_all_c, const, 1, MPI_Status *, st)
IND_AT_N(read_at_c, sheaf_file_read_at, NOCONST, 0, MPI_Count)
IND_AT_N(write_at_c, sheaf_file_write_at, const, 1, MPI_Count)
FB_AT_C(read_at_all_c, NOCONST, 0, MPI_Status *, st)
FB_AT_C(write_at_all_c, const, 1, MPI_Status *, st)
FB_PTR_C(iread_c, NOCONST, 0, MPI_Request *, req)
FB_PTR_C(iwrite_c, const, 1, MPI_Request *, req)
FB_PTR_C(iread_all_c, NOCONST, 0, MPI_Request *, req)
FB_PTR_C(iwrite_all_c, const, 1, MPI_Request *, req)
FB_AT_C(iread_at_c, NOCONST, 0, MPI_Request *, req)
FB_AT_C(iwrite_at_c, const, 1, MPI_Request *, req)
FB_AT_C(iread_at_all_c, NOCONST, 0, MPI_Request *, req)
FB_AT_C(iwrite_at_all_c, const, 1, MPI_Request *, req)
FB_BEGIN_PTR_C(read_all_begin_c, NOCONST, 0)
FB_BEGIN_PTR_C(write_all_begin_c, const, 1)
FB_BEGIN_AT_C(write_at_all_begin_c, const, 1)
/* shared and ordered pointers: the real handle keeps them; writes drop the caches */
int MPI_File_write_shared_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype t, MPI_Status *st) {
  int rc = PMPI_File_write_shared_c(fh, buf, count, t, st);
  wrote(find_fb(fh));
  return rc;
}
int MPI_File_write_ordered_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype t, MPI_Status *st) {
  int rc = PMPI_File_write_ordered_c(fh, buf, count, t, st);
  wrote(find_fb(fh));
  return rc;
}
int MPI_File_iwrite_shared_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype t, MPI_Request *req) {
  int rc = PMPI_File_iwrite_shared_c(fh, buf, count, t, req);
  wrote(find_fb(fh));
  return rc;
}
int MPI_File_write_ordered_begin_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype t) {
  int rc = PMPI_File_write_ordered_begin_c(fh, buf, count, t);
  wrote(find_fb(fh));
  return rc;
}
#endif
