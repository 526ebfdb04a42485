#!/usr/bin/env bash
# tests/manager/launch_netns.sh - the template launcher with `ip netns exec`:
# two network namespaces are two sites, each joined by a veth pair to a
# bridge in the root namespace (10.X.Y.0/24 picked from the test's pid, so
# that runs side by side do not meet; addresses on the test's own
# links only); site b's uplink is limited by tc tbf to 10 mbit/s. A top
# collector runs in the root namespace, a site collector in each namespace,
# one traced process per site; every event reaches the job directory.
# Namespaces, veths and the bridge are removed by a trap. Skips (77) when
# not root or when network namespaces cannot be made.
set -u
: "${top_srcdir:?}" "${top_builddir:?}"
[ "$(id -u)" = 0 ] || { echo "skip: not root"; exit 77; }
command -v ip >/dev/null || { echo "skip: no ip"; exit 77; }
n=$$
net="10.$((100 + n % 100)).$(((n / 100) % 250))"	# this run's /24
nsa="tpa$n" nsb="tpb$n" br="tbr$n"
tag="tn$n"
work=$(mktemp -d /tmp/tapestry-test-netns.XXXXXX)
cleanup_more() {
	ip netns del "$nsa" 2>/dev/null
	ip netns del "$nsb" 2>/dev/null
	ip link del "va$n" 2>/dev/null
	ip link del "vb$n" 2>/dev/null
	ip link del "$br" 2>/dev/null
}
. "$top_srcdir/tests/manager/lib.sh"
ip netns add "$nsa" 2>/dev/null || { echo "skip: cannot create a network namespace"; exit 77; }
set -e
ip netns add "$nsb"
ip link add "$br" type bridge
ip addr add $net.1/24 dev "$br"
ip link set "$br" up
i=2
for s in a b; do
	ns="tp$s$n"
	ip link add "v$s$n" type veth peer name "e$s$n"
	ip link set "v$s$n" master "$br" up
	ip link set "e$s$n" netns "$ns"
	ip -n "$ns" link set lo up
	ip -n "$ns" addr add "$net.$i/24" dev "e$s$n"
	ip -n "$ns" link set "e$s$n" up
	i=$((i + 1))
done
# site b's uplink: 10 mbit/s
ip netns exec "$nsb" tc qdisc add dev "eb$n" root tbf rate 10mbit burst 32kbit latency 50ms
set +e
for i in $(seq 30); do ip netns exec "$nsb" ping -c1 -W1 $net.1 >/dev/null 2>&1 && break; sleep 0.2; done

cat >"$work/job.xml" <<EOF
<?xml version="1.0"?>
<job name="netns">
  <hosts>
    <host name="front" address="$net.1" site="front"/>
    <host name="$nsa" address="$net.2" slots="1" site="a" launcher="netns"/>
    <host name="$nsb" address="$net.3" slots="1" site="b" launcher="netns"/>
  </hosts>
  <launchers>
    <launcher name="netns" type="template" command="ip netns exec {host} {command}" tapestry-path="$T"/>
  </launchers>
  <collectors>
    <collector name="$tag-top" host="front"/>
    <collector name="$tag-a" host="$nsa" parent="$tag-top"/>
    <collector name="$tag-b" host="$nsb" parent="$tag-top"/>
  </collectors>
  <application executable="/bin/dd" processes="2" mode="scattering">
    <argument>if=/dev/zero</argument>
    <argument>of=/dev/null</argument>
    <argument>bs=1024</argument>
    <argument>count=20000</argument>
  </application>
  <sensors><sensor name="libc"/></sensors>
  <outputs><output format="csv"/></outputs>
