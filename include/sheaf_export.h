/* sheaf_export.h - SHEAF_API, the marker on every declaration of sheaf's
 * public API (the SIONlib calls and sheaf's sheaf_* extensions).
 *
 * sheaf's libraries are compiled with hidden visibility (-fvisibility=hidden):
 * only what is marked SHEAF_API is exported from libsheaf.so, libsheaf_mpi.so,
 * libsheaf_omp.so, libsheaf_ompi.so, libsheaf_fgfs.so and libsheaf_fgfs_mpi.so;
 * the internal functions (core_*, par_*, fgfs_*, ...) are not, so no program can come to depend on them. The test
 * `exports` (tests/install/check_exports.py) reads the SHEAF_API declarations
 * of the headers in include/ and fails when a library exports anything else.
 *
 * SHEAF_BUILDING_LIBRARY is defined only while sheaf's libraries are compiled
 * (the same objects go into the shared and the static libraries: in
 * libsheaf.a the API has default visibility, the internals stay hidden, so a
 * shared library that links libsheaf.a in re-exports at most the API). For
 * programs using sheaf, SHEAF_API expands to nothing. */
#ifndef SHEAF_EXPORT_H
#define SHEAF_EXPORT_H

#if defined(SHEAF_BUILDING_LIBRARY) && (defined(__GNUC__) || defined(__clang__))
#define SHEAF_API __attribute__((visibility("default")))
#else
#define SHEAF_API
#endif

#endif
