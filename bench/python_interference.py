#!/usr/bin/python3
"""What slows tessera down inside a Python process that also runs numpy and torch: measurements.

Usage: bench/python_interference.py [--sections pages,cpus,alternate,gomp,chunks] [--lib PATH] [--lib2 PATH]
                                    [--quick] [--json FILE]

Run it on the interpreter the module was built for, with PYTHONPATH=<build>/lib/python (bench/run's
build: build/bench). Every comparison is measured in one run, its variants interleaved at random;
only ratios measured side by side mean something on this shared machine.

--lib2 PATH adds a second libtessera.so.0 (e.g. a prototype's build) to the pages and alternate
sections: its tessera_tile_alloc is timed in the same process, interleaved with the first.

Sections:
  pages      The cost of fresh memory. A new 64 MiB output (tessera_tile_alloc through ctypes,
             numpy.tile, and a plain memset of a fresh 2 MiB-aligned MADV_HUGEPAGE mapping) timed
             after the freed memory has sat idle 0 s .. 3 s, against tessera.tile(out=) into a
             touched buffer. Also the kernel's counters over each idle level: THP faults,
             fallbacks, compaction stalls, and on a VM with virtio-balloon free page reporting the
             KiB reported to the host (/sys/module/page_reporting/parameters/reported_kib).
  cpus       Where the fault happens: a fresh 64 MiB huge-page mapping memset on the CPU that freed
             the previous one or on the other CPU (per-CPU page lists); tessera_tile_alloc with its
             default two threads (faults on both CPUs) against max_threads=1 (the caller's CPU).
  alternate  The finding itself: tessera_tile_alloc on the outer and inner cases, back to back
             ("quiet") against the same call alternating with numpy.tile, torch.tile and the same
             call at max_threads=1 at random; the TBB worker's CPU time in slow and fast calls.
  gomp       torch's OpenMP (libgomp) pool, in child processes with different environments:
             torch's thread count, the CPU its worker burns after a torch call (spin-wait), and
             tessera.tile(out=) right after a torch call against after a 50 ms pause.
  chunks     A core taken by another runnable thread (a spinning process, as a libgomp worker in
             active wait): tessera_tile_ex into a touched output at its default 2 threads and at
             max_threads=1, with and without the competitor (and lib2's, with --lib2).
"""
import argparse
import ctypes
import json
import os
import random
import statistics
import subprocess
import sys
import time

MiB = 2**20
HUGE = 2 * MiB
REPORTED_KIB = "/sys/module/page_reporting/parameters/reported_kib"


# -- small helpers ---------------------------------------------------------------------------------

def vmstat(*keys):
    out = {}
    with open("/proc/vmstat") as f:
        for line in f:
            k, v = line.split()
            if k in keys:
                out[k] = int(v)
    return out


def reported_kib():
    try:
        with open(REPORTED_KIB) as f:
            return int(f.read())
    except (OSError, ValueError):
        return None


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")


def gbps(nbytes, seconds):
    return nbytes / seconds / 1e9


def print_table(header, rows):
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    for r in [header] + rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip())


def find_lib(explicit):
    if explicit:
        return explicit
    import tessera
    here = os.path.dirname(os.path.abspath(tessera.__file__))
    return os.path.normpath(os.path.join(here, "..", "..", "libtessera.so.0"))


class Libc:
    def __init__(self):
        c = ctypes.CDLL(None, use_errno=True)
        c.mmap.restype = ctypes.c_void_p
        c.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
        c.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
        c.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        c.memset.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t]
        c.memset.restype = ctypes.c_void_p
        self.c = c

    def fresh_memset(self, nbytes, advice):
        """Seconds to memset a fresh mapping of nbytes (2 MiB aligned; advice 14 MADV_HUGEPAGE,
        15 MADV_NOHUGEPAGE), mapping and unmapping excluded."""
        c = self.c
        p = c.mmap(None, nbytes + HUGE, 3, 0x22, -1, 0)  # PROT_READ|WRITE, MAP_PRIVATE|ANONYMOUS
        if p in (None, ctypes.c_void_p(-1).value):
            raise OSError(ctypes.get_errno(), "mmap")
        a = (p + HUGE - 1) // HUGE * HUGE
        c.madvise(a, nbytes, advice)
        t = time.perf_counter()
        c.memset(a, 1, nbytes)
        dt = time.perf_counter() - t
        c.munmap(p, nbytes + HUGE)
        return dt


