#!/usr/bin/env bash
# tests/manager/launch_ssh.sh - `tapestry launch` with the ssh launcher
# against an OpenSSH server this test starts on 127.0.0.1 (its own host key,
# authorized key and config, a free port; killed at the end): the node
# collector and the program start through ssh, every event arrives, and
# nothing is left running. Skips (77) when sshd is absent.
set -u
: "${top_srcdir:?}" "${top_builddir:?}"
SSHD=$(command -v sshd || echo /usr/sbin/sshd)
[ -x "$SSHD" ] || { echo "skip: no sshd"; exit 77; }
command -v ssh-keygen >/dev/null || { echo "skip: no ssh-keygen"; exit 77; }
work=$(mktemp -d /tmp/tapestry-test-ssh.XXXXXX)
chmod 755 "$work"
tag="ts$$"
. "$top_srcdir/tests/manager/lib.sh"

ssh-keygen -q -t ed25519 -N '' -f "$work/host_key" || exit 99
ssh-keygen -q -t ed25519 -N '' -f "$work/user_key" || exit 99
cp "$work/user_key.pub" "$work/authorized_keys"
chmod 600 "$work/authorized_keys"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat >"$work/sshd_config" <<EOF
ListenAddress 127.0.0.1
Port $port
HostKey $work/host_key
AuthorizedKeysFile $work/authorized_keys
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
PermitRootLogin prohibit-password
StrictModes no
UsePAM no
PidFile $work/sshd.pid
EOF
mkdir -p /run/sshd 2>/dev/null
"$SSHD" -D -e -f "$work/sshd_config" 2>"$work/sshd.log" &
pids+=($!)
opts="-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR"
for i in $(seq 50); do
	ssh $opts -o BatchMode=yes -p "$port" -i "$work/user_key" 127.0.0.1 true 2>/dev/null && break
	sleep 0.1
done
if ! ssh $opts -o BatchMode=yes -p "$port" -i "$work/user_key" 127.0.0.1 true 2>"$work/ssh.err"; then
	echo "cannot log in to the test sshd:"; cat "$work/ssh.err" "$work/sshd.log"
	exit 99
fi

cc -O1 -pthread -o "$work/iodemo" "$top_srcdir/deploy/examples/iodemo.c" || exit 99
mkdir -p "$work/io"
remote_xml "$work/job.xml" ssh remote \
	"<launcher name=\"test-ssh\" type=\"ssh\" port=\"$port\" identity=\"user_key\" options=\"$opts\"/>" \
	"$tag-top" "$tag-node" '<application executable="iodemo" processes="1" workdir="io">
    <argument>.</argument>
  </application>
  <outputs><output format="csv"/></outputs>'
launch_ok 180 "through ssh" "$work/job" "$work/job.xml"
check "  ...the node collector came up through ssh" grep -q "collector '$tag-node' on remote up at" "$work/job.err"
n=$(awk -F, '$3=="fprintf" { n += match($NF, /count=[0-9]+/) ? substr($NF, RSTART + 6, RLENGTH - 6) : 1 }
	END { print n + 0 }' "$work/job/trace.csv" 2>/dev/null)
check "  ...2000 fprintf events from the program started by ssh (got $n)" [ "$n" = 2000 ]
sleep 0.5	# sshd's session processes end after the channel closes
check "  ...no collector left" bash -c "! pgrep -f -- '--name [${tag:0:1}]${tag:1}' >/dev/null"

# a host whose sshd refuses the key: the failure names it, nothing stays
ssh-keygen -q -t ed25519 -N '' -f "$work/other_key" || exit 99
sed -e 's/identity="user_key"/identity="other_key"/' -e "s/$tag-/${tag}x-/g" "$work/job.xml" >"$work/bad.xml"
timeout 120 "$T" launch --start-timeout 10 -o "$work/job2" "$work/bad.xml" >/dev/null 2>"$work/err2"
rc=$?
check "refused ssh login: launch fails ($rc)" [ "$rc" = 1 ]
check "  ...naming the collector" grep -q "collector '${tag}x-node' on remote did not start" "$work/err2"
check "  ...with ssh's reason" grep -q "Permission denied" "$work/err2"
check "  ...nothing left" bash -c "! pgrep -f -- '--name [${tag:0:1}]${tag:1}x' >/dev/null"
check "  ...no job directory" [ ! -e "$work/job2" ]
exit $fail
