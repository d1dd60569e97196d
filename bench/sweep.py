#!/usr/bin/python3
"""The cost curve: tessera against numpy, torch and the limits from 4 KiB to 4 GiB (bench/run --sweep).

Usage: bench/sweep.py --read-lib PATH [--filter REGEX] [--min-size BYTES] [--max-size BYTES]
                      [--json FILE] [--plot FILE.png]
       bench/sweep.py --plot-only JSON --plot FILE.png

Three cases, each at the sizes 4 KiB, 16 KiB, ..., 4 GiB (x4 steps; the size is the output's bytes,
for outer_bwd the gradient's), float32:

  outer       tile(A, (4, 1)), A of shape (S/16/c, c), c = min(2048, S/16 elements): whole-array blocks
  column      tile(A, (1, 16)), A of shape (S/64, 1): each element broadcast 16x
  outer_bwd   tile_backward(G, (S/16/c, c), (4, 1)), G of S bytes: the 4 blocks summed

in three modes:

  out=        into a preallocated, touched output: tessera.tile(A, reps, out=buf) /
              tessera.tile_backward(G, in_shape, reps, out=res); numpy np.copyto(buf viewed as (4, r, c),
              A[None]) (column: buf as (n, 16) from A (n, 1)) / np.sum(G as (4, r, c), axis=0, out=res);
              torch buf.view(...).copy_(T.expand(...)) / torch.sum(G as (4, r, c), 0, out=res)
  warm        a new output, after warm-up calls: tessera.tile(A, reps), numpy.tile(A, reps),
              torch.tile(T, reps); tessera.tile_backward(G, ...), G.reshape(4, r, c).sum(0) (numpy and
              torch: what torch's RepeatBackward0 computes)
  first       the first allocating call of a fresh process: for each point and library a new
              interpreter imports only that library (and numpy for tessera), makes the input, and times
              its one call (5 processes per point and library up to 64 MiB, 1 above, the libraries
              taking turns process by process; the median; the JSON keeps every process's seconds)

Each point is printed beside limits measured in the same run, interleaved with the calls
(bench/read_limit.cpp through ctypes, the loops of tile_bench's limits): for outer and column `store`
(ordinary stores into the touched output) below the last-level cache and `stream` (the input read
once, the output streamed) from it, for the out= and warm modes; `fresh_thp` (memset into a fresh
mapping advised MADV_HUGEPAGE, then munmap) for the first call, and below the cache `read_store` and
`memcpy` too (`read_store`: the input read once and the output written with ordinary stores in one
pass, `stream`'s bytes with `store`'s stores — what a tile in the caches moves at least, where
`store` only writes; `memcpy`: the output's bytes copied from a touched buffer, reading as much as it
writes; a second table prints `out=` against the three); for outer_bwd `read` (a float32
vector sum) in every mode. The gradient of outer_bwd has rotation_copies() copies (bench/caches.py:
together more than twice the last-level cache read from sysfs; one from 8x the cache up) and every call of tessera, numpy,
torch and `read` takes the next copy, so that all of them read G from DRAM at every size — the
backward curve is DRAM's, not the caches'; the forward cases re-read their (small) input as
tile_bench does.

GB/s are 1e9 bytes of output per second (outer_bwd: of gradient read). Repetitions: 5 samples of at
least 20 ms up to 64 MiB, 3 up to 1 GiB, 2 at 4 GiB (medians). A size whose buffers do not fit in
MemAvailable (minus 2 GiB) is skipped with a message naming it. The sweep takes about 8 minutes on
2 cores. Must run on the interpreter tessera was built for (PYTHONPATH=<build>/lib/python), as
bench/run --sweep runs it.
"""
import argparse
import ctypes
import datetime
import itertools
import json
import math
import os
import re
import statistics
import subprocess
import sys
import time

import caches  # bench/caches.py, beside this script

KIB, MIB, GIB = 2**10, 2**20, 2**30
SIZES = [4 * KIB * 4**i for i in range(11)]  # 4 KiB .. 4 GiB
CASES = ["outer", "column", "outer_bwd"]
MODES = ["out=", "warm", "first"]
LIBS = ["tessera", "numpy", "torch"]
FIRST_PROCS = 5  # fresh processes per point and library up to 64 MiB (first_calls)
SAMPLE_S = 0.02


