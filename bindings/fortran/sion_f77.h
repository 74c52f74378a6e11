! sion_f77.h - SIONlib 1.7's Fortran 77 include file (sheaf):
! the version and the parameters of sion_const.h for programs that
! INCLUDE 'sion_f77.h' and call the LFSION_* routines
! (libsheaf_f77[_mpi|_omp|_ompi], doc/fortran.md). Fixed-form and
! free-form sources can include it: one statement a line, from
! column 7, shorter than 72 columns. SION_CURRENT_POS is INTEGER*8
! (the type of LFSION_SEEK's position; SIONlib declares INTEGER).
      INTEGER SION_MAIN_VERSION, SION_SUB_VERSION
      INTEGER SION_VERSION_PATCHLEVEL, SION_FILEFORMAT_VERSION
      PARAMETER (SION_MAIN_VERSION = 1, SION_SUB_VERSION = 7)
      PARAMETER (SION_VERSION_PATCHLEVEL = 6)
      PARAMETER (SION_FILEFORMAT_VERSION = 5)
      INTEGER SION_CURRENT_RANK, SION_CURRENT_BLK, SION_CURRENT_CHUNK
      INTEGER SION_ABSOLUTE_POS, SION_END_POS
      INTEGER SION_SUCCESS, SION_NOT_SUCCESS, SION_ID_UNDEF
      INTEGER*8 SION_CURRENT_POS
      PARAMETER (SION_CURRENT_RANK = -101, SION_CURRENT_BLK = -102)
      PARAMETER (SION_CURRENT_CHUNK = -102, SION_CURRENT_POS = -103)
      PARAMETER (SION_ABSOLUTE_POS = -104, SION_END_POS = -105)
      PARAMETER (SION_SUCCESS = 1, SION_NOT_SUCCESS = 0)
      PARAMETER (SION_ID_UNDEF = -1)
