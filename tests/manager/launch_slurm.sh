#!/usr/bin/env bash
# tests/manager/launch_slurm.sh - `tapestry launch` inside a real Slurm
# allocation: a private single-node Slurm (munged, slurmctld, slurmd from
# Debian's packages, as root, with its own slurm.conf, ports, spool and
# state directories and munge key under a temporary directory) runs
#   salloc -n 2 tapestry launch ring-slurm.xml   (<hosts from="slurm"/>)
#   salloc -n 2 tapestry run -- srun --mpi=pmix -n 2 RING
# and the bad inputs: an allocation with fewer slots than processes, a
# description with <hosts from="slurm"/> outside an allocation. Everything
# started is stopped by PID. Exit 77 without root or the packages.
set -u
: "${top_srcdir:?}" "${top_builddir:?}"
T="$top_builddir/manager/tapestry"
skip() { echo "skip: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "not root (slurmd and munged run as root here)"
for p in munged munge slurmctld slurmd salloc srun scontrol sinfo python3 mpicc.openmpi; do
	command -v "$p" >/dev/null || skip "no $p"
done
[ -f "$top_builddir/sensor/.libs/libtapestry-mpi-openmpi.so" ] || skip "no Open MPI sensor"
W=$(mktemp -d /tmp/tapestry-test-slurm.XXXXXX)
pids=()
cleanup() {
	for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
		kill -TERM "${pids[i]}" 2>/dev/null
	done
	for p in "${pids[@]}"; do
		for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.05; done
		kill -KILL "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 99' INT TERM HUP
fail=0
check() { # check DESCRIPTION COMMAND...
	if "${@:2}"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi
}

# munge with its own key and socket
mkdir -p "$W/munge" "$W/spool/ctld" "$W/spool/d" "$W/log"
chmod 711 "$W/munge"
head -c 1024 /dev/urandom >"$W/munge/munge.key"
chmod 600 "$W/munge/munge.key"
munged -F -f --socket="$W/munge/sock" --key-file="$W/munge/munge.key" \
	--pid-file="$W/munge/pid" --log-file="$W/log/munged.log" \
	--seed-file="$W/munge/seed" >"$W/log/munged.out" 2>&1 &
pids+=($!)
for _ in $(seq 100); do [ -S "$W/munge/sock" ] && break; sleep 0.05; done
[ -S "$W/munge/sock" ] || { cat "$W/log/munged.out"; exit 99; }

# slurm.conf on two ports the kernel picked
read -r cport dport < <(python3 -c 'import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
node=$(hostname -s)
cat >"$W/slurm.conf" <<CONF
ClusterName=tapestrytest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$cport
SlurmdPort=$dport
AuthType=auth/munge
AuthInfo=socket=$W/munge/sock
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$W/spool/ctld
SlurmdSpoolDir=$W/spool/d
SlurmctldPidFile=$W/ctld.pid
SlurmdPidFile=$W/d.pid
SlurmctldLogFile=$W/log/ctld.log
SlurmdLogFile=$W/log/d.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
SchedulerType=sched/builtin
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
NodeName=$node NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
export SLURM_CONF="$W/slurm.conf"
slurmctld -D -i >"$W/log/ctld.out" 2>&1 &
pids+=($!)
slurmd -D >"$W/log/d.out" 2>&1 &
pids+=($!)
up=0
for _ in $(seq 200); do
	sinfo -h -o %t 2>/dev/null | grep -q idle && { up=1; break; }
	sleep 0.1
done
[ $up = 1 ] || { tail -n 5 "$W"/log/*; echo "Slurm did not come up"; exit 99; }
echo "ok   private Slurm up (node $node, ports $cport $dport)"

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpicc.openmpi -O1 -o "$W/ring" "$top_srcdir/deploy/examples/ring.c" || exit 99
sed 's/processes="4"/processes="2"/' "$top_srcdir/deploy/examples/ring-slurm.xml" >"$W/ring-slurm.xml"

# 1. launch inside an allocation of 2 tasks
timeout 300 salloc -n 2 "$T" launch -o "$W/job" "$W/ring-slurm.xml" >"$W/l.out" 2>"$W/l.err"
rc=$?
check "salloc -n 2 tapestry launch exits 0 ($rc)" [ "$rc" = 0 ]
[ "$rc" = 0 ] || tail -n 20 "$W/l.err"
check "  ...the node collector on the allocation's node, in one srun step" \
	grep -q "collector 'node-$node' on $node up at .* (srun step, parent manager)" "$W/l.err"
check "  ...its messages in DIR/logs" grep -q "listening" "$W/job/logs/collector-node-$node.log"
check "  ...the ring ran on 2 ranks" grep -q "ring: 100 rounds on 2 ranks" "$W/l.out" "$W/l.err"
n=$(awk -F, '$3=="MPI_Send"' "$W/job/trace.csv" 2>/dev/null | wc -l)
check "  ...200 MPI_Send traced (got $n)" [ "$n" = 200 ]
check "  ...hosts from the allocation in the plan" grep -q "^$node slots=2" "$W/job/plan/hostfile.openmpi"

# 2. tapestry run of srun inside an allocation: MPI sensor from the program
timeout 300 salloc -n 2 "$T" run --no-pingpong -o "$W/job-srun" -- srun --mpi=pmix -n 2 \
	"$W/ring" 20 >"$W/r.out" 2>"$W/r.err"
rc=$?
check "salloc tapestry run -- srun --mpi=pmix exits 0 ($rc)" [ "$rc" = 0 ]
[ "$rc" = 0 ] || tail -n 20 "$W/r.err"
check "  ...Open MPI sensor chosen from the ranks' program" grep -q "sensors libc,mpi,mem, openmpi;" "$W/r.err"
# srun and slurmstepd are launchers, counted apart: "(2 MPI ranks; N launcher processes)"
check "  ...2 MPI ranks traced" grep -Eq "\(2 MPI ranks(\)|; [0-9]+ launcher process)" "$W/r.err"
grep -Eq "\(2 MPI ranks(\)|; [0-9]+ launcher process)" "$W/r.err" || grep "events from" "$W/r.err"

# 3. bad input: fewer slots than processes, one clear line, nothing started
timeout 120 salloc -n 1 "$T" launch -o "$W/job-small" "$W/ring-slurm.xml" >/dev/null 2>"$W/s.err"
rc=$?
check "an allocation of 1 slot for 2 processes fails ($rc)" [ "$rc" = 1 ]
check "  ...saying so" grep -q "2 processes but the Slurm allocation has 1 slots (SLURM_TASKS_PER_NODE=1): allocate at least 2 tasks" "$W/s.err"
check "  ...no job directory" [ ! -e "$W/job-small" ]
check "  ...no collector left" bash -c "! pgrep -f '[t]apestry-collector.*$W' >/dev/null"

# 4. bad input: outside an allocation
env -u SLURM_JOB_NODELIST -u SLURM_TASKS_PER_NODE "$T" plan -o "$W/plan-out" "$W/ring-slurm.xml" 2>"$W/p.err"
check "plan outside an allocation fails" [ $? = 1 ]
check "  ...in one line saying why" [ "$(grep -c 'not inside a Slurm allocation' "$W/p.err")" = 1 ]
check "  ...and only that problem" [ "$(grep -c 'ring-slurm.xml:' "$W/p.err")" = 1 ]
exit $fail