def shapes(case, size):
    """(input shape, reps, output shape) of a case at `size` bytes (outer_bwd: the gradient's)."""
    elems = size // 4
    if case == "column":
        n = elems // 16
        return (n, 1), (1, 16), (n, 16)
    c = min(2048, elems // 4)
    r = elems // 4 // c
    if case == "outer":
        return (r, c), (4, 1), (4 * r, c)
    return (4 * r, c), (4, 1), (r, c)  # outer_bwd: G, reps, the result


def fill(np, shape):
    """float32 elements k/8, k in [-16, 16] (a pattern of 65537 repeated, so that a 4 GiB input needs
    no temporaries): sums of a few of them are exact in any order, so results compare bit for bit."""
    k = (np.arange(65537, dtype=np.uint64) * np.uint64(2654435761) >> np.uint64(13)) % np.uint64(33)
    pattern = (k.astype(np.float32) - 16) / 8
    return np.resize(pattern, math.prod(shape)).reshape(shape)


def aligned_zeros(np, shape):
    """A touched float32 array of `shape` starting on a 64-byte boundary (the limits' loops need one)."""
    nbytes = 4 * math.prod(shape)
    raw = np.empty(nbytes + 64, np.uint8)
    off = (-raw.ctypes.data) % 64
    out = raw[off:off + nbytes].view(np.float32).reshape(shape)
    out.fill(0)
    return out


def evict(np, llc):
    """Writes and frees twice the last-level cache, so that what was written before is read from DRAM."""
    scratch = np.empty(2 * llc, np.uint8)
    scratch.fill(1)
    del scratch


def same_tile(np, out, A, view):
    """Whether out, viewed as `view`, is A broadcast to it: outer's view (4, r, c) is 4 copies of A
    (r, c); column's (n, 16) is A (n, 1) broadcast across. Compared in slices of 16 Mi elements."""
    v = out.reshape(view)
    if len(view) == 3:
        return all(np.array_equal(v[k], A) for k in range(view[0]))
    step = 1 << 20
    return all(np.array_equal(v[i:i + step], np.broadcast_to(A[i:i + step], v[i:i + step].shape))
               for i in range(0, view[0], step))


def fmt_size(n):
    for unit, scale in (("GiB", GIB), ("MiB", MIB), ("KiB", KIB)):
        if n >= scale:
            return f"{n / scale:g} {unit}"
    return f"{n} B"


def mem_available():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * KIB
    raise RuntimeError("no MemAvailable in /proc/meminfo")


def needed_bytes(case, size, copies):
    """Peak bytes a point holds: inputs, the touched output, a new output, a fresh_thp mapping."""
    if case == "outer_bwd":
        return copies * size + 3 * size // 4
    return size // 4 + 2 * size if case == "outer" else size // 16 + 2 * size


def repetitions(size):
    return 5 if size <= 64 * MIB else 3 if size <= GIB else 2


# -- the first call of a fresh process -----------------------------------------------------------

def child(case, lib, size):
    """Runs in a fresh interpreter: makes the input with `lib`, times its first call, prints seconds."""
    in_shape, reps, out_shape = shapes(case, size)
    import numpy as np
    # The library is imported first, as a script does: imported after the input was made, its
    # import took the memory the input's temporaries had freed (touched already), so its output
    # came from fresh pages while numpy's output reused that memory.
    if lib == "tessera":
        import tessera
    elif lib == "torch":
        import torch
    if case == "outer_bwd":
        G = fill(np, in_shape)
        evict(np, caches.last_level_cache_bytes())  # G is read from DRAM, as in the other modes
    else:
        A = fill(np, in_shape)
    r, c = out_shape if case == "outer_bwd" else in_shape
    if lib == "tessera":
        call = ((lambda: tessera.tile_backward(G, out_shape, reps)) if case == "outer_bwd"
                else (lambda: tessera.tile(A, reps)))
    elif lib == "numpy":
        call = (lambda: G.reshape(4, r, c).sum(0)) if case == "outer_bwd" else (lambda: np.tile(A, reps))
    else:
        if case == "outer_bwd":
            Gt = torch.from_numpy(G)
            call = lambda: Gt.view(4, r, c).sum(0)  # noqa: E731
        else:
            T = torch.from_numpy(A)
            call = lambda: torch.tile(T, reps)  # noqa: E731
    t0 = time.perf_counter()
    result = call()
    seconds = time.perf_counter() - t0
    if tuple(result.shape) != tuple(out_shape):
        sys.exit(f"sweep.py: {lib} {case} gave shape {tuple(result.shape)}, not {out_shape}")
    print(json.dumps({"seconds": seconds}))


def first_call(case, size, lib):
    """Seconds of the first call of one fresh process (see child())."""
    p = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", case, lib, str(size)],
                       capture_output=True, text=True, env=os.environ, stdin=subprocess.DEVNULL)
    if p.returncode != 0:
        sys.exit(f"sweep.py: the fresh process of {lib} {case} {fmt_size(size)} failed:\n{p.stderr[-2000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])["seconds"]


def first_calls(case, size):
    """{lib: [seconds of the first call of each fresh process]}: FIRST_PROCS rounds up to 64 MiB (1
    above), each round one process per library, the libraries' order rotated round by round, so that
    a slow spell of the host (fresh pages it backs slowly now and then) falls on all of them alike."""
    out = {name: [] for name in LIBS}
    for k in range(FIRST_PROCS if size <= 64 * MIB else 1):
        for name in LIBS[k % len(LIBS):] + LIBS[:k % len(LIBS)]:
            out[name].append(first_call(case, size, name))
    return out


# -- the in-process modes -----------------------------------------------------------------------

def rotating(fns):
    it = itertools.cycle(fns)
    return lambda: next(it)()


def timed(fn, inner):
    t0 = time.perf_counter()
    for _ in range(inner):
        fn()
    return (time.perf_counter() - t0) / inner


def calibrate(fn):
    n = 1
    while True:
        t = timed(fn, n) * n
        if t >= SAMPLE_S or n >= 1 << 20:
            return n
        n = max(n + 1, min(n * 10, math.ceil(n * SAMPLE_S * 1.2 / max(t, 1e-9))))


def interleaved(calls, size, rng):
    """{name: median seconds per call}: a warm-up call, a calibrated count, then repetitions(size) rounds
    of one sample per call in a random order."""
    inner = {}
    for name, fn in calls.items():
        fn()
        inner[name] = calibrate(fn) if size <= 64 * MIB else 1
    samples = {name: [] for name in calls}
    for _ in range(repetitions(size)):
        order = list(calls)
        rng.shuffle(order)
        for name in order:
            samples[name].append(timed(calls[name], inner[name]))
    return {name: statistics.median(v) for name, v in samples.items()}


def point(np, torch, tessera, lib, case, size, llc, rng):
    """{(mode, method): GB/s} of one case at one size: every mode, every library, its limits."""
    in_shape, reps, out_shape = shapes(case, size)
    threads = os.cpu_count() or 1
    calls = {}
    if case == "outer_bwd":
        r, c = out_shape
        copies = caches.copies(np, fill(np, in_shape), caches.rotation_copies(size, llc))
        tcopies = [torch.from_numpy(g) for g in copies]
        res = np.full(out_shape, 0, np.float32)  # touched
        res_t = torch.full(out_shape, 0.0)
        want = copies[0].reshape(4, r, c).sum(0)  # exact: 4 multiples of 1/8
        got = tessera.tile_backward(copies[0], out_shape, reps)
        if not np.array_equal(got, want):
            sys.exit(f"sweep.py: tessera.tile_backward is wrong at {fmt_size(size)}")
        calls[("out=", "tessera")] = rotating([lambda g=g: tessera.tile_backward(g, out_shape, reps, out=res)
                                               for g in copies])
        calls[("out=", "numpy")] = rotating([lambda g=g: np.sum(g.reshape(4, r, c), axis=0, out=res) for g in copies])
        calls[("out=", "torch")] = rotating([lambda g=g: torch.sum(g.view(4, r, c), 0, out=res_t) for g in tcopies])
        calls[("warm", "tessera")] = rotating([lambda g=g: tessera.tile_backward(g, out_shape, reps) for g in copies])
        calls[("warm", "numpy")] = rotating([lambda g=g: g.reshape(4, r, c).sum(0) for g in copies])
        calls[("warm", "torch")] = rotating([lambda g=g: g.view(4, r, c).sum(0) for g in tcopies])
        calls[("limit", "read")] = rotating([
            lambda g=g: lib.tessera_bench_read(ctypes.c_void_p(g.ctypes.data), ctypes.c_size_t(size), threads)
            for g in copies])
        counted = size
    else:
        A = fill(np, in_shape)
        T = torch.from_numpy(A)
        buf = aligned_zeros(np, out_shape)
        buf_t = torch.from_numpy(buf)
        if case == "outer":
            view, src = (4,) + in_shape, A[None]
        else:
            view, src = out_shape, A
        tessera.tile(A, reps, out=buf)
        if not same_tile(np, buf, A, view):
            sys.exit(f"sweep.py: tessera.tile is wrong for {case} at {fmt_size(size)}")
        bview, tview, tsrc = buf.reshape(view), buf_t.view(view), torch.from_numpy(np.ascontiguousarray(src))
        calls[("out=", "tessera")] = lambda: tessera.tile(A, reps, out=buf)
        calls[("out=", "numpy")] = lambda: np.copyto(bview, src)
        calls[("out=", "torch")] = lambda: tview.copy_(tsrc.expand(view))
        calls[("warm", "tessera")] = lambda: tessera.tile(A, reps)
        calls[("warm", "numpy")] = lambda: np.tile(A, reps)
        calls[("warm", "torch")] = lambda: torch.tile(T, reps)
        out_p, a_p = ctypes.c_void_p(buf.ctypes.data), ctypes.c_void_p(A.ctypes.data)
        calls[("limit", "store")] = lambda: lib.tessera_bench_store(out_p, ctypes.c_size_t(size), threads)
        calls[("limit", "stream")] = lambda: lib.tessera_bench_stream(a_p, ctypes.c_size_t(A.nbytes), out_p,
                                                                      ctypes.c_size_t(size), threads)
        calls[("limit", "fresh_thp")] = lambda: lib.tessera_bench_fresh_thp(ctypes.c_size_t(size), threads)
        if size < llc:  # the input's read with the output's stores, and a copy of the output's bytes, beside `store`
            copy_from = aligned_zeros(np, out_shape)
            c_p = ctypes.c_void_p(copy_from.ctypes.data)
            calls[("limit", "read_store")] = lambda: lib.tessera_bench_read_store(
                a_p, ctypes.c_size_t(A.nbytes), out_p, ctypes.c_size_t(size), threads)
            calls[("limit", "memcpy")] = lambda: lib.tessera_bench_memcpy(c_p, out_p, ctypes.c_size_t(size), threads)
        counted = size
    seconds = interleaved(calls, size, rng)
    return {key: counted / s / 1e9 for key, s in seconds.items()}


def first_point(case, size):
    """({("first", lib): GB/s}, {lib: [seconds]}): the median first call of fresh processes, per library."""
    seconds = first_calls(case, size)
    return {("first", name): size / statistics.median(s) / 1e9 for name, s in seconds.items()}, seconds


def limit_of(case, mode, size, llc):
    """The limit a point is compared with (see the module's docstring)."""
    if case == "outer_bwd":
        return "read"
    if mode == "first":
        return "fresh_thp"
    return "store" if size < llc else "stream"


def rows_of(results, llc):
    rows = []
    for r in results:
        g = {tuple(k.split("|")): v for k, v in r["gbps"].items()}
        for mode in MODES:
            ours = g.get((mode, "tessera"))
            peers = {p: g[(mode, p)] for p in ("numpy", "torch") if (mode, p) in g}
            best = max(peers, key=peers.get) if peers else None
            lname = limit_of(r["case"], mode, r["size"], llc)
            limit = g.get(("limit", lname))
            rows.append({"case": r["case"], "size": r["size"], "mode": mode, "tessera": ours,
                         "numpy": peers.get("numpy"), "torch": peers.get("torch"), "best_peer": best,
                         "limit_name": lname, "limit": limit, "memcpy": g.get(("limit", "memcpy")),
                         "read_store": g.get(("limit", "read_store")),
                         "vs_peer": ours / peers[best] if best and ours else None,
                         "of_limit": ours / limit if limit and ours else None})
    return rows


def print_columns(table):
    """Prints the rows of strings of `table` (its header first) in left-aligned columns."""
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    for row in table:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())


