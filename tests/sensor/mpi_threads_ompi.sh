#!/bin/sh
# point to point from 3 threads a rank (MPI_THREAD_MULTIPLE) under the MPI sensor: ompi (see mpi_io_run.sh)
exec "$(dirname "$0")/mpi_io_run.sh" ompi c threads
