# tests/sensor/mpi_io_exports.sh - sourced by mpi_io_run.sh: the exports
# of the MPI-IO job ($job), checked against the program's expectations
# ($tmp/expect.RANK). Uses $tapestry, $tmp, $job, $flavour, $NP.
#
# - OTF2 (when built and otf2-print is there): one IoHandle per file a rank
#   opened, one IoRegularFile; a handle created per open and destroyed per
#   close; an IoOperationBegin per read, write and sync (not per _end), as
#   many IoOperationComplete (the nonblocking ones at their MPI_Wait), an
#   IoOperationIssued per nonblocking call and per split collective.
# - Paje and Chrome: every MPI-IO call as a state / complete event, with
#   the path (Chrome args).
# - SimGrid time-independent trace: a sleep per MPI-IO call that worked and
#   per MPI_Wait on an MPI-IO request, counted in one warning line; the
#   replay runs (when smpirun is there).

# sum_calls_bytes ERE: "CALLS BYTES" of the expectation lines whose name
# matches ERE (calls: all of them; bytes: of those that did not fail)
sum_calls_bytes() {
	printf '%s\n' "$_ex" | awk -v re="$1" '$1 ~ re { n++
		if ($0 !~ /failed=1/) for (i = 2; i <= NF; i++) if ($i ~ /^bytes=/) { sub(/^bytes=/, "", $i); b += $i } }
		END { print n + 0, b + 0 }'
}

# sum_calls_moved ERE: "CALLS BYTES" as sum_calls_bytes, the bytes being
# what the calls moved (the report's rule, proto_ev_moved): the status's
# count (result=) where the line has one, a nonblocking access's
# completion's status count (done=), what was asked where it has neither
sum_calls_moved() {
	printf '%s\n' "$_ex" | awk -v re="$1" '$1 ~ re { n++
		if ($0 ~ /failed=1/) next
		m = -1; a = 0
		for (i = 2; i <= NF; i++) {
			if ($i ~ /^bytes=/) { v = $i; sub(/^bytes=/, "", v); a = v }
			if ($i ~ /^(result|done)=/) { v = $i; sub(/^(result|done)=/, "", v); m = v }
		}
		b += m >= 0 ? m : a }
		END { print n + 0, b + 0 }'
}

# report_data KIND...: "CALLS BYTES ..." of the report's <data> element
report_data() {
	"$tapestry" report --xml "$job" 2> /dev/null > "$tmp/rep.xml"
	_out=
	for _k in "$@"; do
		_c=$(sed -n "s/.*<data.* ${_k}_calls=\"\([0-9]*\)\".*/\1/p" "$tmp/rep.xml")
		_b=$(sed -n "s/.*<data.* ${_k}_bytes=\"\([0-9]*\)\".*/\1/p" "$tmp/rep.xml")
		_out="$_out $_c $_b"
	done
	echo $_out
}

# otf2_printed: the job's OTF2 export printed, events in $tmp/o.evts and
# definitions in $tmp/o.defs; false when OTF2 or otf2-print is not there.
otf2_printed() {
	command -v otf2-print > /dev/null &&
		"$tapestry" export -f otf2 -o "$tmp/o.otf2" "$job" 2> "$tmp/otf2.err" ||
		return 1
	otf2-print "$tmp/o.otf2/traces.otf2" > "$tmp/o.evts" 2>&1
	otf2-print -G "$tmp/o.otf2/traces.otf2" > "$tmp/o.defs" 2>&1
}

# otf2_counts WHAT WANT RECORD...: the number of each RECORD in the printed
# events, " n1 n2 ..."; said with WHAT (and 1 returned) when not WANT.
otf2_counts() {
	_what=$1
	_w=$2
	shift 2
	_got=
	for _r in "$@"; do
		_got="$_got $(grep -c "^$_r " "$tmp/o.evts")"
	done
	[ "$_got" = "$_w" ] && return 0
	echo "FAIL: $flavour: OTF2 $_what:$_got, want$_w"
	return 1
}

