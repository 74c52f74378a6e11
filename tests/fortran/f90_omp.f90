! f90_omp - sion_f90_omp (modelled on SIONlib's test_Fomp___1): every
! thread of a parallel region opens FILE as one task, writes its own data,
! closes; then every thread reads its task back and compares. The thread
! count comes from OMP_NUM_THREADS. Usage: f90_omp FILE
program f90_omp
  use omp_lib
  use sion_f90_omp
  implicit none
  character(len=256) :: fname
  character(len=1000) :: newfname
  integer*8 :: chunksize, rc
  integer*4 :: fsblksize
  integer :: globalrank, sid, ierr, nbad, k, nthreads
  double precision :: buf(100), back(100)

  call get_command_argument(1, fname)
  nbad = 0
  nthreads = 0
  !$omp parallel default(none) private(globalrank, newfname, sid, ierr, chunksize, fsblksize, rc, buf, back, k) &
  !$omp   shared(fname, nbad, nthreads)
  chunksize = 800
  fsblksize = -1
  call fsion_paropen_omp(trim(fname), 'bw', chunksize, fsblksize, globalrank, newfname, sid)
  if (sid < 0 .or. globalrank /= omp_get_thread_num()) call bad()
  buf = [(globalrank * 1.0d3 + k, k = 1, 100)]
  call fsion_write(buf, 8_8, 100_8, sid, rc)
  if (rc /= 100) call bad()
  call fsion_parclose_omp(sid, ierr)
  if (ierr /= sion_success) call bad()
  chunksize = -1
  call fsion_paropen_omp(trim(fname), 'br', chunksize, fsblksize, globalrank, newfname, sid)
  if (sid < 0) call bad()
  back = 0
  call fsion_read(back, 8_8, 100_8, sid, rc)
  if (rc /= 100 .or. any(back /= buf)) call bad()
  if (index(newfname, trim(fname)) == 0) call bad()
  call fsion_parclose_omp(sid, ierr)
  if (ierr /= sion_success) call bad()
  !$omp master
  nthreads = omp_get_num_threads()
  !$omp end master
  !$omp end parallel
  if (nbad == 0) then
    write(*, '(A,I0,A)') 'f90_omp: OK (', nthreads, ' threads)'
  else
    write(*, '(A,I0,A)') 'f90_omp: FAILED (', nbad, ' checks)'
    stop 1
  end if

contains

  subroutine bad()
    !$omp atomic
    nbad = nbad + 1
  end subroutine bad

end program f90_omp
