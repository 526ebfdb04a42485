#!/usr/bin/env bash
# bench/serve.sh - `tapestry serve` on a large synthetic MPI job (bench/post_gen)
# against a small one made the same way (the baseline), issue 24: prints
#   - "first paint, cold": the wall time of the requests a job page makes
#     before it draws (page, script, sheet, job, report.xml, the whole-job
#     timeline at 1200 pixels) on a job never viewed: the report and the
#     timeline answer 409 (not made; the page POSTs build, draws its frame
#     and the job's figures from the index, and fills in the rest as they
#     come);
#   - the one-off work per job, by one child of the server (one
#     post-processing for both): the wall time from that first view until
#     report-quick.xml answers 200 (the counts the page shows first, one read
#     of the job), then report.xml, then the timeline; the child's peak memory
#     (VmRSS, and of it RssAnon: the anonymous part; the rest is file pages
#     of the spilled arrays and of the index, which the kernel reclaims),
#     sampled every 0.2 s; the index file's size;
#   - "first paint, warm": the same requests once both are made (all 200);
#     HTTP on loopback, not a browser's paint;
#   - zoom requests: 20 windows at each zoom level (1/1 .. 1/10^6 of the job,
#     at random places, 1200 pixels): the server's time (its Server-Timing
#     header) and curl's time_total, median and max; the same windows' profile
#     (.../range, the page's range selection), server time; a search by name
#     (.../find) from the start and from the middle of the job;
#   - the server's memory (VmRSS, RssAnon, VmHWM of the serve process) after
#     the requests, for the large job and for the baseline.
#
#   bench/serve.sh [-n EVENTS] [-r RANKS] [-w WORKDIR] TAPESTRY
#
# defaults: 10000000 events, 8 ranks (baseline: EVENTS / 100); WORKDIR under
# /var/tmp. post_gen from TAPESTRY's build directory (make bench) or $POST_GEN.
set -u
n=10000000 ranks=8 work=
while getopts n:r:w: o; do
	case $o in
	n) n=$OPTARG ;; r) ranks=$OPTARG ;; w) work=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# = 1 ] || { echo "usage: $0 [-n N] [-r RANKS] [-w DIR] TAPESTRY" >&2; exit 2; }
T=$(readlink -f "$1")
gen=${POST_GEN:-"$(dirname "$(dirname "$T")")/bench/post_gen"}
[ -x "$gen" ] || { echo "no $gen: run make bench" >&2; exit 2; }
if [ -z "$work" ]; then
	work=$(mktemp -d /var/tmp/tapestry-bench-serve.XXXXXX)
	trap 'kill "$SP" 2>/dev/null; rm -rf "$work"' EXIT
