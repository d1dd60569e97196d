#!/usr/bin/python3
"""tessera's Python benchmark: tessera.tile against numpy.tile and torch.tile, in one process.

Usage: bench/python_bench.py [--filter REGEX] [--json FILE] [--repetitions N] [--min-sample-ms MS]
                             [--cases FILE] [--lib PATH] [--torch-threads N] [--seed N]

For every case of bench/cases.json (its "transpose_of" honoured as bench/cases.cpp does: the input
is the transposed view of a C-contiguous array of that shape), five calls are timed:

  numpy         numpy.tile(A, reps)                      (a new output)
  torch         torch.tile(T, reps), T = torch.from_numpy(A): the same memory, strides and view
  tessera       tessera.tile(A, reps)                    (a new output)
  tessera out=  tessera.tile(A, reps, out=buf)           (buf preallocated and touched)
  C API         tessera_tile_ex through ctypes into the same buf (libtessera.so.0, default options)

Each repetition runs one sample of each call, in a random order (the machine is shared and noisy:
only ratios measured in the same run mean something). A sample repeats the call enough times to
last at least --min-sample-ms; the table shows the median over the repetitions of the time per
call, and GB/s of output (1 GB = 1e9 bytes). New outputs are freed inside the timed loop (as the
C++ benchmark's tile_alloc frees its Array).

Must run on the interpreter the module was built for (Debian's /usr/bin/python3, which has numpy
and python3-torch). PYTHONPATH=<build>/lib/python, or run it through bench/run.
"""
import argparse
import ctypes
import datetime
import json
import math
import os
import platform
import random
import re
import statistics
import sys
import time
import timeit

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MiB = 2**20

METHODS = ["numpy", "torch", "tessera", "tessera_out", "c_api"]
LABELS = {"numpy": "numpy.tile", "torch": "torch.tile", "tessera": "tessera.tile",
          "tessera_out": "tessera out=", "c_api": "C API"}

# Targets (reported, never enforced): for outputs of 60-64 MiB, tessera.tile with a new output at
# least this many times as fast as numpy.tile, and TORCH_TARGET times as fast as torch.tile;
# tessera.tile(out=) at least OUT_TARGET of the C API's speed; the tiny case's whole call at most
# TINY_TARGET_NS.
LARGE_MIN_BYTES = 60 * MiB
NUMPY_TARGET = {"narrow": 3.0, "column": 3.0, "nchw": 3.0, "bytes": 3.0, "strided": 3.0}
NUMPY_TARGET_DEFAULT = 1.5
TORCH_TARGET = 2.0
OUT_TARGET = 0.85
TINY_TARGET_NS = 1000.0


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--filter", default="", help="only the cases whose name REGEX matches (re.search)")
    p.add_argument("--json", help="write the raw results (every sample) to FILE")
    p.add_argument("--repetitions", type=int, default=21, help="samples per call and case (default 21)")
    p.add_argument("--min-sample-ms", type=float, default=30.0, help="shortest sample (default 30 ms)")
    p.add_argument("--cases", default=os.path.join(ROOT, "bench", "cases.json"))
    p.add_argument("--lib", help="libtessera.so.0 for the C API column (default: next to the module's build)")
    p.add_argument("--torch-threads", type=int, default=0,
                   help="torch.set_num_threads(N) first (default: torch's own default, shown in the header)")
    p.add_argument("--seed", type=int, default=1, help="seed of the interleaving order")
    return p.parse_args()


# -- environment -------------------------------------------------------------------------------

def first_line(path, default="?"):
    try:
        with open(path) as f:
            return f.readline().strip()
    except OSError:
        return default


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def machine_busy_seconds():
    """CPU seconds all CPUs have been busy (or stolen), from /proc/stat."""
    try:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:9]]
        return (v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return 0.0


def own_cpu_seconds():
    t = os.times()
    return t.user + t.system


def find_lib(tessera_mod, explicit):
    if explicit:
        return explicit
    # <build>/lib/python/tessera/__init__.py -> <build>/lib/libtessera.so.0
    here = os.path.dirname(os.path.abspath(tessera_mod.__file__))
    candidate = os.path.normpath(os.path.join(here, "..", "..", "libtessera.so.0"))
    return candidate if os.path.exists(candidate) else None


# -- cases -------------------------------------------------------------------------------------

def load_cases(path, pattern):
    with open(path) as f:
        cases = json.load(f)
    if pattern:
        rx = re.compile(pattern)
        cases = [c for c in cases if rx.search(c["name"])]
        if not cases:
            sys.exit(f"python_bench: no case name matches --filter={pattern}")
    return cases


def make_input(np, case):
    """The case's input: C-contiguous, or the transposed view of a C-contiguous array of shape
    "transpose_of" (so "shape" is its reverse), filled with a byte pattern."""
    dtype = np.dtype(case["dtype"])
    shape = tuple(case["shape"])
    base_shape = tuple(case.get("transpose_of", shape))
    if "transpose_of" in case and tuple(reversed(base_shape)) != shape:
        sys.exit(f"python_bench: case {case['name']}: \"shape\" must be \"transpose_of\" reversed")
    count = math.prod(base_shape)
    raw = (np.arange(count * dtype.itemsize, dtype=np.uint64) * 2654435761 >> 13).astype(np.uint8)
    base = raw.view(dtype).reshape(base_shape)
    return base.T if "transpose_of" in case else base


def same_bytes(np, a, b):
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a.reshape(-1).view(np.uint8),
                                                                        b.reshape(-1).view(np.uint8))


