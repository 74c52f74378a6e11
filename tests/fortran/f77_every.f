C     f77_every - every LFSION_* routine of libsheaf_f77 (SIONlib's
C     Fortran 77 interface, serial and common calls) called once from a
C     fixed-form program without interfaces, as SIONlib's F77 programs
C     call them, each with a known answer (check_every_f77.sh makes sure
C     no exported name is missing here). Compiled with
C     -fallow-argument-mismatch: the untyped calls take any buffer.
C     Usage: f77_every VECTORS  (writes ev.sion here; reads SIONlib's
C     vector multi6.sion from VECTORS)
C     Prints "f77_every: OK (N checks)", or the failed checks and exit 1.
      PROGRAM F77EVERY
      IMPLICIT NONE
      INCLUDE 'sion_f77.h'
      INTEGER NBAD, NCHK
      COMMON /CHK/ NBAD, NCHK
      INTEGER SID, IERR, NTASKS, NFILES, I, N, E, E2
      INTEGER*4 FSBLK
      INTEGER*8 CS(2), RC, P0, CHUNK, GSKIP, VARHDR
      INTEGER*8 PLS, PGR, PBC, PBS, PPOS, PBLK
      INTEGER*8 LFSION_GET_POSITION, LFSION_BYTES_AVAIL_IN_BLOCK
      INTEGER GR(2), IV(4), IV2(4), MAXB, MSIZE, NUMF, MAP(12)
      REAL RV, RV2
      DOUBLE PRECISION DV(3), DV2(3)
      COMPLEX ZV, ZV2
      LOGICAL LV, LV2
      CHARACTER*8 CV, CV2
      CHARACTER*512 VDIR
      INTEGER*4 SW(2), SW2(2)
      NBAD = 0
      NCHK = 0
C     ---- write: 2 tasks of ev.sion, 96-byte chunks ---------------------
      CS(1) = 96
      CS(2) = 96
      GR(1) = 100
      GR(2) = 101
      FSBLK = 96
      DO 10 I = 1, 4
        IV(I) = 11 * I
   10 CONTINUE
      DV(1) = 1.5D0
      DV(2) = -2.25D0
      DV(3) = 1.0D300
      RV = 3.5
      ZV = (1.0, -2.0)
      LV = .TRUE.
      CV = 'f77 text'
      CALL LFSION_OPEN('ev.sion', 'wb', 2, 1, CS, FSBLK, GR, SID)
      CALL CHECK(SID .GE. 0, 'LFSION_OPEN wb')
      CALL LFSION_SEEK(SID, 0, SION_CURRENT_BLK, SION_CURRENT_POS, IERR)
      CALL CHECK(IERR .EQ. SION_SUCCESS, 'LFSION_SEEK task 0')
      P0 = LFSION_GET_POSITION(SID)
      CALL LFSION_WRITE(IV, 4_8, 4_8, SID, RC)
      CALL CHECK(RC .EQ. 4, 'LFSION_WRITE 4 integers')
      CALL LFSION_FWRITE(DV, 8_8, 3_8, SID, RC)
      CALL CHECK(RC .EQ. 3, 'LFSION_FWRITE 3 doubles')
      CALL LFSION_WRITE_INTEGER(IV, 4_8, 2_8, SID, RC)
      CALL CHECK(RC .EQ. 2, 'LFSION_WRITE_INTEGER')
      CALL LFSION_FWRITE_INTEGER(IV(3), 4_8, 2_8, SID, RC)
      CALL CHECK(RC .EQ. 2, 'LFSION_FWRITE_INTEGER')
      CALL LFSION_WRITE_REAL(RV, 4_8, 1_8, SID, RC)
      CALL LFSION_FWRITE_REAL(RV, 4_8, 1_8, SID, RC)
      CALL CHECK(RC .EQ. 1, 'LFSION_(F)WRITE_REAL')
      CALL LFSION_WRITE_DOUBLE(DV(1), 8_8, 1_8, SID, RC)
      CALL LFSION_FWRITE_DOUBLE(DV(2), 8_8, 1_8, SID, RC)
      CALL CHECK(RC .EQ. 1, 'LFSION_(F)WRITE_DOUBLE')
      CALL CHECK(LFSION_GET_POSITION(SID) - P0 .EQ. 80,
     &           'LFSION_GET_POSITION: 80 bytes on')
      CALL CHECK(LFSION_BYTES_AVAIL_IN_BLOCK(SID) .EQ. 16,
     &           'LFSION_BYTES_AVAIL_IN_BLOCK: 96 - 80')
      CALL LFSION_ENSURE_FREE_SPACE(SID, 8_8, IERR)
      CALL CHECK(IERR .EQ. SION_SUCCESS, 'LFSION_ENSURE_FREE_SPACE')
      CALL LFSION_FLUSH(SID, IERR)
      CALL CHECK(IERR .EQ. SION_SUCCESS, 'LFSION_FLUSH')
      CALL LFSION_WRITE(IV, -1_8, 1_8, SID, RC)
      CALL CHECK(RC .EQ. 0, 'LFSION_WRITE negative size: 0 items')
      CALL LFSION_SEEK(SID, 1, SION_CURRENT_BLK, SION_CURRENT_POS, IERR)
      CALL LFSION_WRITE_COMPLEX(ZV, 8_8, 1_8, SID, RC)
      CALL LFSION_FWRITE_COMPLEX(ZV, 8_8, 1_8, SID, RC)
      CALL CHECK(RC .EQ. 1, 'LFSION_(F)WRITE_COMPLEX')
      CALL LFSION_WRITE_LOGICAL(LV, 4_8, 1_8, SID, RC)
      CALL LFSION_FWRITE_LOGICAL(LV, 4_8, 1_8, SID, RC)
      CALL CHECK(RC .EQ. 1, 'LFSION_(F)WRITE_LOGICAL')
      CALL LFSION_WRITE_CHARACTER(CV, 1_8, 8_8, SID, RC)
      CALL LFSION_FWRITE_CHARACTER(CV, 1_8, 8_8, SID, RC)
      CALL CHECK(RC .EQ. 8, 'LFSION_(F)WRITE_CHARACTER')
      CALL LFSION_CLOSE(SID, IERR)
      CALL CHECK(IERR .EQ. SION_SUCCESS, 'LFSION_CLOSE (write)')
