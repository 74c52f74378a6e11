! mp2c_checkpoint - an MP2C-style particle checkpoint with SIONlib's Fortran
! 90 MPI interface (sheaf). Every rank owns some particles (an id, a
! position and a velocity each) and writes them as one task of a container;
! a restart reads the container with ANY number of ranks through the mapped
! open: each reader takes over the tasks t with mod(t, nreaders) == rank.
!
!   mpiexec -n 4 mp2c_checkpoint write   ckpt.sion 1000 2   (1000 particles, 2 files)
!   mpiexec -n 3 mp2c_checkpoint restart ckpt.sion
!
! Task layout (all integer*8 / double precision, native byte order):
!   n_local, step, ids(n_local), pos(3, n_local), vel(3, n_local)
! Particle i has pos = (i, i/2, -i) * 0.001 and vel = (1, -1, i) * 0.5, so
! the restart checks every particle it reads, and rank 0 checks that the
! readers together got each particle exactly once (count and id sum).
program mp2c_checkpoint
  use mpi
  use sion_f90_mpi
  implicit none
  character(len=16) :: action
  character(len=512) :: fname, arg
  integer :: ierr, rank, nranks
  integer*8 :: ntotal
  integer :: nfiles

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  call get_command_argument(1, action)
  call get_command_argument(2, fname)
  if (action == 'write') then
    call get_command_argument(3, arg)
    read(arg, *) ntotal
    call get_command_argument(4, arg)
    read(arg, *) nfiles
    call checkpoint(ntotal, nfiles)
  else if (action == 'restart') then
    call restart()
  else
    if (rank == 0) write(*, '(A)') 'usage: mp2c_checkpoint write FILE NPARTICLES NFILES | restart FILE'
    call MPI_Abort(MPI_COMM_WORLD, 2, ierr)
  end if
  call MPI_Finalize(ierr)

