#!/usr/bin/env python3
"""A call whose code and data are out of the core's caches, tessera against numpy (and torch).

The sweep's first call of a fresh process (bench/sweep.py, mode `first`) times one call right after
the input's making, which runs numpy's code and leaves it in the caches, not tessera's. This script
times the same outer tiles (`tile(A, (4, 1))`, a new output, float32) from 4 KiB to 256 KiB in one
process, each call right after a memset of --flush-mib MiB through ctypes (libc's code only; it
empties the L1 and L2 of both libraries' code and data alike), the libraries taking turns call by
call, and prints the median of --rounds calls per library and size, with each library's warm call
(the same call repeated) beside it. Not a test.

    PYTHONPATH=build/bench/lib/python /usr/bin/python3 bench/cold_call.py [--rounds 15] [--flush-mib 64]
"""
import argparse
import ctypes
import datetime
import platform
import statistics
import time

import numpy as np

import caches  # bench/caches.py, beside this script
import tessera

KIB = 1 << 10


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=15, help="calls per library and size (default 15)")
    p.add_argument("--flush-mib", type=int, default=64, help="MiB written before each call (default 64)")
    p.add_argument("--no-torch", action="store_true", help="numpy alone as the peer")
    args = p.parse_args()
    if args.rounds < 1 or args.flush_mib < 1:
        p.error(f"--rounds {args.rounds} and --flush-mib {args.flush_mib} must be at least 1")
    torch = None
    if not args.no_torch:
        import torch
        torch.set_num_threads(1)
    flush = np.ones(args.flush_mib << 18, np.float32)  # touched
    flush_p, flush_n = flush.ctypes.data, flush.nbytes

    def cold(f):
        ctypes.memset(flush_p, 1, flush_n)
        t0 = time.perf_counter()
        f()
        return time.perf_counter() - t0

    def warm(f):
        f()
        samples = []
        for _ in range(args.rounds):
            t0 = time.perf_counter()
            f()
            samples.append(time.perf_counter() - t0)
        return statistics.median(samples)

    print(f"cold_call.py, {datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds')}; "
          f"{caches.cpu_model()} ({platform.machine()}); tessera {tessera.__version__}, numpy {np.__version__}"
          + (f", torch {torch.__version__} (1 thread)" if torch else ""))
    print(f"median us of {args.rounds} calls each after a {args.flush_mib} MiB memset (cold), and repeated (warm); "
          "outer: tile(A, (4, 1)), a new float32 output; ratio: the peer's cold time / tessera's")
    names = ["tessera", "numpy"] + (["torch"] if torch else [])
    header = ["size"] + [f"{n} {m}" for n in names for m in ("cold", "warm")] + [f"vs {n} cold" for n in names[1:]]
    rows = [header]
    for size in (4 * KIB, 16 * KIB, 64 * KIB, 256 * KIB):
        elems = size // 4
        c = min(2048, elems // 4)
        r = elems // 4 // c
        A = np.ones((r, c), np.float32)
        fns = {"tessera": lambda: tessera.tile(A, (4, 1)), "numpy": lambda: np.tile(A, (4, 1))}
        if torch:
            T = torch.from_numpy(A)
            fns["torch"] = lambda: torch.tile(T, (4, 1))
        for f in fns.values():
            f()
        times = {n: [] for n in names}
        for k in range(args.rounds):
            for n in names[k % len(names):] + names[:k % len(names)]:
                times[n].append(cold(fns[n]))
        med = {n: statistics.median(times[n]) for n in names}
        row = [f"{size // KIB} KiB"]
        for n in names:
            row += [f"{med[n] * 1e6:.1f}", f"{warm(fns[n]) * 1e6:.1f}"]
        row += [f"{med[n] / med['tessera']:.2f}x" for n in names[1:]]
        rows.append(row)
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    for r in rows:
        print("  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip())


if __name__ == "__main__":
    main()