# otf2_quiet: otf2-print said no warning nor error (the region of the
# failed calls' mpi_error records aside); else said, 1.
otf2_quiet() {
	grep -i 'warning\|error' "$tmp/o.evts" "$tmp/o.defs" |
		grep -qv '"mpi_error"' || return 0
	echo "FAIL: $flavour: otf2-print complains"
	grep -i 'warning\|error' "$tmp/o.evts" "$tmp/o.defs" | grep -v '"mpi_error"' |
		head -n 5
	return 1
}

# replay_runs WHAT: the job's replay in SimGrid (when smpirun is there)
# runs to its end; else said, 1.
replay_runs() {
	command -v smpirun > /dev/null || return 0
	timeout 300 "$tapestry" replay -o "$tmp/replay" "$job" \
		> "$tmp/replay.out" 2>&1
	grep -q '^simulated time: ' "$tmp/replay.out" && return 0
	echo "FAIL: $flavour: the replay of the $1 job did not run"
	tail -n 20 "$tmp/replay.out"
	return 1
}

mpi_io_exports() {
	_bad=0
	_ex=$(cat "$tmp"/expect.*)
	_ops=$(printf '%s\n' "$_ex" | grep -E '^MPI_File_(i?(read|write)|sync)' |
		grep -v -e '_end ' -e 'failed=1' | wc -l)
	_nb=$(printf '%s\n' "$_ex" | grep -c 'req=+')
	_split=$(printf '%s\n' "$_ex" | grep -c '^MPI_File_[a-z_]*_begin ')
	_opens=$(printf '%s\n' "$_ex" | grep '^MPI_File_open ' | grep -vc 'failed=1')
	_closes=$(printf '%s\n' "$_ex" | grep -c '^MPI_File_close ')
	_files=$(printf '%s\n' "$_ex" | grep '^MPI_File_open ' | grep -v 'failed=1' |
		sed 's/.* path=\([^ ]*\).*/\1/' | sort -u | wc -l)
	_worked=$(printf '%s\n' "$_ex" | grep -vc 'failed=1')
	_all=$(printf '%s\n' "$_ex" | wc -l)

	if otf2_printed; then
		_got=
		for _r in IO_OPERATION_BEGIN IO_OPERATION_COMPLETE IO_OPERATION_ISSUED \
			IO_CREATE_HANDLE IO_DESTROY_HANDLE; do
			_got="$_got $(grep -c "^$_r " "$tmp/o.evts")"
		done
		_got="$_got $(grep -c '^IO_HANDLE ' "$tmp/o.defs") $(grep -c '^IO_REGULAR_FILE ' "$tmp/o.defs")"
		_want=" $_ops $_ops $((_nb + _split)) $_opens $_closes $_opens $_files"
		if [ "$_got" != "$_want" ]; then
			echo "FAIL: $flavour: OTF2 I/O records (begin complete issued create" \
				"destroy handles files):$_got, want$_want"
			_bad=1
		fi
		otf2_quiet || _bad=1
	fi

	"$tapestry" export -f chrome -o "$tmp/c.json" "$job" 2> "$tmp/chrome.err" || {
		echo "FAIL: $flavour: export chrome"; cat "$tmp/chrome.err"; return 1; }
	_n=$(grep -o '"name":"MPI_File_[a-z_]*"' "$tmp/c.json" | wc -l)
	_p=$(grep -o '"name":"MPI_File_[a-z_]*"[^}]*"path":"'"$tmp/data"'"' "$tmp/c.json" | wc -l)
	_wp=$(printf '%s\n' "$_ex" | grep -c " path=$tmp/data\( \|$\)")
	if [ "$_n.$_p" != "$_all.$_wp" ]; then
		echo "FAIL: $flavour: Chrome: $_n MPI-IO events (want $_all), $_p with the" \
			"data file's path (want $_wp)"
		_bad=1
	fi
	"$tapestry" export -f paje -o "$tmp/p.paje" "$job" 2> "$tmp/paje.err" || {
		echo "FAIL: $flavour: export paje"; cat "$tmp/paje.err"; return 1; }
	for _name in $(printf '%s\n' "$_ex" | cut -d' ' -f1 | grep -vi 'group' | sort -u); do
		grep -q "\"$_name\"" "$tmp/p.paje" || {
			echo "FAIL: $flavour: Paje: no $_name"; _bad=1; }
	done

	# the report: reads and writes, and the bytes they moved (a split
	# collective's once, at its _end; a nonblocking one's at its
	# completion; a read at the end of the file 0: its status says so,
	# though it asked for 400)
	_nobegin=$(printf '%s\n' "$_ex" | grep -v '_begin ')
	_want="$(_ex=$_nobegin; sum_calls_moved '^MPI_File_i?read')"
	_want="$_want $(_ex=$_nobegin; sum_calls_moved '^MPI_File_i?write')"
	_got=$(report_data mpiio_read mpiio_write)
	if [ "$_got" != "$_want" ]; then
		echo "FAIL: $flavour: report: MPI-IO reads, bytes, writes, bytes: $_got, want $_want"
		_bad=1
	fi

	"$tapestry" export -f simgrid-ti -o "$tmp/ti" "$job" 2> "$tmp/ti.err" || {
		echo "FAIL: $flavour: export simgrid-ti"; cat "$tmp/ti.err"; return 1; }
	_sl=$(cat "$tmp"/ti/rank_*.txt | grep -c '^[0-9]* sleep [0-9.]*$')
	_warn=$(sed -n 's/.*warning: \([0-9]*\) MPI-IO calls and completions of their requests replayed as sleeps.*/\1/p' "$tmp/ti.err")
	if [ "$_sl.$_warn" != "$((_worked + _nb)).$((_worked + _nb))" ]; then
		echo "FAIL: $flavour: SimGrid: $_sl sleeps, warning counts '$_warn'," \
			"want $((_worked + _nb)) (MPI-IO calls that worked and waits on their requests)"
		cat "$tmp/ti.err"
		_bad=1
	fi
	# the 2011 dialect has no sleep: computations, said in the same line
	"$tapestry" export -f simgrid-ti-2011 -o "$tmp/ti11" "$job" 2> "$tmp/ti11.err" || {
		echo "FAIL: $flavour: export simgrid-ti-2011"; cat "$tmp/ti11.err"; return 1; }
	grep -q "warning: $((_worked + _nb)) MPI-IO calls and completions of their requests replayed as computations" \
		"$tmp/ti11.err" || {
		echo "FAIL: $flavour: simgrid-ti-2011: no warning line for the MPI-IO calls"
		cat "$tmp/ti11.err"; _bad=1; }
	if grep -q 'requests never completed\|completions of requests not traced' "$tmp/ti.err"; then
		echo "FAIL: $flavour: SimGrid: MPI-IO requests seen as p2p ones"
		cat "$tmp/ti.err"
		_bad=1
	fi
	replay_runs MPI-IO || _bad=1
	return $_bad
}

