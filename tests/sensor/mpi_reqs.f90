! tests/sensor/mpi_reqs.f90 - requests from Fortran (mpif.h): persistent
! requests (Send_init, Recv_init, Startall, Start), Ibsend/Irsend, the
! completions Waitsome, Testany, Testall, Testsome, Request_get_status,
! matched probes, Sendrecv_replace, a cancelled receive. Prints a checksum
! per rank (deterministic).
program mpi_reqs
  implicit none
  include 'mpif.h'
  integer, parameter :: n = 4
  integer :: rank, size, nxt, prv, ierr, i, k, outc, idx, left, msg
  integer :: req(2 * n), pre(2), st(MPI_STATUS_SIZE), sts(MPI_STATUS_SIZE, 2 * n)
  integer :: ind(2 * n), one, bsz, bbuf(1000)
  ! written by MPI after the calls that name them (nonblocking, persistent)
  integer, volatile :: sbuf(n), rbuf(n)
  logical :: flag
  integer(kind=8) :: sum

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  nxt = mod(rank + 1, size)
  prv = mod(rank + size - 1, size)
  sum = 0
  rbuf = 0

  ! persistent: three rounds of Startall, then Start one by one
  call MPI_Recv_init(rbuf, n, MPI_INTEGER, prv, 1, MPI_COMM_WORLD, pre(1), ierr)
  call MPI_Send_init(sbuf, n, MPI_INTEGER, nxt, 1, MPI_COMM_WORLD, pre(2), ierr)
  do k = 1, 3
    sbuf = rank * 10 + k
    call MPI_Startall(2, pre, ierr)
    call MPI_Waitall(2, pre, MPI_STATUSES_IGNORE, ierr)
    sum = sum * 7 + rbuf(1)
  end do
  call MPI_Start(pre(1), ierr)
  call MPI_Start(pre(2), ierr)
  call MPI_Wait(pre(2), MPI_STATUS_IGNORE, ierr)
  call MPI_Wait(pre(1), MPI_STATUS_IGNORE, ierr)
  call MPI_Request_free(pre(1), ierr)
  call MPI_Request_free(pre(2), ierr)

  ! Ibsend and Irsend (the receives posted before a barrier)
  bsz = 4000
  call MPI_Buffer_attach(bbuf, bsz, ierr)
  call MPI_Irecv(rbuf(1), 1, MPI_INTEGER, prv, 2, MPI_COMM_WORLD, req(1), ierr)
  call MPI_Irecv(rbuf(2), 1, MPI_INTEGER, prv, 3, MPI_COMM_WORLD, req(2), ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Ibsend(rank, 1, MPI_INTEGER, nxt, 2, MPI_COMM_WORLD, req(3), ierr)
  call MPI_Irsend(rank, 1, MPI_INTEGER, nxt, 3, MPI_COMM_WORLD, req(4), ierr)
  call MPI_Waitall(4, req, MPI_STATUSES_IGNORE, ierr)
  sum = sum * 7 + rbuf(1) + rbuf(2)
  call MPI_Buffer_detach(bbuf, bsz, ierr)

  ! completions in loops
  do k = 1, 4
    do i = 1, n
      call MPI_Irecv(rbuf(i), 1, MPI_INTEGER, prv, 10 + i, MPI_COMM_WORLD, req(i), ierr)
    end do
    do i = 1, n
      sbuf(i) = rank + i + k
      call MPI_Isend(sbuf(i), 1, MPI_INTEGER, nxt, 10 + i, MPI_COMM_WORLD, req(n + i), ierr)
    end do
    left = 2 * n
    do while (left > 0)
      select case (k)
      case (1)
        call MPI_Waitsome(2 * n, req, outc, ind, sts, ierr)
        left = left - outc
      case (2)
        call MPI_Testsome(2 * n, req, outc, ind, sts, ierr)
        left = left - outc
      case (3)
        call MPI_Testany(n, req, idx, flag, st, ierr)
        if (flag .and. idx /= MPI_UNDEFINED) left = left - 1
        if (left == n) then
          call MPI_Waitall(n, req(n + 1), MPI_STATUSES_IGNORE, ierr)
          left = 0
        end if
      case default
        call MPI_Testall(2 * n, req, flag, sts, ierr)
        if (flag) left = 0
      end select
    end do
    do i = 1, n
      sum = sum * 3 + rbuf(i)
    end do
  end do

  ! Request_get_status polling, then Wait
  call MPI_Irecv(rbuf(1), 1, MPI_INTEGER, prv, 20, MPI_COMM_WORLD, req(1), ierr)
  call MPI_Send(rank, 1, MPI_INTEGER, nxt, 20, MPI_COMM_WORLD, ierr)
  flag = .false.
  do while (.not. flag)
    call MPI_Request_get_status(req(1), flag, st, ierr)
  end do
  call MPI_Wait(req(1), st, ierr)
  sum = sum * 5 + rbuf(1)

  ! matched probe, Sendrecv_replace, a cancelled receive
  call MPI_Send(rank, 1, MPI_INTEGER, nxt, 30, MPI_COMM_WORLD, ierr)
  call MPI_Mprobe(MPI_ANY_SOURCE, 30, MPI_COMM_WORLD, msg, st, ierr)
  call MPI_Mrecv(one, 1, MPI_INTEGER, msg, st, ierr)
  sum = sum * 5 + one
  one = rank
  call MPI_Sendrecv_replace(one, 1, MPI_INTEGER, nxt, 31, prv, 31, MPI_COMM_WORLD, st, ierr)
  sum = sum * 5 + one
  call MPI_Irecv(rbuf(1), 1, MPI_INTEGER, prv, 32, MPI_COMM_WORLD, req(1), ierr)
  call MPI_Cancel(req(1), ierr)
  call MPI_Wait(req(1), st, ierr)
  call MPI_Test_cancelled(st, flag, ierr)
  if (.not. flag) print *, 'rank', rank, 'the cancel failed'

  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  print '(A,I0,A,I0)', 'rank ', rank, ' checksum ', sum
  call MPI_Finalize(ierr)
end program mpi_reqs
