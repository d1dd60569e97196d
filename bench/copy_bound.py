#!/usr/bin/env python3
"""The bound of a tile whose input no longer stays in the caches between its replicas: `outer`
(tile of A by (4, 1), float32, A a quarter of the output) against a plain streaming copy of an
input as large as the output (tessera.tile by (1, 1): every byte read from memory once and
streamed once), both into the same touched `out=`, alternating, at one output size.

bench/run --sweep compares `out=` above the last-level cache with `stream`, which only writes.
Where A itself outgrows the caches (from a 1 GiB output, A of 256 MiB, on a machine with a 480
MiB L3), each replica reads A from memory again and the call moves a read and a write per byte:
the copy measures that bound on the same machine, in the same process.

Usage: PYTHONPATH=build/bench/lib/python python3 bench/copy_bound.py [--size-mib 1024] [--rounds 9]
(numpy and the built tessera module; tessera's default arena: all CPUs)
"""
import argparse
import time

import numpy as np

import tessera


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size-mib", type=int, default=1024, help="output size in MiB (1 or more)")
    ap.add_argument("--rounds", type=int, default=9, help="timed calls of each, alternating")
    args = ap.parse_args()
    size = args.size_mib << 20
    cols = 2048
    if args.size_mib < 1:
        raise SystemExit(f"copy_bound.py: --size-mib {args.size_mib} is not a positive size")
    rows = size // 4 // cols  # float32 rows of the output: 128 per MiB, a multiple of 4
    cases = {
        "outer: A of a quarter, tiled (4, 1)": (np.ones((rows // 4, cols), np.float32), (4, 1)),
        "copy: A as large as out, tiled (1, 1)": (np.ones((rows, cols), np.float32), (1, 1)),
    }
    out = np.empty((rows, cols), np.float32)
    out.fill(1)  # touched
    times = {name: [] for name in cases}
    for _ in range(args.rounds):
        for name, (a, reps) in cases.items():
            t = time.perf_counter()
            tessera.tile(a, reps, out=out)
            times[name].append(time.perf_counter() - t)
    print(f"copy_bound.py: {args.size_mib} MiB out=, {args.rounds} alternating calls each; "
          f"GB/s of output (1e9 bytes/s), median and best")
    for name, ts in times.items():
        ts.sort()
        print(f"  {name:40s} {size / ts[len(ts) // 2] / 1e9:6.1f}  {size / ts[0] / 1e9:6.1f}")


if __name__ == "__main__":
    main()