</job>
EOF
launch_ok 300 "through ip netns exec" "$work/job" "$work/job.xml"
check "  ...site a's collector came up in its namespace" grep -q "collector '$tag-a' on $nsa up at $net.2:" "$work/job.err"
check "  ...site b's collector came up behind the 10 mbit link" grep -q "collector '$tag-b' on $nsb up at $net.3:" "$work/job.err"
w=$(awk -F, '$3=="write" && $6==1024' "$work/job/trace.csv" 2>/dev/null | wc -l)
check "  ...all 40000 writes of both sites arrived (got $w)" [ "$w" = 40000 ]
r=$(awk -F, '$3=="read" && $6==1024' "$work/job/trace.csv" 2>/dev/null | wc -l)
check "  ...all 40000 reads arrived (got $r)" [ "$r" = 40000 ]
check "  ...nothing lost" grep -q "losses         0 events counted lost, 0 batches missing" "$work/job.out"
# the manager made the job's credentials and the edges across hosts ran TLS
check "  ...per-job credentials made" test -s "$work/job/creds/ca.crt" -a -s "$work/job/creds/secret"
check "  ...the secret is private" [ "$(stat -c %a "$work/job/creds/secret" 2>/dev/null)" = 600 ]
n_tls=$(grep -c "connected from .* over TLS" "$work/job/logs/collector-$tag-top.log" 2>/dev/null)
check "  ...both sites reached the top collector over TLS (got ${n_tls:-0})" [ "${n_tls:-0}" -ge 2 ]
check "  ...no collector left" bash -c "! pgrep -f -- '--name [${tag:0:1}]${tag:1}' >/dev/null"

# MPI ranks in both namespaces: mpirun reaches them through the same
# template launcher (tapestry host-exec as its remote shell), and each rank
# finds its own namespace's node collector from the environment mpirun
# passes (TAPESTRY_NODE_COLLECTORS, matched to the namespace's address), not
# from the plan directory
map="$nsa=$net.2:1,$nsb=$net.3:2"
got_a=$(ip netns exec "$nsa" env TAPESTRY_NODE_COLLECTORS="$map" "$T" rank-exec /nonexistent -- printenv TAPESTRY_COLLECTOR)
got_b=$(ip netns exec "$nsb" env TAPESTRY_NODE_COLLECTORS="$map" "$T" rank-exec /nonexistent -- printenv TAPESTRY_COLLECTOR)
check "rank-exec in site a takes a's collector without a map file ($got_a)" [ "$got_a" = $net.2:1 ]
check "rank-exec in site b takes b's collector without a map file ($got_b)" [ "$got_b" = $net.3:2 ]
if [ -f "$top_builddir/sensor/.libs/libtapestry-mpi-openmpi.so" ] && command -v mpicc.openmpi >/dev/null; then
	mpicc.openmpi -O1 -o "$work/ring" "$top_srcdir/deploy/examples/ring.c" || exit 99
	sed -e 's|<application executable="/bin/dd" processes="2" mode="scattering">|<application executable="ring" processes="2" mode="scattering" mpi="openmpi">|' \
	    -e '/<argument>/d' -e 's|</application>|<argument>20</argument></application>|' \
	    -e 's|<sensors><sensor name="libc"/></sensors>|<sensors><sensor name="libc"/><sensor name="mpi"/></sensors>|' \
	    -e "s/$tag-/${tag}m-/g" "$work/job.xml" >"$work/mpi.xml"
	# Open MPI's daemons and ranks talk over the test's own /24 only: left to
	# choose, the daemon in a namespace is offered every address of mpirun's
	# host (the machine's own uplink among them, unreachable from the
	# namespace) and may fail to route back to mpirun
	OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
	OMPI_MCA_oob_tcp_if_include=$net.0/24 OMPI_MCA_btl_tcp_if_include=$net.0/24 \
		timeout 300 "$T" launch -o "$work/job-mpi" "$work/mpi.xml" >"$work/mpi.out" 2>"$work/mpi.err"
	rc=$?
	check "MPI ring across the two namespaces exits 0 ($rc)" [ "$rc" = 0 ]
	[ "$rc" = 0 ] || { tail -n 20 "$work/mpi.err"; tail -n 5 "$work/job-mpi/logs/"* 2>/dev/null; }
	s=$(awk -F, '$3=="MPI_Send"' "$work/job-mpi/trace.csv" 2>/dev/null | wc -l)
	check "  ...40 MPI_Send from the 2 ranks (got $s)" [ "$s" = 40 ]
	for x in a b; do
		check "  ...site $x's rank streamed to site $x's collector" \
			grep -q "sensor .* connected from $net.$([ $x = a ] && echo 2 || echo 3):" \
			"$work/job-mpi/logs/collector-${tag}m-$x.log"
	done
	check "  ...no collector left" bash -c "! pgrep -f -- '--name [${tag:0:1}]${tag:1}m' >/dev/null"
else
	echo "skip the MPI ring across namespaces (no Open MPI sensor)"
fi
exit $fail
