#!/usr/bin/python3
"""Where streaming stores start to pay: tessera.tile(..., out=) with nontemporal=True against
nontemporal=False, alternating, at output sizes around the automatic streaming threshold.

Usage: PYTHONPATH=build/bench/lib/python bench/stream_threshold.py [--sizes MIB,...] [--rounds N]

For each output size S (MiB) and thread count (1, 2), two cases of float32 tiles into one
preallocated, touched output of S MiB, rewritten call after call (as a user's out= buffer is):
  outer   tile(A, (4, 1)), A of shape (S/16/2048, 2048)
  column  tile(A, (1, 16)), A of shape (S/64, 1)
Each round times one call of each kind (streamed, ordinary) in turn, alternating which goes first;
the table prints the medians in GB/s (1e9 bytes of output per second), their ratio, and the path
the automatic choice (nontemporal=None) takes at that size. The line tessera draws
(tessera.show_config()'s streaming threshold) is printed in the header.
"""
import argparse
import datetime
import statistics
import time

import numpy as np

import caches  # bench/caches.py, beside this script: cpu_model()
import tessera

MIB = 2**20


def case_arrays(case, size):
    elems = size // 4
    if case == "outer":
        A = np.arange(elems // 4, dtype=np.float32).reshape(-1, 2048)
        reps = (4, 1)
    else:
        A = np.arange(elems // 16, dtype=np.float32).reshape(-1, 1)
        reps = (1, 16)
    out = np.empty(tuple(a * r for a, r in zip(A.shape, reps)), dtype=np.float32)
    out.fill(1.0)  # touched
    return A, reps, out


def time_call(fn, min_s):
    """Seconds per call: calls repeated until min_s has passed (at least one)."""
    n, t0 = 0, time.perf_counter()
    while True:
        fn()
        n += 1
        t = time.perf_counter() - t0
        if t >= min_s:
            return t / n


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", default="4,8,16,24,32,48,64,128,256", help="output sizes in MiB, comma-separated")
    p.add_argument("--rounds", type=int, default=9)
    p.add_argument("--min-seconds", type=float, default=0.05, help="each sample's least duration")
    args = p.parse_args()
    sizes = [int(float(s) * MIB) for s in args.sizes.split(",")]
    threshold = tessera.show_config("dicts")["Memory"]["streaming_threshold_bytes"]
    print(f"stream_threshold.py, {datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds')}, "
          f"tessera {tessera.__version__}, {caches.cpu_model()}")
    print(f"streaming threshold: {threshold} bytes ({threshold / MIB:.0f} MiB); "
          f"medians of {args.rounds} alternating rounds; GB/s of output; out= rewritten each call")
    print(f"{'case':8} {'size':>9} {'thr':>3} {'streamed GB/s':>14} {'ordinary GB/s':>14} "
          f"{'streamed/ordinary':>18}  automatic path")
    for case in ("outer", "column"):
        for size in sizes:
            A, reps, out = case_arrays(case, size)
            for threads in (1, 2):
                calls = {
                    nt: (lambda nt=nt: tessera.tile(A, reps, out=out, max_threads=threads, nontemporal=nt))
                    for nt in (True, False)
                }
                for fn in calls.values():
                    fn()  # warm-up
                samples = {True: [], False: []}
                for r in range(args.rounds):
                    order = (True, False) if r % 2 == 0 else (False, True)
                    for nt in order:
                        samples[nt].append(time_call(calls[nt], args.min_seconds))
                med = {nt: statistics.median(v) for nt, v in samples.items()}
                gbs = {nt: size / med[nt] / 1e9 for nt in med}
                path = tessera.Plan(A.shape, reps, A.dtype, max_threads=threads).kernel_path
                print(f"{case:8} {size / MIB:>5.0f} MiB {threads:>3} {gbs[True]:>14.1f} {gbs[False]:>14.1f} "
                      f"{gbs[True] / gbs[False]:>18.2f}  {path}", flush=True)
            del out


if __name__ == "__main__":
    main()
