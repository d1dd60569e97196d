#!/usr/bin/python3
"""How far ahead the gradients' kernels should prefetch on this core: tile_bench's gradient cases
run in alternating processes, one per distance of TESSERA_PREFETCH_BYTES (read once per process),
or one per value of another of the prefetch's variables (--variable TESSERA_PREFETCH_SPREAD
--distances 0,1: each periodic item's or leaf's lines at once, or spread among the loads).

Usage: bench/prefetch_distance.py --tile-bench build/bench/bench/tile_bench [--distances 0,4096,16384]
                                  [--variable NAME] [--filter REGEX] [--rounds N] [--min-time S]

For each round, one tile_bench process per distance (the order rotated each round) runs the
gradient cases whose name --filter matches (default: those whose kernels take the prefetch, short
rows or short runs) at 1 and 2 threads, each beside its `read` limit (the same bytes summed by a
float32 vector loop, copies rotated past the last-level cache: from DRAM). Prints, per case and
thread count, the median time at each distance, its share of `read` (measured in the same
processes) and its speed relative to the first distance. Without the variable the planner chooses
the distance by the kind of core (tessera.hpp: reduce_prefetch_bytes).
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys


def run(tile_bench, variable, distance, case_re, min_time):
    env = dict(os.environ, **{variable: str(distance)})
    flt = f"^((tile_backward|sum_to_shape|repeat_backward)|limit/read)/({case_re})/threads"
    cmd = [tile_bench, f"--benchmark_filter={flt}", "--benchmark_format=json",
           f"--benchmark_min_time={min_time}", "--benchmark_repetitions=1"]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"prefetch_distance.py: {' '.join(cmd)} failed ({out.returncode}):\n{out.stderr[-2000:]}")
    data = json.loads(out.stdout)
    times = {}
    for b in data["benchmarks"]:
        if b.get("run_type") == "aggregate":
            continue
        m = re.match(r"^(limit/read|tile_backward|sum_to_shape|repeat_backward)/([^/]+)/threads:(\d+)", b["name"])
        if m is None:
            continue
        kind = "read" if m.group(1) == "limit/read" else "plan"
        unit = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[b["time_unit"]]
        times[(m.group(2), int(m.group(3)), kind)] = b["real_time"] * unit  # ms
    return data.get("context", {}), times


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tile-bench", required=True)
    p.add_argument("--distances", default="0,4096,16384", help="the variable's values, in turn")
    p.add_argument("--variable", default="TESSERA_PREFETCH_BYTES",
                   choices=["TESSERA_PREFETCH_BYTES", "TESSERA_PREFETCH_SPREAD"])
    p.add_argument("--filter", default="column_bwd|narrow_bwd|bc_cols_bwd|nchw_bwd|mixed3d_bwd|rep_mid_bwd")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--min-time", type=float, default=0.3, help="Google Benchmark's least seconds per benchmark")
    args = p.parse_args()
    distances = [int(d) for d in args.distances.split(",")]
    samples = {}
    context = {}
    for r in range(args.rounds):
        order = distances[r % len(distances):] + distances[:r % len(distances)]
        for d in order:
            context, times = run(args.tile_bench, args.variable, d, args.filter, args.min_time)
            for key, ms in times.items():
                samples.setdefault((d,) + key, []).append(ms)
            print(f"  round {r + 1}/{args.rounds}, {args.variable}={d}: {len(times)} benchmarks", file=sys.stderr,
                  flush=True)
    print(f"prefetch_distance.py: {context.get('date', '?')}, {context.get('cpu_model', '?')}, tessera "
          f"{context.get('tessera_version', '?')} ({context.get('tessera_target', '?')}), L3 "
          f"{int(context.get('last_level_cache_bytes', 0)) >> 20} MiB")
    print(f"medians of {args.rounds} processes per value of {args.variable}, alternating; time in ms; %read: the "
          f"same processes' `read` limit; vs {distances[0]}: speed relative to {args.variable}={distances[0]}")
    cases = sorted({(c, t) for (_, c, t, k) in samples if k == "plan"}, key=lambda ct: (ct[0], ct[1]))
    head = f"{'case':15} {'thr':>3}"
    for d in distances:
        head += f" {f'{d} ms':>10} {'%read':>6}" + (f" {f'vs {distances[0]}':>8}" if d != distances[0] else "")
    print(head)
    for c, t in cases:
        line = f"{c:15} {t:>3}"
        base = None
        for d in distances:
            plan = statistics.median(samples[(d, c, t, "plan")])
            read = statistics.median(samples[(d, c, t, "read")])
            line += f" {plan:>10.3f} {100 * read / plan:>5.0f}%"
            if base is None:
                base = plan
            else:
                line += f" {base / plan:>7.2f}x"
        print(line)


if __name__ == "__main__":
    main()