# mpi_rma_exports: the one-sided job. SimGrid: a sleep per call and per
# MPI_Wait on a one-sided request, one warning line per kind with its
# count; the report counts each kind; OTF2 RMA records; the replay runs.
mpi_rma_exports() {
	_bad=0
	_ex=$(cat "$tmp"/expect.*)
	# the group calls, attach, detach, sync and shared_query are local: no
	# replay time; failed calls are skipped
	_local='^MPI_Win_(attach|detach|sync|shared_query) '
	_all=$(printf '%s\n' "$_ex" | grep -vi 'group' | grep -Ev "$_local" | grep -vc 'failed=1')
	_nb=$(printf '%s\n' "$_ex" | grep -c 'req=+')
	"$tapestry" export -f simgrid-ti -o "$tmp/ti" "$job" 2> "$tmp/ti.err" || {
		echo "FAIL: $flavour: export simgrid-ti"; cat "$tmp/ti.err"; return 1; }
	_sl=$(cat "$tmp"/ti/rank_*.txt | grep -c '^[0-9]* sleep [0-9.]*$')
	if [ "$_sl" != $((_all + _nb)) ]; then
		echo "FAIL: $flavour: SimGrid: $_sl sleeps, want $((_all + _nb))"
		_bad=1
	fi
	"$tapestry" report --xml "$job" > "$tmp/rep.xml" 2> "$tmp/rep.err" || {
		echo "FAIL: $flavour: report"; cat "$tmp/rep.err"; return 1; }
	for _name in $(printf '%s\n' "$_ex" | grep -Ev "$_local" | cut -d' ' -f1 | grep -vi 'group' | sort -u); do
		_n=$(printf '%s\n' "$_ex" | grep -c "^$_name ")
		_ok=$(printf '%s\n' "$_ex" | grep "^$_name " | grep -vc 'failed=1')
		_w=$(sed -n "s/.*warning: \([0-9]*\) $_name calls replayed as sleeps.*/\1/p" "$tmp/ti.err")
		_r=$(sed -n "s/.*<events type=\"$_name\" count=\"\([0-9]*\)\".*/\1/p" "$tmp/rep.xml")
		if [ "$_w.$_r" != "$_ok.$_n" ]; then
			echo "FAIL: $flavour: $_name: SimGrid warning counts '$_w' (want $_ok)," \
				"report '$_r' (want $_n)"
			_bad=1
		fi
	done
	_want="$(sum_calls_bytes '^MPI_R?[Pp]ut$') $(sum_calls_bytes '^MPI_R?[Gg]et$')"
	_want="$_want $(sum_calls_bytes '^MPI_(R?[Aa]ccumulate|R?[Gg]et_accumulate|Fetch_and_op|Compare_and_swap)$')"
	_got=$(report_data rma_put rma_get rma_acc)
	if [ "$_got" != "$_want" ]; then
		echo "FAIL: $flavour: report: one-sided puts, bytes, gets, bytes, accumulates," \
			"bytes: $_got, want $_want"
		_bad=1
	fi
	_w=$(sed -n 's/.*warning: \([0-9]*\) completions of one-sided requests replayed.*/\1/p' "$tmp/ti.err")
	[ "$_w" = "$_nb" ] || { echo "FAIL: $flavour: SimGrid: '$_w' completions of one-sided requests, want $_nb"; _bad=1; }
	if grep -q 'requests never completed\|completions of requests not traced' "$tmp/ti.err"; then
		echo "FAIL: $flavour: SimGrid: one-sided requests seen as p2p ones"
		cat "$tmp/ti.err"
		_bad=1
	fi
	# OTF2: an RmaWin per window a rank made, created and destroyed; an
	# RmaPut / RmaGet / RmaAtomic per operation with a real target, each
	# completed at a synchronisation; RmaCollectiveBegin/End around window
	# construction, destruction, fence, post, start, complete, wait; an
	# RmaRequestLock per lock and lock_all, an RmaReleaseLock per unlock,
	# an RmaSync per flush and Win_sync
	if otf2_printed; then
		_ops=$(printf '%s\n' "$_ex" | grep -v 'peer=-' | grep -E '^MPI_(R?put|R?get|R?accumulate|R?get_accumulate|Fetch_and_op|Compare_and_swap) ' -i)
		_put=$(printf '%s\n' "$_ops" | grep -c '^MPI_R\{0,1\}[Pp]ut ')
		_get=$(printf '%s\n' "$_ops" | grep -c '^MPI_R\{0,1\}[Gg]et ')
		_at=$(printf '%s\n' "$_ops" | grep -vc '^MPI_R\{0,1\}[PpGg][ue]t ')
		_mk=$(printf '%s\n' "$_ex" | grep -c '^MPI_Win_\(create\|allocate\)')
		_fr=$(printf '%s\n' "$_ex" | grep -c '^MPI_Win_free ')
		_got=
		for _r in RMA_PUT RMA_GET RMA_ATOMIC RMA_OP_COMPLETE_BLOCKING RMA_WIN_CREATE \
			RMA_WIN_DESTROY; do
			_got="$_got $(grep -c "^$_r " "$tmp/o.evts")"
		done
		_got="$_got $(grep -c '^RMA_WIN ' "$tmp/o.defs")"
		_want=" $_put $_get $_at $((_put + _get + _at)) $_mk $_fr $_mk"
		if [ "$_got" != "$_want" ]; then
			echo "FAIL: $flavour: OTF2 RMA records (put get atomic complete create" \
				"destroy windows):$_got, want$_want"
			_bad=1
		fi
		# collective synchronisations bracketed; locks, releases, syncs
		_ok=$(printf '%s\n' "$_ex" | grep -v 'failed=1')
		_coll=$(printf '%s\n' "$_ok" | grep -Ec '^MPI_Win_(create|create_dynamic|allocate|allocate_shared|free|fence|post|start|complete|wait) ')
		_lock=$(printf '%s\n' "$_ok" | grep -Ec '^MPI_Win_lock(_all)? ')
		_rel=$(printf '%s\n' "$_ok" | grep -Ec '^MPI_Win_unlock(_all)? ')
		_sync=$(printf '%s\n' "$_ok" | grep -Ec '^MPI_Win_(flush|flush_local|flush_all|flush_local_all|sync) ')
		otf2_counts "RMA synchronisation records (collective begin end, lock release sync)" \
			" $_coll $_coll $_lock $_rel $_sync" RMA_COLLECTIVE_BEGIN \
			RMA_COLLECTIVE_END RMA_REQUEST_LOCK RMA_RELEASE_LOCK RMA_SYNC || _bad=1
		# lock types: MPI_LOCK_SHARED is 2 (Open MPI) or 235 (MPICH); lock_all shared
		_excl=$(printf '%s\n' "$_ok" | grep '^MPI_Win_lock ' | grep -Evc ' lock_type=(2|235) ')
		_got="$(grep '^RMA_REQUEST_LOCK ' "$tmp/o.evts" | grep -c 'Type: EXCLUSIVE')"
		_got="$_got $(grep '^RMA_REQUEST_LOCK ' "$tmp/o.evts" | grep -c 'Type: SHARED')"
		if [ "$_got" != "$_excl $((_lock - _excl))" ]; then
			echo "FAIL: $flavour: OTF2 locks exclusive, shared: $_got, want $_excl $((_lock - _excl))"
			_bad=1
		fi
		otf2_quiet || _bad=1
	fi
	replay_runs one-sided || _bad=1
	return $_bad
}

