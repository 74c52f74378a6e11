! sion_f77_omp - SIONlib 1.7's Fortran 77 OpenMP interface: every thread of
! a parallel region calls LFSION_PAROPEN_OMP; forwards to module
! sion_f90_omp. libsheaf_f77_omp.

subroutine lfsion_paropen_omp(fname, file_mode, chunksize, fsblksize, globalrank, newfname, sid)
  use sion_f90_omp, only: fsion_paropen_omp
  implicit none
  character(len=*), intent(in) :: fname, file_mode
  integer(8), intent(inout) :: chunksize
  integer(4), intent(inout) :: fsblksize
  integer, intent(inout) :: globalrank
  character(len=*), intent(out) :: newfname
  integer, intent(out) :: sid
  call fsion_paropen_omp(fname, file_mode, chunksize, fsblksize, globalrank, newfname, sid)
end subroutine lfsion_paropen_omp

subroutine lfsion_parclose_omp(sid, ierr)
  use sion_f90_omp, only: fsion_parclose_omp
  implicit none
  integer, intent(in) :: sid
  integer, intent(out) :: ierr
  call fsion_parclose_omp(sid, ierr)
end subroutine lfsion_parclose_omp