# -- C API through ctypes -------------------------------------------------------------------------

class CApi:
    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        self.lib.tessera_last_error.restype = ctypes.c_char_p
        self.lib.tessera_version.restype = ctypes.c_char_p
        self.path = path

    def args(self, A, reps, buf):
        """The prebuilt argument tuple of tessera_tile_ex(A, reps) into buf (no conversion at call time)."""
        I64 = ctypes.c_int64
        nd, nr = A.ndim, len(reps)
        return (ctypes.c_void_p(A.ctypes.data), ctypes.c_int(nd), (I64 * max(nd, 1))(*A.shape),
                (I64 * max(nd, 1))(*A.strides), ctypes.c_size_t(A.itemsize), ctypes.c_int(nr),
                (I64 * max(nr, 1))(*reps), ctypes.c_void_p(buf.ctypes.data), ctypes.c_size_t(buf.nbytes), None)

    def overhead_ns(self):
        """Median time of a ctypes call to a no-op (tessera_options_init(NULL)): ctypes' own cost."""
        t = timeit.Timer("f(None)", globals={"f": self.lib.tessera_options_init})
        n = 20000
        return statistics.median(t.timeit(n) / n for _ in range(7)) * 1e9

    def check(self, status):
        if status != 0:
            raise RuntimeError(f"tessera_tile_ex: status {status}: {self.lib.tessera_last_error().decode()}")


# -- timing ------------------------------------------------------------------------------------

def calibrate(timer, target_s):
    """Calls per sample so that one sample lasts at least target_s (timeit.autorange, scaled)."""
    n = 1
    while True:
        t = timer.timeit(n)
        if t >= target_s:
            return n
        if t >= target_s / 10:
            return max(n + 1, math.ceil(n * target_s * 1.1 / t))
        n *= 10 if t < target_s / 100 else 2


def run_case(np, torch, tessera, capi, case, args, rng):
    A = make_input(np, case)
    reps = tuple(case["reps"])
    T = torch.from_numpy(A)
    expect = np.tile(A, reps)
    out_shape, out_bytes = expect.shape, expect.nbytes
    buf = np.empty(out_shape, dtype=A.dtype)
    buf.reshape(-1).view(np.uint8).fill(0)  # touched: every page mapped before it is timed

    # Every call checked once against numpy.tile before it is timed.
    checks = {"torch": torch.tile(T, reps).numpy(), "tessera": tessera.tile(A, reps)}
    tessera.tile(A, reps, out=buf)
    checks["tessera_out"] = buf.copy()
    c_args = None
    if capi:
        buf.reshape(-1).view(np.uint8).fill(0)
        c_args = capi.args(A, reps, buf)
        capi.check(capi.lib.tessera_tile_ex(*c_args))
        checks["c_api"] = buf.copy()
    wrong = [m for m, v in checks.items() if not same_bytes(np, v, expect)]
    if wrong:
        sys.exit(f"python_bench: case {case['name']}: {', '.join(wrong)} differ from numpy.tile")
    del checks, expect

    ns = {"np_tile": np.tile, "torch_tile": torch.tile, "tile": tessera.tile, "A": A, "T": T, "reps": reps,
          "buf": buf, "c_tile": capi.lib.tessera_tile_ex if capi else None, "c_args": c_args}
    stmts = {"numpy": "np_tile(A, reps)", "torch": "torch_tile(T, reps)", "tessera": "tile(A, reps)",
             "tessera_out": "tile(A, reps, out=buf)", "c_api": "c_tile(*c_args)"}
    methods = [m for m in METHODS if m != "c_api" or capi]
    timers = {m: timeit.Timer(stmts[m], globals=ns) for m in methods}
    target = args.min_sample_ms / 1e3
    inner = {}
    for m in methods:
        timers[m].timeit(1)  # warm-up
        inner[m] = calibrate(timers[m], target)
    samples = {m: [] for m in methods}
    for _ in range(args.repetitions):
        order = methods[:]
        rng.shuffle(order)
        for m in order:
            samples[m].append(timers[m].timeit(inner[m]) / inner[m])
    kernel_path = ""
    try:
        kernel_path = tessera.Plan(A.shape, reps, A.dtype, strides=A.strides).kernel_path
    except Exception:  # noqa: BLE001 -- informational only
        pass
    return {
        "name": case["name"], "dtype": case["dtype"], "shape": list(A.shape), "strides": list(A.strides),
        "reps": list(reps), "out_shape": list(out_shape), "out_bytes": out_bytes, "kernel_path": kernel_path,
        "methods": {m: {"inner": inner[m], "samples_s": samples[m], "median_s": statistics.median(samples[m]),
                        "gbps": out_bytes / statistics.median(samples[m]) / 1e9} for m in methods},
    }


