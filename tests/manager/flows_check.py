#!/usr/bin/env python3
"""tests/manager/flows_check.py - every message arrow of a Chrome trace (and,
given, of a Paje trace and of an OTF2 archive through otf2-print's output) starts in the call that sent the message and
ends where its receive completed (docs/modules/export-viz.md):

  chrome: the "s" at the start of a sending call of its thread (MPI_Send,
          MPI_Isend, MPI_Sendrecv, MPI_Start ...), the "f" at the end (or
          1 ns before it) of a completing call of its thread (MPI_Recv,
          MPI_Sendrecv, MPI_Wait*, MPI_Test* ...), never before the "s";
  paje:   each link where its Chrome flow is (the "s", the end of the
          call that holds the "f"), never ending before it starts;
  otf2:   each MpiSend/MpiIsend at the enter of its call, each
          MpiRecv/MpiIrecv at the leave of its call.

usage: flows_check.py TRACE.json [TRACE.paje [OTF2_PRINT.out]]
Prints one line per format: "chrome flows N backward B bad_start S bad_end E"
(and the first few bad ones); exit 0 when every arrow is right, 1 if not.
"""
import json
import sys

SENDS = {"MPI_Send", "MPI_Bsend", "MPI_Ssend", "MPI_Rsend", "MPI_Isend",
         "MPI_Ibsend", "MPI_Issend", "MPI_Irsend", "MPI_Sendrecv",
         "MPI_Sendrecv_replace", "MPI_Start", "MPI_Startall"}
DONES = {"MPI_Recv", "MPI_Mrecv", "MPI_Sendrecv", "MPI_Sendrecv_replace",
         "MPI_Wait", "MPI_Waitany", "MPI_Waitall", "MPI_Waitsome",
         "MPI_Test", "MPI_Testany", "MPI_Testall", "MPI_Testsome"}
SHOW = 5


def ns(us):
    """Chrome's microseconds (three decimals) as integer nanoseconds."""
    return int(round(us * 1000))


