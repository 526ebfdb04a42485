#!/bin/sh
# MPI-IO through the mpi_f08 module under the MPI sensor: ompi (see mpi_io_run.sh)
exec "$(dirname "$0")/mpi_io_run.sh" ompi f08
