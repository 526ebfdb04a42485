! tests/sensor/mpi_calls.f90 - calls every MPI function the sensor wraps,
! from Fortran (use mpi). Like mpi_calls.c: each rank accumulates what it
! received into a checksum; rank 0 gathers and prints one line per rank.
! Covers MPI_STATUS_IGNORE, MPI_STATUSES_IGNORE, MPI_ANY_SOURCE, MPI_IN_PLACE.
program mpi_calls
  use mpi
  implicit none
  integer, parameter :: n = 64
  integer :: sbuf(n * 16), rbuf(n * 16)
  integer :: rank, nprocs, nxt, prv, provided, i, idx, color, ierr
  integer :: hr, hs, hn, hp, half, dup
  integer :: wg, lg, low, shm, cart, src, dst, ranks(16), dims(1)
  logical :: periods(1), p2(2), keep(2)
  integer :: d2(2), grid, row
  integer :: idc, dwi, ireq, gr, dg, dga, gc, par, inter, merged, idup2, sd, lr, ls, rs, mr, ms, k, m
  integer :: gidx(16), gedges(32), one(1), me(1), nxt1(1), prv1(1)
  integer :: wt(16), wsd(16), wrd(16)
  logical :: inset
  integer(kind=8) :: check
  integer(kind=8), allocatable :: all(:)
  integer, allocatable :: counts(:), displs(:), rcounts(:), rdispls(:)
  integer :: req(2), st(MPI_STATUS_SIZE), sts(MPI_STATUS_SIZE, 2)
  logical :: flag

  call MPI_Init_thread(MPI_THREAD_SINGLE, provided, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  if (nprocs < 2 .or. nprocs > 16) then
    call MPI_Finalize(ierr)
    stop 1
  end if
  nxt = mod(rank + 1, nprocs)
  prv = mod(rank + nprocs - 1, nprocs)
  do i = 1, n * 16
    sbuf(i) = rank * 1000 + i - 1
  end do
  check = 0

  ! send / recv, even ranks first
  if (mod(rank, 2) == 0) then
    call MPI_Send(sbuf, n, MPI_INTEGER, nxt, 1, MPI_COMM_WORLD, ierr)
    call MPI_Recv(rbuf, n, MPI_INTEGER, prv, 1, MPI_COMM_WORLD, st, ierr)
  else
    call MPI_Recv(rbuf, n, MPI_INTEGER, prv, 1, MPI_COMM_WORLD, st, ierr)
    call MPI_Send(sbuf, n, MPI_INTEGER, nxt, 1, MPI_COMM_WORLD, ierr)
  end if
  check = check + sum(int(rbuf(1:n), 8)) + st(MPI_SOURCE)
  ! ssend / recv from any source, status ignored
  if (mod(rank, 2) == 0) then
    call MPI_Ssend(sbuf, 10, MPI_INTEGER, nxt, 2, MPI_COMM_WORLD, ierr)
    call MPI_Recv(rbuf, 10, MPI_INTEGER, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  else
    call MPI_Recv(rbuf, 10, MPI_INTEGER, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call MPI_Ssend(sbuf, 10, MPI_INTEGER, nxt, 2, MPI_COMM_WORLD, ierr)
  end if
  check = check + sum(int(rbuf(1:10), 8))
  ! isend / irecv / wait
  call MPI_Irecv(rbuf, 5, MPI_INTEGER, prv, 3, MPI_COMM_WORLD, req(1), ierr)
  call MPI_Isend(sbuf, 5, MPI_INTEGER, nxt, 3, MPI_COMM_WORLD, req(2), ierr)
  call MPI_Wait(req(1), st, ierr)
  call MPI_Wait(req(2), MPI_STATUS_IGNORE, ierr)
  check = check + sum(int(rbuf(1:5), 8)) + st(MPI_TAG)
  ! waitall with statuses ignored
  call MPI_Irecv(rbuf, n, MPI_INTEGER, prv, 5, MPI_COMM_WORLD, req(1), ierr)
  call MPI_Isend(sbuf, n, MPI_INTEGER, nxt, 5, MPI_COMM_WORLD, req(2), ierr)
  call MPI_Waitall(2, req, MPI_STATUSES_IGNORE, ierr)
  check = check + sum(int(rbuf(1:n), 8))
  ! waitall with statuses, any source
  call MPI_Irecv(rbuf, 20, MPI_INTEGER, MPI_ANY_SOURCE, 6, MPI_COMM_WORLD, req(1), ierr)
  call MPI_Isend(sbuf, 20, MPI_INTEGER, nxt, 6, MPI_COMM_WORLD, req(2), ierr)
  call MPI_Waitall(2, req, sts, ierr)
  check = check + sum(int(rbuf(1:20), 8)) + sts(MPI_SOURCE, 1)
  ! waitany twice
  call MPI_Irecv(rbuf, 7, MPI_INTEGER, prv, 7, MPI_COMM_WORLD, req(1), ierr)
  call MPI_Isend(sbuf, 7, MPI_INTEGER, nxt, 7, MPI_COMM_WORLD, req(2), ierr)
  do i = 1, 2
    call MPI_Waitany(2, req, idx, st, ierr)
    if (idx == 1) check = check + sum(int(rbuf(1:7), 8)) + st(MPI_SOURCE)
  end do
  ! test until done
  call MPI_Irecv(rbuf, 8, MPI_INTEGER, prv, 8, MPI_COMM_WORLD, req(1), ierr)
  call MPI_Isend(sbuf, 8, MPI_INTEGER, nxt, 8, MPI_COMM_WORLD, req(2), ierr)
  flag = .false.
  do while (.not. flag)
    call MPI_Test(req(1), flag, st, ierr)
  end do
  call MPI_Wait(req(2), MPI_STATUS_IGNORE, ierr)
  check = check + sum(int(rbuf(1:8), 8))
  ! sendrecv
  call MPI_Sendrecv(sbuf, 9, MPI_INTEGER, nxt, 9, rbuf, 9, MPI_INTEGER, prv, 9, &
                    MPI_COMM_WORLD, st, ierr)
  check = check + sum(int(rbuf(1:9), 8)) + st(MPI_SOURCE)
  ! probe then recv
  call MPI_Isend(sbuf, 11, MPI_INTEGER, nxt, 10, MPI_COMM_WORLD, req(2), ierr)
  call MPI_Probe(MPI_ANY_SOURCE, 10, MPI_COMM_WORLD, st, ierr)
  call MPI_Recv(rbuf, 11, MPI_INTEGER, st(MPI_SOURCE), 10, MPI_COMM_WORLD, st, ierr)
  call MPI_Wait(req(2), MPI_STATUS_IGNORE, ierr)
  check = check + sum(int(rbuf(1:11), 8))
  ! iprobe until found, then recv
  call MPI_Isend(sbuf, 12, MPI_INTEGER, nxt, 11, MPI_COMM_WORLD, req(2), ierr)
  flag = .false.
  do while (.not. flag)
    call MPI_Iprobe(prv, 11, MPI_COMM_WORLD, flag, MPI_STATUS_IGNORE, ierr)
  end do
  call MPI_Recv(rbuf, 12, MPI_INTEGER, prv, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call MPI_Wait(req(2), MPI_STATUS_IGNORE, ierr)
  check = check + sum(int(rbuf(1:12), 8))

  ! collectives
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  rbuf(1:n) = sbuf(1:n)
  call MPI_Bcast(rbuf, n, MPI_INTEGER, 1, MPI_COMM_WORLD, ierr)
  check = check + sum(int(rbuf(1:n), 8))
  call MPI_Reduce(sbuf, rbuf, n, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) check = check + sum(int(rbuf(1:n), 8))
  call MPI_Allreduce(sbuf, rbuf, n, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, ierr)
  check = check + sum(int(rbuf(1:n), 8))
  rbuf(1:n) = sbuf(1:n)
  call MPI_Allreduce(MPI_IN_PLACE, rbuf, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  check = check + sum(int(rbuf(1:n), 8))
  call MPI_Gather(sbuf, 4, MPI_INTEGER, rbuf, 4, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) check = check + sum(int(rbuf(1:4 * nprocs), 8))
  allocate(counts(nprocs), displs(nprocs), rcounts(nprocs), rdispls(nprocs))
  do i = 1, nprocs
    counts(i) = i
    displs(i) = (i - 1) * 16
  end do
  call MPI_Gatherv(sbuf, rank + 1, MPI_INTEGER, rbuf, counts, displs, MPI_INTEGER, 1, &
                   MPI_COMM_WORLD, ierr)
  if (rank == 1) then
    do i = 1, nprocs
      check = check + sum(int(rbuf(displs(i) + 1:displs(i) + counts(i)), 8))
    end do
  end if
  call MPI_Scatter(sbuf, 3, MPI_INTEGER, rbuf, 3, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  check = check + sum(int(rbuf(1:3), 8))
  call MPI_Scatterv(sbuf, counts, counts, MPI_INTEGER, rbuf, rank + 1, MPI_INTEGER, 0, &
                    MPI_COMM_WORLD, ierr)
  check = check + sum(int(rbuf(1:rank + 1), 8))
  call MPI_Allgather(sbuf, 2, MPI_INTEGER, rbuf, 2, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  check = check + sum(int(rbuf(1:2 * nprocs), 8))
  call MPI_Allgatherv(sbuf, rank + 1, MPI_INTEGER, rbuf, counts, displs, MPI_INTEGER, &
                      MPI_COMM_WORLD, ierr)
  do i = 1, nprocs
    check = check + sum(int(rbuf(displs(i) + 1:displs(i) + counts(i)), 8))
  end do
  call MPI_Alltoall(sbuf, 2, MPI_INTEGER, rbuf, 2, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  check = check + sum(int(rbuf(1:2 * nprocs), 8))
  do i = 1, nprocs
    rcounts(i) = rank + 1
    rdispls(i) = (i - 1) * 16
  end do
  call MPI_Alltoallv(sbuf, counts, displs, MPI_INTEGER, rbuf, rcounts, rdispls, &
                     MPI_INTEGER, MPI_COMM_WORLD, ierr)
  do i = 1, nprocs
    check = check + sum(int(rbuf(rdispls(i) + 1:rdispls(i) + rcounts(i)), 8))
  end do
  ! the same exchange as an alltoallw: a datatype a rank, byte displacements
  do i = 1, nprocs
    wt(i) = MPI_INTEGER
    wsd(i) = displs(i) * 4
    wrd(i) = rdispls(i) * 4
  end do
  rbuf = 0
  call MPI_Alltoallw(sbuf, counts, wsd, wt, rbuf, rcounts, wrd, wt, MPI_COMM_WORLD, ierr)
  do i = 1, nprocs
    check = check + sum(int(rbuf(rdispls(i) + 1:rdispls(i) + rcounts(i)), 8))
  end do
  call MPI_Reduce_scatter(sbuf, rbuf, counts, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  check = check + sum(int(rbuf(1:rank + 1), 8))
  call MPI_Scan(sbuf, rbuf, 4, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  check = check + sum(int(rbuf(1:4), 8))
  call MPI_Exscan(sbuf, rbuf, 4, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank > 0) check = check + sum(int(rbuf(1:4), 8))

  ! communicators
  color = mod(rank, 2)
  call MPI_Comm_split(MPI_COMM_WORLD, color, rank, half, ierr)
  call MPI_Comm_dup(half, dup, ierr)
  call MPI_Comm_rank(dup, hr, ierr)
  call MPI_Comm_size(dup, hs, ierr)
  hn = mod(hr + 1, hs)
  hp = mod(hr + hs - 1, hs)
  call MPI_Sendrecv(sbuf, 6, MPI_INTEGER, hn, 13, rbuf, 6, MPI_INTEGER, hp, 13, dup, st, ierr)
  check = check + sum(int(rbuf(1:6), 8)) + st(MPI_SOURCE)
  call MPI_Allreduce(sbuf, rbuf, 5, MPI_INTEGER, MPI_SUM, half, ierr)
  check = check + sum(int(rbuf(1:5), 8))
  call MPI_Comm_free(dup, ierr)
  call MPI_Comm_free(half, ierr)

  ! more constructors: the low half by group, the ranks sharing memory,
  ! a periodic ring as a 1-D cartesian communicator; each is used
  do i = 1, nprocs / 2
    ranks(i) = i - 1
  end do
  call MPI_Comm_group(MPI_COMM_WORLD, wg, ierr)
  call MPI_Group_incl(wg, nprocs / 2, ranks, lg, ierr)
  call MPI_Comm_create(MPI_COMM_WORLD, lg, low, ierr)
  if (low /= MPI_COMM_NULL) then
    call MPI_Barrier(low, ierr)
    call MPI_Comm_free(low, ierr)
  end if
  call MPI_Group_free(lg, ierr)
  call MPI_Group_free(wg, ierr)
  call MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, shm, ierr)
  call MPI_Allreduce(sbuf, rbuf, 3, MPI_INTEGER, MPI_SUM, shm, ierr)
  check = check + sum(int(rbuf(1:3), 8))
  call MPI_Comm_free(shm, ierr)
  dims(1) = nprocs
  periods(1) = .true.
  call MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, .false., cart, ierr)
  call MPI_Cart_shift(cart, 0, 1, src, dst, ierr)
  call MPI_Sendrecv(sbuf, 7, MPI_INTEGER, dst, 14, rbuf, 7, MPI_INTEGER, src, 14, cart, st, ierr)
  check = check + sum(int(rbuf(1:7), 8)) + st(MPI_SOURCE)
  call MPI_Comm_free(cart, ierr)
  ! a 2-D grid and its rows (MPI_Cart_sub), a sum along each
  d2 = 0
  call MPI_Dims_create(nprocs, 2, d2, ierr)
  p2 = .false.
  call MPI_Cart_create(MPI_COMM_WORLD, 2, d2, p2, .false., grid, ierr)
  keep(1) = .false.
  keep(2) = .true.
  call MPI_Cart_sub(grid, keep, row, ierr)
  call MPI_Allreduce(sbuf, rbuf, 2, MPI_INTEGER, MPI_SUM, row, ierr)
  check = check + sum(int(rbuf(1:2), 8))
  call MPI_Comm_free(row, ierr)
  call MPI_Comm_free(grid, ierr)

  ! constructors after those, each used (as in mpi_calls.c): a nonblocking
  ! dup, a dup with info (a ring exchange and a sum on it), a graph ring and
  ! its two distributed forms, MPI_Comm_create_group by three overlapping
  ! groups, an intercommunicator of the two halves (an exchange with the same
  ! local rank across, a Barrier, a dup with a Barrier) and its merge; the
  ! even ranks dup MPI_COMM_SELF before it, the odd ones after (local ids
  ! that differ across)
  call MPI_Comm_idup(MPI_COMM_WORLD, idc, ireq, ierr)
  call MPI_Wait(ireq, MPI_STATUS_IGNORE, ierr)
  call MPI_Barrier(idc, ierr)
  call MPI_Comm_free(idc, ierr)
  call MPI_Comm_dup_with_info(MPI_COMM_WORLD, MPI_INFO_NULL, dwi, ierr)
  call MPI_Sendrecv(sbuf, 4, MPI_INTEGER, nxt, 16, rbuf, 4, MPI_INTEGER, prv, 16, dwi, st, ierr)
  check = check + sum(int(rbuf(1:4), 8)) + st(MPI_SOURCE)
  call MPI_Allreduce(sbuf, rbuf, 4, MPI_INTEGER, MPI_MAX, dwi, ierr)
  check = check + sum(int(rbuf(1:4), 8))
  call MPI_Comm_free(dwi, ierr)
  do i = 1, nprocs
    gidx(i) = 2 * i
    gedges(2 * i - 1) = mod(i - 2 + nprocs, nprocs)
    gedges(2 * i) = mod(i, nprocs)
  end do
  call MPI_Graph_create(MPI_COMM_WORLD, nprocs, gidx, gedges, .false., gr, ierr)
  call MPI_Allreduce(sbuf, rbuf, 2, MPI_INTEGER, MPI_SUM, gr, ierr)
  check = check + sum(int(rbuf(1:2), 8))
  call MPI_Comm_free(gr, ierr)
  one(1) = 1
  me(1) = rank
  nxt1(1) = nxt
  prv1(1) = prv
  call MPI_Dist_graph_create(MPI_COMM_WORLD, 1, me, one, nxt1, MPI_UNWEIGHTED, &
                             MPI_INFO_NULL, .false., dg, ierr)
  call MPI_Barrier(dg, ierr)
  call MPI_Comm_free(dg, ierr)
  call MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, prv1, MPI_UNWEIGHTED, 1, nxt1, &
                                      MPI_UNWEIGHTED, MPI_INFO_NULL, .false., dga, ierr)
  call MPI_Barrier(dga, ierr)
  call MPI_Comm_free(dga, ierr)
  ! A = {0, 1}, B = {1, ..}, C = all but 1: every rank in two of them
  call MPI_Comm_group(MPI_COMM_WORLD, wg, ierr)
  do k = 0, 2
    m = 0
    inset = .false.
    do i = 0, nprocs - 1
      if ((k == 0 .and. i <= 1) .or. (k == 1 .and. i >= 1) .or. (k == 2 .and. i /= 1)) then
        if (m < 16) then
          m = m + 1
          ranks(m) = i
          if (i == rank) inset = .true.
        end if
      end if
    end do
    if (inset) then
      call MPI_Group_incl(wg, m, ranks, lg, ierr)
      call MPI_Comm_create_group(MPI_COMM_WORLD, lg, 5, gc, ierr)
      call MPI_Barrier(gc, ierr)
      call MPI_Comm_free(gc, ierr)
      call MPI_Group_free(lg, ierr)
    end if
  end do
  call MPI_Group_free(wg, ierr)
  call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), rank, par, ierr)
  if (mod(rank, 2) == 0) call MPI_Comm_dup(MPI_COMM_SELF, sd, ierr)
  call MPI_Intercomm_create(par, 0, MPI_COMM_WORLD, 1 - mod(rank, 2), 77, inter, ierr)
  if (mod(rank, 2) == 1) call MPI_Comm_dup(MPI_COMM_SELF, sd, ierr)
  call MPI_Comm_free(sd, ierr)
  call MPI_Comm_rank(par, lr, ierr)
  call MPI_Comm_size(par, ls, ierr)
  call MPI_Comm_remote_size(inter, rs, ierr)
  if (lr < ls .and. lr < rs) then
    call MPI_Sendrecv(sbuf, 2, MPI_INTEGER, lr, 14, rbuf, 2, MPI_INTEGER, lr, 14, inter, st, ierr)
    check = check + sum(int(rbuf(1:2), 8)) + st(MPI_SOURCE)
  end if
  call MPI_Barrier(inter, ierr)
  call MPI_Comm_dup(inter, idup2, ierr)
  call MPI_Barrier(idup2, ierr)
  call MPI_Comm_free(idup2, ierr)
  call MPI_Intercomm_merge(inter, mod(rank, 2) == 0, merged, ierr)
  call MPI_Comm_rank(merged, mr, ierr)
  call MPI_Comm_size(merged, ms, ierr)
  call MPI_Sendrecv(sbuf, 3, MPI_INTEGER, mod(mr + 1, ms), 15, rbuf, 3, MPI_INTEGER, &
                    mod(mr + ms - 1, ms), 15, merged, st, ierr)
  check = check + sum(int(rbuf(1:3), 8)) + mr
  call MPI_Comm_free(merged, ierr)
  call MPI_Comm_free(inter, ierr)
  call MPI_Comm_free(par, ierr)

  allocate(all(nprocs))
  call MPI_Gather(check, 1, MPI_INTEGER8, all, 1, MPI_INTEGER8, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    do i = 1, nprocs
      write (*, '(A,I0,A,I0)') 'rank ', i - 1, ' check ', all(i)
    end do
  end if
  call MPI_Finalize(ierr)
end program mpi_calls
