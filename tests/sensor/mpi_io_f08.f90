! tests/sensor/mpi_io_f08.f90 - MPI-IO through the mpi_f08 module under the
! sensor, Open MPI only (its mpi_f08 calls ompi_file_*_f, which the sensor
! defines). MPICH's mpi_f08 calls PMPI_File_open, PMPI_File_close, PMPI_Wait
! ... directly (nm -D libmpichfort.so: 269 U PMPI_ symbols), which no
! wrapper sees: not traced there (docs/modules/sensor-mpi.md).
!
!   mpi_io_f08 FILE EXPECT
!
! open, write_at_all (status ignored), read_at, iwrite_at + MPI_Wait,
! close, delete; each rank writes to EXPECT.RANK what it knows of each call
! (format of mpi_io.c).
program mpi_io_f08
  use mpi_f08
  implicit none
  type(MPI_File) :: fh
  type(MPI_Status) :: st
  type(MPI_Request) :: req
  integer :: rank, u, amode, bad, i, buf(100)
  integer(kind=MPI_OFFSET_KIND) :: off
  character(len=4096) :: path, expect, name

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call get_command_argument(1, path)
  call get_command_argument(2, expect)
  write (name, '(A,A,I0)') trim(expect), '.', rank
  open (newunit=u, file=trim(name), status='replace', action='write')
  bad = 0
  amode = ior(MPI_MODE_CREATE, MPI_MODE_RDWR)
  call MPI_File_open(MPI_COMM_WORLD, trim(path), amode, MPI_INFO_NULL, fh)
  write (u, '(A,A,A,I0,A)') 'MPI_File_open file=1 path=', trim(path), &
       ' comm=0 flags=', amode, ' coll=1'
  off = rank * 400
  do i = 1, 100
     buf(i) = rank * 1000 + i
  end do
  call MPI_File_write_at_all(fh, off, buf, 100, MPI_INTEGER, MPI_STATUS_IGNORE)
  write (u, '(A,A,A,I0,A)') 'MPI_File_write_at_all file=1 path=', trim(path), &
       ' offset=', off, ' bytes=400 coll=1 result=400'
  ! sync, barrier, sync: MPI's rule for reading after a collective write
  ! (an aggregator may still be writing this rank's part, and under load
  ! it was: the read found old bytes untraced too)
  call MPI_File_sync(fh)
  write (u, '(A,A,A)') 'MPI_File_sync file=1 path=', trim(path), ' coll=1'
  call MPI_Barrier(MPI_COMM_WORLD)
  call MPI_File_sync(fh)
  write (u, '(A,A,A)') 'MPI_File_sync file=1 path=', trim(path), ' coll=1'
  buf = -1
  call MPI_File_read_at(fh, off, buf, 100, MPI_INTEGER, st)
  write (u, '(A,A,A,I0,A)') 'MPI_File_read_at file=1 path=', trim(path), &
       ' offset=', off, ' bytes=400 coll=0 result=400'
  if (buf(100) /= rank * 1000 + 100) bad = 1
  off = 4000 + rank * 400
  call MPI_File_iwrite_at(fh, off, buf, 100, MPI_INTEGER, req)
  write (u, '(A,A,A,I0,A)') 'MPI_File_iwrite_at file=1 path=', trim(path), &
       ' offset=', off, ' bytes=400 coll=0 req=+'
  call MPI_Wait(req, MPI_STATUS_IGNORE)
  call MPI_File_close(fh)
  write (u, '(A,A,A)') 'MPI_File_close file=1 path=', trim(path), ' coll=1'
  call MPI_Barrier(MPI_COMM_WORLD)
  if (rank == 0) then
     call MPI_File_delete(trim(path), MPI_INFO_NULL)
     write (u, '(A,A)') 'MPI_File_delete path=', trim(path)
  end if
  close (u)
  call verdict('mpi_io', rank, bad)
  call MPI_Finalize()
end program mpi_io_f08
include 'mpi_verdict.inc'
