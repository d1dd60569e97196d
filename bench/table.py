#!/usr/bin/env python3
"""Prints the tables of a tile_bench run from its Google Benchmark JSON output.

Usage: bench/table.py RESULTS.json

The tile cases, per case and thread count: output size (MiB = 2^20 bytes), tile throughput (GB/s,
1 GB = 1e9 bytes of output) and its percentage of the `stream` and `store` limits, the allocating
call's throughput and its percentage of `fresh_thp`, the time per tile call (a prebuilt plan), the
time per one-shot C call (tessera_tile, outputs up to 64 KiB) and the plan's kernel path.
Then the broadcast_to, expand and repeat cases, likewise, with the Eigen Tensor broadcast peer
(TensorFlow's CPU BroadcastTo kernel) where the case has one, tessera's speed-up over it, and the
target of the case: outputs of 60 MiB or more at least TARGET_DEFAULT of `stream` (TARGETS names
the exceptions), at every thread count. Then the reductions (tile_backward, sum_to_shape,
repeat_backward: the gradients), per case and thread count: the gradient read (GB/s, 1 GB = 1e9
bytes of input) and its percentage of the `read` limit (the same bytes summed by a plain vector
loop), the time per call, Eigen's Tensor sum (TensorFlow's reduce_sum) and tessera's speed-up over
it, the kernel path and two verdicts: gradients of 60 MiB or more at least READ_TARGET of `read`;
faster than Eigen, and at least SLOW_PEER_SPEEDUP times as fast where Eigen runs below
SLOW_PEER_SHARE of `read`. Then the limits themselves. Every value is the median over the run's
repetitions.

Every row shows `read` next to `stream`: the copying rows the percentage of each (`read` there is
the output's byte count read once from DRAM), the reductions both limits' GB/s and percentages
(`stream` there: the gradient summed as by `read` and the result streamed in the same pass, a
few lines of result after each few lines of gradient: a gradient whose result is half its size
cannot read at `read`'s speed while it writes, and this limit measures how fast it can).

`read` reads from DRAM: tile_bench rotates the limit and the reductions themselves (tessera's plan,
Eigen) among copies of their input that together span more than twice the last-level cache (read
from sysfs; tile_bench stops if it cannot), on pages advised MADV_HUGEPAGE, as numpy's large arrays
are. Before, the `read` limit and the reductions re-read one 64 MiB buffer that the 32 MiB L3 partly
held (up to 165 GB/s from two cores): every ratio against `read`, and every reduction's GB/s, now
means bytes from DRAM and is not comparable with tables of earlier runs.
"""
import json
import statistics
import sys

TIME_UNIT_NS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
LIMITS = ["stream", "store", "memcpy", "fresh", "fresh_thp", "read"]
OPS = ["tile", "broadcast_to", "expand", "repeat"]  # tile_bench's benchmark families, by the case's op
REDUCTIONS = ["tile_backward", "sum_to_shape", "repeat_backward"]  # their gradients (limit: read)

# Targets of the broadcast_to / expand / repeat cases (reported, never enforced): outputs of at
# least TARGET_MIN_BYTES reach this share of the `stream` limit at 1 and at 2 threads.
TARGET_MIN_BYTES = 60 * 2**20
TARGET_DEFAULT = 0.90
TARGETS = {"rep2": 0.80}  # repeat by 2 of 4-byte elements

# Targets of the reductions (reported, never enforced): gradients of at least TARGET_MIN_BYTES read
# at READ_TARGET of the `read` limit at 1 and at 2 threads; on every case faster than the peer
# (Eigen), and SLOW_PEER_SPEEDUP times as fast where the peer runs below SLOW_PEER_SHARE of `read`.
READ_TARGET = 0.80
SLOW_PEER_SHARE = 0.5
SLOW_PEER_SPEEDUP = 2.0


