C     f77_mpi - SIONlib's Fortran 77 MPI interface (libsheaf_f77_mpi) from
C     a fixed-form program with mpif.h and no interfaces: every rank
C     writes its data with LFSION_WRITE and each collective call
C     (LFSION_COLL_FWRITE_MPI and its typed names) into one container,
C     reads it back with LFSION_READ and the collective reads, and
C     checks every value. Compiled with -fallow-argument-mismatch.
C     (A chunk reads back rounded up to the file system block size.)
C     Usage: mpiexec -n N f77_mpi   (writes f77.sion here)
C     Prints "f77_mpi: OK (N checks)" on rank 0, else the failed checks.
      PROGRAM F77MPI
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      INCLUDE 'sion_f77.h'
      INTEGER NBAD, NCHK
      COMMON /CHK/ NBAD, NCHK
      INTEGER SID, IERR, RANK, NFILES, GRANK, LCOMM, I, ALLBAD
      INTEGER*4 FSBLK
      INTEGER*8 CHUNK, RC
      INTEGER IV(3), IV2(3)
      REAL RV, RV2
      DOUBLE PRECISION DV, DV2
      COMPLEX ZV, ZV2
      LOGICAL LV, LV2
      CHARACTER*4 CV, CV2
      CHARACTER*255 NEWFN
      NBAD = 0
      NCHK = 0
      CALL MPI_INIT(IERR)
      CALL MPI_COMM_RANK(MPI_COMM_WORLD, RANK, IERR)
      DO 10 I = 1, 3
        IV(I) = 1000 * RANK + I
   10 CONTINUE
      RV = 0.5 * RANK
      DV = -1.25D0 * RANK
      ZV = CMPLX(RANK, -RANK)
      LV = MOD(RANK, 2) .EQ. 0
      WRITE (CV, '(A,I3.3)') 'r', RANK
C     ---- write ---------------------------------------------------------
      NFILES = 1
      LCOMM = MPI_COMM_WORLD
      CHUNK = 128
      FSBLK = -1
      GRANK = RANK
      CALL LFSION_PAROPEN_MPI('f77.sion', 'bw', NFILES, MPI_COMM_WORLD,
     &                        LCOMM, CHUNK, FSBLK, GRANK, NEWFN, SID)
      CALL CHECK(SID .GE. 0, 'LFSION_PAROPEN_MPI bw')
      CALL LFSION_WRITE(IV, 4_8, 3_8, SID, RC)
      CALL CHECK(RC .EQ. 3, 'LFSION_WRITE 3 integers')
      CALL LFSION_COLL_FWRITE_MPI(IV, 4_8, 3_8, SID, RC)
      CALL CHECK(RC .EQ. 3, 'LFSION_COLL_FWRITE_MPI')
      CALL LFSION_COLL_FWRITE_MPI_INTEGER(IV(2), 4_8, 1_8, SID, RC)
      CALL LFSION_COLL_FWRITE_MPI_REAL(RV, 4_8, 1_8, SID, RC)
      CALL LFSION_COLL_FWRITE_MPI_DOUBLE(DV, 8_8, 1_8, SID, RC)
      CALL LFSION_COLL_FWRITE_MPI_COMPLEX(ZV, 8_8, 1_8, SID, RC)
      CALL LFSION_COLL_FWRITE_MPI_LOGICAL(LV, 4_8, 1_8, SID, RC)
      CALL LFSION_COLL_FWRITE_MPI_CHARACTER(CV, 1_8, 4_8, SID, RC)
      CALL CHECK(RC .EQ. 4, 'LFSION_COLL_FWRITE_MPI_* (6 types)')
      CALL LFSION_COLL_FWRITE_MPI(IV, -4_8, 1_8, SID, RC)
      CALL CHECK(RC .EQ. 0, 'LFSION_COLL_FWRITE_MPI negative size: 0')
      CALL LFSION_PARCLOSE_MPI(SID, IERR)
      CALL CHECK(IERR .EQ. SION_SUCCESS, 'LFSION_PARCLOSE_MPI (write)')
