# tests/manager/lib.sh - sourced by the manager's launch test scripts
# (launch_pingpong.sh, test_launch.sh, test_live.sh). Needs top_srcdir.

# check DESCRIPTION COMMAND...: prints ok/FAIL; a failure sets fail=1
check() {
	if "${@:2}"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi
}

# ring_xml TAG ITERS OUT [SED-EXPR...]: deploy/examples/ring.xml with its
# collectors renamed TAG-gw and TAG-node (pgrep finds this test's own),
# ITERS iterations and the extra sed expressions, written to OUT
ring_xml() {
	_tag=$1 _it=$2 _out=$3
	shift 3
	_ex=()
	for _e in "$@"; do _ex+=(-e "$_e"); done
	sed -e "s/name=\"gateway\"/name=\"$_tag-gw\"/; s/parent=\"gateway\"/parent=\"$_tag-gw\"/" \
	    -e "s/name=\"node\"/name=\"$_tag-node\"/" \
	    -e "s|<argument>100</argument>|<argument>$_it</argument>|" \
	    "${_ex[@]}" "$top_srcdir/deploy/examples/ring.xml" >"$_out"
}
