! sion_f90 - SIONlib 1.7's Fortran 90 interface (serial and common calls)
! over sheaf's C API, written with ISO_C_BINDING.
!
! The routine names and argument lists are SIONlib's (doc/fortran.md lists
! them). Data arguments of fsion_write/fsion_read (and fsion_swap,
! fsion_coll_*, fsion_*_key) are assumed-type and assumed-rank: any type
! (integer, integer*8, real, double precision, complex, logical, character,
! derived types) and any rank, a scalar, an array element (SIONlib's
! `buf(1)` idiom: size*nitems bytes from there on) or a whole array or
! section (copied to contiguous storage and back by the compiler).
! Differences to SIONlib, all compatible with its programs:
!  - file names and modes drop trailing blanks (Fortran pads them);
!  - arguments SIONlib declares intent(in) but overwrites in read mode
!    (ntasks, nfiles) are written back only when the call changed them, so
!    a literal may still be passed where a write does not change it;
!  - negative sizes are refused (rc = 0) instead of becoming huge size_t.
module sion_f90
  use, intrinsic :: iso_c_binding
  use sheaf_f90_c
  use sheaf_f90_keyval
  implicit none
  private

  ! ---- SIONlib's parameters (include/sion_const.h) --------------------------
  integer, parameter, public :: sion_main_version       = 1
  integer, parameter, public :: sion_sub_version        = 7
  integer, parameter, public :: sion_version_patchlevel = 6
  integer, parameter, public :: sion_fileformat_version = 5
  integer, parameter, public :: sion_current_rank  = -101
  integer, parameter, public :: sion_current_blk   = -102
  integer, parameter, public :: sion_current_chunk = -102
  integer, parameter, public :: sion_current_block = -102
  integer(8), parameter, public :: sion_current_pos = -103
  integer, parameter, public :: sion_absolute_pos  = -104
  integer, parameter, public :: sion_end_pos       = -105
  integer, parameter, public :: sion_success       = 1
  integer, parameter, public :: sion_not_success   = 0
  integer, parameter, public :: sion_id_undef      = -1
  integer, parameter, public :: sion_keyval_none   = 50
  integer, parameter, public :: sion_keyval_inline = 51
  integer, parameter, public :: sion_keyval_meta   = 52
  integer, parameter, public :: sion_keyval_hash   = 53
  integer, parameter, public :: sion_keyval_unknown = 54
  integer, parameter, public :: sion_keyval_notset = 55

  public :: fsion_open, fsion_open_rank, fsion_close, fsion_feof, fsion_seek, &
            fsion_ensure_free_space, fsion_flush, fsion_get_locations, &
            fsion_get_current_locations, fsion_get_chunksizes, fsion_get_globalranks, &
            fsion_get_mapping_spec, fsion_get_mapping, fsion_get_fileno, &
            fsion_get_file_endianness, fsion_get_file_endianess, fsion_get_endianness, &
            fsion_get_endianess, fsion_endianness_swap_needed, fsion_bytes_avail_in_block, &
            fsion_get_position, fsion_swap, fsion_write, fsion_fwrite, fsion_read, fsion_fread, &
            fsion_get_bytes_written, fsion_get_bytes_read, fsion_get_number_of_files, &
            fsion_last_error
  ! key-value calls (sheaf_f90_keyval)
  public :: fsion_fwrite_key, fsion_fread_key, fsion_fread_key_iterator_reset, &
            fsion_fread_key_iterator_next, fsion_seek_key, fsion_key_full_scan, &
            fsion_key_list_iterator_reset, fsion_key_list_iterator_next, fsion_key_get_stat, &
            fsion_get_keyval_mode

