! tests/sensor/mpi_ring.f90 - a token ring in Fortran for the MPI sensor.
! Same ring as mpi_ring.c: 5 rounds of a 256-double token; rank 0 prints
! the final token sum, which must not change when the sensor is preloaded.
program mpi_ring
  use mpi
  implicit none
  integer, parameter :: rounds = 5, ntok = 256, tag = 7
  double precision :: token(ntok)
  integer :: rank, nprocs, r, i, nxt, prv, ierr
  integer :: status(MPI_STATUS_SIZE)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  nxt = mod(rank + 1, nprocs)
  prv = mod(rank + nprocs - 1, nprocs)
  do i = 1, ntok
    if (rank == 0) then
      token(i) = dble(i - 1)
    else
      token(i) = 0d0
    end if
  end do
  do r = 1, rounds
    if (rank == 0) then
      call MPI_Send(token, ntok, MPI_DOUBLE_PRECISION, nxt, tag, MPI_COMM_WORLD, ierr)
      call MPI_Recv(token, ntok, MPI_DOUBLE_PRECISION, prv, tag, MPI_COMM_WORLD, status, ierr)
    else
      call MPI_Recv(token, ntok, MPI_DOUBLE_PRECISION, prv, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
      token = token + dble(rank)
      call MPI_Send(token, ntok, MPI_DOUBLE_PRECISION, nxt, tag, MPI_COMM_WORLD, ierr)
    end if
  end do
  if (rank == 0) then
    write (*, '(A,I0,A,I0,A,F0.1)') 'ring size ', nprocs, ' rounds ', rounds, ' token sum ', sum(token)
  end if
  call MPI_Finalize(ierr)
end program mpi_ring
