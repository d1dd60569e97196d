#!/usr/bin/env python3
"""How fast tessera sums addend rows that lie far apart: the distance between them, not their size.

`tessera.sum_to_shape` of a float32 gradient of shape (4, r, 2048) to (1, r, 2048) — `outer_bwd`'s
sum of four blocks, as `bench/sweep.py` times it — with the four blocks `size / 4` bytes apart (a
C-contiguous gradient) and `size / 4 + pad` bytes apart (the same gradient in a strided view of a
larger buffer), for sizes of 64 MiB to 1 GiB. GB/s of gradient read, the median of 7 calls into a
reused output, every call on the same gradient (sizes from 64 MiB on are 2x the last-level cache
of the machines measured; the first sizes partly re-read the cache: compare pads within a size, not
sizes). On an AMD EPYC of family 25 (KVM guest, 2026-11-29), four blocks exactly 256 MiB apart
(1 GiB) were read at a third of the speed of the same blocks 68 KiB further apart, and the
sweep's `outer_bwd` curve falls there. Presumably the four streams meet in the same DRAM banks
(a distance of a large power of two leaves equal every address bit that picks a bank or a
channel); the guest cannot see the host's physical addresses, so this is not checked.

Usage: PYTHONPATH=build/bench/lib/python python3 bench/addend_distance.py [--sizes-mib 64,256,1024]
"""
import argparse
import time

import numpy as np
import tessera

C = 2048  # float32 columns per row, as bench/sweep.py's outer_bwd
PADS = [0, 17 * 4096, 1 << 20, (1 << 20) + 17 * 4096]


def gbps(size, pad, calls=7):
    r = size // 4 // 4 // C
    block = r * C  # elements of one block
    base = np.empty(4 * block + 3 * pad // 4, np.float32)
    base[:] = 1.0
    g = np.lib.stride_tricks.as_strided(base, shape=(4, r, C), strides=(block * 4 + pad, C * 4, 4))
    out = np.empty((1, r, C), np.float32)
    tessera.sum_to_shape(g, (1, r, C), out=out)
    if not (out == 4.0).all():
        raise SystemExit(f"addend_distance: the sum at {size} B, pad {pad} is wrong")
    times = []
    for _ in range(calls):
        t = time.perf_counter()
        tessera.sum_to_shape(g, (1, r, C), out=out)
        times.append(time.perf_counter() - t)
    return size / sorted(times)[calls // 2] / 1e9


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes-mib", default="64,256,1024", help="gradient sizes in MiB (comma-separated)")
    args = p.parse_args()
    print(f"addend_distance: tessera {tessera.__version__}, numpy {np.__version__}; GB/s of gradient read "
          f"(4 blocks summed, a block = size / 4 bytes, the blocks size / 4 + pad bytes apart)")
    print("size      " + "".join(f"pad {pad:<10}" for pad in PADS))
    for mib in (int(s) for s in args.sizes_mib.split(",")):
        print(f"{mib:>5} MiB " + "".join(f"{gbps(mib << 20, pad):<14.1f}" for pad in PADS), flush=True)


if __name__ == "__main__":
    main()
