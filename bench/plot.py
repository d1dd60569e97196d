#!/usr/bin/python3
"""Draws bench/run's tables as one PNG: GB/s of output per case, tessera against its peers and limits.

Usage: bench/plot.py [--cpp RESULTS.json] [--python PYTHON.json] [--threads N] -o FILE.png

--cpp:    tile_bench's Google Benchmark JSON (what bench/run --json keeps): tessera's Plan::execute
          and allocating call of each case's op (tile, broadcast_to, expand, repeat) at N threads
          (default: the most threads measured), the Eigen peer of the broadcast cases and the
          limits stream, store and fresh_thp measured in the same run.
--python: bench/python_bench.py --json: numpy, torch, tessera (new output and out=) and the C API
          through ctypes, each calling the case's op, measured in one Python process.
Left panel: into a preallocated output; right panel: a new output (allocation and page faults
included; fresh_thp is left out below 4 MiB, where its mmap and munmap are all it measures). Grouped horizontal bars per case, log-scale GB/s (1 GB = 1e9 bytes), each bar labelled.
The reductions (tile_backward, sum_to_shape, repeat_backward: GB/s of input, against `read`) are
left out: their tables are bench/run's backward tables.
Needs matplotlib (Debian python3-matplotlib); draws with the Agg backend (no display).
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import table  # noqa: E402  (bench/table.py: medians of a Google Benchmark JSON)

# (label, colour, source, key): source "cpp" keys are (kind) of table.medians at the chosen
# thread count; source "py" keys are python_bench methods.
PREALLOCATED = [
    ("limit: stream (C++)", "#bbbbbb", "cpp", "limit/stream"),
    ("limit: store (C++)", "#dddddd", "cpp", "limit/store"),
    ("tessera Plan.execute (C++)", "#1f4e9c", "cpp", "tile"),
    ("Eigen Tensor broadcast (C++)", "#6a9f3a", "cpp", "peer/eigen"),
    ("tessera C API via ctypes (Py)", "#5b8fd6", "py", "c_api"),
    ("tessera out= (Py)", "#9cc3f0", "py", "tessera_out"),
]
NEW_OUTPUT = [
    ("limit: fresh_thp (C++)", "#bbbbbb", "cpp", "limit/fresh_thp"),
    ("tessera allocating call (C++)", "#1f4e9c", "cpp", "tile_alloc"),
    ("tessera (Py)", "#5b8fd6", "py", "tessera"),
    ("numpy (Py)", "#e08a2c", "py", "numpy"),
    ("torch (Py)", "#c4412f", "py", "torch"),
]
# tile_bench's families of the other ops, drawn as tile's ("tile", "tile_alloc").
OP_KINDS = {"broadcast_to": "tile", "expand": "tile", "repeat": "tile", "broadcast_to_alloc": "tile_alloc",
            "expand_alloc": "tile_alloc", "repeat_alloc": "tile_alloc"}


def load_cpp(path, threads):
    with open(path) as f:
        data = json.load(f)
    results = table.medians(data.get("benchmarks", []))
    measured = sorted({k[2] for k in results})
    t = threads or (measured[-1] if measured else 0)
    ctx = data.get("context", {})
    order = [c for c in ctx.get("cases", "").split(",") if c]
    values, sizes = {}, {}
    reductions = {case for (kind, case, _) in results if kind in table.REDUCTIONS}
    order = [c for c in order if c not in reductions]
    for (kind, case, thr), r in results.items():
        if thr == t and r and case not in reductions:
            values[(OP_KINDS.get(kind, kind), case)] = r["gbps"]
    for b in data.get("benchmarks", []):
        if b.get("aggregate_name", "median") != "median":
            continue  # the stddev (and cv) of a constant is 0
        try:
            case = table.parse_name(b.get("run_name", b["name"]))[1]
            if case not in reductions:
                sizes[case] = b["output_bytes"]
        except (KeyError, StopIteration, ValueError, IndexError):
            pass
    return values, order, sizes, t, ctx


def load_py(path):
    with open(path) as f:
        data = json.load(f)
    values, order, sizes = {}, [], {}
    for c in data.get("cases", []):
        if c.get("op") in table.REDUCTIONS:
            continue
        order.append(c["name"])
        sizes[c["name"]] = c["out_bytes"]
        for m, v in c["methods"].items():
            values[(m, c["name"])] = v["gbps"]
    return values, order, sizes, data.get("context", {})


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cpp", help="tile_bench's Google Benchmark JSON")
    p.add_argument("--python", help="bench/python_bench.py's JSON")
    p.add_argument("--threads", type=int, default=0, help="C++ thread count to show (default: the most measured)")
    p.add_argument("-o", "--output", required=True, help="the PNG to write")
    args = p.parse_args()
    if not args.cpp and not args.python:
        p.error("give --cpp, --python or both")

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cpp, cpp_order, sizes, thr, cpp_ctx = load_cpp(args.cpp, args.threads) if args.cpp else ({}, [], {}, 0, {})
    py, py_order, py_sizes, py_ctx = load_py(args.python) if args.python else ({}, [], {}, {})
    sizes.update(py_sizes)
    # fresh_thp includes mmap and munmap: it means nothing below a few MiB (bench/table.py's note).
    for case, n in sizes.items():
        if n < 4 * 2**20:
            cpp.pop(("limit/fresh_thp", case), None)
    cases = cpp_order + [c for c in py_order if c not in cpp_order]
    cases = [c for c in cases if any(k[1] == c for k in list(cpp) + list(py))]
    if not cases:
        sys.exit("bench/plot.py: no case in the results")

    def value(source, key, case):
        return (cpp if source == "cpp" else py).get((key, case))

    panels = [("into a preallocated output", PREALLOCATED), ("a new output (allocation and page faults included)",
                                                              NEW_OUTPUT)]
    nbars = max(len(s) for _, s in panels)
    height = 0.8 / nbars
    fig, axes = plt.subplots(1, 2, figsize=(16, 2.0 + 0.62 * len(cases) * nbars / 4), sharey=True)
    all_vals = [v for v in list(cpp.values()) + list(py.values()) if v]
    lo, hi = min(all_vals), max(all_vals)
    for ax, (title, series) in zip(axes, panels):
        for i, (label, colour, source, key) in enumerate(series):
            ys, xs = [], []
            for j, case in enumerate(cases):
                v = value(source, key, case)
                if v:
                    ys.append(j - 0.4 + (i + 0.5) * height)
                    xs.append(v)
            if not xs:
                continue
            bars = ax.barh(ys, xs, height=height * 0.92, color=colour, label=label,
                           edgecolor="#555555" if source == "cpp" and key.startswith("limit") else colour,
                           linewidth=0.6)
            for y, x in zip(ys, xs):
                ax.text(x * 1.04, y, f"{x:.3g}", va="center", fontsize=6.5, color="#333333")
            del bars
        ax.set_xscale("log")
        ax.set_xlim(lo / 1.5, hi * 2.2)
        ax.set_title(title, fontsize=11)
        ax.set_xlabel("GB/s of output (log scale; 1 GB = 1e9 B)")
        ax.grid(axis="x", which="both", color="#eeeeee", linewidth=0.6)
        ax.set_axisbelow(True)
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.045), ncol=2, fontsize=8.5, frameon=False)
        for j in range(1, len(cases)):
            ax.axhline(j - 0.5, color="#dddddd", linewidth=0.6)
    labels = []
    for c in cases:
        n = sizes.get(c)
        labels.append(f"{c}\n{table.size(n)}" if n else c)
    axes[0].set_yticks(range(len(cases)))
    axes[0].set_yticklabels(labels, fontsize=9)
    axes[0].set_ylim(len(cases) - 0.5, -0.5)
    who = []
    if cpp:
        who.append(f"C++ tile_bench at {thr} thread{'s' if thr != 1 else ''} ({cpp_ctx.get('date', '?')})")
    if py:
        who.append(f"Python: numpy {py_ctx.get('numpy', '?')}, torch {py_ctx.get('torch', '?')} "
                   f"({py_ctx.get('torch_threads', '?')} thread), tessera default arena ({py_ctx.get('date', '?')})")
    fig.suptitle("tessera throughput per case (tile, broadcast_to, expand, repeat), medians; " + "; ".join(who),
                 fontsize=9.5)
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    fig.savefig(args.output, dpi=110)
    print(f"bench/plot.py: wrote {args.output}", file=sys.stderr)


if __name__ == "__main__":
    main()
