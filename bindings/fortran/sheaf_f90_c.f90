! sheaf_f90_c - internal module of sheaf's Fortran 90 interface: the
! ISO_C_BINDING interfaces to the public C API of libsheaf (include/sion*.h)
! and the string and address helpers the user-facing modules share.
! Programs use sion_f90 (and sion_f90_mpi, _omp, _ompi), never this module.
module sheaf_f90_c
  use, intrinsic :: iso_c_binding
  implicit none
  private

  public :: c_str, f_str, f_str_free, is_write_mode, sizes_ok, data_io, coll_io, paropen_comm
  public :: sion_key_stat_t

  ! include/sion_common.h: sion_key_stat_t
  type, bind(c) :: sion_key_stat_t
    integer(c_int64_t) :: key
    integer(c_int64_t) :: num_blocks
    integer(c_int64_t) :: total_size
  end type sion_key_stat_t

  public :: c_sion_open, c_sion_open_rank, c_sion_close, c_sion_fwrite, c_sion_fread, &
            c_sion_feof, c_sion_seek, c_sion_ensure_free_space, c_sion_flush, &
            c_sion_bytes_avail_in_block, c_sion_get_position, c_sion_get_locations, &
            c_sion_get_current_locations, c_sion_get_mapping, c_sion_get_filenumber, &
            c_sion_get_number_of_files, c_sion_get_file_endianness, c_sion_get_endianness, &
            c_sion_endianness_swap_needed, c_sion_swap, c_sion_get_bytes_written, &
            c_sion_get_bytes_read, c_sion_fwrite_key, c_sion_fread_key, &
            c_sion_fread_key_iterator_reset, c_sion_fread_key_iterator_next, c_sion_seek_key, &
            c_sion_key_full_scan, c_sion_key_list_iterator_reset, c_sion_key_list_iterator_next, &
            c_sion_key_get_stat, c_sion_get_keyval_mode, c_sion_coll_fwrite, c_sion_coll_fread, &
            c_sheaf_last_error, c_free, c_strlen
  ! the parallel layers' calls (used by sion_f90_mpi, _omp, _ompi only)
  public :: c_paropen_mpi, c_paropen_mapped_mpi, c_parclose_mpi, c_parclose_mapped_mpi, c_parreinit_mpi, &
            c_paropen_omp, c_parclose_omp, c_paropen_ompi, c_parclose_ompi

  ! The interfaces of the C functions passed to data_io, coll_io and paropen_comm.
  abstract interface
    integer(c_size_t) function data_fn(data, size, nitems, sid) bind(c)
      import :: c_size_t, c_ptr, c_int
      type(c_ptr), value :: data
      integer(c_size_t), value :: size, nitems
      integer(c_int), value :: sid
    end function data_fn
    integer(c_int) function paropen_comm_fn(fname, mode, nfiles, gcomm, lcomm, chunksize, fsblksize, &
        globalrank, newfname) bind(c)
      import :: c_int, c_char, c_int64_t, c_int32_t, c_ptr
      character(kind=c_char), dimension(*), intent(in) :: fname, mode
      integer(c_int), intent(inout) :: nfiles
      integer(c_int), value :: gcomm, lcomm
      integer(c_int64_t), intent(inout) :: chunksize
      integer(c_int32_t), intent(inout) :: fsblksize
      integer(c_int), intent(inout) :: globalrank
      type(c_ptr), intent(out) :: newfname
    end function paropen_comm_fn
  end interface

  interface
    ! Every C function has its own interface block. Declared as
    ! procedure(abstract interface), bind(c, name=...), a function referenced
    ! from two routines lost the VALUE attribute of its dummy at one of them in
    ! gfortran 12 (sion_get_file_endianness received the address of sid).
    integer(c_int) function c_sion_close(sid) bind(c, name='sion_close')
      import :: c_int
      integer(c_int), value :: sid
    end function c_sion_close
    integer(c_int) function c_sion_feof(sid) bind(c, name='sion_feof')
      import :: c_int
      integer(c_int), value :: sid
    end function c_sion_feof
    integer(c_int) function c_sion_flush(sid) bind(c, name='sion_flush')
      import :: c_int
      integer(c_int), value :: sid
    end function c_sion_flush
    integer(c_int) function c_sion_get_filenumber(sid) bind(c, name='sion_get_filenumber')
      import :: c_int
      integer(c_int), value :: sid
    end function c_sion_get_filenumber
    integer(c_int) function c_sion_get_number_of_files(sid) bind(c, name='sion_get_number_of_files')
      import :: c_int
      integer(c_int), value :: sid
    end function c_sion_get_number_of_files
    integer(c_int) function c_sion_get_file_endianness(sid) bind(c, name='sion_get_file_endianness')
      import :: c_int
      integer(c_int), value :: sid
    end function c_sion_get_file_endianness
    integer(c_int) function c_sion_endianness_swap_needed(sid) bind(c, name='sion_endianness_swap_needed')
      import :: c_int
      integer(c_int), value :: sid
    end function c_sion_endianness_swap_needed
    integer(c_int) function c_sion_fread_key_iterator_reset(sid) bind(c, name='sion_fread_key_iterator_reset')
      import :: c_int
      integer(c_int), value :: sid
    end function c_sion_fread_key_iterator_reset
    integer(c_int) function c_sion_key_full_scan(sid) bind(c, name='sion_key_full_scan')
      import :: c_int
      integer(c_int), value :: sid
    end function c_sion_key_full_scan
    integer(c_int) function c_sion_key_list_iterator_reset(sid) bind(c, name='sion_key_list_iterator_reset')
      import :: c_int
      integer(c_int), value :: sid
    end function c_sion_key_list_iterator_reset
    integer(c_int) function c_sion_get_keyval_mode(sid) bind(c, name='sion_get_keyval_mode')
      import :: c_int
      integer(c_int), value :: sid
    end function c_sion_get_keyval_mode
    integer(c_int) function c_parclose_mpi(sid) bind(c, name='sion_parclose_mpi')
      import :: c_int
      integer(c_int), value :: sid
    end function c_parclose_mpi
    integer(c_int) function c_parclose_mapped_mpi(sid) bind(c, name='sion_parclose_mapped_mpi')
      import :: c_int
      integer(c_int), value :: sid
    end function c_parclose_mapped_mpi
    integer(c_int) function c_parclose_omp(sid) bind(c, name='sion_parclose_omp')
      import :: c_int
      integer(c_int), value :: sid
    end function c_parclose_omp
    integer(c_int) function c_parclose_ompi(sid) bind(c, name='sion_parclose_ompi')
      import :: c_int
      integer(c_int), value :: sid
    end function c_parclose_ompi
    integer(c_int64_t) function c_sion_bytes_avail_in_block(sid) bind(c, name='sion_bytes_avail_in_block')
      import :: c_int, c_int64_t
      integer(c_int), value :: sid
    end function c_sion_bytes_avail_in_block
    integer(c_int64_t) function c_sion_get_position(sid) bind(c, name='sion_get_position')
      import :: c_int, c_int64_t
      integer(c_int), value :: sid
    end function c_sion_get_position
    integer(c_int64_t) function c_sion_get_bytes_written(sid) bind(c, name='sion_get_bytes_written')
      import :: c_int, c_int64_t
      integer(c_int), value :: sid
    end function c_sion_get_bytes_written
    integer(c_int64_t) function c_sion_get_bytes_read(sid) bind(c, name='sion_get_bytes_read')
      import :: c_int, c_int64_t
      integer(c_int), value :: sid
    end function c_sion_get_bytes_read
    integer(c_size_t) function c_sion_fwrite(data, size, nitems, sid) bind(c, name='sion_fwrite')
      import :: c_size_t, c_ptr, c_int
      type(c_ptr), value :: data
      integer(c_size_t), value :: size, nitems
      integer(c_int), value :: sid
    end function c_sion_fwrite
    integer(c_size_t) function c_sion_fread(data, size, nitems, sid) bind(c, name='sion_fread')
      import :: c_size_t, c_ptr, c_int
      type(c_ptr), value :: data
      integer(c_size_t), value :: size, nitems
      integer(c_int), value :: sid
    end function c_sion_fread
    integer(c_size_t) function c_sion_coll_fwrite(data, size, nitems, sid) bind(c, name='sion_coll_fwrite')
      import :: c_size_t, c_ptr, c_int
      type(c_ptr), value :: data
      integer(c_size_t), value :: size, nitems
      integer(c_int), value :: sid
    end function c_sion_coll_fwrite
    integer(c_size_t) function c_sion_coll_fread(data, size, nitems, sid) bind(c, name='sion_coll_fread')
      import :: c_size_t, c_ptr, c_int
      type(c_ptr), value :: data
      integer(c_size_t), value :: size, nitems
      integer(c_int), value :: sid
    end function c_sion_coll_fread
    integer(c_size_t) function c_sion_fwrite_key(data, key, size, nitems, sid) bind(c, name='sion_fwrite_key')
      import :: c_size_t, c_ptr, c_int, c_int64_t
      type(c_ptr), value :: data
      integer(c_int64_t), value :: key
      integer(c_size_t), value :: size, nitems
      integer(c_int), value :: sid
    end function c_sion_fwrite_key
    integer(c_size_t) function c_sion_fread_key(data, key, size, nitems, sid) bind(c, name='sion_fread_key')
      import :: c_size_t, c_ptr, c_int, c_int64_t
      type(c_ptr), value :: data
      integer(c_int64_t), value :: key
      integer(c_size_t), value :: size, nitems
      integer(c_int), value :: sid
    end function c_sion_fread_key
    integer(c_int) function c_paropen_mpi(fname, mode, nfiles, gcomm, lcomm, chunksize, fsblksize, &
        globalrank, newfname) bind(c, name='sheaf_f90_paropen_mpi')
      import :: c_int, c_char, c_int64_t, c_int32_t, c_ptr
      character(kind=c_char), dimension(*), intent(in) :: fname, mode
      integer(c_int), intent(inout) :: nfiles
      integer(c_int), value :: gcomm, lcomm
      integer(c_int64_t), intent(inout) :: chunksize
      integer(c_int32_t), intent(inout) :: fsblksize
      integer(c_int), intent(inout) :: globalrank
      type(c_ptr), intent(out) :: newfname
    end function c_paropen_mpi
    integer(c_int) function c_paropen_ompi(fname, mode, nfiles, gcomm, lcomm, chunksize, fsblksize, &
        globalrank, newfname) bind(c, name='sheaf_f90_paropen_ompi')
      import :: c_int, c_char, c_int64_t, c_int32_t, c_ptr
      character(kind=c_char), dimension(*), intent(in) :: fname, mode
      integer(c_int), intent(inout) :: nfiles
      integer(c_int), value :: gcomm, lcomm
      integer(c_int64_t), intent(inout) :: chunksize
      integer(c_int32_t), intent(inout) :: fsblksize
      integer(c_int), intent(inout) :: globalrank
      type(c_ptr), intent(out) :: newfname
    end function c_paropen_ompi
    integer(c_int) function c_sion_open(fname, mode, ntasks, nfiles, chunksizes, fsblksize, &
                                        globalranks, fileptr) bind(c, name='sion_open')
      import :: c_int, c_char, c_ptr, c_int32_t
      character(kind=c_char), dimension(*), intent(in) :: fname, mode
      integer(c_int), intent(inout) :: ntasks, nfiles
      type(c_ptr), value :: chunksizes, globalranks, fileptr
      integer(c_int32_t), intent(inout) :: fsblksize
    end function c_sion_open
    integer(c_int) function c_sion_open_rank(fname, mode, chunksize, fsblksize, rank, fileptr) &
        bind(c, name='sion_open_rank')
      import :: c_int, c_char, c_ptr, c_int32_t, c_int64_t
      character(kind=c_char), dimension(*), intent(in) :: fname, mode
      integer(c_int64_t), intent(inout) :: chunksize
      integer(c_int32_t), intent(inout) :: fsblksize
      integer(c_int), intent(inout) :: rank
      type(c_ptr), value :: fileptr
    end function c_sion_open_rank
    integer(c_int) function c_sion_seek(sid, rank, blocknr, posinblk) bind(c, name='sion_seek')
      import :: c_int, c_int64_t
      integer(c_int), value :: sid, rank, blocknr
      integer(c_int64_t), value :: posinblk
    end function c_sion_seek
    integer(c_int) function c_sion_ensure_free_space(sid, bytes) bind(c, name='sion_ensure_free_space')
      import :: c_int, c_int64_t
      integer(c_int), value :: sid
      integer(c_int64_t), value :: bytes
    end function c_sion_ensure_free_space
    integer(c_int) function c_sion_get_locations(sid, ntasks, maxchunks, globalskip, start_of_varheader, &
        chunksizes, globalranks, blockcount, blocksizes) bind(c, name='sion_get_locations')
      import :: c_int, c_int64_t, c_ptr
      integer(c_int), value :: sid
      integer(c_int), intent(out) :: ntasks, maxchunks
      integer(c_int64_t), intent(out) :: globalskip, start_of_varheader
      type(c_ptr), intent(out) :: chunksizes, globalranks, blockcount, blocksizes
    end function c_sion_get_locations
    integer(c_int) function c_sion_get_current_locations(sid, ntasks, currentpos, currentblocknr) &
        bind(c, name='sion_get_current_locations')
      import :: c_int, c_ptr
      integer(c_int), value :: sid
      integer(c_int), intent(out) :: ntasks
      type(c_ptr), intent(out) :: currentpos, currentblocknr
    end function c_sion_get_current_locations
    integer(c_int) function c_sion_get_mapping(sid, mapping_size, mapping, numfiles) &
        bind(c, name='sion_get_mapping')
      import :: c_int, c_ptr
      integer(c_int), value :: sid
      integer(c_int), intent(out) :: mapping_size, numfiles
      type(c_ptr), intent(out) :: mapping
    end function c_sion_get_mapping
    integer(c_int) function c_sion_get_endianness() bind(c, name='sion_get_endianness')
      import :: c_int
    end function c_sion_get_endianness
    subroutine c_sion_swap(target, source, size, n, do_swap) bind(c, name='sion_swap')
      import :: c_ptr, c_int
      type(c_ptr), value :: target, source
      integer(c_int), value :: size, n, do_swap
    end subroutine c_sion_swap
    integer(c_int) function c_sion_fread_key_iterator_next(sid, key, size) &
        bind(c, name='sion_fread_key_iterator_next')
      import :: c_int, c_int64_t, c_size_t
      integer(c_int), value :: sid
      integer(c_int64_t), intent(out) :: key
      integer(c_size_t), intent(out) :: size
    end function c_sion_fread_key_iterator_next
    integer(c_int) function c_sion_seek_key(sid, key, entrynum, posinentry) bind(c, name='sion_seek_key')
      import :: c_int, c_int64_t
      integer(c_int), value :: sid, entrynum
      integer(c_int64_t), value :: key, posinentry
    end function c_sion_seek_key
    integer(c_int) function c_sion_key_list_iterator_next(sid, key) bind(c, name='sion_key_list_iterator_next')
      import :: c_int, c_int64_t
      integer(c_int), value :: sid
      integer(c_int64_t), intent(out) :: key
    end function c_sion_key_list_iterator_next
    integer(c_int) function c_sion_key_get_stat(sid, key, stat) bind(c, name='sion_key_get_stat')
      import :: c_int, c_int64_t, sion_key_stat_t
      integer(c_int), value :: sid
      integer(c_int64_t), value :: key
      type(sion_key_stat_t), intent(out) :: stat
    end function c_sion_key_get_stat
    type(c_ptr) function c_sheaf_last_error() bind(c, name='sheaf_last_error')
      import :: c_ptr
    end function c_sheaf_last_error
    subroutine c_free(p) bind(c, name='free')
      import :: c_ptr
      type(c_ptr), value :: p
    end subroutine c_free
    integer(c_size_t) function c_strlen(p) bind(c, name='strlen')
      import :: c_ptr, c_size_t
      type(c_ptr), value :: p
    end function c_strlen
    integer(c_int) function c_paropen_mapped_mpi(fname, mode, nfiles, gcomm, nlocaltasks, globalranks, &
        chunksizes, filenrs, lranks, fsblksize, write) bind(c, name='sheaf_f90_paropen_mapped_mpi')
      import :: c_int, c_char, c_int64_t, c_int32_t
      character(kind=c_char), dimension(*), intent(in) :: fname, mode
      integer(c_int), intent(inout) :: nfiles, nlocaltasks
      integer(c_int), value :: gcomm, write
      integer(c_int), intent(inout) :: globalranks(*), filenrs(*), lranks(*)
      integer(c_int64_t), intent(inout) :: chunksizes(*)
      integer(c_int32_t), intent(inout) :: fsblksize
    end function c_paropen_mapped_mpi
    integer(c_int) function c_parreinit_mpi(sid, chunksize) bind(c, name='sion_parreinit_mpi')
      import :: c_int, c_int64_t
      integer(c_int), value :: sid
      integer(c_int64_t), value :: chunksize
    end function c_parreinit_mpi
    integer(c_int) function c_paropen_omp(fname, mode, chunksize, fsblksize, globalrank, fileptr, newfname) &
        bind(c, name='sion_paropen_omp')
      import :: c_int, c_char, c_int64_t, c_int32_t, c_ptr
      character(kind=c_char), dimension(*), intent(in) :: fname, mode
      integer(c_int64_t), intent(inout) :: chunksize
      integer(c_int32_t), intent(inout) :: fsblksize
      integer(c_int), intent(inout) :: globalrank
      type(c_ptr), value :: fileptr
      type(c_ptr), intent(out) :: newfname
    end function c_paropen_omp
  end interface

