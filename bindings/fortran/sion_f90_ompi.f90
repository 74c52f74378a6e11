! sion_f90_ompi - SIONlib 1.7's Fortran 90 hybrid (MPI + OpenMP) interface
! over sheaf (libsheaf_f90_ompi). Every thread of every rank calls
! fsion_paropen_ompi; task = rank * threads + thread. Communicators are
! Fortran integer handles. Everything of sion_f90 is available through this
! module as well.
module sion_f90_ompi
  use, intrinsic :: iso_c_binding, only: c_int32_t, c_int64_t
  use sheaf_f90_c, only: paropen_comm, c_paropen_ompi, c_parclose_ompi
  use sion_f90   ! re-exported
  implicit none
  public
  private :: c_int32_t, c_int64_t, paropen_comm, c_paropen_ompi, c_parclose_ompi


contains

  ! Arguments as fsion_paropen_mpi (nfiles and the communicators split at
  ! the granularity of MPI ranks); globalrank receives this thread's task.
  subroutine fsion_paropen_ompi(fname, file_mode, nfiles, fgcomm, flcomm, chunksize, fsblksize, &
                                globalrank, newfname, sid)
    character(len=*), intent(in) :: fname, file_mode
    integer :: nfiles
    integer, intent(in) :: fgcomm, flcomm
    integer(c_int64_t), intent(inout) :: chunksize
    integer(c_int32_t), intent(inout) :: fsblksize
    integer, intent(inout) :: globalrank
    character(len=*), intent(out) :: newfname
    integer, intent(out) :: sid
    call paropen_comm(c_paropen_ompi, fname, file_mode, nfiles, fgcomm, flcomm, chunksize, fsblksize, &
                      globalrank, newfname, sid, .true.)
  end subroutine fsion_paropen_ompi

  subroutine fsion_parclose_ompi(sid, ierr)
    integer, intent(in) :: sid
    integer, intent(out) :: ierr
    ierr = c_parclose_ompi(sid)
  end subroutine fsion_parclose_ompi

end module sion_f90_ompi
