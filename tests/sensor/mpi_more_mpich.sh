#!/bin/sh
# issue 31: Isendrecv(_replace), generalized requests, the Bsend buffer,
# Reduce_local under the MPI sensor: mpich (see mpi_io_run.sh)
exec "$(dirname "$0")/mpi_io_run.sh" mpich c more
