#!/bin/sh
# nonblocking and neighbourhood collectives under the MPI sensor: mpich (see mpi_io_run.sh)
exec "$(dirname "$0")/mpi_io_run.sh" mpich c coll