# mpi_coll_exports: the exports of the collectives job (mpi_coll.c)
# - CSV, Paje and Chrome: every collective of the expectations by name;
# - OTF2: an MpiCollectiveBegin and End per collective (a nonblocking one's
#   End at its completion);
# - SimGrid time-independent trace: the blocking forms at the completions,
#   the warning lines, the replay.
mpi_coll_exports() {
	_bad=0
	_all=$(cat "$tmp"/expect.* | wc -l)
	"$tapestry" export -f csv -o "$tmp/c.csv" "$job" 2> "$tmp/csv.err" || {
		echo "FAIL: $flavour: export csv"; cat "$tmp/csv.err"; return 1; }
	_n=$(awk -F, '$3 ~ /^MPI_(I[a-z]|Alltoallw|Reduce_scatter_block|Neighbor)/ && $3 != "MPI_Init"' "$tmp/c.csv" | wc -l)
	if [ "$_n" != "$_all" ]; then
		echo "FAIL: $flavour: CSV: $_n collectives, want $_all"
		_bad=1
	fi
	"$tapestry" export -f chrome -o "$tmp/c.json" "$job" 2> "$tmp/chrome.err" || {
		echo "FAIL: $flavour: export chrome"; cat "$tmp/chrome.err"; return 1; }
	_n=$(grep -Eo '"name":"MPI_(I[a-z]|Alltoallw|Reduce_scatter_block|Neighbor)[a-z_]*"' "$tmp/c.json" | grep -vc Init)
	if [ "$_n" != "$_all" ]; then
		echo "FAIL: $flavour: Chrome: $_n collectives, want $_all"
		_bad=1
	fi
	"$tapestry" export -f paje -o "$tmp/c.paje" "$job" 2> "$tmp/paje.err" || {
		echo "FAIL: $flavour: export paje"; cat "$tmp/paje.err"; return 1; }
	if ! grep -q 'MPI_Ineighbor_alltoallw' "$tmp/c.paje"; then
		echo "FAIL: $flavour: Paje: no MPI_Ineighbor_alltoallw"
		_bad=1
	fi
	if otf2_printed; then
		# the MPI_Reduce at the program's end is a collective too; the
		# neighbourhood ones have no OTF2 operation (regions only)
		_w=$(($(cat "$tmp"/expect.* | grep -vc '^MPI_I\{0,1\}[Nn]eighbor_') + NP))
		otf2_counts "collective begins, ends" " $_w $_w" MPI_COLLECTIVE_BEGIN \
			MPI_COLLECTIVE_END || _bad=1
		# each End on the location of its Begin, after it; a nonblocking
		# one's inside the completion's region (the MPI_W* / MPI_T* leave
		# follows it)
		if ! awk '$1 == "MPI_COLLECTIVE_BEGIN" { open[$2]++ }
			$1 == "MPI_COLLECTIVE_END" { if (open[$2]-- <= 0) bad = 1 }
			END { for (l in open) if (open[l]) bad = 1; exit bad }' "$tmp/o.evts"; then
			echo "FAIL: $flavour: OTF2: collective ends without their begins"
			_bad=1
		fi
		otf2_quiet || _bad=1
	fi
	# SimGrid: each nonblocking collective the blocking one at its
	# completion, one warning line per kind (NP each, the Ibcast 2 NP); Alltoallw and
	# Reduce_scatter_block mapped too; the 5 neighbourhood collectives
	# and 5 completions of nonblocking ones a rank: sleeps; no request
	# left over or unknown; the replay runs
	"$tapestry" export -f simgrid-ti -o "$tmp/ti" "$job" 2> "$tmp/ti.err" || {
		echo "FAIL: $flavour: export simgrid-ti"; cat "$tmp/ti.err"; return 1; }
	_n=$(grep -c "^tapestry: warning: [0-9]* MPI_I[a-z_]* written as [a-z]* at its completion" "$tmp/ti.err")
	grep -q "^tapestry: warning: $((2 * NP)) MPI_Ibcast written as bcast" "$tmp/ti.err" || _n=0
	_m=$(grep -c "^tapestry: warning: $NP MPI_\(Alltoallw\|Reduce_scatter_block\) written as" "$tmp/ti.err")
	_s=$(grep -c "^tapestry: warning: $((NP * 10)) neighbourhood collectives" "$tmp/ti.err")
	if [ "$_n.$_m.$_s" != 17.2.1 ] ||
		grep -q 'never completed\|not traced' "$tmp/ti.err"; then
		echo "FAIL: $flavour: SimGrid export ($_n nonblocking kinds, want 17;" \
			"$_m blocking ones mapped, want 2; neighbourhood line: $_s)"
		cat "$tmp/ti.err"
		_bad=1
	fi
	# (and the reversed world's bcast rooted at world rank NP - 1)
	if ! grep -q "^0 bcast 40 1\$" "$tmp/ti/rank_0.txt" ||
		! grep -q "^0 bcast 4 $((NP - 1))\$" "$tmp/ti/rank_0.txt" ||
		! grep -q "^3 gatherv 16 4 8 12 16 3\$" "$tmp/ti/rank_3.txt"; then
		echo "FAIL: $flavour: SimGrid: no bcast 40 1 on rank 0 or gatherv on rank 3"
		cat "$tmp/ti/rank_0.txt"
		_bad=1
	fi
	replay_runs collectives || _bad=1
	return $_bad
}

