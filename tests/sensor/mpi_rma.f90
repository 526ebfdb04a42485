! tests/sensor/mpi_rma.f90 - one-sided calls and groups from Fortran
! (mpif.h) under the sensor.
!
!   mpi_rma_f EXPECT
!
! The Fortran counterpart of mpi_rma.c, shorter: Comm_group, Group_incl,
! Win_create, a fence epoch with a Put, a lock epoch with a Get, a
! lock_all epoch with an Rput completed by MPI_WAIT, Win_free, Group_free;
! each rank writes to EXPECT.RANK what it knows of each call (format of
! mpi_rma.c). 3 ranks or more.
program mpi_rma_f
  implicit none
  include 'mpif.h'
  integer, parameter :: B = 16
  integer :: rank, nprocs, ierr, u, win, world, gnext, next, prev, req, bad, i
  integer :: buf(B), src(B), got
  integer(kind=MPI_ADDRESS_KIND) :: wsize, disp
  character(len=4096) :: expect, name

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nprocs, ierr)
  call get_command_argument(1, expect)
  write (name, '(A,A,I0)') trim(expect), '.', rank
  open (newunit=u, file=trim(name), status='replace', action='write')
  bad = 0
  next = mod(rank + 1, nprocs)
  prev = mod(rank + nprocs - 1, nprocs)

  call MPI_COMM_GROUP(MPI_COMM_WORLD, world, ierr)
  write (u, '(A,I0,A)') 'MPI_Comm_group comm=0 newgroup=1 size=', nprocs, ' leader=0'
  call MPI_GROUP_INCL(world, 1, (/ next /), gnext, ierr)
  write (u, '(A,I0,A)') 'MPI_Group_incl group=1 newgroup=2 size=1 leader=', next, ' count=1'

  buf = 0
  wsize = B * 4
  call MPI_WIN_CREATE(buf, wsize, 4, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
  write (u, '(A)') 'MPI_Win_create win=1 comm=0 bytes=64 disp_unit=4'
  do i = 1, B
     src(i) = rank * 100 + i - 1
  end do
  call MPI_WIN_FENCE(0, win, ierr)
  write (u, '(A)') 'MPI_Win_fence win=1 assert=0'
  disp = 0
  call MPI_PUT(src, B, MPI_INTEGER, next, disp, B, MPI_INTEGER, win, ierr)
  write (u, '(A,I0,A)') 'MPI_Put win=1 peer=', next, ' bytes=64 tdisp=0'
  call MPI_WIN_FENCE(0, win, ierr)
  write (u, '(A)') 'MPI_Win_fence win=1 assert=0'
  if (buf(1) /= prev * 100 .or. buf(B) /= prev * 100 + B - 1) bad = 1
  call MPI_BARRIER(MPI_COMM_WORLD, ierr)

  call MPI_WIN_LOCK(MPI_LOCK_SHARED, next, 0, win, ierr)
  write (u, '(A,I0,A,I0,A)') 'MPI_Win_lock win=1 peer=', next, ' lock_type=', &
       MPI_LOCK_SHARED, ' assert=0'
  disp = 2
  call MPI_GET(got, 1, MPI_INTEGER, next, disp, 1, MPI_INTEGER, win, ierr)
  write (u, '(A,I0,A)') 'MPI_Get win=1 peer=', next, ' bytes=4 tdisp=2'
  call MPI_WIN_UNLOCK(next, win, ierr)
  write (u, '(A,I0)') 'MPI_Win_unlock win=1 peer=', next
  if (got /= rank * 100 + 2) bad = 1
  call MPI_BARRIER(MPI_COMM_WORLD, ierr)

  call MPI_WIN_LOCK_ALL(0, win, ierr)
  write (u, '(A)') 'MPI_Win_lock_all win=1 assert=0'
  disp = 8
  call MPI_RPUT(src, 4, MPI_INTEGER, prev, disp, 4, MPI_INTEGER, win, req, ierr)
  write (u, '(A,I0,A)') 'MPI_Rput win=1 peer=', prev, ' bytes=16 tdisp=8 req=+'
  call MPI_WAIT(req, MPI_STATUS_IGNORE, ierr)
  call MPI_WIN_UNLOCK_ALL(win, ierr)
  write (u, '(A)') 'MPI_Win_unlock_all win=1'
  call MPI_WIN_FREE(win, ierr)
  write (u, '(A)') 'MPI_Win_free win=1'
  if (buf(9) /= next * 100) bad = 1

  call MPI_GROUP_FREE(gnext, ierr)
  write (u, '(A)') 'MPI_Group_free group=2'
  call MPI_GROUP_FREE(world, ierr)
  write (u, '(A)') 'MPI_Group_free group=1'
  close (u)
  call verdict('mpi_rma', rank, bad)
  call MPI_FINALIZE(ierr)
end program mpi_rma_f
include 'mpi_verdict.inc'
