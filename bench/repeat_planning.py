#!/usr/bin/env python3
"""What a one-shot `tessera.repeat` with per-element counts spends on its planning.

rep_counts' call from Python (8388608 float32 elements, counts 0-4 drawn uniformly, seed 2) into a
reused `out=`, one-shot (`tessera.repeat(A, counts, out=out)`: the counts read, checked and summed
before a byte is written, then the copy) against the copy alone (a `tessera.Plan.repeat` made
once, then called), for int64 and int32 counts, beside numpy's sum of the same counts (one pass
over their bytes on one thread). The planning's share is the one-shot's time less the copy's.
Medians of 21 calls, alternating rounds.

Usage: PYTHONPATH=build/bench/lib/python python3 bench/repeat_planning.py [--rounds N]
"""
import argparse
import time

import numpy as np
import tessera

N = 8388608


def median_ms(f, calls=21):
    times = []
    for _ in range(calls):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return sorted(times)[calls // 2] * 1e3


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=2, help="rounds over both count types (default 2)")
    args = p.parse_args()
    c64 = np.random.default_rng(2).integers(0, 5, N).astype(np.int64)
    counts = {"int64": c64, "int32": c64.astype(np.int32)}
    a = np.ones(N, np.float32)
    out = np.empty(int(c64.sum()), np.float32)
    want = np.repeat(a, c64)
    print(f"repeat_planning: tessera {tessera.__version__}, numpy {np.__version__}; {N} float32 elements, "
          "counts 0-4; ms, medians of 21 calls")
    for _ in range(args.rounds):
        for name, c in counts.items():
            plan = tessera.Plan.repeat(a.shape, c, a.dtype, axis=0)
            tessera.repeat(a, c, axis=0, out=out)
            if not np.array_equal(out, want):
                raise SystemExit(f"repeat_planning: tessera.repeat is wrong with {name} counts")
            copy = median_ms(lambda: plan(a, out=out))
            one_shot = median_ms(lambda: tessera.repeat(a, c, axis=0, out=out))
            numpy_sum = median_ms(lambda: c.sum())
            print(f"{name}: one-shot {one_shot:.2f}, the copy alone {copy:.2f}, planning ~{one_shot - copy:.2f}; "
                  f"numpy's sum of the counts {numpy_sum:.2f}", flush=True)


if __name__ == "__main__":
    main()
