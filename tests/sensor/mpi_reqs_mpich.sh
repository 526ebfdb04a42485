#!/bin/sh
# requests and completions, traced, replayed, compared: mpich (see mpi_reqs.sh)
exec "$(dirname "$0")/mpi_reqs.sh" mpich