class Tessera:
    """tessera's C API through ctypes: tessera_tile_alloc_ex and tessera_tile_ex."""

    def __init__(self, path):
        self.lib = ctypes.CDLL(path)

        class Options(ctypes.Structure):  # tessera_options (tessera.h), sizeof_options first
            _fields_ = [("sizeof_options", ctypes.c_size_t), ("max_threads", ctypes.c_int),
                        ("negative_reps", ctypes.c_int), ("nontemporal", ctypes.c_int)]
        self.Options = Options

    def alloc_args(self, A, reps, max_threads=0):
        I64 = ctypes.c_int64
        self.out, self.nbytes, self.ndim, self.shape = ctypes.c_void_p(), ctypes.c_size_t(), ctypes.c_int(), (I64 * 64)()
        self.opt = self.Options(ctypes.sizeof(self.Options), max_threads, 0, 0)
        return (ctypes.c_void_p(A.ctypes.data), ctypes.c_int(A.ndim), (I64 * A.ndim)(*A.shape),
                (I64 * A.ndim)(*A.strides), ctypes.c_size_t(A.itemsize), ctypes.c_int(len(reps)),
                (I64 * len(reps))(*reps), ctypes.byref(self.opt), ctypes.byref(self.out), ctypes.byref(self.nbytes),
                ctypes.byref(self.ndim), self.shape)

    def alloc(self, args, inspect=None):
        """Seconds for one tessera_tile_alloc_ex (the output freed after the clock stops)."""
        t = time.perf_counter()
        st = self.lib.tessera_tile_alloc_ex(*args)
        dt = time.perf_counter() - t
        if st != 0:
            raise RuntimeError(f"tessera_tile_alloc_ex: status {st}")
        if inspect:
            inspect(self.out.value, self.nbytes.value)
        self.lib.tessera_free(self.out)
        return dt


def anon_huge_kib(addr, nbytes):
    """AnonHugePages (KiB) of the mapping that holds [addr, addr + nbytes), from /proc/self/smaps."""
    with open("/proc/self/smaps") as f:
        inside = False
        for line in f:
            head = line.split()[0]
            if "-" in head and ":" not in head:
                lo, hi = (int(x, 16) for x in head.split("-"))
                inside = lo <= addr and addr + nbytes <= hi
            elif inside and line.startswith("AnonHugePages:"):
                return int(line.split()[1])
    return None


def case_input(np, name):
    shape, reps = {"outer": ((2048, 2048), (4, 1)), "inner": ((2048, 2048), (1, 4)),
                   "narrow": ((131072, 3), (1, 40)), "medium": ((256, 256), (4, 4))}[name]
    return np.random.default_rng(0).random(shape, dtype=np.float32), reps


# -- section: pages ------------------------------------------------------------------------------

