#!/bin/sh
# The MPI-4 large-count forms under the MPI sensor: mpich (Open MPI 4.1 has
# none; see mpi_io_run.sh and mpi_large.c)
exec "$(dirname "$0")/mpi_io_run.sh" mpich c large
