! sion_f77_ompi - SIONlib 1.7's Fortran 77 hybrid (MPI + OpenMP) interface:
! LFSION_PAROPEN_OMPI and LFSION_PARCLOSE_OMPI (communicators as INTEGER
! handles, as mpif.h gives them), forwarding to module sion_f90_ompi.
! libsheaf_f77_ompi.

subroutine lfsion_paropen_ompi(fname, file_mode, nfiles, gcomm, lcomm, chunksize, fsblksize, &
                              globalrank, newfname, sid)
  use sion_f90_ompi, only: fsion_paropen_ompi
  implicit none
  character(len=*), intent(in) :: fname, file_mode
  integer :: nfiles
  integer, intent(in) :: gcomm, lcomm
  integer(8), intent(inout) :: chunksize
  integer(4), intent(inout) :: fsblksize
  integer :: globalrank
  character(len=*), intent(out) :: newfname
  integer, intent(out) :: sid
  call fsion_paropen_ompi(fname, file_mode, nfiles, gcomm, lcomm, chunksize, fsblksize, globalrank, &
                         newfname, sid)
end subroutine lfsion_paropen_ompi

subroutine lfsion_parclose_ompi(sid, ierr)
  use sion_f90_ompi, only: fsion_parclose_ompi
  implicit none
  integer, intent(in) :: sid
  integer, intent(out) :: ierr
  call fsion_parclose_ompi(sid, ierr)
end subroutine lfsion_parclose_ompi
