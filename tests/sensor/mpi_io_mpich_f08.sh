#!/bin/sh
# MPI-IO through the mpi_f08 module under the MPI sensor: mpich (see mpi_io_run.sh)
exec "$(dirname "$0")/mpi_io_run.sh" mpich f08
