! f90_serial - sion_f90 without MPI: a serial multi-task container written
! the way SIONlib's mp2c converter does (fsion_open with the first elements
! of chunksizes/globalranks, fsion_seek to each task), every data type and
! rank, read back through fsion_open and fsion_open_rank, the getters,
! fsion_swap, key-value records, and bad input (missing file, bad sid,
! negative sizes, write mode for open_rank) that must fail cleanly.
! Usage: f90_serial DIR  (writes DIR/ser.sion, DIR/kv.sion and, per task t,
! DIR/expect_ser.<t>: the bytes of task t for the sioncat comparison)
program f90_serial
  use, intrinsic :: iso_c_binding, only: c_f_pointer, c_ptr, c_int64_t
  use sion_f90
  implicit none
  integer, parameter :: nt = 3
  character(len=512) :: dir, fname, msg
  integer*8 :: chunksizes(nt), rc, chunk, nb, tot, key
  integer :: globalranks(nt), gr2(nt), ntasks, nfiles, sid, ierr, t, eof, e, nbad, cnt
  integer :: fsblksize
  integer :: iv(7), iv2(7), isw, isw2
  integer*8 :: lv(2,3), lv2(2,3), cs2(nt)
  real :: rv(4), rv2(4)
  double precision :: dv(3,2,2), dv2(3,2,2)
  complex :: cv(3), cv2(3)
  logical :: bv(2,2), bv2(2,2)
  character(len=5) :: cc(3), cc2(3)
  integer*8 :: p_ls, p_gr, p_cc, p_cs, gskip, varhdr
  integer :: maxblocks
  integer*8, pointer :: counts(:)
  character(len=11) :: kvbuf

  nbad = 0
  call get_command_argument(1, dir)
  fname = trim(dir) // '/ser.sion'

  ! ---- write 3 tasks, mp2c style ----------------------------------------------
  do t = 1, nt
    chunksizes(t) = 64 * t
    globalranks(t) = 100 + t
  end do
  fsblksize = 64   ! chunks are rounded up to the block size: keep them small
  call fsion_open(trim(fname), 'wb', nt, 1, chunksizes(1), fsblksize, globalranks(1), sid)
  if (sid < 0) call fail('open wb')
  do t = 0, nt - 1
    call fill(t)
    call fsion_seek(sid, t, sion_current_blk, sion_current_pos, ierr)
    if (ierr /= sion_success) call fail('seek to a task in write mode')
    open(unit=31, file=trim(dir)//'/expect_ser.'//achar(48 + t), access='stream', form='unformatted', &
         status='replace')
    call fsion_write(iv, 4_8, 7_8, sid, rc);           call want(rc, 7_8, 'write integer')
    write(31) iv
    call fsion_fwrite(lv(1,1), 8_8, 6_8, sid, rc);     call want(rc, 6_8, 'fwrite integer*8')
    write(31) lv
    call fsion_write(rv, 4_8, 4_8, sid, rc);           call want(rc, 4_8, 'write real')
    write(31) rv
    call fsion_write(dv, 8_8, 12_8, sid, rc);          call want(rc, 12_8, 'write double 3-D')
    write(31) dv
    call fsion_write(cv, 8_8, 3_8, sid, rc);           call want(rc, 3_8, 'write complex')
    write(31) cv
    call fsion_write(bv, 4_8, 4_8, sid, rc);           call want(rc, 4_8, 'write logical 2-D')
    write(31) bv
    call fsion_write(cc, 5_8, 3_8, sid, rc);           call want(rc, 3_8, 'write character array')
    write(31) cc
    close(31)
  end do
  call fsion_close(sid, ierr)
  if (ierr /= sion_success) call fail('close wb')

  ! ---- read all tasks ---------------------------------------------------------
  ntasks = -1
  nfiles = -1
  fsblksize = -1
  call fsion_open(trim(fname), 'rb', ntasks, nfiles, chunk, fsblksize, globalranks(1), sid)
  if (sid < 0) call fail('open rb')
  if (ntasks /= nt .or. nfiles /= 1) call fail('ntasks/nfiles of the read open')
  cs2 = 0
  call fsion_get_chunksizes(sid, cs2, ierr)
  if (ierr /= sion_success .or. any(cs2 < chunksizes)) call fail('fsion_get_chunksizes')
  gr2 = 0
  call fsion_get_globalranks(sid, gr2, ierr)
  if (ierr /= sion_success .or. any(gr2 /= globalranks)) call fail('fsion_get_globalranks')
  call fsion_get_locations(sid, ntasks, maxblocks, gskip, varhdr, p_ls, p_gr, p_cc, p_cs, ierr)
  if (ierr /= sion_success .or. ntasks /= nt .or. maxblocks < 2) call fail('fsion_get_locations')
  call c_f_pointer(transfer(p_cc, c_null()), counts, [nt])
  ! 243 bytes per task in chunks of 64, 128, 192 bytes: 5, 3 and 2 blocks
  if (counts(1) /= 5 .or. counts(2) /= 3 .or. counts(3) /= 2) then
    write(*, *) 'blocks per task:', counts, ' maxblocks', maxblocks
    call fail('block counts through fsion_get_locations')
  end if
  do t = nt - 1, 0, -1
    call fill(t)
    call fsion_seek(sid, t, 0, 0_8, ierr)
    if (ierr /= sion_success) call fail('seek read')
    call read_all(sid)
  end do
  call fsion_get_endianness(e)
  if (e /= 0) call fail('host endianness (little endian expected)')
  call fsion_endianness_swap_needed(sid, e)
  if (e /= 0) call fail('swap needed')
  call fsion_close(sid, ierr)
  if (ierr /= sion_success) call fail('close rb')

  ! ---- one task alone ----------------------------------------------------------
  chunk = 0
  fsblksize = -1
  call fsion_open_rank(trim(fname), 'rb', chunk, fsblksize, 1, sid)
  if (sid < 0) call fail('open_rank')
  call fill(1)
  call read_all(sid)
  call fsion_close(sid, ierr)

  ! ---- fsion_swap ---------------------------------------------------------------
  isw = int(z'01020304')
  call fsion_swap(isw2, isw, 4, 1, 1, ierr)
  if (isw2 /= int(z'04030201') .or. ierr /= 1) call fail('fsion_swap')
  call fsion_swap(isw, isw, 4, 1, 1, ierr)
  if (isw /= int(z'04030201')) call fail('fsion_swap in place')
  call fsion_swap(isw2, isw, 4, 1, 0, ierr)
  if (isw2 /= isw) call fail('fsion_swap copy')

  ! ---- key-value ---------------------------------------------------------------
  call keyval(trim(dir) // '/kv.sion')

  ! ---- bad input: clean failures ---------------------------------------------
  ntasks = -1
  call fsion_open(trim(dir)//'/missing.sion', 'rb', ntasks, nfiles, chunk, fsblksize, globalranks(1), sid)
  if (sid >= 0) call fail('opening a missing file succeeded')
  call fsion_last_error(msg)
  if (index(msg, 'missing.sion') == 0) call fail('the error message does not name the file: '//trim(msg))
  call fsion_read(iv2, 4_8, 7_8, 4711, rc)
  if (rc /= 0) call fail('read on a bad sid')
  call fsion_close(4711, ierr)
  if (ierr == sion_success) call fail('close of a bad sid')
  call fsion_feof(4711, eof)
  if (eof == 0) call fail('feof of a bad sid is 0')
  chunk = 10
  call fsion_open_rank(trim(fname), 'wb', chunk, fsblksize, 0, sid)
  if (sid >= 0) call fail('open_rank in write mode succeeded')
  call fsion_open(trim(dir)//'/neg.sion', 'wb', 1, 1, chunksizes(1), fsblksize, globalranks(1), sid)
  if (sid < 0) call fail('open neg.sion')
  call fsion_write(iv, -4_8, 7_8, sid, rc)
  if (rc /= 0) call fail('a negative size wrote')
  call fsion_write(iv, 4_8, -7_8, sid, rc)
  if (rc /= 0) call fail('a negative count wrote')
  call fsion_read(iv2, 4_8, 7_8, sid, rc)
  if (rc /= 0) call fail('a read in write mode')
  call fsion_close(sid, ierr)

  if (nbad == 0) then
    write(*, '(A)') 'f90_serial: OK'
  else
    write(*, '(A,I0,A)') 'f90_serial: FAILED (', nbad, ' checks)'
    stop 1
  end if

contains

  type(c_ptr) function c_null()
    use, intrinsic :: iso_c_binding, only: c_null_ptr
    c_null = c_null_ptr
  end function c_null

  subroutine fill(t)
    integer, intent(in) :: t
    integer :: k
    iv = [(t * 1000 + k, k = 1, 7)]
    lv = reshape([(int(t, 8) * 2_8**33 - k, k = 1, 6)], [2, 3])
    rv = [(t + 0.5 * k, k = 1, 4)]
    dv = reshape([(dble(t) / 7.0d0 + k, k = 1, 12)], [3, 2, 2])
    cv = [(cmplx(k, t), k = 1, 3)]
    bv = reshape([(mod(k * (t + 1), 3) == 0, k = 1, 4)], [2, 2])
    do k = 1, 3
      write(cc(k), '(A2,I1,I2.2)') 'tk', t, k
    end do
  end subroutine fill

  subroutine read_all(sid)
    integer, intent(in) :: sid
    call fsion_read(iv2, 4_8, 7_8, sid, rc);          call want(rc, 7_8, 'read integer')
    call fsion_fread(lv2, 8_8, 6_8, sid, rc);         call want(rc, 6_8, 'fread integer*8')
    call fsion_read(rv2(1), 4_8, 4_8, sid, rc);       call want(rc, 4_8, 'read real')
    call fsion_read(dv2, 8_8, 12_8, sid, rc);         call want(rc, 12_8, 'read double 3-D')
    call fsion_read(cv2, 8_8, 3_8, sid, rc);          call want(rc, 3_8, 'read complex')
    call fsion_read(bv2, 4_8, 4_8, sid, rc);          call want(rc, 4_8, 'read logical')
    call fsion_read(cc2, 5_8, 3_8, sid, rc);          call want(rc, 3_8, 'read character')
    if (any(iv2 /= iv) .or. any(lv2 /= lv) .or. any(rv2 /= rv) .or. any(dv2 /= dv) .or. &
        any(cv2 /= cv) .or. any(bv2 .neqv. bv) .or. any(cc2 /= cc)) call fail('data read back differ')
    call fsion_feof(sid, eof)
    if (eof /= 1) call fail('feof after the last byte of a task')
    if (fsion_bytes_avail_in_block(sid) > 0) call fail('bytes left at the end')
  end subroutine read_all

  subroutine keyval(kname)
    character(len=*), intent(in) :: kname
    integer*8 :: cs1(1), k1, k2, sz, kk(2)
    integer :: g1(1), n
    cs1(1) = 40
    g1(1) = 0
    fsblksize = -1
    call fsion_open(kname, 'wb,keyval=inline', 1, 1, cs1, fsblksize, g1, sid)
    if (sid < 0) call fail('open keyval wb')
    k1 = 7
    k2 = -2     ! the bits of 2**64-2
    call fsion_fwrite_key('hello world', k1, 1_8, 11_8, sid, rc);  call want(rc, 11_8, 'fwrite_key 1')
    call fsion_fwrite_key(iv, k2, 4_8, 7_8, sid, rc);              call want(rc, 7_8, 'fwrite_key 2')
    call fsion_fwrite_key('HELLO WORLD', k1, 1_8, 11_8, sid, rc);  call want(rc, 11_8, 'fwrite_key 3')
    call fsion_close(sid, ierr)
    if (ierr /= sion_success) call fail('close keyval')
    ntasks = -1
    call fsion_open(kname, 'rb,keyval=inline', ntasks, nfiles, chunk, fsblksize, g1, sid)
    if (sid < 0) call fail('open keyval rb')
    if (fsion_get_keyval_mode(sid) /= sion_keyval_inline) call fail('keyval mode')
    call fsion_fread_key(kvbuf, k1, 1_8, 11_8, sid, rc)
    if (rc /= 11 .or. kvbuf /= 'hello world') call fail('fread_key first record')
    call fsion_fread_key(kvbuf, k1, 1_8, 11_8, sid, rc)
    if (rc /= 11 .or. kvbuf /= 'HELLO WORLD') call fail('fread_key second record')
    iv2 = 0
    call fsion_fread_key(iv2, k2, 4_8, 7_8, sid, rc)
    if (rc /= 7 .or. any(iv2 /= iv)) call fail('fread_key integer record')
    call fsion_key_get_stat(sid, k1, nb, tot, ierr)
    if (ierr /= sion_success .or. nb /= 2 .or. tot /= 22) call fail('key_get_stat')
    call fsion_key_list_iterator_reset(sid, ierr)
    n = 0
    do
      call fsion_key_list_iterator_next(sid, key, ierr)
      if (ierr /= sion_success) exit
      n = n + 1
      if (n <= 2) kk(n) = key
    end do
    if (n /= 2 .or. .not. ((kk(1) == k1 .and. kk(2) == k2) .or. (kk(1) == k2 .and. kk(2) == k1))) &
      call fail('key list iterator')
    call fsion_fread_key_iterator_reset(sid, ierr)
    cnt = 0
    do
      call fsion_fread_key_iterator_next(sid, key, sz, ierr)
      if (ierr /= sion_success) exit
      cnt = cnt + 1
    end do
    if (cnt /= 3) call fail('record iterator')
    call fsion_seek_key(sid, k1, 1, 6_8, ierr)
    call fsion_fread_key(kvbuf(1:5), k1, 1_8, 5_8, sid, rc)
    if (rc /= 5 .or. kvbuf(1:5) /= 'WORLD') call fail('seek_key')
    call fsion_close(sid, ierr)
  end subroutine keyval

  subroutine want(got, expected, what)
    integer*8, intent(in) :: got, expected
    character(len=*), intent(in) :: what
    if (got /= expected) then
      write(*, '(A,A,A,I0,A,I0)') 'f90_serial: ', what, ': rc ', got, ' expected ', expected
      nbad = nbad + 1
    end if
  end subroutine want

  subroutine fail(what)
    character(len=*), intent(in) :: what
    write(*, '(A,A)') 'f90_serial: FAILED ', what
    nbad = nbad + 1
  end subroutine fail

end program f90_serial