# mpi_more_exports: the job of mpi_more.c (issue 31): its calls in the CSV
# and the Chrome trace; in SimGrid's (MPICH 4, which has MPI_Isendrecv)
# each Isendrecv an isend never waited for and an irecv its completion
# waits for, said once a kind; no request left over or unknown; the
# replay runs.
mpi_more_exports() {
	_bad=0
	_re='MPI_(Isendrecv|Isendrecv_replace|Grequest_start|Grequest_complete|Buffer_attach|Buffer_detach|Reduce_local)'
	_all=$(cat "$tmp"/expect.* | wc -l)
	"$tapestry" export -f csv -o "$tmp/m.csv" "$job" 2> "$tmp/csv.err" || {
		echo "FAIL: $flavour: export csv"; cat "$tmp/csv.err"; return 1; }
	_n=$(awk -F, -v re="^$_re\$" '$3 ~ re' "$tmp/m.csv" | wc -l)
	[ "$_n" = "$_all" ] || { echo "FAIL: $flavour: CSV: $_n rows of the calls, want $_all"; _bad=1; }
	"$tapestry" export -f chrome -o "$tmp/m.json" "$job" 2> "$tmp/chrome.err" || {
		echo "FAIL: $flavour: export chrome"; cat "$tmp/chrome.err"; return 1; }
	_n=$(grep -Eo "\"name\":\"$_re\"" "$tmp/m.json" | wc -l)
	[ "$_n" = "$_all" ] || { echo "FAIL: $flavour: Chrome: $_n of the calls, want $_all"; _bad=1; }
	"$tapestry" export -f simgrid-ti -o "$tmp/ti" "$job" 2> "$tmp/ti.err" || {
		echo "FAIL: $flavour: export simgrid-ti"; cat "$tmp/ti.err"; return 1; }
	# (the generalized request's completion: skipped, NP of them)
	if grep -q 'never completed' "$tmp/ti.err" ||
		! grep -q "warning: $NP completions of requests not traced" "$tmp/ti.err"; then
		echo "FAIL: $flavour: SimGrid export left requests"; cat "$tmp/ti.err"; _bad=1
	fi
	if grep -q '^MPI_Isendrecv ' "$tmp/expect.0"; then
		if ! grep -q "warning: $NP MPI_Isendrecv written as isend never waited, irecv" "$tmp/ti.err" ||
			! grep -q "warning: $NP MPI_Isendrecv_replace written as isend never waited, irecv" "$tmp/ti.err" ||
			! grep -q "^0 isend 1 5 400\$" "$tmp/ti/rank_0.txt" ||
			! grep -q "^0 irecv $((NP - 1)) 5 400\$" "$tmp/ti/rank_0.txt" ||
			! grep -q "^0 isend $((NP - 1)) 6 400\$" "$tmp/ti/rank_0.txt" ||
			! grep -q "^0 irecv 1 6 400\$" "$tmp/ti/rank_0.txt"; then
			echo "FAIL: $flavour: SimGrid: the Isendrecvs not as isend + irecv"
			cat "$tmp/ti.err"; head -n 30 "$tmp/ti/rank_0.txt"
			_bad=1
		fi
	fi
	replay_runs more || _bad=1
	return $_bad
}