# -- table -------------------------------------------------------------------------------------

def fmt_time(s):
    if s is None:
        return "-"
    ns = s * 1e9
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.3g} {unit}"
    return f"{ns:.3g} ns"


def fmt_gbps(x):
    if x is None:
        return "-"
    return f"{x:.0f}" if x >= 100 else f"{x:.1f}" if x >= 10 else f"{x:.2f}" if x >= 1 else f"{x:.3f}"


def fmt_size(n):
    for unit, scale in (("MiB", MiB), ("KiB", 2**10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} B"


def verdict(r):
    """(speed-up of tessera over the best peer, out=/C API, PASS/MISS text) for one case."""
    m = r["methods"]
    t = lambda k: m[k]["median_s"] if k in m else None  # noqa: E731
    best_peer = min(t("numpy"), t("torch"))
    speedup = best_peer / t("tessera")
    out_pct = t("c_api") / t("tessera_out") if t("c_api") else None
    misses = []
    if r["out_bytes"] >= LARGE_MIN_BYTES:
        need = NUMPY_TARGET.get(r["name"], NUMPY_TARGET_DEFAULT)
        vs_np, vs_torch = t("numpy") / t("tessera"), t("torch") / t("tessera")
        if vs_np < need:
            misses.append(f"numpy {vs_np:.2f}x<{need:g}x")
        if vs_torch < TORCH_TARGET:
            misses.append(f"torch {vs_torch:.2f}x<{TORCH_TARGET:g}x")
    if out_pct is not None and out_pct < OUT_TARGET:
        misses.append(f"out= {100 * out_pct:.0f}%<{100 * OUT_TARGET:.0f}%")
    if r["name"] == "tiny" and t("tessera") * 1e9 > TINY_TARGET_NS:
        misses.append(f"call {t('tessera') * 1e6:.2f}us>1us")
    return speedup, out_pct, "PASS" if not misses else "MISS " + ", ".join(misses)


def print_table(header, rows):
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    for r in [header] + rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip())