def section_pages(args, results):
    import numpy as np
    import tessera
    print("== pages: a new 64 MiB output after its memory sat idle (outer case; GB/s of output, medians) ==")
    libc, tess = Libc(), Tessera(args.lib)
    A, reps = case_input(np, "outer")
    targs = tess.alloc_args(A, reps)
    tess2 = Tessera(args.lib2) if args.lib2 else None
    targs2 = tess2.alloc_args(A, reps) if tess2 else None
    buf = np.empty((8192, 2048), np.float32)
    buf.fill(0)
    n = buf.nbytes
    huge_seen = []

    def check_huge(addr, nbytes):
        huge_seen.append((anon_huge_kib(addr, nbytes), addr % HUGE == 0))

    methods = {
        "tessera_tile_alloc": lambda: tess.alloc(targs, check_huge if not huge_seen or len(huge_seen) % 4 == 0 else None),
        **({"lib2 alloc": lambda: tess2.alloc(targs2)} if args.lib2 else {}),
        "numpy.tile": lambda: _timed(lambda: np.tile(A, reps)),
        "memset fresh THP": lambda: libc.fresh_memset(n, 14),
        "tessera.tile(out=)": lambda: _timed(lambda: tessera.tile(A, reps, out=buf)),
    }
    pauses = [0, 0.1, 0.3, 1, 3] if not args.quick else [0, 0.3, 3]
    reps_per = 4 if not args.quick else 3
    rng = random.Random(2)
    rows, raw = [], {}
    keys = ("thp_fault_alloc", "thp_fault_fallback", "compact_stall")
    for pause in pauses:
        samples = {m: [] for m in methods}
        v0, r0 = vmstat(*keys), reported_kib()
        for _ in range(reps_per):
            order = list(methods)
            rng.shuffle(order)
            for m in order:
                time.sleep(pause)
                samples[m].append(methods[m]())
        v1, r1 = vmstat(*keys), reported_kib()
        raw[str(pause)] = samples
        rows.append([f"{pause:g} s"] + [f"{gbps(n, med(samples[m])):.1f}" for m in methods]
                    + [f"{(r1 - r0) // 1024}" if r0 is not None else "-"]
                    + [str(v1.get(k, 0) - v0.get(k, 0)) for k in keys])
    print_table(["idle before"] + list(methods) + ["reported MiB", "thp faults", "thp fallback", "compact stalls"],
                rows)
    full = sum(1 for kib, aligned in huge_seen if kib is not None and kib * 1024 >= n and aligned)
    print(f"tessera's outputs checked in /proc/self/smaps: {full} of {len(huge_seen)} had all {n // MiB} MiB in "
          "AnonHugePages, 2 MiB aligned")
    print()
    results["pages"] = {"pauses": pauses, "samples_s": raw, "huge_checks": huge_seen}


def _timed(fn):
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


# -- section: cpus ------------------------------------------------------------------------------

def section_cpus(args, results):
    import threading
    import numpy as np
    print("== cpus: fresh huge pages faulted on the CPU that freed the last output, or on the other one ==")
    libc, tess = Libc(), Tessera(args.lib)
    n = 64 * MiB
    rng = random.Random(6)
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        print("needs 2 CPUs; skipped")
        print()
        return

    def touch(cpu, out):
        os.sched_setaffinity(0, {cpu})
        p = libc.c.mmap(None, n + HUGE, 3, 0x22, -1, 0)
        a = (p + HUGE - 1) // HUGE * HUGE
        libc.c.madvise(a, n, 14)
        t = time.perf_counter()
        libc.c.memset(a, 1, n)
        out.append((time.perf_counter() - t, p))

    same, other = [], []
    prev = cpus[0]
    for _ in range(30 if args.quick else 60):
        cpu = rng.choice(cpus[:2])
        out = []
        th = threading.Thread(target=touch, args=(cpu, out))
        th.start()
        th.join()
        dt, p = out[0]
        (same if cpu == prev else other).append(dt)
        prev = rng.choice(cpus[:2])  # the next block is freed on a random CPU
        os.sched_setaffinity(0, {prev})
        libc.c.munmap(p, n + HUGE)
    os.sched_setaffinity(0, set(cpus))
    # tessera_tile_alloc: the fresh output faulted by two threads (its default) or by the caller alone.
    A, reps = case_input(np, "outer")
    a2, a1 = tess.alloc_args(A, reps, 0), None
    t1 = Tessera(args.lib)
    a1 = t1.alloc_args(A, reps, 1)
    two, one = [], []
    for _ in range(30 if args.quick else 60):
        for which in rng.sample([0, 1], 2):
            (two if which == 0 else one).append(tess.alloc(a2) if which == 0 else t1.alloc(a1))

    def span(xs):
        g = sorted(gbps(n, x) for x in xs)
        return [f"{len(xs)}", f"{gbps(n, med(xs)):.1f}", f"{g[0]:.1f}", f"{pct(g, 0.1):.1f}", f"{sum(x < 10 for x in g)}"]
    print_table(["64 MiB of fresh THP", "calls", "median GB/s", "min", "p10", "< 10 GB/s"],
                [["memset, on the CPU that freed the last block"] + span(same),
                 ["memset, on the other CPU"] + span(other),
                 ["tessera_tile_alloc outer, 2 threads (default)"] + span(two),
                 ["tessera_tile_alloc outer, max_threads=1"] + span(one)])
    print("Freed pages go to the freeing CPU's per-CPU page lists; a fault on the other CPU takes pages the")
    print("allocator has elsewhere -- on a VM with free page reporting, often ones the host must back again.")
    print()
    results["cpus"] = {"same_cpu_s": same, "other_cpu_s": other, "alloc_2threads_s": two, "alloc_1thread_s": one}


