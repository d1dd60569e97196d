#!/usr/bin/env python3
"""The block cache's resident memory over time (issue 24, item 8): one process makes 60 allocating
tessera.tile calls of 36-196 MiB (three alive at a time), releases them, makes no further call, and
samples its resident set (/proc/self/statm) every 0.5 s for --seconds. With the default bounds
(256 MiB, 10 s) the kept blocks should leave at ~10 s after they were freed, without another call.
Not a test: it prints a table.

    PYTHONPATH=build/bench/lib/python python3 bench/cache_rss.py [--max-age S] [--limit MIB] [--seconds S]
"""
import argparse
import os
import time

import numpy as np

import tessera

MIB = 1 << 20
PAGE = os.sysconf("SC_PAGE_SIZE")


def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-age", type=float, help="tessera.set_block_cache_max_age (default: the library's)")
    ap.add_argument("--limit", type=int, help="tessera.set_block_cache_limit in MiB (default: the library's)")
    ap.add_argument("--seconds", type=float, default=14.0, help="how long to sample after the last call")
    args = ap.parse_args()
    if args.max_age is not None:
        tessera.set_block_cache_max_age(args.max_age)
    if args.limit is not None:
        tessera.set_block_cache_limit(args.limit * MIB)
    mem = tessera.show_config(mode="dicts")["Memory"]
    one = np.ones(MIB, np.uint8)
    base = rss()
    alive, peak = [], 0
    for i in range(60):
        alive.append(tessera.tile(one, 36 + i * 37 % 161))
        alive = alive[-3:]
        peak = max(peak, rss())
    del alive
    print(f"block cache: limit {mem['block_cache_limit_bytes'] / MIB:g} MiB, max age "
          f"{mem['block_cache_max_age_seconds']:g} s; 60 calls of 36-196 MiB; RSS before the calls "
          f"{base / MIB:.0f} MiB, peak {peak / MIB:.0f} MiB")
    print("| s after the last call | RSS (MiB) | above the baseline (MiB) |")
    print("|---:|---:|---:|")
    t0 = time.monotonic()
    while True:
        t = time.monotonic() - t0
        r = rss()
        print(f"| {t:.1f} | {r / MIB:.0f} | {(r - base) / MIB:.0f} |", flush=True)
        if t >= args.seconds:
            break
        time.sleep(0.5 - (time.monotonic() - t0) % 0.5)


if __name__ == "__main__":
    main()