def print_results(results, ctx):
    print(f"tessera {ctx['tessera_version']} from Python {ctx['python']} ({ctx['date']}); numpy {ctx['numpy']}, "
          f"torch {ctx['torch']} ({ctx['torch_threads']} thread{'s' if ctx['torch_threads'] != 1 else ''})")
    print(f"CPU: {ctx['cpu_model']}, {ctx['cpus']} CPUs; tessera target {ctx['tessera_target']}; "
          f"transparent_hugepage: {ctx['transparent_hugepage']}")
    print(f"module {ctx['module']}, C API {ctx['lib'] or '-'}")
    print(f"medians of {ctx['repetitions']} interleaved repetitions; each cell: time per call, GB/s of output")
    print()
    rows = []
    for r in results:
        m = r["methods"]
        cell = lambda k: (f"{fmt_time(m[k]['median_s'])} {fmt_gbps(m[k]['gbps'])}" if k in m else "-")  # noqa: E731
        speedup, out_pct, text = verdict(r)
        rows.append([r["name"], fmt_size(r["out_bytes"])] + [cell(k) for k in METHODS]
                    + [f"{speedup:.2f}x", f"{100 * out_pct:.0f}%" if out_pct else "-", text])
    print_table(["case", "output"] + [LABELS[k] for k in METHODS] + ["new/best", "out=/C", "targets"], rows)
    print()
    tiny = next((r for r in results if r["name"] == "tiny"), None)
    if tiny:
        m = tiny["methods"]
        ns = lambda k: m[k]["median_s"] * 1e9 if k in m else float("nan")  # noqa: E731
        print(f"tiny whole call: tessera.tile {ns('tessera'):.0f} ns "
              f"({'PASS' if ns('tessera') <= TINY_TARGET_NS else 'MISS'}, target <= {TINY_TARGET_NS:.0f} ns), "
              f"numpy.tile {ns('numpy'):.0f} ns, torch.tile {ns('torch'):.0f} ns, "
              f"tessera.tile(out=) {ns('tessera_out'):.0f} ns, C API through ctypes {ns('c_api'):.0f} ns")
    print("new/best: speed-up of tessera.tile (new output) over the faster of numpy.tile and torch.tile; "
          "out=/C: tessera.tile(out=) as a share of the C API's speed.")
    print(f"targets: outputs >= 60 MiB: tessera.tile >= {NUMPY_TARGET_DEFAULT:g}x numpy.tile "
          f"(>= 3x on {', '.join(NUMPY_TARGET)}) and >= {TORCH_TARGET:g}x torch.tile; "
          f"out= >= {100 * OUT_TARGET:.0f}% of the C API; tiny call <= 1 us.")
    ov = ctx.get("ctypes_overhead_ns")
    print("C API: tessera_tile_ex through ctypes (arguments prebuilt, GIL released); ctypes' own cost per call "
          + (f"(a no-op C call) is {ov:.0f} ns here (up to ~1 us elsewhere), " if ov else "(~1 us) ")
          + "which dominates the tiny and small cases: out=/C above 100% there is ctypes' overhead, not a gain.")
    print(f"torch uses {ctx['torch_threads']} thread(s) (torch 1.13 defaults to hardware_concurrency / 2 on x86-64); "
          f"tessera and the C API use oneTBB's default arena ({ctx['cpus']} threads).")
    if ctx.get("others_share", 0) > 0.05:
        print(f"python_bench: warning: other processes used {100 * ctx['others_share']:.0f}% of the CPUs during "
              "the run; the numbers are disturbed")


def main():
    args = parse_args()
    import numpy as np
    import torch
    import tessera

    if args.torch_threads > 0:
        torch.set_num_threads(args.torch_threads)
    lib = find_lib(tessera, args.lib)
    capi = CApi(lib) if lib else None
    if not capi:
        print("python_bench: libtessera.so.0 not found (--lib); no C API column", file=sys.stderr)
    cases = load_cases(args.cases, args.filter)
    ctx = {
        "tessera_version": tessera.__version__ if hasattr(tessera, "__version__")
        else (capi.lib.tessera_version().decode() if capi else "?"),
        "tessera_target": tessera.simd_target(), "python": platform.python_version(),
        "python_exe": sys.executable, "numpy": np.__version__, "torch": torch.__version__,
        "torch_threads": torch.get_num_threads(), "cpu_model": cpu_model(), "cpus": os.cpu_count(),
        "transparent_hugepage": first_line("/sys/kernel/mm/transparent_hugepage/enabled"),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "repetitions": args.repetitions, "min_sample_ms": args.min_sample_ms, "lib": lib,
    }
    if capi:
        ctx["ctypes_overhead_ns"] = capi.overhead_ns()
    ctx["module"] = os.path.dirname(os.path.abspath(tessera.__file__))
    rng = random.Random(args.seed)
    results = []
    busy0, own0, wall0 = machine_busy_seconds(), own_cpu_seconds(), time.monotonic()
    for case in cases:
        print(f"python_bench: {case['name']} ...", file=sys.stderr, flush=True)
        results.append(run_case(np, torch, tessera, capi, case, args, rng))
    wall = time.monotonic() - wall0
    others = (machine_busy_seconds() - busy0) - (own_cpu_seconds() - own0)
    ctx["others_share"] = max(0.0, others / (wall * (os.cpu_count() or 1)))
    ctx["seconds"] = wall
    print(f"python_bench: done in {wall:.0f} s", file=sys.stderr)
    print(file=sys.stderr)
    print_results(results, ctx)
    if args.json:
        for r in results:
            r["speedup_vs_best"], r["out_vs_c_api"], r["targets"] = verdict(r)
        with open(args.json, "w") as f:
            json.dump({"context": ctx, "cases": results}, f, indent=1)


if __name__ == "__main__":
    main()
