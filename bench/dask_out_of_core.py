#!/usr/bin/env python3
"""An output larger than memory: tessera.dask.tile streamed to Zarr by a dask.distributed cluster.

Tiles a small float32 input into an output several times the workers' memory (default: 8 GiB made
by 2 worker processes limited to 1 GiB each, in 64 MiB chunks) and writes it to a Zarr store on
disk (uncompressed), with distributed's progress bar. Then prints each worker's peak resident
memory (VmHWM of /proc/self/status, read on the worker) and checks sampled blocks of the store against
``numpy.tile`` on the same indices. Needs Debian's python3-dask, python3-distributed, python3-zarr
and the tessera module (PYTHONPATH=build/tests/lib/python, or installed); the store is deleted at
the end unless --keep.

Usage: bench/dask_out_of_core.py [--gib 8] [--workers 2] [--memory-limit "1 GiB"] [--store DIR] [--keep]
"""
import argparse
import os
import shutil
import sys
import tempfile
import time

import numpy as np


def peak_rss():
    """This process's peak resident memory in bytes (VmHWM: ru_maxrss would count the parent's
    memory before a spawned worker's exec)."""
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmHWM:"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gib", type=float, default=8.0, help="output size in GiB (default 8)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--memory-limit", default="1 GiB", help="each worker's (default 1 GiB)")
    ap.add_argument("--store", help="the Zarr directory (default: a temporary one on /var/tmp)")
    ap.add_argument("--keep", action="store_true", help="keep the store")
    a = ap.parse_args()

    import dask
    from dask.utils import parse_bytes
    from distributed import Client, LocalCluster, progress
    import zarr

    import tessera.dask as td

    cols = 4096
    x = (np.arange(5 * cols, dtype=np.float32) % 997).reshape(5, cols)  # 80 KiB
    rows = int(a.gib * (1 << 30)) // (cols * 4)
    rows -= rows % 5
    reps = (rows // 5, 1)
    y = td.tile(x, reps, chunks=(4096, cols))  # 64 MiB chunks
    limit = parse_bytes(a.memory_limit)
    store = a.store or tempfile.mkdtemp(prefix="tessera-zarr-", dir="/var/tmp")
    print(f"output {y.shape} float32 = {y.nbytes / 2**30:.2f} GiB in {y.npartitions} chunks of "
          f"{y.chunksize[0] * y.chunksize[1] * 4 / 2**20:.0f} MiB; {len(dict(y.__dask_graph__()))} tasks; "
          f"{a.workers} workers of {limit / 2**30:.2f} GiB = {y.nbytes / (a.workers * limit):.1f}x their memory")
    env = {"PYTHONPATH": os.pathsep.join(sys.path)}
    with LocalCluster(n_workers=a.workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None, memory_limit=limit, env=env, silence_logs=40) as cluster, \
            Client(cluster) as client:
        t0 = time.perf_counter()
        future = client.compute(y.to_zarr(store, compressor=None, overwrite=True, compute=False))
        progress(future)
        future.result()
        seconds = time.perf_counter() - t0
        peaks = client.run(peak_rss)
    print(f"\nwritten in {seconds:.1f} s ({y.nbytes / seconds / 1e9:.2f} GB/s to {store})")
    for w, p in sorted(peaks.items()):
        print(f"worker {w}: peak resident memory {p / 2**20:.0f} MiB ({p / limit:.0%} of its limit)")
    z = zarr.open(store, mode="r")
    rng = np.random.default_rng(0)
    ok = z.shape == y.shape
    for _ in range(32):
        i, j = int(rng.integers(0, y.shape[0] - 64)), int(rng.integers(0, cols - 64))
        want = np.tile(x, (14, 1))[i % 5:i % 5 + 64, j:j + 64]  # numpy.tile's rows i..i+63 (period 5)
        ok = ok and bool((z[i:i + 64, j:j + 64] == want).all())
    print(f"32 sampled 64x64 blocks of the store {'equal' if ok else 'DIFFER from'} numpy.tile's")
    if not a.keep:
        shutil.rmtree(store, ignore_errors=True)
    sys.exit(0 if ok and all(p < limit for p in peaks.values()) else 1)


if __name__ == "__main__":
    main()