C     ---- read back -----------------------------------------------------
      NTASKS = 0
      NFILES = 0
      FSBLK = 0
      CALL LFSION_OPEN('ev.sion', 'rb', NTASKS, NFILES, CS, FSBLK, GR,
     &                 SID)
      CALL CHECK(SID .GE. 0 .AND. NTASKS .EQ. 2 .AND. NFILES .EQ. 1
     &           .AND. FSBLK .EQ. 96, 'LFSION_OPEN rb')
      CS(1) = 0
      CS(2) = 0
      CALL LFSION_GET_CHUNKSIZES(SID, CS, IERR)
      CALL CHECK(IERR .EQ. SION_SUCCESS .AND. CS(1) .EQ. 96
     &           .AND. CS(2) .EQ. 96, 'LFSION_GET_CHUNKSIZES')
      GR(1) = 0
      GR(2) = 0
      CALL LFSION_GET_GLOBALRANKS(SID, GR, IERR)
      CALL CHECK(GR(1) .EQ. 100 .AND. GR(2) .EQ. 101,
     &           'LFSION_GET_GLOBALRANKS')
      CALL LFSION_GET_LOCATIONS(SID, N, MAXB, GSKIP, VARHDR, PLS, PGR,
     &                          PBC, PBS, IERR)
      CALL CHECK(IERR .EQ. SION_SUCCESS .AND. N .EQ. 2 .AND. MAXB .EQ. 1
     &           .AND. PLS .NE. 0, 'LFSION_GET_LOCATIONS')
      CALL LFSION_GET_CURRENT_LOCATIONS(SID, N, PPOS, PBLK, IERR)
      CALL CHECK(IERR .EQ. SION_SUCCESS .AND. N .EQ. 2 .AND.
     &           PPOS .NE. 0, 'LFSION_GET_CURRENT_LOCATIONS')
      CALL LFSION_GET_MAPPING_SPEC(SID, MSIZE, NUMF, IERR)
      CALL CHECK(IERR .EQ. SION_SUCCESS .AND. MSIZE .LE. 0 .AND.
     &           NUMF .EQ. 1, 'LFSION_GET_MAPPING_SPEC: one file')
      MAP(1) = -7
      CALL LFSION_GET_MAPPING(SID, MAP, IERR)
      CALL CHECK(IERR .NE. SION_SUCCESS .AND. MAP(1) .EQ. -7,
     &           'LFSION_GET_MAPPING of one file: none')
      CALL LFSION_GET_FILENO(SID, N)
      CALL CHECK(N .EQ. 1, 'LFSION_GET_FILENO of a serial file: 1')
      CALL LFSION_GET_ENDIANNESS(E)
      CALL LFSION_GET_ENDIANESS(E2)
      CALL CHECK((E .EQ. 0 .OR. E .EQ. 1) .AND. E2 .EQ. E,
     &           'LFSION_GET_ENDIANNESS / _ENDIANESS')
      CALL LFSION_GET_FILE_ENDIANNESS(SID, N)
      CALL CHECK(N .EQ. E, 'LFSION_GET_FILE_ENDIANNESS')
      CALL LFSION_GET_FILE_ENDIANESS(SID, N)
      CALL CHECK(N .EQ. E, 'LFSION_GET_FILE_ENDIANESS')
      CALL LFSION_ENDIANNESS_SWAP_NEEDED(SID, N)
      CALL CHECK(N .EQ. 0, 'LFSION_ENDIANNESS_SWAP_NEEDED')
      CALL LFSION_SEEK(SID, 0, SION_CURRENT_BLK, SION_CURRENT_POS, IERR)
      CALL LFSION_READ(IV2, 4_8, 4_8, SID, RC)
      CALL CHECK(RC .EQ. 4 .AND. IV2(1) .EQ. 11 .AND. IV2(4) .EQ. 44,
     &           'LFSION_READ 4 integers')
      CALL LFSION_FREAD(DV2, 8_8, 3_8, SID, RC)
      CALL CHECK(RC .EQ. 3 .AND. DV2(1) .EQ. 1.5D0 .AND.
     &           DV2(3) .EQ. 1.0D300, 'LFSION_FREAD 3 doubles')
      CALL LFSION_READ_INTEGER(IV2, 4_8, 2_8, SID, RC)
      CALL CHECK(RC .EQ. 2 .AND. IV2(2) .EQ. 22, 'LFSION_READ_INTEGER')
      CALL LFSION_FREAD_INTEGER(IV2, 4_8, 2_8, SID, RC)
      CALL CHECK(RC .EQ. 2 .AND. IV2(2) .EQ. 44, 'LFSION_FREAD_INTEGER')
      CALL LFSION_READ_REAL(RV2, 4_8, 1_8, SID, RC)
      CALL CHECK(RV2 .EQ. 3.5, 'LFSION_READ_REAL')
      RV2 = 0
      CALL LFSION_FREAD_REAL(RV2, 4_8, 1_8, SID, RC)
      CALL CHECK(RV2 .EQ. 3.5, 'LFSION_FREAD_REAL')
      CALL LFSION_READ_DOUBLE(DV2, 8_8, 1_8, SID, RC)
      CALL LFSION_FREAD_DOUBLE(DV2(2), 8_8, 1_8, SID, RC)
      CALL CHECK(DV2(1) .EQ. 1.5D0 .AND. DV2(2) .EQ. -2.25D0,
     &           'LFSION_(F)READ_DOUBLE')
      CALL LFSION_FEOF(SID, N)
      CALL CHECK(N .EQ. 1, 'LFSION_FEOF at the end of task 0')
      CALL LFSION_SEEK(SID, 1, SION_CURRENT_BLK, SION_CURRENT_POS, IERR)
      CALL LFSION_FEOF(SID, N)
      CALL CHECK(N .EQ. 0, 'LFSION_FEOF at the start of task 1')
      CALL LFSION_READ_COMPLEX(ZV2, 8_8, 1_8, SID, RC)
      CALL CHECK(ZV2 .EQ. (1.0, -2.0), 'LFSION_READ_COMPLEX')
      ZV2 = 0
      CALL LFSION_FREAD_COMPLEX(ZV2, 8_8, 1_8, SID, RC)
      CALL CHECK(ZV2 .EQ. (1.0, -2.0), 'LFSION_FREAD_COMPLEX')
      CALL LFSION_READ_LOGICAL(LV2, 4_8, 1_8, SID, RC)
      CALL CHECK(LV2, 'LFSION_READ_LOGICAL')
      LV2 = .FALSE.
      CALL LFSION_FREAD_LOGICAL(LV2, 4_8, 1_8, SID, RC)
      CALL CHECK(LV2, 'LFSION_FREAD_LOGICAL')
      CALL LFSION_READ_CHARACTER(CV2, 1_8, 8_8, SID, RC)
      CALL CHECK(CV2 .EQ. 'f77 text', 'LFSION_READ_CHARACTER')
      CV2 = ' '
      CALL LFSION_FREAD_CHARACTER(CV2, 1_8, 8_8, SID, RC)
      CALL CHECK(RC .EQ. 8 .AND. CV2 .EQ. 'f77 text',
     &           'LFSION_FREAD_CHARACTER')
      CALL LFSION_CLOSE(SID, IERR)
      CALL CHECK(IERR .EQ. SION_SUCCESS, 'LFSION_CLOSE (read)')
