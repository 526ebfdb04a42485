#!/bin/sh
# MPI_Abort under the MPI sensor: ompi (see mpi_abort_run.sh)
exec "$(dirname "$0")/mpi_abort_run.sh" ompi
