#!/usr/bin/env python3
"""The Dask table (bench/run --dask): tessera.dask against Dask's own tile, broadcast_to and repeat.

Each case makes a 2 GiB float32 output in 64 MiB chunks, from a numpy input, on Dask's threaded
scheduler (both cores), two ways: ``persist`` (the chunks kept in memory, every one really written)
and ``store`` (each chunk copied into one preallocated 2 GiB numpy array as it is made, then freed,
as a pipeline streams chunks to a sink):

- tessera: ``tessera.dask.tile(x, reps, chunks=...)`` (``broadcast_to``, ``repeat``): one task per
  output chunk, each the region API;
- dask: ``dask.array.tile(from_array(x), reps).rechunk(...)``,
  ``dask.array.broadcast_to(from_array(x), shape, chunks=...).map_blocks(numpy.copy)`` (a copy: Dask's
  own chunks are read-only broadcast views), ``dask.array.repeat(from_array(x), r, axis).rechunk(...)``.

Each measurement runs in a fresh Python process (so the peak memory is its own): wall time from
building the graph to the last chunk, the graph's task count, and the peak resident memory above
the process's before the graph was built (VmHWM after resetting it through /proc/self/clear_refs).
The two are alternated, tessera first in odd rounds, dask first in even ones, after a warm-up
round that is not counted; the table gives medians of 5. Prints a table (and JSON with --json FILE). About 2 minutes.

Usage: dask_bench.py [--rounds N] [--json FILE] [--filter REGEX]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time

GiB = 1 << 30

# name, op, input shape, arg (reps / shape / (repeats, axis)), output chunks (elements)
CASES = [
    ("tile", "tile", (1024, 1024), (16, 32), (2048, 8192)),
    ("broadcast_to", "broadcast_to", (1, 32768), (16384, 32768), (2048, 8192)),
    ("repeat", "repeat", (2048, 32768), (8, 0), (2048, 8192)),
]


def one(case, method, sink):
    """One measurement in this process: a JSON line on stdout."""
    import numpy as np
    import dask
    import dask.array as da
    import tessera.dask as td

    name, op, shape, arg, chunks = next(c for c in CASES if c[0] == case)
    x = (np.arange(int(np.prod(shape)), dtype=np.float32) % 1000).reshape(shape)
    target = None
    if sink == "store":
        out_shape = (16384, 32768)
        target = np.ones(out_shape, dtype=np.float32)  # touched before the clock starts
    with open("/proc/self/clear_refs", "w") as f:  # resets VmHWM to the current RSS
        f.write("5")
    base = rss("VmRSS")
    t0 = time.perf_counter()
    if method == "tessera":
        if op == "tile":
            y = td.tile(x, arg, chunks=chunks)
        elif op == "broadcast_to":
            y = td.broadcast_to(x, arg, chunks=chunks)
        else:
            y = td.repeat(x, arg[0], axis=arg[1], chunks=chunks)
    else:
        xd = da.from_array(x, chunks="auto")
        if op == "tile":
            y = da.tile(xd, arg).rechunk(chunks)
        elif op == "broadcast_to":  # the input's chunks must match the output's along its own axes
            xd = da.from_array(x, chunks=(1, chunks[1]))
            y = da.broadcast_to(xd, arg, chunks=chunks).map_blocks(np.copy)
        else:
            y = da.repeat(xd, arg[0], axis=arg[1]).rechunk(chunks)
    tasks = len(dict(y.__dask_graph__()))
    if sink == "persist":
        (p,) = dask.persist(y, scheduler="threads")
    else:
        da.store(y, target, scheduler="threads")
        p = target
    seconds = time.perf_counter() - t0
    peak = rss("VmHWM") - base
    # a sample of the output against numpy's own
    i, j = y.shape[0] // 3, y.shape[1] // 5
    if op == "tile":
        want = np.tile(x, arg)[i:i + 7, j:j + 9]
    elif op == "broadcast_to":
        want = np.broadcast_to(x, arg)[i:i + 7, j:j + 9]
    else:
        want = np.repeat(x, arg[0], axis=arg[1])[i:i + 7, j:j + 9]
    got = p[i:i + 7, j:j + 9]
    ok = bool(((got.compute(scheduler="sync") if sink == "persist" else got) == want).all())
    print(json.dumps({"case": case, "method": method, "sink": sink, "seconds": seconds, "tasks": tasks, "peak": peak,
                      "nbytes": int(y.nbytes), "chunks": list(y.chunksize), "ok": ok}))


def rss(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--json")
    ap.add_argument("--filter", default="")
    ap.add_argument("--one", nargs=3, metavar=("CASE", "METHOD", "SINK"), help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.one:
        one(*a.one)
        return
    samples = []
    cases = [c for c in CASES if re.search(a.filter, c[0])]
    # A warm-up round, not counted: the first process to touch 2 GiB after a pause can take
    # seconds longer, whichever method it runs (the memory of a virtual machine coming back).
    sinks = ("persist", "store")
    for c in cases:
        for method in ("tessera", "dask"):
            subprocess.run([sys.executable, __file__, "--one", c[0], method, "persist"], check=True,
                           capture_output=True, env=os.environ)
    for r in range(a.rounds):
        for c in cases:
            for sink in sinks:
                for method in (("tessera", "dask") if r % 2 == 0 else ("dask", "tessera")):
                    out = subprocess.run([sys.executable, __file__, "--one", c[0], method, sink], check=True,
                                         capture_output=True, text=True, env=os.environ).stdout
                    s = json.loads(out.strip().splitlines()[-1])
                    if not s["ok"]:
                        sys.exit(f"dask_bench: {method} {c[0]} {sink}: the output differs from numpy's")
                    samples.append(s)
                    print(f"  {c[0]:<13} {sink:<8} {method:<8} {s['seconds']:.2f} s", file=sys.stderr)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(samples, f, indent=1)
    print(f"Dask (2 GiB float32 outputs in 64 MiB chunks, threaded scheduler, {os.cpu_count()} threads, persisted;"
          f" medians of {a.rounds}, alternating):")
    head = f"{'case':<13} {'sink':<8} {'tessera':>9} {'dask':>9} {'speedup':>8} {'tasks':>7} {'dask tasks':>10} " \
           f"{'peak MiB':>9} {'dask peak MiB':>13}"
    print(head)
    for c in cases:
        for sink in sinks:
            t = [s for s in samples if s["case"] == c[0] and s["method"] == "tessera" and s["sink"] == sink]
            d = [s for s in samples if s["case"] == c[0] and s["method"] == "dask" and s["sink"] == sink]
            ts, ds = statistics.median(s["seconds"] for s in t), statistics.median(s["seconds"] for s in d)
            tp, dp = statistics.median(s["peak"] for s in t), statistics.median(s["peak"] for s in d)
            print(f"{c[0]:<13} {sink:<8} {ts:>7.2f} s {ds:>7.2f} s {ds / ts:>7.2f}x {t[0]['tasks']:>7} "
                  f"{d[0]['tasks']:>10} {tp / 2**20:>9.0f} {dp / 2**20:>13.0f}")
    print("peak MiB: the peak resident memory above the process's before the graph was built (store: the "
          "2 GiB target excluded)")


if __name__ == "__main__":
    main()