def peer_verdict(ours, peer, read):
    """(ok, text) of the peer target, from the GB/s of tessera, its peer and `read`; None if not measured."""
    if not ours or not peer:
        return None
    slow = read is not None and peer < SLOW_PEER_SHARE * read
    need = SLOW_PEER_SPEEDUP if slow else 1.0
    ratio = ours / peer
    ok = ratio >= need if slow else ratio > need
    return ok, f"{'PASS' if ok else 'MISS'} {'>=' if slow else '>'}{need:g}x"


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
    output_bytes, input_bytes = {}, {}
    for b in data.get("benchmarks", []):
        if b.get("aggregate_name", "median") != "median":
            continue  # the stddev of a constant is 0
        try:
            case = parse_name(b.get("run_name", b["name"]))[1]
            output_bytes[case] = b["output_bytes"]
            input_bytes[case] = b.get("input_bytes", 0)
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
    print(f"medians of {'/'.join(map(str, reps)) or '?'} repetitions; GB/s = 1e9 bytes of output per second "
          "(the reductions: of input)")
    print()

    def op_of(case):
        return next((op for op in OPS + REDUCTIONS if any((op, case, t) in results for t in threads)), "tile")

    def label_of(kind, case, t):
        return next((b.get("label", "") for b in data["benchmarks"]
                     if parse_name(b.get("run_name", b["name"])) == (kind, case, t)), "")

    tile_cases = [c for c in cases if op_of(c) == "tile"]
    reduction_cases = [c for c in cases if op_of(c) in REDUCTIONS]
    other_cases = [c for c in cases if op_of(c) != "tile" and c not in reduction_cases]
    if tile_cases:
        rows = []
        for case in tile_cases:
            for t in threads:
                tile = get("tile", case, t)
                alloc = get("tile_alloc", case, t)
                rows.append([case, size(output_bytes[case]), t, gbps(tile),
                             percent(tile, get("limit/stream", case, t)), percent(tile, get("limit/read", case, t)),
                             percent(tile, get("limit/store", case, t)),
                             gbps(alloc), percent(alloc, get("limit/fresh_thp", case, t)),
                             duration(get("tile", case, t, "ns")), duration(get("tile_c", case, t, "ns")),
                             label_of("tile", case, t)])
        print_table(["case", "output", "thr", "tile GB/s", "%stream", "%read", "%store", "alloc GB/s", "%fresh_thp",
                     "tile time", "C one-shot", "kernel path"], rows)

    misses, met = [], []
    if other_cases:
        if tile_cases:
            print()
        eigen = ctx.get("eigen_peer", "")
        print("broadcast_to, expand, repeat: Plan::execute into a touched output (GB/s), the allocating call (alloc), "
              "and Eigen's Tensor broadcast" + (f" ({eigen})" if eigen else " (not built: no Eigen column)"))
        rows = []
        for case in other_cases:
            op = op_of(case)
            need = TARGETS.get(case, TARGET_DEFAULT) if output_bytes[case] >= TARGET_MIN_BYTES else None
            for t in threads:
                run = get(op, case, t)
                alloc = get(op + "_alloc", case, t)
                eig = get("peer/eigen", case, t)
                stream = get("limit/stream", case, t)
                verdict = "-"
                if need is not None and run is not None and stream:
                    ok = run >= need * stream
                    verdict = f"{'PASS' if ok else 'MISS'} >={100 * need:.0f}%"
                    (met if ok else misses).append(
                        f"{case} at {t} thr {100 * run / stream:.0f}% (>= {100 * need:.0f}%)")
                rows.append([case, op, size(output_bytes[case]), t, gbps(run), percent(run, stream),
                             percent(run, get("limit/read", case, t)), percent(run, get("limit/store", case, t)), gbps(alloc),
                             percent(alloc, get("limit/fresh_thp", case, t)), gbps(eig),
                             f"{run / eig:.2f}x" if run and eig else "-", duration(get(op, case, t, "ns")),
                             label_of(op, case, t), verdict])
        print_table(["case", "op", "output", "thr", "GB/s", "%stream", "%read", "%store", "alloc GB/s", "%fresh_thp",
                     "Eigen GB/s", "vs Eigen", "time", "kernel path", "target (%stream)"], rows)
        eigen_rows = [(c, label_of("peer/eigen", c, threads[0])) for c in other_cases]
        eigen_rows = [(c, e) for c, e in eigen_rows if e]
        if eigen_rows:
            print("Eigen expressions: " + "; ".join(f"{c}: {e}" for c, e in eigen_rows))

    copy_cases = [c for c in cases if c not in reduction_cases]
    if copy_cases:
        print()
        print("limits, GB/s of output (read: the output's byte count read once from DRAM):")
        rows = [[case, t] + [gbps(get("limit/" + k, case, t)) for k in LIMITS] for case in copy_cases for t in threads]
        print_table(["case", "thr"] + LIMITS, rows)
    dst16 = [(case, t, op_of(case)) for case in copy_cases for t in threads if (op_of(case) + "_dst16", case, t) in results]
    if dst16:
        print()
        print("destination 16 bytes past a cache line (numpy's large arrays) against the aligned output, same run:")
        rows = []
        for case, t, op in dst16:
            run, off = get(op, case, t), get(op + "_dst16", case, t)
            rows.append([case, t, gbps(run), gbps(off), percent(off, run), percent(off, get("limit/stream", case, t))])
        print_table(["case", "thr", "aligned GB/s", "dst+16 GB/s", "vs aligned", "dst+16 %stream"], rows)
    if met or misses:
        print()
        print(f"targets (outputs >= {TARGET_MIN_BYTES // 2**20} MiB: >= {100 * TARGET_DEFAULT:.0f}% of stream, "
              + ", ".join(f"{c} >= {100 * v:.0f}%" for c, v in TARGETS.items()) + f"): {len(met)} met, "
              + f"{len(misses)} missed" + (": " + "; ".join(misses) if misses else ""))

    if reduction_cases:
        if copy_cases:
            print()
        eigen = ctx.get("eigen_peer", "")
        print("backward (the gradients: tile_backward, sum_to_shape, repeat_backward): Plan::execute into a touched "
              "result, GB/s of gradient read; read = the same bytes summed by a float32 vector loop (8 accumulators), "
              "every call (tessera, Eigen, read, stream) on the next of copies spanning > 2x the last-level cache "
              f"({int(ctx.get('last_level_cache_bytes', 0)) // 2**20 or '?'} MiB): from DRAM; stream = the same "
              "sum with the result streamed in the same pass; "
              "Eigen's Tensor sum" + (f" ({eigen})" if eigen else " (not built: no Eigen column)"))
        rows, read_met, read_missed, peer_met, peer_missed = [], [], [], [], []
        for case in reduction_cases:
            op = op_of(case)
            large = input_bytes.get(case, 0) >= TARGET_MIN_BYTES
            for t in threads:
                run, read, eig = get(op, case, t), get("limit/read", case, t), get("peer/eigen", case, t)
                read_verdict = "-"
                if large and run is not None and read:
                    ok = run >= READ_TARGET * read
                    read_verdict = f"{'PASS' if ok else 'MISS'} >={100 * READ_TARGET:.0f}%"
                    stream = get("limit/stream", case, t)
                    # A miss names how fast the gradient's bytes and its result's move together.
                    bound = f"; stream {100 * stream / read:.0f}% of read" if stream and not ok else ""
                    (read_met if ok else read_missed).append(
                        f"{case} at {t} thr {100 * run / read:.0f}% (>= {100 * READ_TARGET:.0f}%{bound})")
                peer = peer_verdict(run, eig, read)
                if peer:
                    (peer_met if peer[0] else peer_missed).append(
                        f"{case} at {t} thr {run / eig:.2f}x Eigen ({peer[1].split()[1]})")
                rows.append([case, op, size(input_bytes.get(case, 0)), size(output_bytes[case]), t, gbps(run),
                             percent(run, read), gbps(read), percent(run, get("limit/stream", case, t)),
                             gbps(get("limit/stream", case, t)), duration(get(op, case, t, "ns")),
                             duration(get("peer/eigen", case, t, "ns")), percent(eig, read),
                             f"{run / eig:.2f}x" if run and eig else "-", label_of(op, case, t), read_verdict,
                             peer[1] if peer else "-"])
        print_table(["case", "op", "gradient", "result", "thr", "GB/s", "%read", "read GB/s", "%stream", "stream GB/s",
                     "time", "Eigen time",
                     "Eigen %read", "vs Eigen", "kernel path", "target (%read)", "target (vs Eigen)"], rows)
        eigen_rows = [(c, label_of("peer/eigen", c, threads[0])) for c in reduction_cases]
        eigen_rows = [(c, e) for c, e in eigen_rows if e]
        if eigen_rows:
            print("Eigen expressions: " + "; ".join(f"{c}: {e}" for c, e in eigen_rows))
        print(f"targets (gradients >= {TARGET_MIN_BYTES // 2**20} MiB: >= {100 * READ_TARGET:.0f}% of read): "
              f"{len(read_met)} met, {len(read_missed)} missed" + (": " + "; ".join(read_missed) if read_missed else ""))
        print(f"targets (every case: faster than Eigen, >= {SLOW_PEER_SPEEDUP:g}x where Eigen runs below "
              f"{100 * SLOW_PEER_SHARE:.0f}% of read at the same thread count): {len(peer_met)} met, "
              f"{len(peer_missed)} missed" + (": " + "; ".join(peer_missed) if peer_missed else ""))

if __name__ == "__main__":
    main()
