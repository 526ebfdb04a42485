#!/bin/sh
# MPI sensor integration test: ompi, C (see mpi_run.sh)
exec "$(dirname "$0")/mpi_run.sh" ompi c