# -- section: alternate --------------------------------------------------------------------------

def section_alternate(args, results):
    import threading
    import numpy as np
    import torch
    print("== alternate: tessera_tile_alloc back to back (quiet) vs alternating with numpy.tile and torch.tile ==")
    tess, tess1 = Tessera(args.lib), Tessera(args.lib)
    tess2 = Tessera(args.lib2) if args.lib2 else None
    me = threading.get_native_id()
    rows, raw, thread_rows = [], {}, []
    rounds = 40 if not args.quick else 20
    rng = random.Random(3)
    for name in ("outer", "inner"):
        A, reps = case_input(np, name)
        T = torch.from_numpy(A)
        targs = tess.alloc_args(A, reps)
        targs1 = tess1.alloc_args(A, reps, 1)
        targs2 = tess2.alloc_args(A, reps) if tess2 else None
        n = 64 * MiB
        quiet = [tess.alloc(targs) for _ in range(rounds)]
        # The default (two-thread) allocating call, with the CPU time each thread spent in it.
        per_thread = []

        def alloc_watched():
            a = thread_cpu_ns()
            dt = tess.alloc(targs)
            b = thread_cpu_ns()
            others = [b[t] - a[t] for t in b if t in a and t != me and b[t] - a[t] > 100_000]
            per_thread.append((dt, max(others) / 1e6 if others else 0.0))
            return dt
        calls = {"tessera_tile_alloc": alloc_watched,
                 "alloc max_threads=1": lambda: tess1.alloc(targs1),
                 "numpy.tile": lambda: _timed(lambda: np.tile(A, reps)),
                 "torch.tile": lambda: _timed(lambda: torch.tile(T, reps))}
        if tess2:
            calls["lib2 alloc"] = lambda: tess2.alloc(targs2)
        alt = {m: [] for m in calls}
        for _ in range(rounds):
            order = list(calls)
            rng.shuffle(order)
            for m in order:
                alt[m].append(calls[m]())
        quiet2 = [tess.alloc(targs) for _ in range(rounds)]
        raw[name] = {"quiet_before": quiet, "alternating": alt, "quiet_after": quiet2, "worker_ms": per_thread}

        def span(xs):
            g = sorted(gbps(n, x) for x in xs)
            return f"{gbps(n, med(xs)):.1f} ({g[0]:.1f}-{g[-1]:.1f}, {sum(x < 10 for x in g)} <10)"
        rows.append([name, span(quiet), span(alt["tessera_tile_alloc"]), span(quiet2), span(alt["alloc max_threads=1"]),
                     span(alt["numpy.tile"]), span(alt["torch.tile"])] + ([span(alt["lib2 alloc"])] if tess2 else []))
        slow = [(dt, w) for dt, w in per_thread if gbps(n, dt) < 10]
        fast = [(dt, w) for dt, w in per_thread if gbps(n, dt) >= 10]
        for label, group in (("< 10 GB/s", slow), (">= 10 GB/s", fast)):
            if group:
                thread_rows.append([name, label, str(len(group)), f"{med([dt for dt, _ in group]) * 1e3:.1f}",
                                    f"{med([w for _, w in group]):.1f}"])
    print_table(["case", "alloc quiet", "alloc alternating", "alloc quiet again", "alloc 1 thread alt.",
                 "numpy.tile alt.", "torch.tile alt."] + (["lib2 alloc alt."] if tess2 else []), rows)
    print(f"GB/s of output of single calls: median (min-max, how many of {rounds} under 10 GB/s); alternating: "
          "the calls in a random order per round")
    print()
    print_table(["case", "2-thread alloc calls", "count", "call ms", "TBB worker CPU ms in the call"], thread_rows)
    print("The worker's CPU time (schedstat) inside the alternating two-thread calls: in the slow ones it is busy the")
    print("whole call (its first touches of the fresh pages are slow), not waiting for a CPU.")
    print()
    results["alternate"] = raw


