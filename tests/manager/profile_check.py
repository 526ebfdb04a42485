#!/usr/bin/env python3
"""tests/manager/profile_check.py - the profile of tests/manager/profile_probe.c
checked figure by figure in `report --xml`, the same figures in `export -f
profile`'s CSV tables and in the report's text.

usage: profile_check.py REPORT.xml REPORT.txt CSVDIR WAIT_MS [raw | corrected RAW.xml]
  raw: the report was made with TAPESTRY_NO_CORRECTION=1;
  corrected RAW.xml: the corrected report, checked against the traced one
  (RAW.xml): a wait is the program's, so the correction may shorten it by
  no more than the tracer's measured cost (tracer_cost_ns) - not a timing
  threshold: the figures of one run, before and after the correction.
Prints "ok ..." / "FAIL ..." lines; exit 1 on any FAIL.
"""
import csv
import os
import sys
import xml.etree.ElementTree as ET

xml_path, txt_path, csv_dir, wait_ms = sys.argv[1:5]
raw = len(sys.argv) > 5 and sys.argv[5] == "raw"
ref = sys.argv[6] if len(sys.argv) > 6 and sys.argv[5] == "corrected" else None
wait_ns = int(wait_ms) * 1_000_000
fails = 0


def check(what, cond):
    global fails
    if cond:
        print("ok   " + what)
    else:
        print("FAIL " + what)
        fails += 1


prof = ET.parse(xml_path).getroot().find("profile")
check("report --xml has a <profile>", prof is not None)
if prof is None:
    sys.exit(1)
check("2 MPI ranks", prof.get("ranks") == "2" and prof.get("mpi") == "1")
check("launchers left out (%s)" % prof.get("left_out"), int(prof.get("left_out")) >= 1)

A = lambda e, k: int(e.get(k))

# the matrix: exactly two cells
cells = {(A(m, "from"), A(m, "to")): (A(m, "count"), A(m, "bytes"))
         for m in prof.findall("messages")}
check("matrix 0 -> 1: 10 messages, 5272 bytes (%s)" % (cells.get((0, 1)),),
      cells.get((0, 1)) == (10, 5272))
check("matrix 1 -> 0: 4 messages, 300016 bytes (%s)" % (cells.get((1, 0)),),
      cells.get((1, 0)) == (4, 300016))
check("matrix: no other cell (%d)" % len(cells), len(cells) == 2)
check("totals: 14 messages, 305288 bytes",
      prof.get("messages") == "14" and prof.get("message_bytes") == "305288")

bins = {(A(b, "min_bytes"), A(b, "max_bytes")): (A(b, "count"), A(b, "bytes"))
        for b in prof.findall("size_bin")}
want = {(16, 31): (2, 32), (64, 127): (4, 256), (512, 1023): (5, 5000),
        (65536, 131071): (3, 300000)}
check("size bins %s" % bins, bins == want)

fns = {(A(f, "rank"), f.get("name")): f for f in prof.findall("function")}


def fn(rank, name, calls, nbytes):
    f = fns.get((rank, name))
    got = (A(f, "calls"), A(f, "bytes")) if f is not None else None
    check("rank %d %s: %d calls, %d bytes (%s)" % (rank, name, calls, nbytes, got),
          got == (calls, nbytes))


fn(0, "MPI_Send", 5, 5000)
fn(1, "MPI_Recv", 5, 5000)
fn(1, "MPI_Send", 3, 300000)
fn(0, "MPI_Recv", 3, 300000)
fn(0, "MPI_Isend", 4, 256)
fn(1, "MPI_Irecv", 4, 0)
fn(1, "MPI_Waitall", 1, 256)
for r in (0, 1):
    fn(r, "MPI_Sendrecv", 1, 32)
    fn(r, "MPI_Allreduce", 4, 32)
    fn(r, "MPI_Bcast", 1, 1024)
    fn(r, "MPI_Barrier", 2, 0)
    fn(r, "MPI_Init", 1, 0)

colls = {(A(c, "comm"), c.get("name")): (A(c, "calls"), A(c, "bytes"), A(c, "ranks"))
         for c in prof.findall("collective")}
check("collectives on world: %s" % colls,
      colls.get((0, "MPI_Allreduce")) == (8, 64, 2) and
      colls.get((0, "MPI_Bcast")) == (2, 2048, 2) and
      colls.get((0, "MPI_Barrier")) == (4, 0, 2))

files = {(A(f, "rank"), os.path.basename(f.get("path"))): f for f in prof.findall("file")}
for r in (0, 1):
    f = files.get((r, "probe-%d.dat" % r))
    got = tuple(A(f, k) for k in ("opens", "reads", "read_bytes", "writes", "write_bytes")) \
        if f is not None else None
    check("rank %d file probe-%d.dat: 2 opens, 3 reads of 12288 B (not the 24576 asked),"
          " 3 writes of 12288 B (%s)" % (r, r, got), got == (2, 3, 12288, 3, 12288))
    check("rank %d: its file only" % r,
          not any(k[0] == r and k[1].startswith("probe-") and k[1] != "probe-%d.dat" % r
                  for k in files))

ranks = {A(r, "rank"): r for r in prof.findall("rank")}
for r, e in ranks.items():
    span, m, io, c = (A(e, k) for k in ("span_ns", "mpi_ns", "io_ns", "compute_ns"))
    check("rank %d: MPI + I/O + compute = span (%d + %d + %d vs %d)" % (r, m, io, c, span),
          m + io + c == span or (c == 0 and m + io >= span))
    # the main thread's MPI time is the sum of its MPI functions' (helper
    # threads make no MPI call here)
    mpi_sum = sum(A(f, "time_ns") for (k, n), f in fns.items()
                  if k == r and n.startswith("MPI_") and not n.startswith("MPI_File"))
    check("rank %d: mpi_ns = its MPI calls' time (%d, %d)" % (r, m, mpi_sum), m == mpi_sum)

