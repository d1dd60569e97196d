#!/usr/bin/env python3
"""What a one-shot `tessera.repeat` with per-element counts spends on its planning, against its bound.

rep_counts' call from Python (8388608 float32 elements, counts 0-4 drawn uniformly, seed 2) into a
reused `out=`, one-shot (`tessera.repeat(A, counts, out=out)`: the counts read, checked and summed
before a byte is written, then the copy) against the copy alone (a `tessera.Plan.repeat` made
once, then called), for int64 and int32 counts. Each one-shot call and each read of the counts
takes the next of bench/caches.py's rotation_copies() copies of the counts, so that they come from
DRAM, as a fresh call's would (the copy's input, as in the C++ tables, is re-read).

With --read-lib (libtessera_bench_read.so, built by bench/run in <build>/bench), also the limits,
measured in the same run after each count type's calls, on every CPU (tessera's default arena):
`stream` (the input read once, the 64 MiB output streamed: the tables' limit), `read` (the counts
read once from DRAM by the tables' `read` loop, a float32 sum: the counts' small integers are
subnormal floats, which this loop adds as fast as any others on the CPUs measured — 12% faster than
a byte sum on the Xeon of 2026-12-05), and the bound of a one-shot call: nothing may be written before
every count is checked, so it takes at least the counts' read plus the copy alone — printed as % of
`stream` beside the one-shot call's. Medians of 21 calls, alternating rounds.

Usage: PYTHONPATH=build/bench/lib/python python3 bench/repeat_planning.py [--rounds N] [--read-lib PATH]
"""
import argparse
import ctypes
import itertools
import os
import sys
import time

import numpy as np
import tessera

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import caches  # noqa: E402  bench/caches.py, beside this script

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
    p.add_argument("--read-lib", help="libtessera_bench_read.so: the read and stream limits and the bound")
    args = p.parse_args()
    threads = os.cpu_count() or 1  # the limits' threads: those of tessera's default arena
    llc = caches.last_level_cache_bytes()
    c64 = np.random.default_rng(2).integers(0, 5, N).astype(np.int64)
    counts = {"int64": c64, "int32": c64.astype(np.int32)}
    rotated = {name: caches.copies(np, c, caches.rotation_copies(c.nbytes, llc)) for name, c in counts.items()}
    a = np.ones(N, np.float32)
    total = int(c64.sum())
    raw = np.empty(4 * total + 64, np.uint8)  # out on a 64-byte boundary: `stream` streams whole lines into it
    off = (-raw.ctypes.data) % 64
    out = raw[off:off + 4 * total].view(np.float32)
    want = np.repeat(a, c64)
    lib = None
    if args.read_lib:
        lib = ctypes.CDLL(args.read_lib)
        lib.tessera_bench_read.restype = ctypes.c_double
        lib.tessera_bench_read.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        lib.tessera_bench_stream.restype = ctypes.c_uint64
        lib.tessera_bench_stream.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t,
                                             ctypes.c_int]
    print(f"repeat_planning: tessera {tessera.__version__}, numpy {np.__version__}; {N} float32 elements, "
          f"counts 0-4, {out.nbytes >> 20} MiB out; the counts rotated among "
          + ", ".join(f"{len(v)} copies ({name})" for name, v in rotated.items())
          + f" (last-level cache {llc >> 20} MiB); ms, medians of 21 calls")
    for _ in range(args.rounds):
        for name, c in counts.items():
            plan = tessera.Plan.repeat(a.shape, c, a.dtype, axis=0)
            tessera.repeat(a, c, axis=0, out=out)
            if not np.array_equal(out, want):
                raise SystemExit(f"repeat_planning: tessera.repeat is wrong with {name} counts")
            nxt = itertools.cycle(rotated[name]).__next__
            copy = median_ms(lambda: plan(a, out=out))
            one_shot = median_ms(lambda: tessera.repeat(a, nxt(), axis=0, out=out))
            numpy_sum = median_ms(lambda: nxt().sum())
            line = (f"{name}: one-shot {one_shot:.2f}, the copy alone {copy:.2f}, planning ~{one_shot - copy:.2f}; "
                    f"numpy's sum of the counts {numpy_sum:.2f}")
            if lib is not None:
                read = median_ms(lambda: lib.tessera_bench_read(nxt().ctypes.data, c.nbytes, threads))
                stream = median_ms(lambda: lib.tessera_bench_stream(a.ctypes.data, a.nbytes, out.ctypes.data,
                                                                     out.nbytes, threads))
                bound = read + copy
                line += (f"; read of the counts {read:.2f}, stream {stream:.2f}: one-shot {100 * stream / one_shot:.0f}% "
                         f"of stream, its bound (read + copy) {100 * stream / bound:.0f}%, the one-shot "
                         f"{100 * bound / one_shot:.0f}% of the bound")
            print(line, flush=True)


if __name__ == "__main__":
    main()