# -- section: gomp (child processes) -------------------------------------------------------------

GOMP_VARIANTS = [
    ("torch default", {}, 0),
    ("torch.set_num_threads(2)", {}, 2),
    ("OMP_NUM_THREADS=2", {"OMP_NUM_THREADS": "2"}, 0),
    ("OMP_NUM_THREADS=2 OMP_WAIT_POLICY=passive", {"OMP_NUM_THREADS": "2", "OMP_WAIT_POLICY": "passive"}, 0),
    ("OMP_NUM_THREADS=2 GOMP_SPINCOUNT=10000", {"OMP_NUM_THREADS": "2", "GOMP_SPINCOUNT": "10000"}, 0),
    ("OMP_NUM_THREADS=2 OMP_WAIT_POLICY=active", {"OMP_NUM_THREADS": "2", "OMP_WAIT_POLICY": "active"}, 0),
]


def thread_cpu_ns():
    d = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/schedstat") as f:
                d[int(tid)] = int(f.read().split()[0])
        except (OSError, ValueError):
            pass
    return d


def child_gomp(args):
    import threading
    import numpy as np
    import torch
    if args.torch_threads:
        torch.set_num_threads(args.torch_threads)
    A, reps = case_input(np, "outer")
    T = torch.from_numpy(A)
    me = threading.get_native_id()
    torch.tile(T, reps)
    # CPU burnt by the other threads (libgomp's workers) in the 200 ms after a torch call.
    burn = []
    for _ in range(3 if args.quick else 5):
        torch.tile(T, reps)
        a = thread_cpu_ns()
        time.sleep(0.2)
        b = thread_cpu_ns()
        burn.append(sum(b[t] - a.get(t, 0) for t in b if t != me) / 1e6)
    t_torch = [_timed(lambda: torch.tile(T, reps)) for _ in range(3)]

    import tessera
    An, repsn = case_input(np, "narrow")
    Am, repsm = case_input(np, "medium")
    bn, bm = np.ones((131072, 120), np.float32), np.ones((1024, 1024), np.float32)
    # narrow: one 60 MiB call (its shuffle kernel gains from the second thread); medium: a batch of
    # 40 calls into a cached 4 MiB output (about 1 ms, inside a spin-wait window).
    jobs_fn = {"narrow": lambda: tessera.tile(An, repsn, out=bn),
               "medium": lambda: [tessera.tile(Am, repsm, out=bm) for _ in range(40)]}
    for f in jobs_fn.values():
        f()
    # Each job: a 30 ms pause, then (but for "no torch") a torch.tile of the 64 MiB outer case, a
    # delay, and the timed tessera call.
    conds = [("no torch", None), ("torch +0 ms", 0.0), ("torch +2 ms", 0.002), ("torch +5 ms", 0.005),
             ("torch +20 ms", 0.02)]
    jobs_all = [(c, "medium") for c, _ in conds] + [("no torch", "narrow"), ("torch +0 ms", "narrow")]
    delay = dict(conds)
    samples = {j: [] for j in jobs_all}
    rng = random.Random(4)
    for _ in range(15 if args.quick else 30):
        jobs = jobs_all[:]
        rng.shuffle(jobs)
        for c, k in jobs:
            if k == "medium":
                tessera.tile(Am, repsm, out=bm)  # caches warm: the batch is what is timed
            time.sleep(0.03)
            if delay[c] is not None:
                torch.tile(T, reps)
                if delay[c]:
                    time.sleep(delay[c])
            samples[(c, k)].append(_timed(jobs_fn[k]))
    out = {"torch_threads": torch.get_num_threads(), "burn_ms": burn, "torch_tile_s": t_torch,
           "samples_s": {f"{c}|{k}": v for (c, k), v in samples.items()}}
    json.dump(out, sys.stdout)


