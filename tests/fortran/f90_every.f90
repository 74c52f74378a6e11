! f90_every - every public routine of sion_f90 (serial, common and key-value
! calls) called with a known answer, each checked (check_every_f90.sh makes
! sure no public fsion_* name of the module is missing here). The parallel
! layers' opens and closes (sion_f90_mpi, _omp, _ompi) are tested by f90_mpi,
! f90_omp and f90_ompi.
! Usage: f90_every DIR VECTORS  (writes DIR/ev.sion, DIR/kv.sion; reads the
! SIONlib 1.7.6 vectors bigendian2.sion and multi6.sion from VECTORS)
! Prints "f90_every: OK (N checks)" or the failed checks, exit status 1.
program f90_every
  use, intrinsic :: iso_c_binding, only: c_f_pointer, c_ptr, c_int64_t, c_int32_t
  use sion_f90
  implicit none
  character(len=512) :: dir, vdir, fname, msg
  integer :: nbad = 0, nchecks = 0
  integer :: sid, ierr, ntasks, nfiles, e, e2, i, n
  integer(c_int32_t) :: fsblksize
  integer(c_int64_t) :: cs(2), rc, pos0, chunk, k, sz, nb, tot
  integer :: gr(2), iv(10), iv2(10), mapping_size, numfiles
  integer(c_int64_t) :: lv, lv2
  character(len=20) :: cv, cv2
  integer(c_int64_t) :: p_ls, p_gr, p_bc, p_bs, gskip, varhdr, p_pos, p_blk
  integer :: maxblocks
  integer(c_int64_t), pointer :: a(:)
  integer(c_int32_t) :: map(12)
  integer(c_int32_t) :: sw, sw2

  call get_command_argument(1, dir)
  call get_command_argument(2, vdir)

  ! ---- write: 2 tasks of ev.sion -------------------------------------------
  fname = trim(dir) // '/ev.sion'
  cs = [64_8, 64_8]
  gr = [100, 101]
  fsblksize = 64
  iv = [(i * 11, i = 1, 10)]
  lv = 1234567890123_8
  cv = 'twenty bytes of text'
  call fsion_open(trim(fname), 'wb', 2, 1, cs, fsblksize, gr, sid)
  call check(sid >= 0, 'fsion_open wb')
  call fsion_seek(sid, 0, sion_current_blk, sion_current_pos, ierr)
  call check(ierr == sion_success, 'fsion_seek to task 0 (write)')
  pos0 = fsion_get_position(sid)
  call fsion_write(iv, 4_8, 10_8, sid, rc)
  call check(rc == 10, 'fsion_write 10 integers')
  call fsion_fwrite(lv, 8_8, 1_8, sid, rc)
  call check(rc == 1, 'fsion_fwrite one integer*8')
  call check(fsion_get_position(sid) - pos0 == 48, 'fsion_get_position: 48 bytes on')
  call check(fsion_bytes_avail_in_block(sid) == 16, 'fsion_bytes_avail_in_block: 64 - 48')
  call check(fsion_get_bytes_written(sid) == 48, 'fsion_get_bytes_written')
  call fsion_ensure_free_space(sid, 8_8, ierr)
  call check(ierr == sion_success .and. fsion_bytes_avail_in_block(sid) == 16, 'fsion_ensure_free_space 8')
  call fsion_flush(sid, ierr)
  call check(ierr == sion_success, 'fsion_flush')
  call fsion_seek(sid, 1, sion_current_blk, sion_current_pos, ierr)
  call fsion_write(cv, 1_8, 20_8, sid, rc)
  call check(rc == 20, 'fsion_write 20 characters to task 1')
  call fsion_close(sid, ierr)
  call check(ierr == sion_success, 'fsion_close (write)')

  ! ---- read it back -------------------------------------------------------------
  ntasks = 0
  nfiles = 0
  fsblksize = 0
  call fsion_open(trim(fname), 'rb', ntasks, nfiles, cs, fsblksize, gr, sid)
  call check(sid >= 0 .and. ntasks == 2 .and. nfiles == 1 .and. fsblksize == 64, 'fsion_open rb: 2 tasks, 1 file')
  call check(fsion_get_number_of_files(sid) == 1, 'fsion_get_number_of_files')
  call fsion_get_fileno(sid, n)
  ! SIONlib's serial writer stores file number 1 in the header (a parallel one 0..nfiles-1)
  call check(n == 1, 'fsion_get_fileno of a serially written file: 1')
  call fsion_get_endianness(e)
  call fsion_get_endianess(e2)
  call check((e == 0 .or. e == 1) .and. e2 == e, 'fsion_get_endianness / _endianess (this machine)')
  ! the file was written here: its data are in this machine's order
  call fsion_get_file_endianness(sid, n)
  call check(n == e, 'fsion_get_file_endianness of a file written here')
  call fsion_get_file_endianess(sid, n)
  call check(n == e, 'fsion_get_file_endianess of a file written here')
  call fsion_endianness_swap_needed(sid, n)
  call check(n == 0, 'fsion_endianness_swap_needed of a file written here')
  cs = 0
  gr = 0
  call fsion_get_chunksizes(sid, cs, ierr)
  call check(ierr == sion_success .and. all(cs == [64_8, 64_8]), 'fsion_get_chunksizes')
  call fsion_get_globalranks(sid, gr, ierr)
  call check(ierr == sion_success .and. all(gr == [100, 101]), 'fsion_get_globalranks')
  call fsion_get_locations(sid, ntasks, maxblocks, gskip, varhdr, p_ls, p_gr, p_bc, p_bs, ierr)
  call check(ierr == sion_success .and. ntasks == 2 .and. maxblocks == 1, 'fsion_get_locations')
  call c_f_pointer(transfer(p_bs, c_ptr_null()), a, [2])
  call check(all(a == [48_8, 20_8]), 'fsion_get_locations: block sizes 48, 20')
  call c_f_pointer(transfer(p_gr, c_ptr_null()), a, [2])
  call check(all(a == [100_8, 101_8]), 'fsion_get_locations: global ranks')
  call c_f_pointer(transfer(p_bc, c_ptr_null()), a, [2])
  call check(all(a == [1_8, 1_8]), 'fsion_get_locations: one block each')
  call fsion_get_mapping_spec(sid, mapping_size, numfiles, ierr)
  call check(ierr == sion_success .and. mapping_size <= 0 .and. numfiles == 1, &
             'fsion_get_mapping_spec: a single file has no mapping')
  call fsion_seek(sid, 1, 0, 5_8, ierr)
  call check(ierr == sion_success, 'fsion_seek to task 1, byte 5 (read)')
  call fsion_get_current_locations(sid, ntasks, p_pos, p_blk, ierr)
  call check(ierr == sion_success .and. ntasks == 2, 'fsion_get_current_locations')
  call c_f_pointer(transfer(p_pos, c_ptr_null()), a, [2])
  ! absolute file offsets: task 1's is the position the seek set, 5 bytes into its chunk
  call check(a(2) == fsion_get_position(sid) .and. a(2) - a(1) == 64 + 5, &
             'fsion_get_current_locations: task 1 at byte 5 of its chunk (64 after task 0)')
  call c_f_pointer(transfer(p_blk, c_ptr_null()), a, [2])
  call check(a(2) == 0, 'fsion_get_current_locations: task 1 in block 0')
  call fsion_seek(sid, 0, 0, 0_8, ierr)
  call fsion_feof(sid, n)
  call check(n == 0, 'fsion_feof at the start of task 0')
  iv2 = 0
  call fsion_read(iv2, 4_8, 10_8, sid, rc)
  call check(rc == 10 .and. all(iv2 == iv), 'fsion_read 10 integers')
  lv2 = 0
  call fsion_fread(lv2, 8_8, 1_8, sid, rc)
  call check(rc == 1 .and. lv2 == lv, 'fsion_fread the integer*8')
  call fsion_feof(sid, n)
  call check(n == 1, 'fsion_feof at the end of task 0')
  call check(fsion_get_bytes_read(sid) == 48, 'fsion_get_bytes_read')
  call fsion_close(sid, ierr)
  call check(ierr == sion_success, 'fsion_close (read)')

  chunk = 0
  fsblksize = 0
  call fsion_open_rank(trim(fname), 'rb', chunk, fsblksize, 1, sid)
  call check(sid >= 0 .and. chunk == 64, 'fsion_open_rank task 1')
  cv2 = ' '
  call fsion_read(cv2, 1_8, 20_8, sid, rc)
  call check(rc == 20 .and. cv2 == cv, 'fsion_open_rank: the 20 characters')
  call fsion_close(sid, ierr)

  ! ---- byte order: SIONlib's big-endian vector ------------------------------------
  ntasks = 0
  nfiles = 0
  call fsion_open(trim(vdir) // '/bigendian2.sion', 'rb', ntasks, nfiles, cs, fsblksize, gr, sid)
  call check(sid >= 0 .and. ntasks == 2, 'fsion_open bigendian2.sion')
  call fsion_get_file_endianness(sid, n)
  call check(n == 1, 'fsion_get_file_endianness of bigendian2.sion: 1 (big)')
  call fsion_get_file_endianess(sid, n)
  call check(n == 1, 'fsion_get_file_endianess of bigendian2.sion: 1 (big)')
  call fsion_endianness_swap_needed(sid, n)
  call check(n == merge(1, 0, e == 0), 'fsion_endianness_swap_needed of bigendian2.sion')
  call fsion_close(sid, ierr)
  sw = int(z'01020304', c_int32_t)
  call fsion_swap(sw2, sw, 4, 1, 1, ierr)
  call check(ierr == 1 .and. sw2 == int(z'04030201', c_int32_t), 'fsion_swap of 0x01020304')

  ! ---- a multi-file set: the mapping ----------------------------------------------
  ntasks = 0
  nfiles = 0
  call fsion_open(trim(vdir) // '/multi6.sion', 'rb', ntasks, nfiles, cs, fsblksize, gr, sid)
  call check(sid >= 0 .and. ntasks == 6 .and. nfiles == 3, 'fsion_open multi6.sion: 6 tasks, 3 files')
  call fsion_get_mapping_spec(sid, mapping_size, numfiles, ierr)
  call check(ierr == sion_success .and. mapping_size == 6 .and. numfiles == 3, 'fsion_get_mapping_spec multi6')
  map = -1
  call fsion_get_mapping(sid, map, ierr)
  call check(ierr == sion_success .and. all(map == [0, 0, 0, 1, 1, 0, 1, 1, 2, 0, 2, 1]), &
             'fsion_get_mapping multi6: (file, rank) = (t/2, mod(t,2))')
  call fsion_get_fileno(sid, n)
  call check(n == 0, 'fsion_get_fileno of a whole multi-file set opened serially: 0')
  call fsion_close(sid, ierr)

  ! ---- an error names the file ---------------------------------------------------------
  call fsion_open(trim(dir) // '/no-such.sion', 'rb', ntasks, nfiles, cs, fsblksize, gr, sid)
  call fsion_last_error(msg)
  call check(sid < 0 .and. index(msg, 'no-such.sion') > 0, 'fsion_last_error names the missing file')

  ! ---- key-value ----------------------------------------------------------------------
  fname = trim(dir) // '/kv.sion'
  cs(1) = 64
  gr(1) = 0
  fsblksize = -1
  call fsion_open(trim(fname), 'wb,keyval=inline', 1, 1, cs, fsblksize, gr, sid)
  call check(sid >= 0, 'fsion_open wb,keyval=inline')
  call fsion_fwrite_key('alpha', 7_8, 1_8, 5_8, sid, rc)
  call check(rc == 5, 'fsion_fwrite_key 7 alpha')
  call fsion_fwrite_key('xyz', 9_8, 1_8, 3_8, sid, rc)
  call fsion_fwrite_key('beta', 7_8, 1_8, 4_8, sid, rc)
  call fsion_close(sid, ierr)
  ntasks = 0
  call fsion_open(trim(fname), 'rb,keyval=inline', ntasks, nfiles, cs, fsblksize, gr, sid)
  call check(fsion_get_keyval_mode(sid) == sion_keyval_inline, 'fsion_get_keyval_mode: inline')
  call fsion_key_full_scan(sid, ierr)
  call check(ierr == sion_success, 'fsion_key_full_scan')
  call fsion_key_get_stat(sid, 7_8, nb, tot, ierr)
  call check(ierr == sion_success .and. nb == 2 .and. tot == 9, 'fsion_key_get_stat 7: 2 records, 9 bytes')
  call fsion_key_list_iterator_reset(sid, ierr)
  call check(ierr == sion_success, 'fsion_key_list_iterator_reset')
  call fsion_key_list_iterator_next(sid, k, ierr)
  call check(ierr == sion_success .and. k == 7, 'fsion_key_list_iterator_next: 7 first')
  call fsion_fread_key_iterator_reset(sid, ierr)
  call check(ierr == sion_success, 'fsion_fread_key_iterator_reset')
  call fsion_fread_key_iterator_next(sid, k, sz, ierr)
  call check(ierr == sion_success .and. k == 7 .and. sz == 5, 'fsion_fread_key_iterator_next: key 7, 5 bytes')
  call fsion_seek_key(sid, 7_8, 1, 1_8, ierr)
  call check(ierr == sion_success, 'fsion_seek_key 7, record 1, byte 1')
  cv2 = ' '
  call fsion_fread_key(cv2, 7_8, 1_8, 3_8, sid, rc)
  call check(rc == 3 .and. cv2(1:3) == 'eta', 'fsion_fread_key after the seek: eta')
  call fsion_close(sid, ierr)

  if (nbad > 0) then
    print '(a,i0,a,i0,a)', 'f90_every: ', nbad, ' of ', nchecks, ' checks failed'
    error stop 1
  end if
  print '(a,i0,a)', 'f90_every: OK (', nchecks, ' checks)'

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    character(len=512) :: m
    nchecks = nchecks + 1
    if (ok) return
    nbad = nbad + 1
    call fsion_last_error(m)
    print '(a,a,a,a)', 'FAILED: ', what, '; last error: ', trim(m)
  end subroutine check

  type(c_ptr) function c_ptr_null()
    use, intrinsic :: iso_c_binding, only: c_null_ptr
    c_ptr_null = c_null_ptr
  end function c_ptr_null

end program f90_every