C     ---- one task, and byte swapping ------------------------------------
      CHUNK = 0
      FSBLK = 0
      CALL LFSION_OPEN_RANK('ev.sion', 'rb', CHUNK, FSBLK, 0, SID)
      CALL CHECK(SID .GE. 0, 'LFSION_OPEN_RANK')
      CALL LFSION_READ(IV2, 4_8, 1_8, SID, RC)
      CALL CHECK(RC .EQ. 1 .AND. IV2(1) .EQ. 11, 'read of task 0 alone')
      CALL LFSION_CLOSE(SID, IERR)
      SW(1) = 16909060
      SW(2) = 1
      CALL LFSION_SWAP(SW2, SW, 4, 2, 1, N)
      CALL CHECK(N .EQ. 1 .AND. SW2(1) .EQ. 67305985 .AND.
     &           SW2(2) .EQ. 16777216, 'LFSION_SWAP 2 x 4 bytes')
      CALL LFSION_SWAP(SW2, SW, -4, 2, 1, N)
      CALL CHECK(N .EQ. 0, 'LFSION_SWAP negative size refused')
C     ---- a multi-file set (SIONlib's vector multi6.sion): the mapping --
      CALL GET_COMMAND_ARGUMENT(1, VDIR)
      NTASKS = 0
      NFILES = 0
      CALL LFSION_OPEN(TRIM(VDIR) // '/multi6.sion', 'rb', NTASKS,
     &                 NFILES, CS, FSBLK, GR, SID)
      CALL CHECK(SID .GE. 0, 'LFSION_OPEN rb of multi6.sion')
      CALL LFSION_GET_MAPPING_SPEC(SID, MSIZE, NUMF, IERR)
      CALL CHECK(MSIZE .EQ. 6 .AND. NUMF .EQ. 3,
     &           'LFSION_GET_MAPPING_SPEC of multi6: 6 tasks, 3 files')
      CALL LFSION_GET_MAPPING(SID, MAP, IERR)
      CALL CHECK(IERR .EQ. SION_SUCCESS .AND. MAP(1) .EQ. 0 .AND.
     &           MAP(2) .EQ. 0 .AND. MAP(11) .EQ. 2 .AND.
     &           MAP(12) .EQ. 1,
     &           'LFSION_GET_MAPPING of multi6: (t/2, mod(t,2))')
      CALL LFSION_CLOSE(SID, IERR)
      CALL LFSION_OPEN('no/such/dir/x.sion', 'rb', NTASKS, NFILES, CS,
     &                 FSBLK, GR, SID)
      CALL CHECK(SID .LT. 0, 'LFSION_OPEN of a missing file fails')
      IF (NBAD .NE. 0) THEN
        WRITE (6, '(A,I4,A)') 'f77_every:', NBAD, ' check(s) FAILED'
        STOP 1
      END IF
      WRITE (6, '(A,I3,A)') 'f77_every: OK (', NCHK, ' checks)'
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
