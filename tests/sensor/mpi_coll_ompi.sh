#!/bin/sh
# nonblocking and neighbourhood collectives under the MPI sensor: ompi (see mpi_io_run.sh)
exec "$(dirname "$0")/mpi_io_run.sh" ompi c coll
