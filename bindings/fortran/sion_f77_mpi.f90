! sion_f77_mpi - SIONlib 1.7's Fortran 77 MPI interface: LFSION_PAROPEN_MPI
! and LFSION_PARCLOSE_MPI (communicators as INTEGER handles, as mpif.h
! gives them), forwarding to module sion_f90_mpi. LFSION_COLL_FWRITE_MPI,
! _FREAD_MPI and their typed names are in f77_data.c. libsheaf_f77_mpi.

subroutine lfsion_paropen_mpi(fname, file_mode, nfiles, gcomm, lcomm, chunksize, fsblksize, &
                              globalrank, newfname, sid)
  use sion_f90_mpi, only: fsion_paropen_mpi
  implicit none
  character(len=*), intent(in) :: fname, file_mode
  integer :: nfiles
  integer, intent(in) :: gcomm, lcomm
  integer(8), intent(inout) :: chunksize
  integer(4), intent(inout) :: fsblksize
  integer :: globalrank
  character(len=*), intent(out) :: newfname
  integer, intent(out) :: sid
  call fsion_paropen_mpi(fname, file_mode, nfiles, gcomm, lcomm, chunksize, fsblksize, globalrank, &
                         newfname, sid)
end subroutine lfsion_paropen_mpi

subroutine lfsion_parclose_mpi(sid, ierr)
  use sion_f90_mpi, only: fsion_parclose_mpi
  implicit none
  integer, intent(in) :: sid
  integer, intent(out) :: ierr
  call fsion_parclose_mpi(sid, ierr)
end subroutine lfsion_parclose_mpi
