! tests/sensor/mpi_io.f90 - MPI-IO from Fortran (mpif.h) under the sensor.
!
!   mpi_io_f FILE EXPECT
!
! The Fortran counterpart of mpi_io.c, shorter: open, write_at_all, a
! view, iwrite_at + MPI_WAIT, a split collective write through the
! individual pointer (after a seek and get_position), sync, read_at,
! close, delete; each rank writes to
! EXPECT.RANK what it knows of each call (format of mpi_io.c).
program mpi_io_f
  implicit none
  include 'mpif.h'
  integer, parameter :: B = 100
  integer :: rank, nprocs, ierr, fh, req, i, u, amode, bad
  integer :: buf(B), st(MPI_STATUS_SIZE)
  integer(kind=MPI_OFFSET_KIND) :: off, disp, pos
  character(len=4096) :: path, expect, name

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nprocs, ierr)
  call get_command_argument(1, path)
  call get_command_argument(2, expect)
  write (name, '(A,A,I0)') trim(expect), '.', rank
  open (newunit=u, file=trim(name), status='replace', action='write')
  bad = 0
  amode = ior(MPI_MODE_CREATE, MPI_MODE_RDWR)
  call MPI_FILE_OPEN(MPI_COMM_WORLD, trim(path), amode, MPI_INFO_NULL, fh, ierr)
  if (ierr /= MPI_SUCCESS) bad = 1
  write (u, '(A,A,A,I0,A)') 'MPI_File_open file=1 path=', trim(path), &
       ' comm=0 flags=', amode, ' coll=1'

  off = rank * 400
  do i = 1, B
     buf(i) = int(off / 4) + i - 1
  end do
  call MPI_FILE_WRITE_AT_ALL(fh, off, buf, B, MPI_INTEGER, st, ierr)
  write (u, '(A,A,A,I0,A)') 'MPI_File_write_at_all file=1 path=', trim(path), &
       ' offset=', off, ' bytes=400 coll=1 result=400'

  disp = nprocs * 400
  call MPI_FILE_SET_VIEW(fh, disp, MPI_INTEGER, MPI_INTEGER, 'native', &
       MPI_INFO_NULL, ierr)
  write (u, '(A,A,A,I0,A)') 'MPI_File_set_view file=1 path=', trim(path), &
       ' disp=', disp, ' etype=4 ftype=4 coll=1'

  off = rank * B
  do i = 1, B
     buf(i) = int(disp / 4) + rank * B + i - 1
  end do
  call MPI_FILE_IWRITE_AT(fh, off, buf, B, MPI_INTEGER, req, ierr)
  write (u, '(A,A,A,I0,A)') 'MPI_File_iwrite_at file=1 path=', trim(path), &
       ' offset=', disp + rank * 400, ' bytes=400 coll=0 req=+'
  call MPI_WAIT(req, MPI_STATUS_IGNORE, ierr)

  call MPI_FILE_SEEK(fh, int((nprocs + rank) * B, MPI_OFFSET_KIND), MPI_SEEK_SET, ierr)
  write (u, '(A,A,A,I0,A,I0,A,I0,A)') 'MPI_File_seek file=1 path=', trim(path), &
       ' voffset=', (nprocs + rank) * B, ' whence=', MPI_SEEK_SET, &
       ' pos=', disp + (nprocs + rank) * 400, ' coll=0'
  call MPI_FILE_GET_POSITION(fh, pos, ierr)
  write (u, '(A,A,A,I0,A,I0)') 'MPI_File_get_position file=1 path=', trim(path), &
       ' voffset=', pos, ' pos=', disp + (nprocs + rank) * 400
  call MPI_FILE_WRITE_ALL_BEGIN(fh, buf, B, MPI_INTEGER, ierr)
  write (u, '(A,A,A,I0,A)') 'MPI_File_write_all_begin file=1 path=', trim(path), &
       ' offset=', disp + (nprocs + rank) * 400, ' bytes=400 coll=1'
  call MPI_FILE_WRITE_ALL_END(fh, buf, st, ierr)
  write (u, '(A,A,A,I0,A)') 'MPI_File_write_all_end file=1 path=', trim(path), &
       ' offset=', disp + (nprocs + rank) * 400, ' bytes=400 coll=1 result=400'
  call MPI_FILE_SYNC(fh, ierr)
  write (u, '(A,A,A)') 'MPI_File_sync file=1 path=', trim(path), ' coll=1'

  buf = -1
  call MPI_FILE_READ_AT(fh, off, buf, B, MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
  write (u, '(A,A,A,I0,A)') 'MPI_File_read_at file=1 path=', trim(path), &
       ' offset=', disp + rank * 400, ' bytes=400 coll=0 result=400'
  do i = 1, B
     if (buf(i) /= int(disp / 4) + rank * B + i - 1) bad = 1
  end do
  call MPI_FILE_CLOSE(fh, ierr)
  write (u, '(A,A,A)') 'MPI_File_close file=1 path=', trim(path), ' coll=1'
  call MPI_BARRIER(MPI_COMM_WORLD, ierr)
  if (rank == 0) then
     call MPI_FILE_DELETE(trim(path), MPI_INFO_NULL, ierr)
     write (u, '(A,A)') 'MPI_File_delete path=', trim(path)
  end if
  close (u)
  call verdict('mpi_io', rank, bad)
  call MPI_FINALIZE(ierr)
end program mpi_io_f
include 'mpi_verdict.inc'