contains

  subroutine particle(id, pos, vel)
    integer*8, intent(in) :: id
    double precision, intent(out) :: pos(3), vel(3)
    pos = [dble(id), dble(id) / 2.0d0, -dble(id)] * 0.001d0
    vel = [1.0d0, -1.0d0, dble(id)] * 0.5d0
  end subroutine particle

  subroutine checkpoint(ntotal, nfiles)
    integer*8, intent(in) :: ntotal
    integer, intent(in) :: nfiles
    integer*8 :: nlocal, first, i, hdr(2), chunksize, rc
    integer*8, allocatable :: ids(:)
    double precision, allocatable :: pos(:,:), vel(:,:)
    integer :: fsblksize, globalrank, sid, nf, lcomm
    character(len=512) :: newfname

    ! block distribution with the remainder on the first ranks (as MP2C)
    nlocal = ntotal / nranks
    first = rank * nlocal + min(int(rank, 8), mod(ntotal, int(nranks, 8))) + 1
    if (rank < mod(ntotal, int(nranks, 8))) nlocal = nlocal + 1
    allocate(ids(nlocal), pos(3, nlocal), vel(3, nlocal))
    do i = 1, nlocal
      ids(i) = first + i - 1
      call particle(ids(i), pos(:, i), vel(:, i))
    end do
    hdr = [nlocal, 42_8]
    chunksize = 16 + nlocal * (8 + 48)
    fsblksize = -1
    globalrank = rank
    nf = nfiles
    lcomm = MPI_COMM_WORLD
    call fsion_paropen_mpi(trim(fname), 'bw', nf, MPI_COMM_WORLD, lcomm, chunksize, fsblksize, &
                           globalrank, newfname, sid)
    if (sid < 0) call die('open for writing')
    call fsion_write(hdr, 8_8, 2_8, sid, rc)
    if (nlocal > 0) then
      call fsion_write(ids, 8_8, nlocal, sid, rc)
      call fsion_write(pos, 8_8, 3 * nlocal, sid, rc)
      call fsion_write(vel, 8_8, 3 * nlocal, sid, rc)
      if (rc /= 3 * nlocal) call die('write')
    end if
    call fsion_parclose_mpi(sid, ierr)
    if (ierr /= sion_success) call die('close after writing')
    if (rank == 0) write(*, '(A,I0,A,I0,A,I0,A)') 'mp2c write: OK (', ntotal, ' particles, ', nranks, &
                                                  ' tasks, ', nfiles, ' file(s))'
  end subroutine checkpoint

  subroutine restart()
    integer :: ntasks, nf, sid, fsblksize, nlocaltasks, k, t
    integer :: gr0(1)
    integer*8 :: cs0, hdr(2), rc, i, mine(3), total(3), bad
    integer, allocatable :: globalranks(:), filenrs(:), lranks(:)
    integer*8, allocatable :: chunksizes(:), ids(:)
    double precision, allocatable :: pos(:,:), vel(:,:)
    double precision :: p(3), v(3)

    ! how many tasks wrote the checkpoint: rank 0 asks the container
    ntasks = 0
    if (rank == 0) then
      nf = -1
      fsblksize = -1
      call fsion_open(trim(fname), 'rb', ntasks, nf, cs0, fsblksize, gr0, sid)
      if (sid < 0) then
        ntasks = -1
      else
        call fsion_close(sid, ierr)
      end if
    end if
    call MPI_Bcast(ntasks, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
    if (ntasks < 0) call die('cannot read the checkpoint')

    ! this reader's tasks: t = rank, rank + nranks, ...
    nlocaltasks = 0
    do t = rank, ntasks - 1, nranks
      nlocaltasks = nlocaltasks + 1
    end do
    allocate(globalranks(max(nlocaltasks, 1)), chunksizes(max(nlocaltasks, 1)), &
             filenrs(max(nlocaltasks, 1)), lranks(max(nlocaltasks, 1)))
    globalranks(1:nlocaltasks) = [(t, t = rank, ntasks - 1, nranks)]
    nf = 0
    fsblksize = -1
    call fsion_paropen_mapped_mpi(trim(fname), 'rb', nf, MPI_COMM_WORLD, nlocaltasks, globalranks, &
                                  chunksizes, filenrs, lranks, fsblksize, sid)
    if (sid < 0) call die('mapped open for reading')

    bad = 0
    mine = 0
    do k = 1, nlocaltasks
      call fsion_seek(sid, globalranks(k), sion_current_blk, sion_current_pos, ierr)
      if (ierr /= sion_success) call die('seek to a task')
      call fsion_read(hdr, 8_8, 2_8, sid, rc)
      if (rc /= 2 .or. hdr(2) /= 42) bad = bad + 1
      if (hdr(1) > 0) then
        allocate(ids(hdr(1)), pos(3, hdr(1)), vel(3, hdr(1)))
        call fsion_read(ids, 8_8, hdr(1), sid, rc)
        call fsion_read(pos, 8_8, 3 * hdr(1), sid, rc)
        call fsion_read(vel, 8_8, 3 * hdr(1), sid, rc)
        if (rc /= 3 * hdr(1)) bad = bad + 1
        do i = 1, hdr(1)
          call particle(ids(i), p, v)
          if (any(pos(:, i) /= p) .or. any(vel(:, i) /= v)) bad = bad + 1
        end do
        mine(1:2) = mine(1:2) + [hdr(1), sum(ids)]
        deallocate(ids, pos, vel)
      end if
    end do
    call fsion_parclose_mapped_mpi(sid, ierr)
    if (ierr /= sion_success) bad = bad + 1

    mine(3) = bad
    call MPI_Reduce(mine, total, 3, MPI_INTEGER8, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
    if (rank == 0) then
      if (total(3) == 0 .and. total(2) == total(1) * (total(1) + 1) / 2) then
        write(*, '(A,I0,A,I0,A,I0,A)') 'mp2c restart: OK (', nranks, ' ranks read ', ntasks, ' tasks, ', &
                                       total(1), ' particles)'
      else
        write(*, '(A,I0,A)') 'mp2c restart: FAILED (', total(3), ' bad particles or records)'
        call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
      end if
    end if
  end subroutine restart

  subroutine die(what)
    character(len=*), intent(in) :: what
    character(len=512) :: msg
    call fsion_last_error(msg)
    write(*, '(A,I0,A,A,A,A)') 'mp2c: rank ', rank, ': FAILED ', what, ': ', trim(msg)
    call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
  end subroutine die

end program mp2c_checkpoint