fi
med() { cut -f"$1" "$work/zoom" | sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
kb() { awk -v k="$1" '$1 == k":" {print $2}' "/proc/$2/status" 2>/dev/null; }
mkdir -p "$work/jobs"
"$gen" "$work/jobs/big" "$ranks" "$n" >/dev/null || exit 1
"$gen" "$work/jobs/small" "$ranks" $((n / 100)) >/dev/null || exit 1

"$T" serve --listen 127.0.0.1:0 --jobs "$work/jobs" --descriptions "$work" \
	>"$work/serve.out" 2>&1 & SP=$!
for _ in $(seq 50); do grep -q serving "$work/serve.out" && break; sleep 0.1; done
U=$(sed -n 's|^tapestry: serving \(http://[^ /]*\)/.*|\1|p' "$work/serve.out")
TOK=$(sed -n 's|^tapestry: serving [^ ]*/?token=\([^ ]*\) .*|\1|p' "$work/serve.out")
# every request presents the token, as a script does
curl() { command curl -H "Authorization: Bearer $TOK" "$@"; }

# wait200 URL: seconds until URL answers 200 (polling every 0.1 s)
wait200() {
	local t0=$EPOCHREALTIME
	until [ "$(curl -s -o /dev/null -w '%{http_code}' "$1")" = 200 ]; do sleep 0.1; done
	echo "$EPOCHREALTIME - $t0" | bc
}

# paint JOB: the wall time of the requests of a job page before it draws, ms
# (its scripts: a server without profile.js or timeline.js answers 404)
paint() {
	local t=0 p
	for p in / /app.js /profile.js /timeline.js /style.css "/api/jobs/$1" "/api/jobs/$1/report.xml" \
		"/api/jobs/$1/timeline?w=1200"; do
		t=$(echo "$t + $(curl -s -o /dev/null -w '%{time_total}' "$U$p")" | bc)
	done
	echo "$t * 1000" | bc
}
# childmem: the largest VmRSS and RssAnon (kB) of the server's children
# while $work/building exists, into $work/childmem
childmem() {
	local rss=0 anon=0 c v a
	while [ -e "$work/building" ]; do
		for c in $(pgrep -P "$SP"); do
			v=$(kb VmRSS "$c") a=$(kb RssAnon "$c")
			[ "${v:-0}" -gt "$rss" ] && rss=$v
			[ "${a:-0}" -gt "$anon" ] && anon=$a
		done
		sleep 0.2
	done
	echo "$rss $anon" >"$work/childmem"
}

printf '# %s, %d ranks; baseline %d events; load average %s\n' "$n" "$ranks" $((n / 100)) \
	"$(cut -d' ' -f1-3 /proc/loadavg)"
for job in small big; do
	t0=$EPOCHREALTIME
	touch "$work/building"
	childmem & CM=$!
	printf '%-6s first paint, cold (report and timeline 409, not made) %.1f ms\n' "$job" "$(paint "$job")"
	# what the page does on the 409: POST build (a GET starts no work)
	curl -s -o /dev/null -X POST -H 'X-Tapestry: 1' "$U/api/jobs/$job/build"
	wait200 "$U/api/jobs/$job/report-quick.xml" >/dev/null
	qk=$(echo "$EPOCHREALTIME - $t0" | bc)
	wait200 "$U/api/jobs/$job/report.xml" >/dev/null
	r=$(echo "$EPOCHREALTIME - $t0" | bc)
	i=$(wait200 "$U/api/jobs/$job/timeline?w=1200")
	i=$(echo "$EPOCHREALTIME - $t0" | bc)
	rm -f "$work/building"
	wait "$CM"
	read -r crss canon <"$work/childmem"
	ev=$(curl -s "$U/api/jobs/$job/timeline?w=1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["events"])')
	sz=$(du -m "$work/jobs/$job/.tapestry-serve/timeline.idx" | cut -f1)
	printf '%-6s quick report after %.1f s, report ready after %.1f s, timeline after %.1f s (index %s MB, %s events on the timeline); the child peak VmRSS %s kB, RssAnon %s kB; load average %s\n' \
		"$job" "$qk" "$r" "$i" "$sz" "$ev" "$crss" "$canon" "$(cut -d' ' -f1-3 /proc/loadavg)"
	printf '%-6s first paint, warm (8 requests) %.1f ms\n' "$job" "$(paint "$job")"
	read -r tmin tmax <<<"$(curl -s "$U/api/jobs/$job/timeline?w=1" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["tmin"], d["tmax"])')"
	for z in 1 10 100 1000 10000 100000 1000000; do
		for k in $(seq 20); do
			span=$(( (tmax - tmin) / z ))
			[ "$span" -lt 2 ] && span=2
			a=$(( tmin + (RANDOM * 32768 + RANDOM) % (tmax - tmin - span + 1) ))
			curl -s -o /dev/null -D - -w 'total %{time_total}\n' \
				"$U/api/jobs/$job/timeline?w=1200&t0=$a&t1=$((a + span))" |
				tr -d '\r' | sed -n 's/^Server-Timing: index;dur=//p; s/^total //p' |
				paste - -
		done >"$work/zoom"
		printf '%-6s zoom 1/%-8s server median %6.1f ms max %6.1f ms; with transfer median %6.1f ms max %6.1f ms\n' \
			"$job" "$z" $(med 1) $(cut -f1 "$work/zoom" | sort -n | tail -1) \
			"$(echo "$(med 2) * 1000" | bc)" "$(echo "$(cut -f2 "$work/zoom" | sort -n | tail -1) * 1000" | bc)"
		for k in $(seq 20); do
			span=$(( (tmax - tmin) / z ))
			[ "$span" -lt 2 ] && span=2
			a=$(( tmin + (RANDOM * 32768 + RANDOM) % (tmax - tmin - span + 1) ))
			curl -s -o /dev/null -D - -w 'total %{time_total}\n' \
				"$U/api/jobs/$job/range?t0=$a&t1=$((a + span))" |
				tr -d '\r' | sed -n 's/^Server-Timing: index;dur=//p; s/^total //p' |
				paste - -
		done >"$work/zoom"
		printf '%-6s range 1/%-7s server median %6.1f ms max %6.1f ms\n' \
			"$job" "$z" $(med 1) $(cut -f1 "$work/zoom" | sort -n | tail -1)
	done
	for q in MPI_Allreduce send nosuchcall; do
		for after in "" "&after=$(( (tmin + tmax) / 2 ))"; do
			curl -s -o /dev/null -D - "$U/api/jobs/$job/find?q=$q$after" |
				tr -d '\r' | sed -n 's/^Server-Timing: index;dur=//p'
		done
	done | sort -n | awk -v j="$job" '{v[NR]=$1} END {printf "%-6s find, 6 searches: server median %.1f ms max %.1f ms\n", j, v[int((NR+1)/2)], v[NR]}'

	printf '%-6s server memory: VmRSS %s kB, RssAnon %s kB, VmHWM %s kB\n' "$job" \
		"$(kb VmRSS "$SP")" "$(kb RssAnon "$SP")" "$(kb VmHWM "$SP")"
done
kill "$SP"
wait "$SP" 2>/dev/null
