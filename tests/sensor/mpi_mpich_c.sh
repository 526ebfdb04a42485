#!/bin/sh
# MPI sensor integration test: mpich, C (see mpi_run.sh)
exec "$(dirname "$0")/mpi_run.sh" mpich c
