#!/usr/bin/env python3
"""How fast a process can write memory it has just mapped, and how that depends on what ran before:
the bound under every first call of a process (bench/first_call.py, docs/performance.md, "The
first call of a process").

Each round runs a fresh child process that maps CHUNKS fresh private anonymous regions of 64 MiB
(2 MiB aligned, MADV_HUGEPAGE, as tessera's and numpy's large outputs are) and times a plain
`memset` of each, in order; the rounds run back to back, and before the round after --idle a pause
of --pause seconds. Prints GB/s per chunk and round.

On a virtual machine whose balloon device reports free pages to the host (virtio_balloon's free
page reporting, feature bit 5; printed), the guest hands pages that sat free for a few seconds back
to the host, and the next process to touch them waits for the host to back them again: after a
pause every chunk is slow; right after a round, the pages its process freed are fast until they
run out.

Usage: python3 bench/fresh_pages.py [--chunks 8] [--rounds 4] [--idle 2] [--pause 15]
"""
import argparse
import ctypes
import glob
import os
import subprocess
import sys
import time

MiB = 1 << 20
CHUNK = 64 * MiB
HUGE = 2 * MiB


def child(chunks):
    """Maps and memsets `chunks` fresh chunks; prints their GB/s on one line."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    libc.memset.restype = ctypes.c_void_p
    libc.memset.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t]
    PROT_RW, MAP_PRIVATE_ANON, MADV_HUGEPAGE = 0x1 | 0x2, 0x02 | 0x20, 14
    speeds = []
    for _ in range(chunks):
        base = libc.mmap(None, CHUNK + HUGE, PROT_RW, MAP_PRIVATE_ANON, -1, 0)
        if base is None or base == ctypes.c_void_p(-1).value:
            sys.exit(f"fresh_pages: mmap failed (errno {ctypes.get_errno()})")
        addr = (base + HUGE - 1) & ~(HUGE - 1)
        if libc.madvise(addr, CHUNK, MADV_HUGEPAGE) != 0:
            sys.exit(f"fresh_pages: madvise(MADV_HUGEPAGE) failed (errno {ctypes.get_errno()})")
        t = time.perf_counter()
        libc.memset(addr, 1, CHUNK)
        speeds.append(CHUNK / (time.perf_counter() - t) / 1e9)  # the mapping is kept: each chunk is new memory
    print(" ".join(f"{s:.2f}" for s in speeds))


def free_page_reporting():
    """'on' / 'off' for a virtio balloon device's free page reporting (feature bit 5), or 'no balloon'."""
    for dev in glob.glob("/sys/bus/virtio/devices/*"):
        try:
            with open(os.path.join(dev, "device")) as f:
                if int(f.read(), 16) != 5:  # VIRTIO_ID_BALLOON
                    continue
            with open(os.path.join(dev, "features")) as f:
                bits = f.read().strip()
            return "on" if len(bits) > 5 and bits[5] == "1" else "off"
        except OSError:
            continue
    return "no balloon"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--chunks", type=int, default=8, help="64 MiB chunks per round (default 8)")
    ap.add_argument("--rounds", type=int, default=4, help="rounds, each a fresh process (default 4)")
    ap.add_argument("--idle", type=int, default=2, help="the round that follows the pause (default 2)")
    ap.add_argument("--pause", type=float, default=15, help="seconds of pause before that round (default 15)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.chunks)
        return
    with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
        thp = f.read().strip()
    print(f"fresh_pages: {args.chunks} fresh 64 MiB chunks per process, memset in order, GB/s; "
          f"THP {thp}; virtio balloon free page reporting: {free_page_reporting()}")
    for r in range(args.rounds):
        note = ""
        if r == args.idle:
            time.sleep(args.pause)
            note = f" (after {args.pause:g} s idle)"
        run = subprocess.run([sys.executable, __file__, "--child", "--chunks", str(args.chunks)],
                             capture_output=True, text=True, check=True)
        print(f"round {r}{note}: {run.stdout.strip()}")


if __name__ == "__main__":
    main()
