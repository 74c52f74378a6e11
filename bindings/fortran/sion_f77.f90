! sion_f77 - SIONlib 1.7's Fortran 77 interface (serial and common calls):
! external procedures LFSION_*, callable without an interface from fixed-
! form programs (INCLUDE 'sion_f77.h'), with SIONlib's argument lists. Each
! forwards to the Fortran 90 routine of the same name (module sion_f90), so
! both interfaces behave alike. The untyped data calls (LFSION_WRITE, _READ,
! _FWRITE, _FREAD, their typed names and LFSION_SWAP) are in f77_data.c:
! a program passes them a bare address, which only C takes without caring
! for the type. libsheaf_f77; doc/fortran.md.

subroutine lfsion_open(fname, file_mode, ntasks, nfiles, chunksizes, fsblksize, globalranks, sid)
  use sion_f90, only: fsion_open
  implicit none
  character(len=*), intent(in) :: fname, file_mode
  integer :: ntasks, nfiles
  integer(8), target :: chunksizes(*)
  integer(4), intent(inout) :: fsblksize
  integer, target :: globalranks(*)
  integer, intent(out) :: sid
  call fsion_open(fname, file_mode, ntasks, nfiles, chunksizes, fsblksize, globalranks, sid)
end subroutine lfsion_open

subroutine lfsion_open_rank(fname, file_mode, chunksize, fsblksize, rank, sid)
  use sion_f90, only: fsion_open_rank
  implicit none
  character(len=*), intent(in) :: fname, file_mode
  integer(8), intent(inout) :: chunksize
  integer(4), intent(inout) :: fsblksize
  integer, intent(in) :: rank
  integer, intent(out) :: sid
  call fsion_open_rank(fname, file_mode, chunksize, fsblksize, rank, sid)
end subroutine lfsion_open_rank

subroutine lfsion_close(sid, ierr)
  use sion_f90, only: fsion_close
  implicit none
  integer, intent(in) :: sid
  integer, intent(out) :: ierr
  call fsion_close(sid, ierr)
end subroutine lfsion_close

subroutine lfsion_feof(sid, eof)
  use sion_f90, only: fsion_feof
  implicit none
  integer, intent(in) :: sid
  integer, intent(out) :: eof
  call fsion_feof(sid, eof)
end subroutine lfsion_feof

subroutine lfsion_seek(sid, rank, blocknr, posinblk, ierr)
  use sion_f90, only: fsion_seek
  implicit none
  integer, intent(in) :: sid, rank, blocknr
  integer(8), intent(in) :: posinblk
  integer, intent(out) :: ierr
  call fsion_seek(sid, rank, blocknr, posinblk, ierr)
end subroutine lfsion_seek

subroutine lfsion_ensure_free_space(sid, bytes, ierr)
  use sion_f90, only: fsion_ensure_free_space
  implicit none
  integer, intent(in) :: sid
  integer(8), intent(in) :: bytes
  integer, intent(out) :: ierr
  call fsion_ensure_free_space(sid, bytes, ierr)
end subroutine lfsion_ensure_free_space

subroutine lfsion_flush(sid, ierr)
  use sion_f90, only: fsion_flush
  implicit none
  integer, intent(in) :: sid
  integer, intent(out) :: ierr
  call fsion_flush(sid, ierr)
end subroutine lfsion_flush

integer(8) function lfsion_bytes_avail_in_block(sid)
  use sion_f90, only: fsion_bytes_avail_in_block
  implicit none
  integer, intent(in) :: sid
  lfsion_bytes_avail_in_block = fsion_bytes_avail_in_block(sid)
end function lfsion_bytes_avail_in_block

integer(8) function lfsion_get_position(sid)
  use sion_f90, only: fsion_get_position
  implicit none
  integer, intent(in) :: sid
  lfsion_get_position = fsion_get_position(sid)
end function lfsion_get_position