def print_table(rows, skipped):
    def f(x):
        return "-" if x is None else f"{x:.0f}" if x >= 100 else f"{x:.1f}" if x >= 10 else f"{x:.2f}"
    header = ["case", "size", "mode", "tessera", "numpy", "torch", "best peer", "limit", "limit GB/s",
              "vs peer", "of limit"]
    print_columns([header] + [[r["case"], fmt_size(r["size"]), r["mode"], f(r["tessera"]), f(r["numpy"]), f(r["torch"]),
                               r["best_peer"] or "-", r["limit_name"], f(r["limit"]),
                               f"{r['vs_peer']:.2f}x" if r["vs_peer"] else "-",
                               f"{100 * r['of_limit']:.0f}%" if r["of_limit"] else "-"] for r in rows])
    for s in skipped:
        print(f"skipped: {s}")
    cached = [r for r in rows if r["mode"] == "out=" and r.get("memcpy") and r["tessera"]]
    if cached:
        def of(r, x):
            return f"{100 * r['tessera'] / x:.0f}%" if x else "-"
        print("in the caches (out=, below the last-level cache): read_store = the input read once and the output "
              "written with ordinary stores, in one pass (`store` only writes); memcpy = the output's bytes copied "
              "from a touched buffer of the same size (each byte read once and written once)")
        table = [["case", "size", "tessera", "store", "read_store", "memcpy", "of store", "of read_store",
                  "of memcpy"]]
        for r in cached:
            table.append([r["case"], fmt_size(r["size"]), f(r["tessera"]), f(r["limit"]), f(r.get("read_store")),
                          f(r["memcpy"]), of(r, r["limit"]), of(r, r.get("read_store")), of(r, r["memcpy"])])
        print_columns(table)


