#!/usr/bin/env python3
"""Prints the table of a tile_bench run from its Google Benchmark JSON output.

Usage: bench/table.py RESULTS.json

Per case and thread count: output size (MiB = 2^20 bytes), tile throughput (GB/s, 1 GB = 1e9
bytes of output) and its percentage of the `stream` and `store` limits, the allocating call's
throughput and its percentage of `fresh_thp`, the time per tile call (a prebuilt plan), the time
per one-shot C call (tessera_tile, outputs up to 64 KiB) and the plan's kernel path;
then the limits themselves. Every value is the median over the run's repetitions.
"""
import json
import statistics
import sys

TIME_UNIT_NS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
LIMITS = ["stream", "store", "memcpy", "fresh", "fresh_thp"]


def parse_name(name):
    """'limit/stream/outer/threads:2/real_time' -> ('limit/stream', 'outer', 2)."""
    parts = [p for p in name.split("/") if p != "real_time"]
    at = next(i for i, p in enumerate(parts) if p.startswith("threads:"))
    return "/".join(parts[: at - 1]), parts[at - 1], int(parts[at].split(":")[1])


def medians(benchmarks):
    """{(kind, case, threads): {'gbps', 'ns'} or None on error}, medians of the repetitions."""
    runs, aggregates, errors = {}, {}, set()
    for b in benchmarks:
        try:
            key = parse_name(b.get("run_name", b["name"]))
        except (StopIteration, ValueError, IndexError):
            continue  # not one of ours
        if b.get("error_occurred"):
            errors.add(key)
            continue
        value = (b["bytes_per_second"] / 1e9, b["real_time"] * TIME_UNIT_NS[b.get("time_unit", "ns")])
        if b.get("run_type") == "aggregate":
            if b.get("aggregate_name") == "median":
                aggregates[key] = value
        else:
            runs.setdefault(key, []).append(value)
    result = {key: None for key in errors}
    for key, value in aggregates.items():  # used only when the file holds aggregates alone
        result[key] = {"gbps": value[0], "ns": value[1]}
    for key, values in runs.items():
        result[key] = {
            "gbps": statistics.median(v[0] for v in values),
            "ns": statistics.median(v[1] for v in values),
            "reps": len(values),
        }
    return result


def gbps(x):
    if x is None:
        return "-"
    return f"{x:.0f}" if x >= 100 else f"{x:.1f}" if x >= 10 else f"{x:.2f}" if x >= 1 else f"{x:.3f}"


def percent(a, b):
    return f"{100 * a / b:.0f}%" if a is not None and b else "-"


def duration(ns):
    if ns is None:
        return "-"
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.3g} {unit}"
    return f"{ns:.3g} ns"


def size(nbytes):
    for unit, scale in (("MiB", 2**20), ("KiB", 2**10)):
        if nbytes >= scale:
            return f"{nbytes / scale:.1f} {unit}"
    return f"{nbytes:.0f} B"


def print_table(header, rows):
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    for r in [header] + rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip())


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        data = json.load(f)
    ctx = data.get("context", {})
    results = medians(data.get("benchmarks", []))
    output_bytes = {}
    for b in data.get("benchmarks", []):
        if b.get("aggregate_name", "median") != "median":
            continue  # the stddev of a constant is 0
        try:
            output_bytes[parse_name(b.get("run_name", b["name"]))[1]] = b["output_bytes"]
        except (KeyError, StopIteration, ValueError, IndexError):
            pass

    cases = [c for c in ctx.get("cases", "").split(",") if c in output_bytes]
    cases += sorted(set(output_bytes) - set(cases))
    threads = sorted({key[2] for key in results})
    reps = sorted({r["reps"] for r in results.values() if r and "reps" in r})

    def get(kind, case, t, field="gbps"):
        r = results.get((kind, case, t))
        return r[field] if r else None

    l3 = [c for c in ctx.get("caches", []) if c.get("level") == 3]
    print(f"tessera {ctx.get('tessera_version', '?')} benchmark, {ctx.get('date', '?')}")
    print(f"CPU: {ctx.get('cpu_model', '?')}, {ctx.get('num_cpus', '?')} threads"
          + (f", L3 {l3[0]['size'] // 2**20} MiB" if l3 else "")
          + f"; tessera target {ctx.get('tessera_target', '?')}"
          + f"; transparent_hugepage: {ctx.get('transparent_hugepage', '?')}")
    print(f"medians of {'/'.join(map(str, reps)) or '?'} repetitions; GB/s = 1e9 bytes of output per second")
    print()

    rows = []
    for case in cases:
        for t in threads:
            tile = get("tile", case, t)
            alloc = get("tile_alloc", case, t)
            label = next((b.get("label", "") for b in data["benchmarks"]
                          if parse_name(b.get("run_name", b["name"])) == ("tile", case, t)), "")
            rows.append([case, size(output_bytes[case]), t, gbps(tile),
                         percent(tile, get("limit/stream", case, t)), percent(tile, get("limit/store", case, t)),
                         gbps(alloc), percent(alloc, get("limit/fresh_thp", case, t)),
                         duration(get("tile", case, t, "ns")), duration(get("tile_c", case, t, "ns")), label])
    print_table(["case", "output", "thr", "tile GB/s", "%stream", "%store", "alloc GB/s", "%fresh_thp",
                 "tile time", "C one-shot", "kernel path"], rows)

    print()
    print("limits, GB/s of output:")
    rows = [[case, t] + [gbps(get("limit/" + k, case, t)) for k in LIMITS] for case in cases for t in threads]
    print_table(["case", "thr"] + LIMITS, rows)


if __name__ == "__main__":
    main()
