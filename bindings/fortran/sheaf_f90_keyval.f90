! sheaf_f90_keyval - the key-value calls of sion_f90 (open with
! file_mode "...,keyval=inline"). SIONlib 1.7 has them in C only; sheaf adds
! Fortran routines in SIONlib's style (names of the C calls with an f, a
! status argument last). Keys are integer*8 (the bits of C's uint64_t).
! Programs reach them through `use sion_f90`.
module sheaf_f90_keyval
  use, intrinsic :: iso_c_binding
  use sheaf_f90_c
  implicit none
  private
  public :: fsion_fwrite_key, fsion_fread_key, fsion_fread_key_iterator_reset, &
            fsion_fread_key_iterator_next, fsion_seek_key, fsion_key_full_scan, &
            fsion_key_list_iterator_reset, fsion_key_list_iterator_next, fsion_key_get_stat, &
            fsion_get_keyval_mode

contains

  ! Append one record of size*nitems bytes under key; rc = items written.
  subroutine fsion_fwrite_key(data, key, size, nitems, sid, rc)
    type(*), dimension(..), intent(in), target, contiguous :: data
    integer(c_int64_t), intent(in) :: key, size, nitems
    integer, intent(in) :: sid
    integer(c_int64_t), intent(out) :: rc
    rc = 0
    if (sizes_ok(size, nitems)) &
      rc = int(c_sion_fwrite_key(c_loc(data), key, int(size, c_size_t), int(nitems, c_size_t), sid), &
               c_int64_t)
  end subroutine fsion_fwrite_key

  ! Read the next size*nitems unread bytes of key; rc = whole items read.
  subroutine fsion_fread_key(data, key, size, nitems, sid, rc)
    type(*), dimension(..), intent(inout), target, contiguous :: data
    integer(c_int64_t), intent(in) :: key, size, nitems
    integer, intent(in) :: sid
    integer(c_int64_t), intent(out) :: rc
    rc = 0
    if (sizes_ok(size, nitems)) &
      rc = int(c_sion_fread_key(c_loc(data), key, int(size, c_size_t), int(nitems, c_size_t), sid), &
               c_int64_t)
  end subroutine fsion_fread_key

  subroutine fsion_fread_key_iterator_reset(sid, ierr)
    integer, intent(in) :: sid
    integer, intent(out) :: ierr
    ierr = c_sion_fread_key_iterator_reset(sid)
  end subroutine fsion_fread_key_iterator_reset

  ! Next record in file order: its key and size in bytes; ierr = 1 while
  ! there is one.
  subroutine fsion_fread_key_iterator_next(sid, key, size, ierr)
    integer, intent(in) :: sid
    integer(c_int64_t), intent(out) :: key, size
    integer, intent(out) :: ierr
    integer(c_size_t) :: sz
    key = 0
    sz = 0
    ierr = c_sion_fread_key_iterator_next(sid, key, sz)
    size = int(sz, c_int64_t)
  end subroutine fsion_fread_key_iterator_next

  ! entrynum: occurrence of the key (0-based), sion_current_block or
  ! sion_absolute_pos (posinentry over all records of the key).
  subroutine fsion_seek_key(sid, key, entrynum, posinentry, ierr)
    integer, intent(in) :: sid
    integer(c_int64_t), intent(in) :: key
    integer, intent(in) :: entrynum
    integer(c_int64_t), intent(in) :: posinentry
    integer, intent(out) :: ierr
    ierr = c_sion_seek_key(sid, key, entrynum, posinentry)
  end subroutine fsion_seek_key

  subroutine fsion_key_full_scan(sid, ierr)
    integer, intent(in) :: sid
    integer, intent(out) :: ierr
    ierr = c_sion_key_full_scan(sid)
  end subroutine fsion_key_full_scan

  subroutine fsion_key_list_iterator_reset(sid, ierr)
    integer, intent(in) :: sid
    integer, intent(out) :: ierr
    ierr = c_sion_key_list_iterator_reset(sid)
  end subroutine fsion_key_list_iterator_reset

  ! Next distinct key; ierr = 1 while there is one.
  subroutine fsion_key_list_iterator_next(sid, key, ierr)
    integer, intent(in) :: sid
    integer(c_int64_t), intent(out) :: key
    integer, intent(out) :: ierr
    key = 0
    ierr = c_sion_key_list_iterator_next(sid, key)
  end subroutine fsion_key_list_iterator_next

  ! Number of records and total bytes stored under key.
  subroutine fsion_key_get_stat(sid, key, num_blocks, total_size, ierr)
    integer, intent(in) :: sid
    integer(c_int64_t), intent(in) :: key
    integer(c_int64_t), intent(out) :: num_blocks, total_size
    integer, intent(out) :: ierr
    type(sion_key_stat_t) :: st
    st = sion_key_stat_t(0, 0, 0)
    ierr = c_sion_key_get_stat(sid, key, st)
    num_blocks = st%num_blocks
    total_size = st%total_size
  end subroutine fsion_key_get_stat

  ! sion_keyval_none, _inline, ... of an open container.
  integer function fsion_get_keyval_mode(sid)
    integer, intent(in) :: sid
    fsion_get_keyval_mode = c_sion_get_keyval_mode(sid)
  end function fsion_get_keyval_mode

end module sheaf_f90_keyval
