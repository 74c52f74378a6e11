! f90_mpi - a program written for SIONlib 1.7's Fortran 90 MPI interface
! (modelled on SIONlib's own test_Fmpi___1 and examples/simple/sionfortran:
! mpif.h, fsion_paropen_mpi with a literal nfiles, array elements as
! buffers). It uses nothing but SIONlib's routines, so it builds unchanged
! against SIONlib or sheaf:
!   mpif90 $(sionconfig --cflags --f90 --mpi) f90_mpi.f90 $(sionconfig --libs --f90 --mpi)
! Usage: f90_mpi FILE NFILES
! Every rank writes integer, integer*8, real, double precision, complex,
! logical and character data of ranks 0-3 (whole arrays, elements, a strided
! section) into FILE (NFILES physical files, a chunk smaller than the data:
! several blocks per task), reads it back and compares; then the same with
! collective calls into FILE.coll. Each rank also writes the bytes it stored
! into expect.<rank> and expect_coll.<rank> (stream files), which the test
! compares with `sioncat -t <rank>`. Prints "f90_mpi: OK" on rank 0.
program f90_mpi
  use sion_f90_mpi
  implicit none
  include 'mpif.h'

  character(len=256) :: fname, arg, newfname
  integer :: nfiles, nfr, ierr, rank, nranks, gcomm, lcomm, globalrank, sid, nbad, allbad
  integer*8 :: chunksize, rc
  integer :: fsblksize
  integer :: iv(10), iv2(10), i, j, eof
  integer*8 :: lv(3,2), lv2(3,2)
  real :: rv(2,2,2), rv2(2,2,2)
  double precision :: dv(50), dv2(25), ds, ds2
  complex :: cv(4), cv2(4)
  logical :: bv(5), bv2(5)
  character(len=6) :: img(3,4), img2(3,4)
  character(len=16) :: title, title2

  call MPI_INIT(ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nranks, ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call get_command_argument(1, fname)
  call get_command_argument(2, arg)
  read(arg, *) nfiles
  nbad = 0

  iv = [(rank * 100 + i, i = 1, 10)]
  lv = reshape([(int(rank, 8) * 2_8**40 + i, i = 1, 6)], [3, 2])
  rv = reshape([(real(rank) + 0.25 * i, i = 1, 8)], [2, 2, 2])
  dv = [(dble(rank) * 1000.0d0 + dble(i) / 3.0d0, i = 1, 50)]
  ds = -1.5d0 * (rank + 1)
  cv = [(cmplx(rank, -i), i = 1, 4)]
  bv = [(mod(i + rank, 2) == 0, i = 1, 5)]
  do j = 1, 4
    do i = 1, 3
      write(img(i, j), '(I3.3,I3.3)') rank, i + 3 * (j - 1)
    end do
  end do
  write(title, '(A,I4.4)') 'sheaf rank', rank

  ! ---- write: one record of each kind ---------------------------------------
  chunksize = 256 + 32 * rank
  fsblksize = -1
  gcomm = MPI_COMM_WORLD
  lcomm = MPI_COMM_WORLD
  globalrank = rank
  call fsion_paropen_mpi(trim(fname), 'bw', nfiles, gcomm, lcomm, chunksize, fsblksize, &
                         globalrank, newfname, sid)
  if (sid < 0) call fail('paropen bw')
  open(unit=21, file=expect_name('expect.', rank), access='stream', form='unformatted', status='replace')
  call fsion_write(title, 16_8, 1_8, sid, rc);       call check_rc(1_8); write(21) title
  call fsion_write(iv, 4_8, 10_8, sid, rc);          call check_rc(10_8); write(21) iv
  call fsion_write(lv, 8_8, 6_8, sid, rc);           call check_rc(6_8); write(21) lv
  call fsion_write(rv, 4_8, 8_8, sid, rc);           call check_rc(8_8); write(21) rv
  call fsion_write(dv(1:50:2), 8_8, 25_8, sid, rc);  call check_rc(25_8); write(21) dv(1:50:2)
  call fsion_write(ds, 8_8, 1_8, sid, rc);           call check_rc(1_8); write(21) ds
  call fsion_write(cv, 8_8, 4_8, sid, rc);           call check_rc(4_8); write(21) cv
  call fsion_write(bv, 4_8, 5_8, sid, rc);           call check_rc(5_8); write(21) bv
  call fsion_write(img(1,1), 6_8, 12_8, sid, rc);    call check_rc(12_8); write(21) img
  close(21)
  call fsion_parclose_mpi(sid, ierr)
  if (ierr /= sion_success) call fail('parclose bw')

  ! ---- read back -------------------------------------------------------------
  nfr = -1
  chunksize = -1
  fsblksize = -1
  call fsion_paropen_mpi(trim(fname), 'br', nfr, gcomm, lcomm, chunksize, fsblksize, &
                         globalrank, newfname, sid)
  if (sid < 0) call fail('paropen br')
  if (nfr /= nfiles) call fail('nfiles read back')
  call fsion_read(title2, 16_8, 1_8, sid, rc);      call check_rc(1_8)
  call fsion_read(iv2, 4_8, 10_8, sid, rc);         call check_rc(10_8)
  call fsion_read(lv2, 8_8, 6_8, sid, rc);          call check_rc(6_8)
  call fsion_read(rv2, 4_8, 8_8, sid, rc);          call check_rc(8_8)
  call fsion_read(dv2(1), 8_8, 25_8, sid, rc);      call check_rc(25_8)
  call fsion_read(ds2, 8_8, 1_8, sid, rc);          call check_rc(1_8)
  call fsion_read(cv2, 8_8, 4_8, sid, rc);          call check_rc(4_8)
  call fsion_read(bv2, 4_8, 5_8, sid, rc);          call check_rc(5_8)
  call fsion_read(img2, 6_8, 12_8, sid, rc);        call check_rc(12_8)
  if (title2 /= title) call fail('character scalar')
  if (any(iv2 /= iv)) call fail('integer')
  if (any(lv2 /= lv)) call fail('integer*8')
  if (any(rv2 /= rv)) call fail('real')
  if (any(dv2 /= dv(1:50:2))) call fail('double precision section')
  if (ds2 /= ds) call fail('double precision scalar')
  if (any(cv2 /= cv)) call fail('complex')
  if (any(bv2 .neqv. bv)) call fail('logical')
  if (any(img2 /= img)) call fail('character array')
  call fsion_feof(sid, eof)
  if (eof /= 1) call fail('feof at the end')
  call fsion_parclose_mpi(sid, ierr)
  if (ierr /= sion_success) call fail('parclose br')

  ! ---- collective: a literal nfiles of 1, as SIONlib's examples pass it ---------
  chunksize = 1024
  fsblksize = -1
  call fsion_paropen_mpi(trim(fname)//'.coll', 'bw,collective', 1, gcomm, lcomm, chunksize, &
                         fsblksize, globalrank, newfname, sid)
  if (sid < 0) call fail('paropen coll bw')
  open(unit=22, file=expect_name('expect_coll.', rank), access='stream', form='unformatted', status='replace')
  call fsion_coll_fwrite_mpi(dv, 8_8, 50_8, sid, rc);  call check_rc(50_8); write(22) dv
  call fsion_coll_fwrite_mpi(iv, 4_8, 10_8, sid, rc);  call check_rc(10_8); write(22) iv
  close(22)
  call fsion_parclose_mpi(sid, ierr)
  if (ierr /= sion_success) call fail('parclose coll bw')
  chunksize = -1
  call fsion_paropen_mpi(trim(fname)//'.coll', 'br,collective', nfr, gcomm, lcomm, chunksize, &
                         fsblksize, globalrank, newfname, sid)
  if (sid < 0) call fail('paropen coll br')
  dv2 = 0
  call fsion_coll_fread_mpi(dv2, 8_8, 25_8, sid, rc);  call check_rc(25_8)
  if (any(dv2 /= dv(1:25))) call fail('collective read 1')
  call fsion_coll_fread_mpi(dv2, 8_8, 25_8, sid, rc);  call check_rc(25_8)
  if (any(dv2 /= dv(26:50))) call fail('collective read 2')
  call fsion_coll_fread_mpi(iv2, 4_8, 10_8, sid, rc);  call check_rc(10_8)
  if (any(iv2 /= iv)) call fail('collective integer')
  call fsion_parclose_mpi(sid, ierr)
  if (ierr /= sion_success) call fail('parclose coll br')

  call MPI_ALLREDUCE(nbad, allbad, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    if (allbad == 0) then
      write(*, '(A,I0,A,I0,A)') 'f90_mpi: OK (', nranks, ' ranks, ', nfiles, ' file(s))'
    else
      write(*, '(A,I0,A)') 'f90_mpi: FAILED (', allbad, ' checks)'
    end if
  end if
  call MPI_FINALIZE(ierr)
  if (allbad /= 0) stop 1

contains

  function expect_name(prefix, r) result(n)
    character(len=*), intent(in) :: prefix
    integer, intent(in) :: r
    character(len=64) :: n
    write(n, '(A,I0)') prefix, r
  end function expect_name

  subroutine check_rc(want)
    integer*8, intent(in) :: want
    if (rc /= want) then
      write(*, '(A,I0,A,I0,A,I0)') 'f90_mpi: rank ', rank, ': rc ', rc, ' expected ', want
      nbad = nbad + 1
    end if
  end subroutine check_rc

  subroutine fail(what)
    character(len=*), intent(in) :: what
    write(*, '(A,I0,A,A)') 'f90_mpi: rank ', rank, ': FAILED ', what
    nbad = nbad + 1
  end subroutine fail

end program f90_mpi
