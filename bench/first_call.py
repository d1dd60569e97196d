#!/usr/bin/env python3
"""The first allocating call of a process (issue 24, item 7): starts --procs fresh interpreters one
after another; each times its first 64 MiB tessera.tile (a (1024, 1024) float32 array by (4, 4), a
new output) and numpy.tile of the same array, in alternating order (even processes: tessera first),
then each call's second run. Prints one row per process (GB/s of output written) and the kernel's
counters that moved during the process (/proc/vmstat: THP faults and fallbacks, direct compaction
and reclaim stalls; system-wide, so another process's activity counts too). Not a test.

    PYTHONPATH=build/bench/lib/python python3 bench/first_call.py [--procs 20] [--env NAME=VALUE ...]
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys

CHILD = r"""
import json, sys, time
import numpy as np
tessera_first, mode = sys.argv[1] == "1", sys.argv[2]
import tessera
a = np.arange(1 << 20, dtype=np.float32).reshape(1024, 1024)
kw = {"max_threads": 1} if mode == "one-thread" else {}
if mode == "warm-threads":  # oneTBB's workers started by small parallel calls first (4 MiB: malloc's;
    tessera.tile(a, (1, 1))  # a process's first such call below 16 MiB runs on one thread,
    tessera.tile(a, (1, 1))  # the second starts the workers: lib/parallel.hpp)
def vmstat():
    keys = ("thp_fault_alloc", "thp_fault_fallback", "compact_stall", "allocstall_normal", "pgfault")
    d = {}
    for line in open("/proc/vmstat"):
        k, v = line.split()
        if k in keys:
            d[k] = int(v)
    return d
def timed(f):
    t0 = time.perf_counter()
    out = f()
    return time.perf_counter() - t0, out
calls = {"tessera": lambda: tessera.tile(a, (4, 4), **kw), "numpy": lambda: np.tile(a, (4, 4))}
order = ["tessera", "numpy"] if tessera_first else ["numpy", "tessera"]
v0 = vmstat()
first, outs = {}, {}
for name in order:
    first[name], outs[name] = timed(calls[name])
v1 = vmstat()
assert np.array_equal(outs["tessera"], outs["numpy"])
nbytes = outs["numpy"].nbytes
del outs
second = {name: timed(calls[name])[0] for name in order}
print(json.dumps({"nbytes": nbytes, "first": first, "second": second,
                  "vmstat": {k: v1[k] - v0[k] for k in v0}}))
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--procs", type=int, default=20)
    ap.add_argument("--env", action="append", default=[], help="NAME=VALUE for the child processes")
    ap.add_argument("--json", help="also write the raw results here")
    ap.add_argument("--mode", choices=["default", "warm-threads", "one-thread"], default="default",
                    help="warm-threads: two 4 MiB tessera.tile calls first (oneTBB's workers started); "
                         "one-thread: the 64 MiB call with max_threads=1")
    args = ap.parse_args()
    env = dict(os.environ)
    for kv in args.env:
        k, _, v = kv.partition("=")
        env[k] = v
    rows = []
    print(f"python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs; "
          f"THP {open('/sys/kernel/mm/transparent_hugepage/enabled').read().strip()}, defrag "
          f"{open('/sys/kernel/mm/transparent_hugepage/defrag').read().strip()}"
          + (f"; env {' '.join(args.env)}" if args.env else "") + f"; mode {args.mode}")
    print("| process | first | tessera GB/s | numpy GB/s | tessera / numpy | 2nd call: tessera | numpy "
          "| THP faults | THP fallbacks | compaction stalls |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for i in range(args.procs):
        tessera_first = i % 2 == 0
        out = subprocess.run([sys.executable, "-c", CHILD, "1" if tessera_first else "0", args.mode], env=env,
                             capture_output=True, text=True, check=True).stdout
        r = json.loads(out)
        gb = {k: r["nbytes"] / t / 1e9 for k, t in r["first"].items()}
        gb2 = {k: r["nbytes"] / t / 1e9 for k, t in r["second"].items()}
        v = r["vmstat"]
        rows.append({"gbs": gb, "gbs2": gb2, **r})
        print(f"| {i} | {'tessera' if tessera_first else 'numpy'} | {gb['tessera']:.1f} | {gb['numpy']:.1f} | "
              f"{gb['tessera'] / gb['numpy']:.2f} | {gb2['tessera']:.1f} | {gb2['numpy']:.1f} | "
              f"{v['thp_fault_alloc']} | {v['thp_fault_fallback']} | {v['compact_stall']} |", flush=True)
    ratios = [r["gbs"]["tessera"] / r["gbs"]["numpy"] for r in rows]
    print(f"tessera / numpy on the first call: min {min(ratios):.2f}, median {statistics.median(ratios):.2f}, "
          f"max {max(ratios):.2f}; processes below 1: {sum(x < 1 for x in ratios)} of {len(ratios)}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f)


if __name__ == "__main__":
    main()