class Slices:
    """The calls of one thread by the time a flow may sit at: their start
    (sending calls) and their end (completing calls), each time rounded
    to q ns (pj_dump prints microseconds)."""

    def __init__(self, q=1):
        self.q = q
        self.starts = {}
        self.ends = {}

    def add(self, start, end, name, end_key=None):
        if name in SENDS:
            self.starts.setdefault(start // self.q, set()).add(name)
        if name in DONES:
            for k in {end, end if end_key is None else end_key}:
                self.ends.setdefault(k // self.q, set()).add(name)

    def at_start(self, t, slack=0):
        return any(t // self.q + d in self.starts for d in range(-slack, slack + 1))

    def at_end(self, t, slack=0):
        return any(t // self.q + d in self.ends for d in range(-slack, slack + 1))


def chrome(path):
    ev = json.load(open(path))["traceEvents"]
    th = {}
    flows = {}
    for e in ev:
        if e["ph"] == "X":
            s = ns(e["ts"])
            d = ns(e["dur"])
            th.setdefault((e["pid"], e["tid"]), Slices()).add(
                s, s + d, e["name"], s + d - (d > 0))
        elif e["ph"] in ("s", "f"):
            flows.setdefault(e["id"], {})[e["ph"]] = e
    n = back = bad_s = bad_f = unpaired = 0
    shown = 0
    times = {}
    for fid, fl in flows.items():
        if "s" not in fl or "f" not in fl:
            unpaired += 1
            continue
        n += 1
        s, f = fl["s"], fl["f"]
        ts, tf = ns(s["ts"]), ns(f["ts"])
        times[fid] = (ts, tf)
        why = []
        if tf < ts:
            back += 1
            why.append("ends %d ns before it starts" % (ts - tf))
        st = th.get((s["pid"], s["tid"]))
        if not st or not st.at_start(ts):
            bad_s += 1
            why.append("start not at a sending call's start")
        ft = th.get((f["pid"], f["tid"]))
        if not ft or not ft.at_end(tf):
            bad_f += 1
            why.append("end not at a completing call's end")
        if why and shown < SHOW:
            shown += 1
            print("  chrome flow %s (%s at %d ns, %s at %d ns): %s" % (
                fid, s["pid"], ts, f["pid"], tf, "; ".join(why)))
    print("chrome flows %d backward %d bad_start %d bad_end %d unpaired %d" % (
        n, back, bad_s, bad_f, unpaired))
    return n > 0 and back == bad_s == bad_f == unpaired == 0, times


def sec_ns(x):
    """Paje's seconds (nine decimals) as integer nanoseconds."""
    w, _, f = x.partition(".")
    return int(w) * 10**9 + int((f + "000000000")[:9])


def paje(path, flows):
    """The .paje file's links against the Chrome flows of the same job
    (checked above): the same messages, each link from its flow's "s" to
    the end of the call that holds its flow's "f" (the "f" sits at that
    end or 1 ns before it). The file itself, not pj_dump's output: pj_dump
    names every thread container "thread N", the same in each process, and
    a Paje pop closes the innermost state, so the states of a thread whose
    events overlap without nesting do not give back their calls."""
    ends = {}
    for line in open(path):
        f = line.split()
        if len(f) >= 7 and f[0] in ("10", "11") and f[2] == "L":
            ends.setdefault(f[6], {})[f[0]] = sec_ns(f[1])
    n = back = bad_s = bad_f = unpaired = 0
    shown = 0
    for key, e in ends.items():
        fl = flows.get(key)
        if "10" not in e or "11" not in e or not fl:
            unpaired += 1
            continue
        n += 1
        ts, tf = e["10"], e["11"]
        why = []
        if tf < ts:
            back += 1
            why.append("ends before it starts")
        if ts != fl[0]:
            bad_s += 1
            why.append("start not at its sending call's start")
        if tf not in (fl[1], fl[1] + 1):
            bad_f += 1
            why.append("end not at its completing call's end")
        if why and shown < SHOW:
            shown += 1
            print("  paje link %s: %s" % (key, "; ".join(why)))
    unpaired += len(set(flows) - set(ends))
    print("paje links %d backward %d bad_start %d bad_end %d unpaired %d" % (
        n, back, bad_s, bad_f, unpaired))
    return n > 0 and back == bad_s == bad_f == unpaired == 0


def otf2(path):
    """otf2-print: ENTER/LEAVE/MPI_* lines "KIND LOC TIME ...": each send
    record at its location's last enter, each receive record at its
    location's next leave."""
    last_enter = {}
    waiting = {}    # location -> receive records waiting for their leave
    n_s = n_r = bad_s = bad_r = 0
    for line in open(path):
        f = line.split()
        if len(f) < 3 or not f[1].isdigit() or not f[2].isdigit():
            continue
        kind, loc, t = f[0], f[1], int(f[2])
        if kind == "ENTER":
            last_enter[loc] = t
        elif kind == "LEAVE":
            for r in waiting.pop(loc, []):
                bad_r += r != t
        elif kind in ("MPI_SEND", "MPI_ISEND"):
            n_s += 1
            bad_s += last_enter.get(loc) != t
        elif kind in ("MPI_RECV", "MPI_IRECV"):
            n_r += 1
            waiting.setdefault(loc, []).append(t)
    bad_r += sum(len(v) for v in waiting.values())
    print("otf2 sends %d receives %d bad_send %d bad_recv %d" % (
        n_s, n_r, bad_s, bad_r))
    return n_s > 0 and bad_s == bad_r == 0


def main():
    ok, flows = chrome(sys.argv[1])
    if len(sys.argv) > 2:
        ok = paje(sys.argv[2], flows) and ok
    if len(sys.argv) > 3:
        ok = otf2(sys.argv[3]) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