# the known waits: each rank's MPI_Recv waited WAIT_MS once (traced: the
# sleeper's nanosleep; the waiter may reach its receive a little late,
# hence 0.9); corrected: the traced figure less at most the tracer's
# measured cost
root = ET.parse(xml_path).getroot()
cost = int(root.find("perturbation").get("tracer_cost_ns")) \
    if root.find("perturbation") is not None else 0
tprof = ET.parse(ref).getroot().find("profile") if ref else None
tfns = {(A(f, "rank"), f.get("name")): f for f in tprof.findall("function")} if ref else {}
tranks = {A(r, "rank"): r for r in tprof.findall("rank")} if ref else {}


def past_init(fs, rk, r):
    return A(rk[r], "mpi_ns") - sum(A(fs[(r, n)], "time_ns") for n in ("MPI_Init", "MPI_Finalize"))


for r in (0, 1):
    f = fns.get((r, "MPI_Recv"))
    mx = A(f, "max_ns") if f is not None else 0
    m = past_init(fns, ranks, r)
    if not ref:
        check("rank %d MPI_Recv waited %d ms once (longest %.1f ms)" % (r, int(wait_ms), mx / 1e6),
              mx >= 0.9 * wait_ns)
        check("rank %d: MPI time past Init and Finalize holds the wait (%.1f ms)" % (r, m / 1e6),
              m >= 0.9 * wait_ns)
        continue
    tf = tfns.get((r, "MPI_Recv"))
    tmx = A(tf, "max_ns") if tf is not None else 0
    tm = past_init(tfns, tranks, r)
    check("rank %d MPI_Recv's wait kept: longest %.3f ms corrected, %.3f traced, the tracer"
          " cost %.3f ms [corrected]" % (r, mx / 1e6, tmx / 1e6, cost / 1e6),
          tmx >= 0.9 * wait_ns and mx >= tmx - cost)
    check("rank %d: MPI time past Init and Finalize %.3f ms corrected, %.3f traced [corrected]"
          % (r, m / 1e6, tm / 1e6), tm >= 0.9 * wait_ns and m >= tm - cost)
# the sleeping rank computes at least WAIT_MS (a sleep is not a call)
for r in (0, 1):
    c = A(ranks[r], "compute_ns")
    check("rank %d computes at least %d ms (%.1f ms)" % (r, int(wait_ms), c / 1e6),
          c >= 0.9 * wait_ns)

# CSV: every table, every row, the XML's figures
def rows(name):
    with open(os.path.join(csv_dir, name), newline="") as fh:
        return list(csv.DictReader(fh))


def same(name, elems, keys, rename=None):
    got = rows(name)
    rename = rename or {}
    xs = [{k: e.get(rename.get(k, k)) for k in keys} for e in elems]
    gs = [{k: g[k] for k in keys} for g in got]
    check("CSV %s: the XML's %d rows, same order, same figures" % (name, len(xs)), xs == gs)


same("ranks.csv", prof.findall("rank"),
     ["rank", "pid", "exe", "start_ns", "span_ns", "mpi_ns", "io_ns", "compute_ns",
      "threads_ns", "calls"])
same("functions.csv", prof.findall("function"),
     ["rank", "name", "calls", "time_ns", "max_ns", "bytes"])
same("calls.csv", prof.findall("call"),
     ["name", "calls", "time_ns", "max_ns", "bytes", "rank_max_ns", "imbalance"])
same("messages.csv", prof.findall("messages"), ["from", "to", "count", "bytes"])
same("sizes.csv", prof.findall("size_bin"), ["min_bytes", "max_bytes", "count", "bytes"])
same("collectives.csv", prof.findall("collective"),
     ["comm", "name", "calls", "time_ns", "bytes", "ranks"])
same("files.csv", prof.findall("file"),
     ["rank", "path", "opens", "reads", "read_bytes", "writes", "write_bytes", "other",
      "time_ns"])

# text: the profile first, its figures the XML's
with open(txt_path) as fh:
    txt = fh.read()
check("text: the profile first", txt.startswith("profile        2 MPI ranks"))
lines = txt.splitlines()
for r, e in ranks.items():
    want = "%5d %11.6f %11.6f" % (r, A(e, "span_ns") / 1e9, A(e, "mpi_ns") / 1e9)
    check("text: rank %d's line (%s)" % (r, want.strip()),
          any(l.startswith("  " + want) for l in lines))
check("text: the heaviest cell", any("1 -> 0" in l and " 4 messages" in l and
                                     " 300016 bytes" in l for l in lines))
check("text: the 0 -> 1 cell", any("0 -> 1" in l and " 10 messages" in l and
                                   " 5272 bytes" in l for l in lines))
for r in (0, 1):
    check("text: rank %d's file" % r,
          any(l.rstrip().endswith("probe-%d.dat" % r) and " 12288 " in l for l in lines))
top = next((l for l in lines if l.strip().startswith("MPI_Send ")), "")
s = next(c for c in prof.findall("call") if c.get("name") == "MPI_Send")
check("text: MPI_Send in the top calls with the XML's figures",
      top.split()[1:3] == [s.get("calls"), "%.6f" % (A(s, "time_ns") / 1e9)])
check("text: then the report of today", "\njob directory  " in txt and "\nevents by type" in txt)
sys.exit(1 if fails else 0)
