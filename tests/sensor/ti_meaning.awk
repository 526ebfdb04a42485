# tests/sensor/ti_meaning.awk - one rank's time-independent trace (ours, or
# what `smpirun -trace-ti` wrote) reduced to its meaning, one line each:
#   part=posts: S PEER TAG BYTES (any send), R PEER TAG BYTES (any receive),
#               barrier; TAG * where the line does not say it (sendRecv)
#   part=waits: W per request completed (waitall N gives N)
# Dropped: compute, init, finalize, comm_size, tests (their number depends
# on timing), anything to or from MPI_PROC_NULL (-333 in SMPI's trace; ours
# writes none). Counts times the datatype's size: SMPI writes a datatype id
# after the count (6 = MPI_BYTE, the only one the test programs send); ours
# writes bytes.
function bytes(count, dt) {
	if (dt == "" || dt == 6)
		return count
	return count ":" dt
}
{
	a = $2
	if (part == "waits") {
		if (a == "wait" || a == "waitAny")
			print "W"
		else if (a == "waitall")
			for (i = 0; i < $3; i++)
				print "W"
		next
	}
	if (a ~ /^(send|isend|Isend|bsend|ibsend|Ssend|ISsend|ssend|issend|rsend|irsend)$/) {
		if ($3 != -333)
			print "S", $3, $4, bytes($5, $6)
	} else if (a ~ /^(recv|irecv|Irecv)$/) {
		if ($3 != -333)
			print "R", $3, $4, bytes($5, $6)
	} else if (a == "sendRecv") {
		print "S", $4, "*", bytes($3, $7)
		print "R", $6, "*", bytes($5, $8)
	} else if (a == "barrier") {
		print a
	}
}