def plot(data, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rows = data["rows"]
    cases = [c for c in CASES if any(r["case"] == c for r in rows)]
    fig, axes = plt.subplots(len(cases), len(MODES), figsize=(5 * len(MODES), 3.6 * len(cases)), squeeze=False,
                             sharex=True)
    styles = {"tessera": ("C0", "o-"), "numpy": ("C1", "s--"), "torch": ("C2", "^--"), "limit": ("k", ":")}
    for i, case in enumerate(cases):
        for j, mode in enumerate(MODES):
            ax = axes[i][j]
            pts = sorted((r for r in rows if r["case"] == case and r["mode"] == mode), key=lambda r: r["size"])
            for key in ("tessera", "numpy", "torch", "limit"):
                xs = [r["size"] for r in pts if r[key]]
                ys = [r[key] for r in pts if r[key]]
                label = key if key != "limit" else "limit (" + "/".join(dict.fromkeys(r["limit_name"] for r in pts)) + ")"
                color, style = styles[key]
                ax.plot(xs, ys, style, color=color, label=label, markersize=4)
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.axvline(data["llc_bytes"], color="0.7", lw=0.8)
            ax.set_title(f"{case}, {mode}", fontsize=10)
            ax.grid(True, which="both", lw=0.3)
            if j == 0:
                ax.set_ylabel("GB/s")
            if i == len(cases) - 1:
                ax.set_xlabel("bytes (output; outer_bwd: gradient)")
            ax.legend(fontsize=7)
    fig.suptitle(f"tessera {data['tessera_version']} sweep, {data['date']}, {data['cpu_model']} "
                 f"(grey line: last-level cache {fmt_size(data['llc_bytes'])})", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"sweep.py: plot in {path}", file=sys.stderr)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--read-lib", help="libtessera_bench_read.so (the limits)")
    p.add_argument("--filter", default="", help="only the cases whose name REGEX matches")
    p.add_argument("--min-size", type=int, default=SIZES[0])
    p.add_argument("--max-size", type=int, default=SIZES[-1])
    p.add_argument("--json", help="also write the results to FILE")
    p.add_argument("--plot", help="draw GB/s against size in FILE.png (matplotlib)")
    p.add_argument("--plot-only", help="draw --plot from a JSON of an earlier sweep, without measuring")
    p.add_argument("--child", nargs=3, metavar=("CASE", "LIB", "SIZE"), help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        return child(args.child[0], args.child[1], int(args.child[2]))
    if args.plot_only:
        if not args.plot:
            sys.exit("sweep.py: --plot-only needs --plot FILE.png")
        with open(args.plot_only) as f:
            return plot(json.load(f), args.plot)
    if not args.read_lib:
        sys.exit("sweep.py: --read-lib PATH (libtessera_bench_read.so) is needed for the limits")

    import numpy as np
    import torch
    import tessera
    import random
    lib = ctypes.CDLL(args.read_lib)
    lib.tessera_bench_read.restype = ctypes.c_double
    lib.tessera_bench_read.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    lib.tessera_bench_store.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    lib.tessera_bench_memcpy.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    for fn in (lib.tessera_bench_stream, lib.tessera_bench_read_store):
        fn.restype = ctypes.c_uint64
        fn.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    lib.tessera_bench_fresh_thp.argtypes = [ctypes.c_size_t, ctypes.c_int]
    try:
        llc = caches.last_level_cache_bytes()
    except RuntimeError as e:
        sys.exit(f"sweep.py: {e}")
    rng = random.Random(1)
    cases = [c for c in CASES if re.search(args.filter, c)]
    sizes = [s for s in SIZES if args.min_size <= s <= args.max_size]
    print(f"sweep.py: {len(cases)} cases x {len(sizes)} sizes; last-level cache {fmt_size(llc)}", file=sys.stderr)
    results, skipped, start = [], [], time.time()
    for case in cases:
        for size in sizes:
            need = needed_bytes(case, size, caches.rotation_copies(size, llc))
            avail = mem_available()
            if need + 2 * GIB > avail:
                msg = (f"{case} at {fmt_size(size)}: needs {need / GIB:.1f} GiB + 2 GiB spare, "
                       f"MemAvailable is {avail / GIB:.1f} GiB")
                print(f"sweep.py: SKIPPED {msg}", file=sys.stderr)
                skipped.append(msg)
                continue
            t0 = time.time()
            gbps = point(np, torch, tessera, lib, case, size, llc, rng)  # its buffers freed on return
            first, first_seconds = first_point(case, size)
            gbps.update(first)
            results.append({"case": case, "size": size, "gbps": {"|".join(k): v for k, v in gbps.items()},
                            "first_seconds": first_seconds})
            if args.json:  # kept point by point: a run stopped on the way (e.g. out of memory) keeps its points
                with open(args.json, "w") as f:
                    json.dump({"partial": True, "llc_bytes": llc, "results": results, "skipped": skipped}, f)
            print(f"sweep.py: {case} {fmt_size(size)} in {time.time() - t0:.0f} s", file=sys.stderr)
    data = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "tessera_version": tessera.__version__ if hasattr(tessera, "__version__") else "?",
            "numpy": np.__version__, "torch": torch.__version__, "torch_threads": torch.get_num_threads(),
            "cpu_model": caches.cpu_model(), "cpus": os.cpu_count(), "llc_bytes": llc,
            "seconds": round(time.time() - start), "results": results, "skipped": skipped}
    data["rows"] = rows_of(results, llc)
    print(f"tessera sweep, {data['date']}; {data['cpu_model']}, {data['cpus']} CPUs, last-level cache "
          f"{fmt_size(llc)}; numpy {data['numpy']}, torch {data['torch']} ({data['torch_threads']} threads); "
          f"{data['seconds']} s")
    print("GB/s of output (outer_bwd: of gradient read, every call on the next of copies spanning > 2x the "
          "last-level cache: from DRAM); limit: store below the last-level cache, stream from it (out=, warm), "
          "fresh_thp (first), read (outer_bwd); vs peer: tessera / the best of numpy and torch; of limit: "
          "tessera / limit")
    print_table(data["rows"], skipped)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(data, f, indent=1)
    if args.plot:
        plot(data, args.plot)


if __name__ == "__main__":
    main()
