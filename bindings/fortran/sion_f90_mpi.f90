! sion_f90_mpi - SIONlib 1.7's Fortran 90 MPI interface over sheaf
! (libsheaf_f90_mpi). Communicators are Fortran integer handles
! (MPI_COMM_WORLD of `use mpi` / mpif.h). Everything of sion_f90 is
! available through this module as well.
! Additions to SIONlib 1.7 (sheaf): fsion_paropen_mapped_mpi,
! fsion_parclose_mapped_mpi, fsion_parreinit_mpi; newfname returns this
! rank's physical file name (SIONlib leaves it unset).
module sion_f90_mpi
  use, intrinsic :: iso_c_binding, only: c_int, c_int32_t, c_int64_t, c_loc
  use sheaf_f90_c, only: c_str, is_write_mode, coll_io, paropen_comm, c_sion_coll_fwrite, c_sion_coll_fread, &
                         c_paropen_mpi, c_paropen_mapped_mpi, c_parclose_mpi, c_parclose_mapped_mpi, c_parreinit_mpi
  use sion_f90   ! re-exported: programs `use sion_f90_mpi` only, as with SIONlib
  implicit none
  public
  private :: c_int, c_int32_t, c_int64_t, c_loc
  private :: c_str, is_write_mode, coll_io, paropen_comm, c_sion_coll_fwrite, c_sion_coll_fread
  private :: c_paropen_mpi, c_paropen_mapped_mpi, c_parclose_mpi, c_parclose_mapped_mpi, c_parreinit_mpi


contains

  ! Collective over fgcomm. Write: nfiles > 0 splits fgcomm into nfiles
  ! files, nfiles <= 0 takes one file per flcomm; chunksize per rank,
  ! fsblksize -1 = detected. Read: nfiles, chunksize, fsblksize are outputs.
  ! globalrank receives the rank in fgcomm; newfname this rank's file.
  subroutine fsion_paropen_mpi(fname, file_mode, nfiles, fgcomm, flcomm, chunksize, fsblksize, &
                               globalrank, newfname, sid)
    character(len=*), intent(in) :: fname, file_mode
    integer :: nfiles
    integer, intent(in) :: fgcomm, flcomm
    integer(c_int64_t), intent(inout) :: chunksize
    integer(c_int32_t), intent(inout) :: fsblksize
    integer :: globalrank
    character(len=*), intent(out) :: newfname
    integer, intent(out) :: sid
    call paropen_comm(c_paropen_mpi, fname, file_mode, nfiles, fgcomm, flcomm, chunksize, fsblksize, &
                      globalrank, newfname, sid, .false.)
  end subroutine fsion_paropen_mpi

  subroutine fsion_parclose_mpi(sid, ierr)
    integer, intent(in) :: sid
    integer, intent(out) :: ierr
    ierr = c_parclose_mpi(sid)
  end subroutine fsion_parclose_mpi

  ! Write mode: restart writing every task at a new chunk size (collective).
  subroutine fsion_parreinit_mpi(sid, chunksize, ierr)
    integer, intent(in) :: sid
    integer(c_int64_t), intent(in) :: chunksize
    integer, intent(out) :: ierr
    ierr = c_parreinit_mpi(sid, chunksize)
  end subroutine fsion_parreinit_mpi

  ! One rank, several tasks (collective over fgcomm). Write: nfiles > 0 and
  ! nlocaltasks entries of globalranks, chunksizes, mapping_filenrs and
  ! mapping_lranks (file and rank in it of each task) are inputs. Read:
  ! nlocaltasks and globalranks(1:nlocaltasks) name the tasks this rank
  ! wants (any number of ranks can read what any number wrote); chunksizes,
  ! mapping_filenrs and mapping_lranks (at least nlocaltasks entries each)
  ! and nfiles, fsblksize are outputs. Switch tasks with
  ! fsion_seek(sid, globalrank, sion_current_blk, sion_current_pos, ierr).
  subroutine fsion_paropen_mapped_mpi(fname, file_mode, nfiles, fgcomm, nlocaltasks, globalranks, &
                                      chunksizes, mapping_filenrs, mapping_lranks, fsblksize, sid)
    character(len=*), intent(in) :: fname, file_mode
    integer :: nfiles
    integer, intent(in) :: fgcomm
    integer, intent(inout) :: nlocaltasks
    integer, intent(inout) :: globalranks(*), mapping_filenrs(*), mapping_lranks(*)
    integer(c_int64_t), intent(inout) :: chunksizes(*)
    integer(c_int32_t), intent(inout) :: fsblksize
    integer, intent(out) :: sid
    integer(c_int) :: nf, wr
    nf = nfiles
    wr = 0
    if (is_write_mode(file_mode)) wr = 1
    sid = c_paropen_mapped_mpi(c_str(fname), c_str(file_mode), nf, fgcomm, nlocaltasks, globalranks, &
                               chunksizes, mapping_filenrs, mapping_lranks, fsblksize, wr)
    if (sid >= 0 .and. nfiles /= nf) nfiles = nf
  end subroutine fsion_paropen_mapped_mpi

  subroutine fsion_parclose_mapped_mpi(sid, ierr)
    integer, intent(in) :: sid
    integer, intent(out) :: ierr
    ierr = c_parclose_mapped_mpi(sid)
  end subroutine fsion_parclose_mapped_mpi

  ! Collective write (all ranks of the file call it; coalescing with the
  ! mode key "collective", otherwise an individual write); rc = items.
  subroutine fsion_coll_fwrite_mpi(data, size, nitems, sid, rc)
    type(*), dimension(..), intent(in), target, contiguous :: data
    integer(c_int64_t), intent(in) :: size, nitems
    integer, intent(in) :: sid
    integer(c_int64_t), intent(out) :: rc
    rc = coll_io(c_sion_coll_fwrite, c_loc(data), size, nitems, sid)
  end subroutine fsion_coll_fwrite_mpi

  ! Collective read, the counterpart of fsion_coll_fwrite_mpi; rc = items.
  subroutine fsion_coll_fread_mpi(data, size, nitems, sid, rc)
    type(*), dimension(..), intent(inout), target, contiguous :: data
    integer(c_int64_t), intent(in) :: size, nitems
    integer, intent(in) :: sid
    integer(c_int64_t), intent(out) :: rc
    rc = coll_io(c_sion_coll_fread, c_loc(data), size, nitems, sid)
  end subroutine fsion_coll_fread_mpi

end module sion_f90_mpi