def section_gomp(args, results):
    print("== gomp: torch's OpenMP pool and tessera in one process (child process per environment) ==")
    rows, raw = [], {}
    for label, env_add, threads in GOMP_VARIANTS:
        env = dict(os.environ)
        for k in ("OMP_NUM_THREADS", "OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "MKL_NUM_THREADS"):
            env.pop(k, None)
        env.update(env_add)
        cmd = [sys.executable, os.path.abspath(__file__), "--child", "gomp", "--lib", args.lib]
        if threads:
            cmd += ["--torch-threads", str(threads)]
        if args.quick:
            cmd.append("--quick")
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
        if p.returncode != 0:
            print(f"{label}: child failed: {p.stderr.strip()[-300:]}")
            continue
        d = json.loads(p.stdout)
        raw[label] = d
        s = d["samples_s"]

        def ratio(c, k):
            return f"{med(s[f'{c}|{k}']) / med(s[f'no torch|{k}']):.2f}"
        rows.append([label, d["torch_threads"], f"{med(d['burn_ms']):.1f}", f"{med(d['torch_tile_s']) * 1e3:.1f}",
                     f"{med(s['no torch|medium']) * 1e3:.2f}"]
                    + [ratio(c, "medium") for c in ("torch +0 ms", "torch +2 ms", "torch +5 ms", "torch +20 ms")]
                    + [f"{med(s['no torch|narrow']) * 1e3:.2f}", ratio("torch +0 ms", "narrow")])
    print_table(["environment", "torch thr", "worker CPU ms", "torch.tile ms", "medium x40 ms", "+0 ms", "+2 ms",
                 "+5 ms", "+20 ms", "narrow ms", "+0 ms"], rows)
    print("worker CPU: what threads other than the caller (libgomp's workers) burn in the 200 ms after a torch.tile")
    print("returns (spin-wait), median. torch.tile: the 64 MiB outer case at that thread count. medium x40: 40")
    print("tessera.tile(out=) calls into a cached 4 MiB output, 30 ms after anything else; then its time right after")
    print("a torch.tile (+0 ms) or 2, 5, 20 ms after one, as a ratio to that. narrow: one 60 MiB call, the same way.")
    print()
    results["gomp"] = raw


# -- section: chunks -----------------------------------------------------------------------------

def section_chunks(args, results):
    import numpy as np
    print("== chunks: tessera_tile_ex into a touched output with one core taken by a spinning process ==")
    libs = [("lib", Tessera(args.lib))] + ([("lib2", Tessera(args.lib2))] if args.lib2 else [])
    cases = {k: case_input(np, k) for k in ("outer", "medium")}
    outs = {"outer": np.ones((8192, 2048), np.float32), "medium": np.ones((1024, 1024), np.float32)}
    I64 = ctypes.c_int64
    calls = {}
    for lname, t in libs:
        for mt in (0, 1):
            for k, (A, reps) in cases.items():
                opt = t.Options(ctypes.sizeof(t.Options), mt, 0, 0)
                o = outs[k]
                c_args = (ctypes.c_void_p(A.ctypes.data), ctypes.c_int(A.ndim), (I64 * A.ndim)(*A.shape),
                          (I64 * A.ndim)(*A.strides), ctypes.c_size_t(A.itemsize), ctypes.c_int(len(reps)),
                          (I64 * len(reps))(*reps), ctypes.c_void_p(o.ctypes.data), ctypes.c_size_t(o.nbytes),
                          ctypes.byref(opt))
                calls[(lname, mt, k)] = (t.lib.tessera_tile_ex, c_args, opt)
    rng = random.Random(5)
    raw = {}
    spinner = None
    try:
        for spin in (False, True):
            if spin:
                spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
                time.sleep(0.3)
            samples = {key: [] for key in calls}
            for _ in range(25 if args.quick else 50):
                keys = list(calls)
                rng.shuffle(keys)
                for key in keys:
                    fn, c_args, _ = calls[key]
                    t0 = time.perf_counter()
                    fn(*c_args)
                    samples[key].append(time.perf_counter() - t0)
            raw["spinner" if spin else "quiet"] = {f"{ln}|{mt}|{k}": x for (ln, mt, k), x in samples.items()}
            if spinner:
                spinner.kill()
                spinner.wait()
                spinner = None
    finally:
        if spinner:
            spinner.kill()
    rows = []
    for lname, _ in libs:
        for mt in (0, 1):
            row = [f"{lname}, {'2 threads' if mt == 0 else 'max_threads=1'}"]
            for k in cases:
                for cond in ("quiet", "spinner"):
                    xs = raw[cond][f"{lname}|{mt}|{k}"]
                    row.append(f"{gbps(outs[k].nbytes, med(xs)):.1f} (p90 {gbps(outs[k].nbytes, pct(xs, 0.9)):.1f})")
            rows.append(row)
    print_table(["tessera_tile_ex", "outer quiet", "outer + spinner", "medium quiet", "medium + spinner"], rows)
    print("GB/s of output, median (p90 of the times); outer: 64 MiB, memory-bound; medium: 4 MiB, in cache. A "
          "spinner leaves two threads 4/3 of a core at best (1.5x slower).")
    print()
    results["chunks"] = raw


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sections", default="pages,cpus,alternate,gomp,chunks")
    p.add_argument("--lib", help="libtessera.so.0 (default: next to the module's build)")
    p.add_argument("--lib2", help="a second libtessera.so.0 to compare (pages, alternate)")
    p.add_argument("--quick", action="store_true", help="fewer repetitions (about half the time)")
    p.add_argument("--json", help="write the raw samples to FILE")
    p.add_argument("--child", help=argparse.SUPPRESS)
    p.add_argument("--torch-threads", type=int, default=0, help=argparse.SUPPRESS)
    args = p.parse_args()
    args.lib = find_lib(args.lib)
    if args.child == "gomp":
        child_gomp(args)
        return
    import numpy
    import torch
    print(f"python {sys.version.split()[0]}, numpy {numpy.__version__}, torch {torch.__version__} "
          f"(torch.get_num_threads() {torch.get_num_threads()}, os.cpu_count() {os.cpu_count()}); lib {args.lib}"
          + (f"; lib2 {args.lib2}" if args.lib2 else ""))
    print(f"transparent_hugepage: {open('/sys/kernel/mm/transparent_hugepage/enabled').read().strip()}, defrag: "
          f"{open('/sys/kernel/mm/transparent_hugepage/defrag').read().strip()}; free page reporting: "
          f"{'on (' + REPORTED_KIB + ')' if reported_kib() is not None else 'not seen'}")
    print()
    results = {}
    sections = {"pages": section_pages, "cpus": section_cpus, "alternate": section_alternate,
                "gomp": section_gomp, "chunks": section_chunks}
    t0 = time.monotonic()
    for name in args.sections.split(","):
        sections[name.strip()](args, results)
        sys.stdout.flush()
    print(f"python_interference: {time.monotonic() - t0:.0f} s", file=sys.stderr)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1, default=str)


if __name__ == "__main__":
    main()
