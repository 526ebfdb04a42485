#!/bin/sh
# requests and completions, traced, replayed, compared: ompi (see mpi_reqs.sh)
exec "$(dirname "$0")/mpi_reqs.sh" ompi