! localsizes, globalranks, chunkcount, chunksizes receive the addresses of
! the library's arrays, as in SIONlib (and fsion_get_locations).
subroutine lfsion_get_locations(sid, ntasks, maxblocks, globalskip, start_of_varheader, &
                                localsizes, globalranks, chunkcount, chunksizes, ierr)
  use sion_f90, only: fsion_get_locations
  implicit none
  integer, intent(in) :: sid
  integer, intent(out) :: ntasks, maxblocks
  integer(8), intent(out) :: globalskip, start_of_varheader
  integer(8), intent(out) :: localsizes, globalranks, chunkcount, chunksizes
  integer, intent(out) :: ierr
  call fsion_get_locations(sid, ntasks, maxblocks, globalskip, start_of_varheader, &
                           localsizes, globalranks, chunkcount, chunksizes, ierr)
end subroutine lfsion_get_locations

subroutine lfsion_get_current_locations(sid, ntasks, currentpos, currentblocknr, ierr)
  use sion_f90, only: fsion_get_current_locations
  implicit none
  integer, intent(in) :: sid
  integer, intent(out) :: ntasks
  integer(8), intent(out) :: currentpos, currentblocknr
  integer, intent(out) :: ierr
  call fsion_get_current_locations(sid, ntasks, currentpos, currentblocknr, ierr)
end subroutine lfsion_get_current_locations

subroutine lfsion_get_chunksizes(sid, chunksizes, ierr)
  use sion_f90, only: fsion_get_chunksizes
  implicit none
  integer, intent(in) :: sid
  integer(8), intent(inout) :: chunksizes(*)
  integer, intent(out) :: ierr
  call fsion_get_chunksizes(sid, chunksizes, ierr)
end subroutine lfsion_get_chunksizes

subroutine lfsion_get_globalranks(sid, globalranks, ierr)
  use sion_f90, only: fsion_get_globalranks
  implicit none
  integer, intent(in) :: sid
  integer, intent(inout) :: globalranks(*)
  integer, intent(out) :: ierr
  call fsion_get_globalranks(sid, globalranks, ierr)
end subroutine lfsion_get_globalranks

subroutine lfsion_get_mapping_spec(sid, mapping_size, numfiles, ierr)
  use sion_f90, only: fsion_get_mapping_spec
  implicit none
  integer, intent(in) :: sid
  integer, intent(out) :: mapping_size, numfiles, ierr
  call fsion_get_mapping_spec(sid, mapping_size, numfiles, ierr)
end subroutine lfsion_get_mapping_spec

subroutine lfsion_get_mapping(sid, mapping, ierr)
  use sion_f90, only: fsion_get_mapping
  implicit none
  integer, intent(in) :: sid
  integer(4), intent(inout) :: mapping(*)
  integer, intent(out) :: ierr
  call fsion_get_mapping(sid, mapping, ierr)
end subroutine lfsion_get_mapping

subroutine lfsion_get_fileno(sid, filenumber)
  use sion_f90, only: fsion_get_fileno
  implicit none
  integer, intent(in) :: sid
  integer, intent(out) :: filenumber
  call fsion_get_fileno(sid, filenumber)
end subroutine lfsion_get_fileno

subroutine lfsion_get_file_endianness(sid, endianness)
  use sion_f90, only: fsion_get_file_endianness
  implicit none
  integer, intent(in) :: sid
  integer, intent(out) :: endianness
  call fsion_get_file_endianness(sid, endianness)
end subroutine lfsion_get_file_endianness

! SIONlib's misspelled alias
subroutine lfsion_get_file_endianess(sid, endianness)
  use sion_f90, only: fsion_get_file_endianness
  implicit none
  integer, intent(in) :: sid
  integer, intent(out) :: endianness
  call fsion_get_file_endianness(sid, endianness)
end subroutine lfsion_get_file_endianess

subroutine lfsion_get_endianness(endianness)
  use sion_f90, only: fsion_get_endianness
  implicit none
  integer, intent(out) :: endianness
  call fsion_get_endianness(endianness)
end subroutine lfsion_get_endianness

! SIONlib's misspelled alias
subroutine lfsion_get_endianess(endianness)
  use sion_f90, only: fsion_get_endianness
  implicit none
  integer, intent(out) :: endianness
  call fsion_get_endianness(endianness)
end subroutine lfsion_get_endianess

subroutine lfsion_endianness_swap_needed(sid, needed)
  use sion_f90, only: fsion_endianness_swap_needed
  implicit none
  integer, intent(in) :: sid
  integer, intent(out) :: needed
  call fsion_endianness_swap_needed(sid, needed)
end subroutine lfsion_endianness_swap_needed
