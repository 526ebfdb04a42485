#!/usr/bin/env bash
# bench/post_memory.sh - the manager's post-processing memory on a large
# synthetic MPI trace (bench/post_gen), issue 7: runs `tapestry export -f csv`
# REPS times with each given binary, sampling /proc/PID/status every 0.1 s,
# and prints per run the export time, peak RSS (VmHWM), the largest anonymous
# (RssAnon) and file-backed (RssFile) resident sizes seen; then checks that
# every binary wrote the same CSV.
#
#   bench/post_memory.sh [-n MPI_EVENTS] [-r RANKS] [-k REPS] [-w WORKDIR] TAPESTRY...
#
# defaults: 20000000 events, 8 ranks, 3 reps, WORKDIR under /var/tmp (the job
# and the CSVs need ~1 GB per 10^7 events). The generator is taken from the
# last binary's build directory (bench/post_gen, `make bench`), or $POST_GEN.
# Environment given to the binaries as is (TAPESTRY_SPILL_BYTES, TMPDIR).
set -u
n=20000000 ranks=8 reps=3 work=
while getopts n:r:k:w: o; do
	case $o in
	n) n=$OPTARG ;; r) ranks=$OPTARG ;; k) reps=$OPTARG ;; w) work=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || { echo "usage: $0 [-n N] [-r RANKS] [-k REPS] [-w DIR] TAPESTRY..." >&2; exit 2; }
gen=${POST_GEN:-"$(dirname "$(dirname "$(readlink -f "${!#}")")")/bench/post_gen"}
[ -x "$gen" ] || { echo "no $gen: run make bench" >&2; exit 2; }
if [ -z "$work" ]; then
	work=$(mktemp -d /var/tmp/tapestry-post-memory.XXXXXX)
	trap 'rm -rf "$work"' EXIT
fi
kb() { awk -v k="$1" '$1 == k":" {print $2}' "/proc/$2/status" 2>/dev/null; }

echo "# $n MPI events, $ranks ranks"
"$gen" "$work/job" "$ranks" "$n" || exit 1
echo "# job directory: $(du -sh "$work/job" | cut -f1)"
printf '%-40s %3s %9s %10s %10s %10s\n' binary rep time_s VmHWM_MB RssAnon_MB RssFile_MB
i=0
for bin in "$@"; do
	i=$((i + 1))
	for rep in $(seq 1 "$reps"); do
		out="$work/out$i.csv"
		t0=$(date +%s.%N)
		"$bin" export -f csv -o "$out" "$work/job" 2>"$work/err$i" &
		pid=$!
		hwm=0 anon=0 file=0
		while kill -0 $pid 2>/dev/null; do
			v=$(kb VmHWM $pid); [ -n "$v" ] && [ "$v" -gt "$hwm" ] && hwm=$v
			v=$(kb RssAnon $pid); [ -n "$v" ] && [ "$v" -gt "$anon" ] && anon=$v
			v=$(kb RssFile $pid); [ -n "$v" ] && [ "$v" -gt "$file" ] && file=$v
			sleep 0.1
		done
		wait $pid
		rc=$?
		t1=$(date +%s.%N)
		[ $rc = 0 ] || { echo "FAIL $bin exited $rc:"; cat "$work/err$i"; exit 1; }
		printf '%-40s %3d %9.1f %10d %10d %10d\n' "$bin" "$rep" \
			"$(echo "$t1 - $t0" | bc)" $((hwm / 1024)) $((anon / 1024)) $((file / 1024))
	done
done
status=0
for k in $(seq 2 $i); do
	if cmp -s "$work/out1.csv" "$work/out$k.csv"; then
		echo "same CSV: binary 1 and binary $k ($(wc -l <"$work/out1.csv") lines)"
	else
		echo "DIFFERENT CSV: binary 1 and binary $k"
		status=1
	fi
done
exit $status
