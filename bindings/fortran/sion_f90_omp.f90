! sion_f90_omp - SIONlib 1.7's Fortran 90 OpenMP interface over sheaf
! (libsheaf_f90_omp). Every thread of one parallel region calls
! fsion_paropen_omp; each thread is one task of a single file. Everything of
! sion_f90 is available through this module as well.
module sion_f90_omp
  use, intrinsic :: iso_c_binding, only: c_int, c_int32_t, c_int64_t, c_char, c_ptr, c_null_ptr
  use sheaf_f90_c, only: c_str, f_str_free, c_paropen_omp, c_parclose_omp
  use sion_f90   ! re-exported
  implicit none
  public
  private :: c_int, c_int32_t, c_int64_t, c_char, c_ptr, c_null_ptr, c_str, f_str_free
  private :: c_paropen_omp, c_parclose_omp


contains

  ! Called by every thread of the region. Write: chunksize per thread,
  ! fsblksize -1 = detected; globalrank receives the thread number. Read:
  ! chunksize and fsblksize are outputs. newfname: the file's name.
  subroutine fsion_paropen_omp(fname, file_mode, chunksize, fsblksize, globalrank, newfname, sid)
    character(len=*), intent(in) :: fname, file_mode
    integer(c_int64_t), intent(inout) :: chunksize
    integer(c_int32_t), intent(inout) :: fsblksize
    integer, intent(inout) :: globalrank
    character(len=*), intent(out) :: newfname
    integer, intent(out) :: sid
    type(c_ptr) :: pname
    pname = c_null_ptr
    sid = c_paropen_omp(c_str(fname), c_str(file_mode), chunksize, fsblksize, globalrank, c_null_ptr, pname)
    call f_str_free(pname, newfname)
  end subroutine fsion_paropen_omp

  subroutine fsion_parclose_omp(sid, ierr)
    integer, intent(in) :: sid
    integer, intent(out) :: ierr
    ierr = c_parclose_omp(sid)
  end subroutine fsion_parclose_omp

end module sion_f90_omp