contains

  ! ---- open / close --------------------------------------------------------

  ! Serial open of all tasks. Write: ntasks, nfiles (<= 1), chunksizes(ntasks)
  ! and globalranks(ntasks) are inputs (pass the arrays or their first
  ! element); fsblksize <= 0 is detected and written back. Read: ntasks,
  ! nfiles and fsblksize are outputs; chunksizes and globalranks are not
  ! touched (fsion_get_chunksizes / fsion_get_globalranks return them).
  subroutine fsion_open(fname, file_mode, ntasks, nfiles, chunksizes, fsblksize, globalranks, sid)
    character(len=*), intent(in) :: fname, file_mode
    integer :: ntasks, nfiles
    integer(c_int64_t), dimension(..), target, contiguous :: chunksizes
    integer(c_int32_t), intent(inout) :: fsblksize
    integer(c_int), dimension(..), target, contiguous :: globalranks
    integer, intent(out) :: sid
    integer(c_int) :: nt, nf
    type(c_ptr), target :: pcs, pgr
    nt = ntasks
    nf = nfiles
    if (is_write_mode(file_mode)) then
      pcs = c_loc(chunksizes)
      pgr = c_loc(globalranks)
      sid = c_sion_open(c_str(fname), c_str(file_mode), nt, nf, c_loc(pcs), fsblksize, &
                        c_loc(pgr), c_null_ptr)
    else
      sid = c_sion_open(c_str(fname), c_str(file_mode), nt, nf, c_null_ptr, fsblksize, &
                        c_null_ptr, c_null_ptr)
      if (sid >= 0) then
        if (ntasks /= nt) ntasks = nt
        if (nfiles /= nf) nfiles = nf
      end if
    end if
  end subroutine fsion_open

  ! Read-only open of one task (rank = global task index).
  subroutine fsion_open_rank(fname, file_mode, chunksize, fsblksize, rank, sid)
    character(len=*), intent(in) :: fname, file_mode
    integer(c_int64_t), intent(inout) :: chunksize
    integer(c_int32_t), intent(inout) :: fsblksize
    integer, intent(in) :: rank
    integer, intent(out) :: sid
    integer(c_int) :: r
    r = rank
    sid = c_sion_open_rank(c_str(fname), c_str(file_mode), chunksize, fsblksize, r, c_null_ptr)
  end subroutine fsion_open_rank

  subroutine fsion_close(sid, ierr)
    integer, intent(in) :: sid
    integer, intent(out) :: ierr
    ierr = c_sion_close(sid)
  end subroutine fsion_close

  ! ---- position ------------------------------------------------------------

  subroutine fsion_feof(sid, eof)
    integer, intent(in) :: sid
    integer, intent(out) :: eof
    eof = c_sion_feof(sid)
  end subroutine fsion_feof

  subroutine fsion_seek(sid, rank, blocknr, posinblk, ierr)
    integer, intent(in) :: sid, rank, blocknr
    integer(c_int64_t), intent(in) :: posinblk
    integer, intent(out) :: ierr
    ierr = c_sion_seek(sid, rank, blocknr, posinblk)
  end subroutine fsion_seek

  subroutine fsion_ensure_free_space(sid, bytes, ierr)
    integer, intent(in) :: sid
    integer(c_int64_t), intent(in) :: bytes
    integer, intent(out) :: ierr
    ierr = c_sion_ensure_free_space(sid, bytes)
  end subroutine fsion_ensure_free_space

  subroutine fsion_flush(sid, ierr)
    integer, intent(in) :: sid
    integer, intent(out) :: ierr
    ierr = c_sion_flush(sid)
  end subroutine fsion_flush

  integer(c_int64_t) function fsion_bytes_avail_in_block(sid)
    integer, intent(in) :: sid
    fsion_bytes_avail_in_block = c_sion_bytes_avail_in_block(sid)
  end function fsion_bytes_avail_in_block

  integer(c_int64_t) function fsion_get_position(sid)
    integer, intent(in) :: sid
    fsion_get_position = c_sion_get_position(sid)
  end function fsion_get_position

  ! ---- data ----------------------------------------------------------------

  ! Write size*nitems bytes from data; rc = items written (0 on error).
  subroutine fsion_write(data, size, nitems, sid, rc)
    type(*), dimension(..), intent(in), target, contiguous :: data
    integer(c_int64_t), intent(in) :: size, nitems
    integer, intent(in) :: sid
    integer(c_int64_t), intent(out) :: rc
    rc = data_io(c_sion_fwrite, c_loc(data), size, nitems, sid)
  end subroutine fsion_write

  ! SIONlib's second name for fsion_write.
  subroutine fsion_fwrite(data, size, nitems, sid, rc)
    type(*), dimension(..), intent(in), target, contiguous :: data
    integer(c_int64_t), intent(in) :: size, nitems
    integer, intent(in) :: sid
    integer(c_int64_t), intent(out) :: rc
    rc = data_io(c_sion_fwrite, c_loc(data), size, nitems, sid)
  end subroutine fsion_fwrite

  ! Read size*nitems bytes into data; rc = items read (0 on error or at the end).
  subroutine fsion_read(data, size, nitems, sid, rc)
    type(*), dimension(..), intent(inout), target, contiguous :: data
    integer(c_int64_t), intent(in) :: size, nitems
    integer, intent(in) :: sid
    integer(c_int64_t), intent(out) :: rc
    rc = data_io(c_sion_fread, c_loc(data), size, nitems, sid)
  end subroutine fsion_read

  ! SIONlib's second name for fsion_read.
  subroutine fsion_fread(data, size, nitems, sid, rc)
    type(*), dimension(..), intent(inout), target, contiguous :: data
    integer(c_int64_t), intent(in) :: size, nitems
    integer, intent(in) :: sid
    integer(c_int64_t), intent(out) :: rc
    rc = data_io(c_sion_fread, c_loc(data), size, nitems, sid)
  end subroutine fsion_fread

  ! Byte-reverse n elements of size bytes from source into target (the same
  ! variable for in place) when do_swap /= 0, else copy; rc = 1.
  subroutine fsion_swap(target, source, size, n, do_swap, rc)
    type(*), dimension(..), intent(inout), target, contiguous :: target
    type(*), dimension(..), intent(in), target, contiguous :: source
    integer, intent(in) :: size, n, do_swap
    integer, intent(out) :: rc
    rc = 0
    if (size < 0 .or. n < 0) return
    call c_sion_swap(c_loc(target), c_loc(source), size, n, do_swap)
    rc = 1
  end subroutine fsion_swap

  ! ---- information ---------------------------------------------------------

  ! As SIONlib: localsizes, globalranks, chunkcount and chunksizes receive the
  ! ADDRESSES of the library's arrays (int64 each; blocksizes indexed
  ! [ntasks*block + task]), valid until the close (c_f_pointer reads them).
  subroutine fsion_get_locations(sid, ntasks, maxblocks, globalskip, start_of_varheader, &
                                 localsizes, globalranks, chunkcount, chunksizes, ierr)
    integer, intent(in) :: sid
    integer, intent(out) :: ntasks, maxblocks
    integer(c_int64_t), intent(out) :: globalskip, start_of_varheader
    integer(c_int64_t), intent(out) :: localsizes, globalranks, chunkcount, chunksizes
    integer, intent(out) :: ierr
    type(c_ptr) :: p1, p2, p3, p4
    ierr = c_sion_get_locations(sid, ntasks, maxblocks, globalskip, start_of_varheader, p1, p2, p3, p4)
    localsizes = transfer(p1, 0_c_int64_t)
    globalranks = transfer(p2, 0_c_int64_t)
    chunkcount = transfer(p3, 0_c_int64_t)
    chunksizes = transfer(p4, 0_c_int64_t)
  end subroutine fsion_get_locations

  ! As SIONlib: the addresses of the per-task cursor arrays (int64 each).
  subroutine fsion_get_current_locations(sid, ntasks, currentpos, currentblocknr, ierr)
    integer, intent(in) :: sid
    integer, intent(out) :: ntasks
    integer(c_int64_t), intent(out) :: currentpos, currentblocknr
    integer, intent(out) :: ierr
    type(c_ptr) :: p1, p2
    ierr = c_sion_get_current_locations(sid, ntasks, p1, p2)
    currentpos = transfer(p1, 0_c_int64_t)
    currentblocknr = transfer(p2, 0_c_int64_t)
  end subroutine fsion_get_current_locations

  ! The requested chunk size of every task, into chunksizes(1:ntasks).
  subroutine fsion_get_chunksizes(sid, chunksizes, ierr)
    integer, intent(in) :: sid
    integer(c_int64_t), intent(inout) :: chunksizes(*)
    integer, intent(out) :: ierr
    integer(c_int64_t), pointer :: cs(:)
    integer :: nt
    call locations_array(sid, 1, nt, cs, ierr)
    if (ierr == sion_success) chunksizes(1:nt) = cs(1:nt)
  end subroutine fsion_get_chunksizes

  ! The global rank of every task, into globalranks(1:ntasks).
  subroutine fsion_get_globalranks(sid, globalranks, ierr)
    integer, intent(in) :: sid
    integer, intent(inout) :: globalranks(*)
    integer, intent(out) :: ierr
    integer(c_int64_t), pointer :: gr(:)
    integer :: nt
    call locations_array(sid, 2, nt, gr, ierr)
    if (ierr == sion_success) globalranks(1:nt) = int(gr(1:nt))
  end subroutine fsion_get_globalranks

  ! One of sion_get_locations' per-task arrays (1 chunk sizes, 2 global ranks).
  subroutine locations_array(sid, which, nt, arr, ierr)
    integer, intent(in) :: sid, which
    integer, intent(out) :: nt
    integer(c_int64_t), pointer, intent(out) :: arr(:)
    integer, intent(out) :: ierr
    integer(c_int) :: mc
    integer(c_int64_t) :: gs, sv
    type(c_ptr) :: p(4)
    nt = 0
    arr => null()
    ierr = c_sion_get_locations(sid, nt, mc, gs, sv, p(1), p(2), p(3), p(4))
    if (ierr /= sion_success) return
    if (nt < 0 .or. .not. c_associated(p(which))) then
      ierr = sion_not_success
      nt = 0
      return
    end if
    call c_f_pointer(p(which), arr, [nt])
  end subroutine locations_array

  ! mapping_size = number of global tasks of a multi-file set (-1: none).
  subroutine fsion_get_mapping_spec(sid, mapping_size, numfiles, ierr)
    integer, intent(in) :: sid
    integer, intent(out) :: mapping_size, numfiles
    integer, intent(out) :: ierr
    type(c_ptr) :: p
    ierr = c_sion_get_mapping(sid, mapping_size, p, numfiles)
  end subroutine fsion_get_mapping_spec

  ! mapping(2*t+1) = file number, mapping(2*t+2) = rank in that file of
  ! global task t (0-based), for t = 0..mapping_size-1.
  subroutine fsion_get_mapping(sid, mapping, ierr)
    integer, intent(in) :: sid
    integer(c_int32_t), intent(inout) :: mapping(*)
    integer, intent(out) :: ierr
    integer(c_int32_t), pointer :: m(:)
    integer :: msize, nf
    type(c_ptr) :: p
    ierr = c_sion_get_mapping(sid, msize, p, nf)
    if (ierr /= sion_success) return
    if (msize <= 0 .or. .not. c_associated(p)) then
      ierr = sion_not_success
      return
    end if
    call c_f_pointer(p, m, [2 * msize])
    mapping(1:2 * msize) = m
  end subroutine fsion_get_mapping

  subroutine fsion_get_fileno(sid, filenumber)
    integer, intent(in) :: sid
    integer, intent(out) :: filenumber
    filenumber = c_sion_get_filenumber(sid)
  end subroutine fsion_get_fileno

  integer function fsion_get_number_of_files(sid)
    integer, intent(in) :: sid
    fsion_get_number_of_files = c_sion_get_number_of_files(sid)
  end function fsion_get_number_of_files

  ! Declared byte order of the user data: 1 big endian, 0 little endian.
  subroutine fsion_get_file_endianness(sid, endianness)
    integer, intent(in) :: sid
    integer, intent(out) :: endianness
    endianness = c_sion_get_file_endianness(sid)
  end subroutine fsion_get_file_endianness

  ! SIONlib's misspelled alias.
  subroutine fsion_get_file_endianess(sid, endianness)
    integer, intent(in) :: sid
    integer, intent(out) :: endianness
    endianness = c_sion_get_file_endianness(sid)
  end subroutine fsion_get_file_endianess

  ! Byte order of this machine: 1 big endian, 0 little endian.
  subroutine fsion_get_endianness(endianness)
    integer, intent(out) :: endianness
    endianness = c_sion_get_endianness()
  end subroutine fsion_get_endianness

  subroutine fsion_get_endianess(endianness)
    integer, intent(out) :: endianness
    endianness = c_sion_get_endianness()
  end subroutine fsion_get_endianess

  subroutine fsion_endianness_swap_needed(sid, needed)
    integer, intent(in) :: sid
    integer, intent(out) :: needed
    needed = c_sion_endianness_swap_needed(sid)
  end subroutine fsion_endianness_swap_needed

  integer(c_int64_t) function fsion_get_bytes_written(sid)
    integer, intent(in) :: sid
    fsion_get_bytes_written = c_sion_get_bytes_written(sid)
  end function fsion_get_bytes_written

  integer(c_int64_t) function fsion_get_bytes_read(sid)
    integer, intent(in) :: sid
    fsion_get_bytes_read = c_sion_get_bytes_read(sid)
  end function fsion_get_bytes_read

  ! sheaf: the message of the last failed call of this thread (naming the
  ! file and the cause; blank if none), as sheaf_last_error() in C.
  subroutine fsion_last_error(msg)
    character(len=*), intent(out) :: msg
    call f_str(c_sheaf_last_error(), msg)
  end subroutine fsion_last_error

end module sion_f90