C     ---- read back -----------------------------------------------------
      NFILES = 0
      CHUNK = 0
      FSBLK = 0
      CALL LFSION_PAROPEN_MPI('f77.sion', 'br', NFILES, MPI_COMM_WORLD,
     &                        LCOMM, CHUNK, FSBLK, GRANK, NEWFN, SID)
      CALL CHECK(SID .GE. 0 .AND. NFILES .EQ. 1 .AND. CHUNK .GE. 128,
     &           'LFSION_PAROPEN_MPI br')
      CALL LFSION_READ(IV2, 4_8, 3_8, SID, RC)
      CALL CHECK(RC .EQ. 3 .AND. IV2(3) .EQ. IV(3), 'LFSION_READ')
      IV2(1) = 0
      CALL LFSION_COLL_FREAD_MPI(IV2, 4_8, 3_8, SID, RC)
      CALL CHECK(RC .EQ. 3 .AND. IV2(1) .EQ. IV(1),
     &           'LFSION_COLL_FREAD_MPI')
      CALL LFSION_COLL_FREAD_MPI_INTEGER(IV2, 4_8, 1_8, SID, RC)
      CALL CHECK(IV2(1) .EQ. IV(2), 'LFSION_COLL_FREAD_MPI_INTEGER')
      CALL LFSION_COLL_FREAD_MPI_REAL(RV2, 4_8, 1_8, SID, RC)
      CALL CHECK(RV2 .EQ. RV, 'LFSION_COLL_FREAD_MPI_REAL')
      CALL LFSION_COLL_FREAD_MPI_DOUBLE(DV2, 8_8, 1_8, SID, RC)
      CALL CHECK(DV2 .EQ. DV, 'LFSION_COLL_FREAD_MPI_DOUBLE')
      CALL LFSION_COLL_FREAD_MPI_COMPLEX(ZV2, 8_8, 1_8, SID, RC)
      CALL CHECK(ZV2 .EQ. ZV, 'LFSION_COLL_FREAD_MPI_COMPLEX')
      CALL LFSION_COLL_FREAD_MPI_LOGICAL(LV2, 4_8, 1_8, SID, RC)
      CALL CHECK(LV2 .EQV. LV, 'LFSION_COLL_FREAD_MPI_LOGICAL')
      CALL LFSION_COLL_FREAD_MPI_CHARACTER(CV2, 1_8, 4_8, SID, RC)
      CALL CHECK(RC .EQ. 4 .AND. CV2 .EQ. CV,
     &           'LFSION_COLL_FREAD_MPI_CHARACTER')
      CALL LFSION_PARCLOSE_MPI(SID, IERR)
      CALL CHECK(IERR .EQ. SION_SUCCESS, 'LFSION_PARCLOSE_MPI (read)')
      CALL MPI_ALLREDUCE(NBAD, ALLBAD, 1, MPI_INTEGER, MPI_SUM,
     &                   MPI_COMM_WORLD, IERR)
      IF (RANK .EQ. 0 .AND. ALLBAD .EQ. 0) THEN
        WRITE (6, '(A,I3,A)') 'f77_mpi: OK (', NCHK, ' checks a rank)'
      END IF
      CALL MPI_FINALIZE(IERR)
      IF (ALLBAD .NE. 0) STOP 1
      END

      SUBROUTINE CHECK(OK, WHAT)
      LOGICAL OK
      CHARACTER*(*) WHAT
      INTEGER NBAD, NCHK
      COMMON /CHK/ NBAD, NCHK
      NCHK = NCHK + 1
      IF (.NOT. OK) THEN
        NBAD = NBAD + 1
        WRITE (6, '(2A)') 'FAILED: ', WHAT
      END IF
      END
