! f90_ompi - sion_f90_ompi (modelled on SIONlib's test_ompiF__1): every
! thread of every MPI rank is one task (rank * threads + thread); each writes
! its data, closes, reads it back and compares. Usage: f90_ompi FILE
program f90_ompi
  use mpi
  use omp_lib
  use sion_f90_ompi
  implicit none
  character(len=256) :: fname
  character(len=255) :: newfname
  integer*8 :: chunksize, rc
  integer :: fsblksize
  integer :: gcomm, lcomm, globalrank, sid, ierr, nbad, allbad, rank, nranks, k, nfiles, provided
  integer :: task
  real*8 :: buf(200), back(200)

  call MPI_Init_thread(MPI_THREAD_FUNNELED, provided, ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  call get_command_argument(1, fname)
  nbad = 0
  gcomm = MPI_COMM_WORLD
  lcomm = MPI_COMM_WORLD
  nfiles = 1
  !$omp parallel default(none) private(globalrank, newfname, sid, ierr, chunksize, fsblksize, rc, buf, back, k, task) &
  !$omp   shared(fname, nbad, rank, gcomm, lcomm, nfiles)
  chunksize = 1600
  fsblksize = -1
  globalrank = rank
  call fsion_paropen_ompi(trim(fname), 'bw', nfiles, gcomm, lcomm, chunksize, fsblksize, globalrank, &
                          newfname, sid)
  if (sid < 0) call bad()
  task = rank * omp_get_num_threads() + omp_get_thread_num()
  buf = [(task * 1.0d4 + k, k = 1, 200)]
  call fsion_write(buf(1), 8_8, 200_8, sid, rc)
  if (rc /= 200) call bad()
  call fsion_parclose_ompi(sid, ierr)
  if (ierr /= sion_success) call bad()
  chunksize = -1
  call fsion_paropen_ompi(trim(fname), 'br', nfiles, gcomm, lcomm, chunksize, fsblksize, globalrank, &
                          newfname, sid)
  if (sid < 0) call bad()
  back = 0
  call fsion_read(back, 8_8, 200_8, sid, rc)
  if (rc /= 200 .or. any(back /= buf)) call bad()
  call fsion_parclose_ompi(sid, ierr)
  if (ierr /= sion_success) call bad()
  !$omp end parallel
  call MPI_Allreduce(nbad, allbad, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    if (allbad == 0) then
      write(*, '(A,I0,A)') 'f90_ompi: OK (', nranks, ' ranks)'
    else
      write(*, '(A,I0,A)') 'f90_ompi: FAILED (', allbad, ' checks)'
    end if
  end if
  call MPI_Finalize(ierr)
  if (allbad /= 0) stop 1

contains

  subroutine bad()
    !$omp atomic
    nbad = nbad + 1
  end subroutine bad

end program f90_ompi
