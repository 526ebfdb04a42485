#!/bin/sh
# MPI sensor integration test: mpich, Fortran (see mpi_run.sh)
exec "$(dirname "$0")/mpi_run.sh" mpich f