contains

  ! A Fortran string as a NUL-terminated C string (trailing blanks dropped:
  ! Fortran pads names to their declared length).
  function c_str(s) result(c)
    character(len=*), intent(in) :: s
    character(kind=c_char, len=:), allocatable :: c
    c = trim(s) // c_null_char
  end function c_str

  ! Copy the C string at p into s (blank padded, cut at len(s)); s is
  ! blank when p is NULL.
  subroutine f_str(p, s)
    type(c_ptr), intent(in) :: p
    character(len=*), intent(out) :: s
    character(kind=c_char), pointer :: chars(:)
    integer(c_size_t) :: n
    integer :: i
    s = ' '
    if (.not. c_associated(p)) return
    n = c_strlen(p)
    call c_f_pointer(p, chars, [n])
    do i = 1, int(min(n, int(len(s), c_size_t)))
      s(i:i) = chars(i)
    end do
  end subroutine f_str

  ! f_str, then free(p) (strings the C API malloc'd for the caller).
  subroutine f_str_free(p, s)
    type(c_ptr), intent(in) :: p
    character(len=*), intent(out) :: s
    call f_str(p, s)
    if (c_associated(p)) call c_free(p)
  end subroutine f_str_free

  ! SIONlib's write modes: a token w, wb or bw in the comma-separated mode.
  logical function is_write_mode(mode)
    character(len=*), intent(in) :: mode
    integer :: start, comma
    character(len=:), allocatable :: tok
    is_write_mode = .false.
    start = 1
    do while (start <= len(mode))
      comma = index(mode(start:), ',')
      if (comma == 0) then
        tok = adjustl(trim(mode(start:)))
        start = len(mode) + 1
      else
        tok = adjustl(mode(start:start + comma - 2))
        start = start + comma
      end if
      tok = trim(tok)
      if (tok == 'w' .or. tok == 'wb' .or. tok == 'bw') is_write_mode = .true.
    end do
  end function is_write_mode

  ! size and nitems of a read or write are not negative (they become size_t)
  logical function sizes_ok(size, nitems)
    integer(c_int64_t), intent(in) :: size, nitems
    sizes_ok = size >= 0 .and. nitems >= 0
  end function sizes_ok

  ! A read or write of size*nitems bytes at data through fn (sion_fwrite,
  ! sion_fread); the items done, 0 when a size is negative.
  integer(c_int64_t) function data_io(fn, data, size, nitems, sid)
    procedure(data_fn) :: fn
    type(c_ptr), intent(in) :: data
    integer(c_int64_t), intent(in) :: size, nitems
    integer, intent(in) :: sid
    data_io = 0
    if (sizes_ok(size, nitems)) &
      data_io = int(fn(data, int(size, c_size_t), int(nitems, c_size_t), sid), c_int64_t)
  end function data_io

  ! A collective read or write through fn (sion_coll_fwrite, sion_coll_fread):
  ! a refused size still takes part in the collective (as zero bytes) and
  ! gives 0 items.
  integer(c_int64_t) function coll_io(fn, data, size, nitems, sid)
    procedure(data_fn) :: fn
    type(c_ptr), intent(in) :: data
    integer(c_int64_t), intent(in) :: size, nitems
    integer, intent(in) :: sid
    integer(c_int64_t) :: s, n
    s = max(size, 0_c_int64_t)
    n = max(nitems, 0_c_int64_t)
    if (.not. sizes_ok(size, nitems)) n = 0
    coll_io = int(fn(data, int(s, c_size_t), int(n, c_size_t), sid), c_int64_t)
    if (.not. sizes_ok(size, nitems)) coll_io = 0
  end function coll_io

  ! The MPI and hybrid opens (fn: their glue, Fortran communicator handles).
  ! nfiles is set only on success, globalrank only when it changed (SIONlib
  ! programs may pass constants) and, unless rank_on_failure, on success.
  subroutine paropen_comm(fn, fname, file_mode, nfiles, fgcomm, flcomm, chunksize, fsblksize, &
                          globalrank, newfname, sid, rank_on_failure)
    procedure(paropen_comm_fn) :: fn
    character(len=*), intent(in) :: fname, file_mode
    integer :: nfiles, globalrank
    integer, intent(in) :: fgcomm, flcomm
    integer(c_int64_t), intent(inout) :: chunksize
    integer(c_int32_t), intent(inout) :: fsblksize
    character(len=*), intent(out) :: newfname
    integer, intent(out) :: sid
    logical, intent(in) :: rank_on_failure
    integer(c_int) :: nf, gr
    type(c_ptr) :: pname
    nf = nfiles
    gr = globalrank
    pname = c_null_ptr
    sid = fn(c_str(fname), c_str(file_mode), nf, fgcomm, flcomm, chunksize, fsblksize, gr, pname)
    call f_str_free(pname, newfname)
    if (sid >= 0 .and. nfiles /= nf) nfiles = nf
    if ((sid >= 0 .or. rank_on_failure) .and. globalrank /= gr) globalrank = gr
  end subroutine paropen_comm

end module sheaf_f90_c
