#!/usr/bin/python3
"""tessera's Python benchmark: tessera.tile, broadcast_to, expand and repeat, and their gradients
(tile_backward, sum_to_shape, repeat_backward), against numpy and torch.

Usage: bench/python_bench.py [--filter REGEX] [--json FILE] [--repetitions N] [--min-sample-ms MS]
                             [--cases FILE] [--lib PATH] [--read-lib PATH] [--torch-threads N] [--seed N]

For every case of bench/cases.json (its "transpose_of" honoured as bench/cases.cpp does: the input
is the transposed view of a C-contiguous array of that shape; its "op", default "tile", and the
op's arguments as bench/cases.h describes them), five calls are timed:

  numpy         numpy.tile(A, reps)                      (a new output)
                numpy.broadcast_to(A, s).copy()          (broadcast_to and expand; s the output shape)
                numpy.repeat(A, repeats, axis)
  torch         torch.tile(T, reps), T = torch.from_numpy(A): the same memory, strides and view
                T.expand(s).contiguous()
                torch.repeat_interleave(T, repeats, dim=axis)   (per-element counts as an int64 tensor)
  tessera       tessera.tile(A, reps), tessera.broadcast_to(A, target), tessera.expand(A, target),
                tessera.repeat(A, repeats, axis)         (a new output)
  tessera out=  the same with out=buf                    (buf preallocated and touched)
  C API         tessera_tile_ex, tessera_broadcast_to_ex, tessera_expand_ex or tessera_repeat_ex
                through ctypes into the same buf (libtessera.so.0, default options)

A tessera module without the op's function (built before it was added) gets "-" in its two
columns, with a message; the other calls are still timed.

The reductions (cases of op tile_backward, sum_to_shape or repeat_backward; their "shape" is the
gradient's, float32 elements k/8 whose sums are exact in any order, so every result is compared
with the reference bit for bit) go to a table of their own, the backward table:

  numpy         the reshape-and-sum: G.reshape(r0, s0, r1, s1, ...).sum(axis=(0, 2, ...)) for
                tile_backward and sum_to_shape (the target promoted, r = G's extent / the target's),
                G.reshape(..., s_axis, r, ...).sum(axis=axis + 1) for repeat_backward
  torch         the backward alone: X a leaf of the input's shape requiring grad, Y = torch.tile(X,
                reps), X.expand(shape) or torch.repeat_interleave(X, r, dim=axis), the graph built
                once; timed: torch.autograd.grad(Y, X, G, retain_graph=True) (what loss.backward()
                runs for that node: RepeatBackward0's reshape and sum, ExpandBackward0's sum_to_size,
                repeat_interleave's index_select backward)
  tessera       tessera.tile_backward(G, in_shape, reps), tessera.sum_to_shape(G, target),
                tessera.repeat_backward(G, in_shape, repeats, axis)   (a new result)
  C API         tessera_tile_backward_ex, tessera_sum_to_shape_ex, tessera_repeat_backward_ex
                through ctypes into a preallocated result
  read          the limit: G's bytes summed as float32 by a plain vector loop with eight
                accumulators (bench/read_limit.cpp, --read-lib) on tessera's thread count (oneTBB's
                default arena), interleaved with the calls above like another call
GB/s there are bytes of gradient read per second. Targets (reported): tessera faster than the
fastest peer (numpy, torch), and at least 2x as fast where that peer runs below half of `read`.
Every backward call reads from DRAM: G has copies (bench/caches.py: views of one numpy array, which
numpy advises MADV_HUGEPAGE from 4 MiB, as tile_bench's copies are) that together span more than
twice the last-level cache read from sysfs (the run stops if it cannot be read), and each call of
each method — numpy, torch, tessera, the C API and read alike — takes the next copy. Before, every
call re-read one G that the L3 partly held, so `read` and the ratios against it meant something
else in earlier tables.

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
import functools
import itertools
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

import caches  # bench/caches.py, beside this script
import runtime_peers  # bench/runtime_peers.py: OpenVINO and ONNX Runtime as peers

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MiB = 2**20
RUNTIME = None  # runtime_peers.RuntimePeers, set by main()

METHODS = ["numpy", "torch", "tessera", "tessera_out", "c_api"]
LABELS = {"numpy": "numpy.tile", "torch": "torch.tile", "tessera": "tessera.tile",
          "tessera_out": "tessera out=", "c_api": "C API"}
# The other ops' table: what each column calls.
FAMILY_LABELS = {"numpy": "numpy", "torch": "torch", "tessera": "tessera", "tessera_out": "tessera out=",
                 "c_api": "C API"}
FAMILY_CALLS = {
    "broadcast_to": ("np.broadcast_to(A, s).copy()", "T.expand(s).contiguous()", "tessera.broadcast_to(A, s)",
                     "tessera_broadcast_to_ex"),
    "expand": ("np.broadcast_to(A, s).copy()", "T.expand(s).contiguous()", "tessera.expand(A, target)",
               "tessera_expand_ex"),
    "repeat": ("np.repeat(A, r, axis)", "torch.repeat_interleave(T, r, dim=axis)", "tessera.repeat(A, r, axis)",
               "tessera_repeat_ex"),
}

# Targets (reported, never enforced): for outputs of 60-64 MiB, tessera.tile with a new output at
# least this many times as fast as numpy.tile, and TORCH_TARGET times as fast as torch.tile;
# tessera.tile(out=) at least OUT_TARGET of the C API's speed; the tiny case's whole call at most
# TINY_TARGET_NS.
LARGE_MIN_BYTES = 60 * MiB
NUMPY_TARGET = {"narrow": 3.0, "column": 3.0, "nchw": 3.0, "bytes": 3.0, "strided": 3.0}
NUMPY_TARGET_DEFAULT = 1.5
TORCH_TARGET = 2.0
OUT_TARGET = 0.85
TINY_TARGET_NS = 500.0
# The other ops (outputs of at least LARGE_MIN_BYTES): tessera with a new output at least this many
# times as fast as torch's call (torch.repeat_interleave; T.expand(s).contiguous()); no numpy target.
FAMILY_TORCH_TARGET = {"repeat": 3.0, "broadcast_to": 2.0, "expand": 2.0}
AXIS_NONE = -2147483648  # TESSERA_AXIS_NONE

# The reductions (the backward table).
REDUCTIONS = ("tile_backward", "sum_to_shape", "repeat_backward")
BACKWARD_METHODS = ["numpy", "torch", "tessera", "c_api", "read"]
BACKWARD_LABELS = {"numpy": "numpy", "torch": "torch autograd", "tessera": "tessera", "c_api": "C API",
                   "read": "read"}
BACKWARD_CALLS = {
    "tile_backward": ("G.reshape(r0, s0, r1, s1, ...).sum(axis=(0, 2, ...))",
                      "autograd.grad(torch.tile(X, reps), X, G)", "tessera.tile_backward(G, in_shape, reps)",
                      "tessera_tile_backward_ex"),
    "sum_to_shape": ("G.reshape(r0, s0, r1, s1, ...).sum(axis=(0, 2, ...))", "autograd.grad(X.expand(shape), X, G)",
                     "tessera.sum_to_shape(G, target)", "tessera_sum_to_shape_ex"),
    "repeat_backward": ("G.reshape(..., s, r, ...).sum(axis=axis + 1)",
                        "autograd.grad(torch.repeat_interleave(X, r, dim=axis), X, G)",
                        "tessera.repeat_backward(G, in_shape, r, axis)", "tessera_repeat_backward_ex"),
}
# Targets: faster than the fastest peer; SLOW_PEER_SPEEDUP times as fast where that peer reads
# below SLOW_PEER_SHARE of `read`.
SLOW_PEER_SHARE = 0.5
SLOW_PEER_SPEEDUP = 2.0
DTYPE_CODES = {"float32": 0, "float64": 1, "float16": 2, "complex64": 4, "complex128": 5, "int8": 6, "int16": 7,
               "int32": 8, "int64": 9, "uint8": 10, "uint16": 11, "uint32": 12, "uint64": 13}  # tessera_dtype


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--filter", default="", help="only the cases whose name REGEX matches (re.search)")
    p.add_argument("--json", help="write the raw results (every sample) to FILE")
    p.add_argument("--repetitions", type=int, default=21, help="samples per call and case (default 21)")
    p.add_argument("--min-sample-ms", type=float, default=30.0, help="shortest sample (default 30 ms)")
    p.add_argument("--cases", default=os.path.join(ROOT, "bench", "cases.json"))
    p.add_argument("--lib", help="libtessera.so.0 for the C API column (default: next to the module's build)")
    p.add_argument("--read-lib", help="libtessera_bench_read.so for the backward table's read limit "
                   "(default: <build>/bench/ next to the module's build)")
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


def find_read_lib(tessera_mod, explicit):
    if explicit:
        return explicit
    # <build>/lib/python/tessera/__init__.py -> <build>/bench/libtessera_bench_read.so
    here = os.path.dirname(os.path.abspath(tessera_mod.__file__))
    candidate = os.path.normpath(os.path.join(here, "..", "..", "..", "bench", "libtessera_bench_read.so"))
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


def random_counts(np, count, lo, hi, seed):
    """bench/cases.cpp's random_counts: count i is lo + splitmix64_i % (hi - lo + 1), splitmix64_i
    the i-th output (from 0) of SplitMix64 started at seed."""
    u = np.uint64
    with np.errstate(over="ignore"):
        z = (np.arange(1, count + 1, dtype=u) * u(0x9E3779B97F4A7C15) + u(seed % 2**64))
        z = (z ^ (z >> u(30))) * u(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> u(27))) * u(0x94D049BB133111EB)
        z = z ^ (z >> u(31))
    return (z % u(hi - lo + 1)).astype(np.int64) + lo


class Op:
    """A case's operation and its arguments, the calls that compute it and their checked result."""

    def __init__(self, np, case, A):
        self.name = case.get("op", "tile")
        if self.name == "tile":
            self.reps = tuple(case["reps"])
            self.out_shape = None  # set from numpy's result (reference)
            self.args_text = f"reps {list(self.reps)}"
        elif self.name in ("broadcast_to", "expand"):
            self.target = tuple(case["target"])
            self.out_shape = self.target if self.name == "broadcast_to" else np.broadcast_shapes(A.shape, self.target)
            self.args_text = f"target {list(self.target)}"
        elif self.name == "repeat":
            self.axis = case.get("axis")
            extent = A.size if self.axis is None else A.shape[self.axis]
            r = case["repeats"]
            if isinstance(r, dict):
                lo, hi = r["random"]
                self.repeats = random_counts(np, extent, lo, hi, r.get("seed", 0))
                text = f"random {lo}-{hi} (seed {r.get('seed', 0)})"
            elif isinstance(r, list):
                self.repeats = np.array(r, dtype=np.int64)
                text = f"{len(r)} counts"
            else:
                self.repeats = int(r)
                text = str(r)
            self.counts = np.atleast_1d(np.asarray(self.repeats, dtype=np.int64))
            self.out_shape = None  # set from numpy's result (reference)
            self.args_text = f"repeats {text}, axis {self.axis}"
        else:
            sys.exit(f"python_bench: case {case['name']}: unknown op {self.name!r}")

    def reference(self, np, A):
        """numpy's result, the output every call is checked against."""
        if self.name == "tile":
            return np.tile(A, self.reps)
        if self.name == "repeat":
            return np.repeat(A, self.repeats, self.axis)
        return np.broadcast_to(A, self.out_shape).copy()

    def statements(self):
        """{method: statement} for timeit, over the names of namespace()."""
        if self.name == "tile":
            return {"numpy": "np_tile(A, reps)", "torch": "torch_tile(T, reps)", "tessera": "f(A, reps)",
                    "tessera_out": "f(A, reps, out=buf)", "c_api": "c_call(*c_args)"}
        if self.name == "repeat":
            return {"numpy": "np_repeat(A, r, axis)", "torch": "torch_ri(T, r_t, dim=axis)", "tessera": "f(A, r, axis)",
                    "tessera_out": "f(A, r, axis, out=buf)", "c_api": "c_call(*c_args)"}
        return {"numpy": "np_bt(A, s).copy()", "torch": "T.expand(s).contiguous()", "tessera": "f(A, target)",
                "tessera_out": "f(A, target, out=buf)", "c_api": "c_call(*c_args)"}

    def namespace(self, np, torch, tessera, A, T, buf):
        ns = {"np_tile": np.tile, "torch_tile": torch.tile, "np_repeat": np.repeat, "torch_ri": torch.repeat_interleave,
              "np_bt": np.broadcast_to, "A": A, "T": T, "buf": buf, "f": getattr(tessera, self.name, None)}
        if self.name == "tile":
            ns["reps"] = self.reps
        elif self.name == "repeat":
            ns.update(r=self.repeats, axis=self.axis,
                      r_t=self.repeats if isinstance(self.repeats, int) else torch.from_numpy(self.repeats))
        else:
            ns.update(s=tuple(self.out_shape), target=self.target)
        return ns


def same_bytes(np, a, b):
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a.reshape(-1).view(np.uint8),
                                                                        b.reshape(-1).view(np.uint8))


class Backward:
    """A reduction case (tile_backward, sum_to_shape, repeat_backward): its gradient G, the shape of
    its result and the calls that compute it (each a callable without arguments)."""

    def __init__(self, np, case):
        self.case = case["name"]
        self.name = case["op"]
        self.shape = tuple(case["shape"])
        self.dtype = np.dtype(case["dtype"])
        nd = len(self.shape)
        self.axis = None
        if self.name == "sum_to_shape":
            self.target = tuple(case["target"])
            self.out_shape = self.target
            promoted = (1,) * (nd - len(self.target)) + self.target
            self.args_text = f"target {list(self.target)}"
        else:
            self.in_shape = tuple(case["in_shape"])
            self.out_shape = self.in_shape
        if self.name == "tile_backward":
            self.reps = tuple(case["reps"])
            promoted = (1,) * (nd - len(self.in_shape)) + self.in_shape
            self.args_text = f"in_shape {list(self.in_shape)}, reps {list(self.reps)}"
        if self.name in ("tile_backward", "sum_to_shape"):
            # G as (r0, s0, r1, s1, ...): the replica axes summed, the element axes kept.
            self.split = tuple(x for g, e in zip(self.shape, promoted) for x in (g // e if e else 0, e))
            self.sum_axes = tuple(range(0, 2 * nd, 2))
        if self.name == "repeat_backward":
            axis = case.get("axis")
            if axis is not None and axis < 0:
                axis += len(self.in_shape)
            self.axis = axis
            extent = math.prod(self.in_shape) if axis is None else self.in_shape[axis]
            r = case["repeats"]
            if isinstance(r, dict):
                lo, hi = r["random"]
                self.repeats = random_counts(np, extent, lo, hi, r.get("seed", 0))
                text = f"random {lo}-{hi} (seed {r.get('seed', 0)})"
            elif isinstance(r, list):
                self.repeats = int(r[0]) if len(r) == 1 else np.array(r, dtype=np.int64)
                text = str(r[0]) if len(r) == 1 else f"{len(r)} counts"
            else:
                self.repeats = int(r)
                text = str(r)
            self.counts = np.atleast_1d(np.asarray(self.repeats, dtype=np.int64))
            self.args_text = f"in_shape {list(self.in_shape)}, repeats {text}, axis {axis}"
            # G with the repeated axis (of the flattened input for None) in segments.
            flat = (math.prod(self.in_shape),) if axis is None else self.in_shape
            a = 0 if axis is None else axis
            self.seg_axis = a
            if isinstance(self.repeats, int):
                self.split = flat[:a] + (flat[a], self.repeats) + flat[a + 1:]
            else:
                self.starts = np.concatenate(([0], np.cumsum(self.counts)[:-1]))

    def gradient(self, np):
        """G: C-contiguous elements k / 8, k in [-16, 16]: every sum of them is exact."""
        n = math.prod(self.shape)
        k = (np.arange(n, dtype=np.uint64) * np.uint64(2654435761) >> np.uint64(13)) % np.uint64(33)
        return ((k.astype(np.float64) - 16) / 8).astype(self.dtype).reshape(self.shape)

    def numpy_sum(self, np, G):
        """numpy's reshape-and-sum of G (for repeat with per-element counts: np.add.reduceat)."""
        if self.name != "repeat_backward":
            return G.reshape(self.split).sum(axis=self.sum_axes).reshape(self.out_shape)
        if isinstance(self.repeats, int):
            return G.reshape(self.split).sum(axis=self.seg_axis + 1).reshape(self.out_shape)
        out = np.add.reduceat(G, self.starts, axis=self.seg_axis)
        out[(slice(None),) * self.seg_axis + (self.counts == 0,)] = 0  # reduceat's empty segments
        return out.reshape(self.out_shape)

    def calls(self, np, torch, tessera, G, X, Y, Gt, f):
        """{method: callable} of numpy, torch and tessera (f: the module's function, or None)."""
        grad = torch.autograd.grad
        calls = {"numpy": lambda: self.numpy_sum(np, G),
                 "torch": lambda: grad(Y, X, Gt, retain_graph=True)[0]}
        if f is not None:
            if self.name == "tile_backward":
                calls["tessera"] = lambda: f(G, self.in_shape, self.reps)
            elif self.name == "sum_to_shape":
                calls["tessera"] = lambda: f(G, self.target)
            else:
                calls["tessera"] = lambda: f(G, self.in_shape, self.repeats, self.axis)
        return calls

    def torch_graph(self, torch):
        """(X, Y): a leaf X of the forward input's shape requiring grad, Y the forward op of it."""
        X = torch.zeros(self.out_shape, dtype=getattr(torch, self.dtype.name), requires_grad=True)
        if self.name == "tile_backward":
            Y = torch.tile(X, self.reps)
        elif self.name == "sum_to_shape":
            Y = X.expand(self.shape)
        else:
            r = self.repeats if isinstance(self.repeats, int) else torch.from_numpy(self.repeats)
            Y = torch.repeat_interleave(X, r, dim=self.axis)
        if tuple(Y.shape) != self.shape:
            sys.exit(f"python_bench: case {self.case}: torch's forward gives {tuple(Y.shape)}, not {self.shape}")
        return X, Y

    def c_args(self, G, buf, counts_keep):
        """The prebuilt arguments of the op's tessera_*_ex call on G into buf."""
        I64 = ctypes.c_int64
        arr = lambda v: (I64 * max(len(v), 1))(*v)  # noqa: E731
        head = (ctypes.c_void_p(G.ctypes.data), ctypes.c_int(G.ndim), arr(G.shape), arr(G.strides),
                ctypes.c_int(DTYPE_CODES[self.dtype.name]))
        tail = (ctypes.c_void_p(buf.ctypes.data), ctypes.c_size_t(buf.nbytes), None)
        return head + self._args(counts_keep) + tail

    def _args(self, counts_keep):
        I64 = ctypes.c_int64
        arr = lambda v: (I64 * max(len(v), 1))(*v)  # noqa: E731
        if self.name == "tile_backward":
            return (ctypes.c_int(len(self.in_shape)), arr(self.in_shape), ctypes.c_int(len(self.reps)), arr(self.reps))
        if self.name == "sum_to_shape":
            return (ctypes.c_int(len(self.target)), arr(self.target))
        counts_keep.append(self.counts)  # outlives the calls
        return (ctypes.c_int(len(self.in_shape)), arr(self.in_shape), I64(self.counts.size),
                self.counts.ctypes.data_as(ctypes.POINTER(I64)),
                ctypes.c_int(AXIS_NONE if self.axis is None else self.axis))

    def kernel_path(self, capi, G):
        """The reduction's executor path ("reduce.lanes", ...), from its C plan's description."""
        I64, plan, keep = ctypes.c_int64, ctypes.c_void_p(), []
        arr = lambda v: (I64 * max(len(v), 1))(*v)  # noqa: E731
        head = (ctypes.c_int(G.ndim), arr(G.shape), arr(G.strides), ctypes.c_int(DTYPE_CODES[self.dtype.name]))
        create = getattr(capi.lib, "tessera_plan_create_" + self.name)
        if create(*(head + self._args(keep)), None, ctypes.byref(plan)) != 0:
            return ""
        capi.lib.tessera_plan_describe.restype = ctypes.c_char_p
        capi.lib.tessera_plan_describe.argtypes = [ctypes.c_void_p]
        capi.lib.tessera_plan_destroy.argtypes = [ctypes.c_void_p]
        text = capi.lib.tessera_plan_describe(plan).decode()
        capi.lib.tessera_plan_destroy(plan)
        m = re.search(r"kernel: (reduce\.[\w.]+)", text)
        return m.group(1) if m else ""


# -- C API through ctypes -------------------------------------------------------------------------

class CApi:
    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        self.lib.tessera_last_error.restype = ctypes.c_char_p
        self.lib.tessera_version.restype = ctypes.c_char_p
        self.path = path

    def function(self, op):
        """The C call of an op: tessera_tile_ex, tessera_broadcast_to_ex, ..."""
        return getattr(self.lib, f"tessera_{op.name}_ex")

    def args(self, A, op, buf):
        """The prebuilt argument tuple of the op's C call (function()) on A into buf (no conversion
        at call time)."""
        I64 = ctypes.c_int64
        nd = A.ndim
        head = (ctypes.c_void_p(A.ctypes.data), ctypes.c_int(nd), (I64 * max(nd, 1))(*A.shape),
                (I64 * max(nd, 1))(*A.strides), ctypes.c_size_t(A.itemsize))
        tail = (ctypes.c_void_p(buf.ctypes.data), ctypes.c_size_t(buf.nbytes), None)
        if op.name == "tile":
            nr = len(op.reps)
            return head + (ctypes.c_int(nr), (I64 * max(nr, 1))(*op.reps)) + tail
        if op.name == "repeat":
            op.counts_c = op.counts.ctypes.data_as(ctypes.POINTER(I64))  # op.counts outlives the calls
            axis = AXIS_NONE if op.axis is None else op.axis
            return head + (I64(op.counts.size), op.counts_c, ctypes.c_int(axis)) + tail
        nt = len(op.target)
        return head + (ctypes.c_int(nt), (I64 * max(nt, 1))(*op.target)) + tail

    def kernel_path(self, A, op):
        """The executor path of the op's plan, from tessera_plan_create_* and tessera_plan_describe."""
        I64, plan = ctypes.c_int64, ctypes.c_void_p()
        head = (ctypes.c_int(A.ndim), (I64 * max(A.ndim, 1))(*A.shape), (I64 * max(A.ndim, 1))(*A.strides),
                ctypes.c_size_t(A.itemsize))
        if op.name == "repeat":
            axis = AXIS_NONE if op.axis is None else op.axis
            args = head + (I64(op.counts.size), op.counts.ctypes.data_as(ctypes.POINTER(I64)), ctypes.c_int(axis))
        elif op.name == "tile":
            args = head + (ctypes.c_int(len(op.reps)), (I64 * max(len(op.reps), 1))(*op.reps))
        else:
            args = head + (ctypes.c_int(len(op.target)), (I64 * max(len(op.target), 1))(*op.target))
        create = getattr(self.lib, "tessera_plan_create_" + ("ex" if op.name == "tile" else op.name))
        if create(*args, None, ctypes.byref(plan)) != 0:
            return ""
        self.lib.tessera_plan_describe.restype = ctypes.c_char_p
        self.lib.tessera_plan_describe.argtypes = [ctypes.c_void_p]
        self.lib.tessera_plan_destroy.argtypes = [ctypes.c_void_p]
        text = self.lib.tessera_plan_describe(plan).decode()
        self.lib.tessera_plan_destroy(plan)
        m = re.search(r"kernel: \w+ \[([^\]]+)\]", text)
        return m.group(1) if m else ""

    def overhead_ns(self):
        """Median time of a ctypes call to a no-op (tessera_plan_destroy(NULL)): ctypes' own cost."""
        t = timeit.Timer("f(None)", globals={"f": self.lib.tessera_plan_destroy})
        n = 20000
        return statistics.median(t.timeit(n) / n for _ in range(7)) * 1e9

    def check(self, status, op):
        if status != 0:
            raise RuntimeError(f"tessera_{op.name}_ex: status {status}: {self.lib.tessera_last_error().decode()}")


# -- timing ------------------------------------------------------------------------------------

def interleaved_samples(timers, methods, rng, args):
    """(samples, inner): seconds per call of each method, and each method's calls per sample — a
    warm-up call, the count calibrated to args.min_sample_ms, then args.repetitions rounds in a
    fresh random order each."""
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
    return samples, inner


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


def rotating(fns):
    """A callable that calls fns[0], fns[1], ... in turn, one per call, cycling."""
    it = itertools.cycle(fns)
    return lambda: next(it)()


def run_backward_case(np, torch, tessera, capi, read_lib, case, args, rng):
    """A reduction case: numpy, torch autograd, tessera, the C API and the read limit, interleaved."""
    op = Backward(np, case)
    G0 = op.gradient(np)
    # The copies every method rotates among (bench/caches.py), G the first, checked below.
    Gs = caches.copies(np, G0, caches.rotation_copies(G0.nbytes, caches.last_level_cache_bytes()))
    del G0
    G = Gs[0]
    Gt = torch.from_numpy(G)
    expect = op.numpy_sum(np, G.astype(np.float64)).astype(op.dtype)  # exact: sums of k / 8
    X, Y = op.torch_graph(torch)
    f = getattr(tessera, op.name, None)
    missing = None
    if f is None:
        missing = f"this tessera module has no tessera.{op.name}"
        print(f"python_bench: case {case['name']}: {missing} (not built in yet); no tessera column (the C API "
              "column still measures the library)", file=sys.stderr)
    per_copy = [op.calls(np, torch, tessera, g, X, Y, torch.from_numpy(g), f) for g in Gs]
    buf = np.zeros(op.out_shape, dtype=op.dtype)  # touched
    keep = []
    if capi:
        c_fn = getattr(capi.lib, f"tessera_{op.name}_ex")
        for g, c in zip(Gs, per_copy):
            c["c_api"] = functools.partial(c_fn, *op.c_args(g, buf, keep))
    if RUNTIME:  # one compiled model per copy, each bound to its copy
        for g, c in zip(Gs, per_copy):
            c.update(RUNTIME.calls(RUNTIME.backward_steps(op), g, op.out_shape))
    threads = os.cpu_count() or 1
    if read_lib:
        r_fn, r_threads = read_lib.tessera_bench_read, ctypes.c_int(threads)
        for g, c in zip(Gs, per_copy):
            c["read"] = functools.partial(r_fn, ctypes.c_void_p(g.ctypes.data), ctypes.c_size_t(g.nbytes), r_threads)
    # Each method's calls cycle through the copies; the check below runs on the first (G).
    calls = {m: rotating([c[m] for c in per_copy]) for m in per_copy[0]}

    # Every call checked once against the exact result before it is timed.
    wrong = []
    for m, call in calls.items():
        if m == "read":
            continue
        if m == "c_api":
            buf.fill(np.nan)
            capi.check(call(), op)
            got = buf
        elif m == "tessera":
            try:
                got = call()
            except Exception as e:  # noqa: BLE001 -- a module still being written: reported, not fatal
                missing = f"tessera.{op.name} failed: {type(e).__name__}: {e}"
                print(f"python_bench: case {case['name']}: {missing}; no tessera column", file=sys.stderr)
                continue
        else:
            got = call()
            got = got.numpy() if m == "torch" else got
        if not same_bytes(np, np.asarray(got), expect):
            wrong.append(m)
    if missing:
        calls.pop("tessera", None)
    if wrong:
        sys.exit(f"python_bench: case {case['name']}: {', '.join(wrong)} differ from the exact {op.name}")

    methods = [m for m in BACKWARD_METHODS if m in calls] + [p for p in runtime_peers.PEERS if p in calls]
    samples, inner = interleaved_samples({m: timeit.Timer(calls[m]) for m in methods}, methods, rng, args)
    kernel_path = ""
    try:
        if capi:
            kernel_path = op.kernel_path(capi, G)
    except Exception:  # noqa: BLE001 -- informational only
        pass
    return {
        "name": case["name"], "op": op.name, "args": op.args_text, "dtype": case["dtype"], "shape": list(G.shape),
        "strides": list(G.strides), "out_shape": list(op.out_shape), "out_bytes": buf.nbytes,
        "in_bytes": G.nbytes, "kernel_path": kernel_path, "read_threads": threads if read_lib else None,
        "copies": len(Gs),
        "tessera_missing": missing,
        "methods": {m: {"inner": inner[m], "samples_s": samples[m], "median_s": statistics.median(samples[m]),
                        "gbps": G.nbytes / statistics.median(samples[m]) / 1e9} for m in methods},
    }


def run_case(np, torch, tessera, capi, case, args, rng):
    A = make_input(np, case)
    op = Op(np, case, A)
    T = torch.from_numpy(A)
    expect = op.reference(np, A)
    op.out_shape = expect.shape
    out_shape, out_bytes = expect.shape, expect.nbytes
    buf = np.empty(out_shape, dtype=A.dtype)
    buf.reshape(-1).view(np.uint8).fill(0)  # touched: every page mapped before it is timed

    ns = op.namespace(np, torch, tessera, A, T, buf)
    stmts = op.statements()
    methods = [m for m in METHODS if m != "c_api" or capi]
    missing = ns["f"] is None
    if missing:
        print(f"python_bench: case {case['name']}: this tessera module has no {op.name}(); "
              "no tessera and tessera out= columns", file=sys.stderr)
        methods = [m for m in methods if m not in ("tessera", "tessera_out")]
    c_args = None
    if capi:
        ns["c_call"] = capi.function(op)
        ns["c_args"] = c_args = capi.args(A, op, buf)
    if RUNTIME:
        for p, call in RUNTIME.calls(RUNTIME.forward_steps(op, A), A, out_shape).items():
            ns[f"peer_{p}"], stmts[p] = call, f"peer_{p}()"
            methods.append(p)

    # Every call checked once against numpy's result before it is timed (out= and the C API
    # into a zeroed buf).
    checks = {}
    for m in methods:
        if m in ("tessera_out", "c_api"):
            buf.reshape(-1).view(np.uint8).fill(0)
            result = eval(stmts[m], ns)  # noqa: S307 -- our own statements
            if m == "c_api":
                capi.check(result, op)
            checks[m] = buf.copy()
        else:
            result = eval(stmts[m], ns)  # noqa: S307
            checks[m] = result.numpy() if m == "torch" else result
    wrong = [m for m, v in checks.items() if not same_bytes(np, v, expect)]
    if wrong:
        sys.exit(f"python_bench: case {case['name']}: {', '.join(wrong)} differ from numpy's {op.name}")
    del checks, expect, result

    samples, inner = interleaved_samples({m: timeit.Timer(stmts[m], globals=ns) for m in methods}, methods, rng, args)
    kernel_path = ""
    try:
        if capi:
            kernel_path = capi.kernel_path(A, op)
        elif op.name == "tile":
            kernel_path = tessera.Plan(A.shape, op.reps, A.dtype, strides=A.strides).kernel_path
    except Exception:  # noqa: BLE001 -- informational only
        pass
    result = {
        "name": case["name"], "op": op.name, "args": op.args_text, "dtype": case["dtype"], "shape": list(A.shape),
        "strides": list(A.strides), "out_shape": list(out_shape), "out_bytes": out_bytes, "kernel_path": kernel_path,
        "methods": {m: {"inner": inner[m], "samples_s": samples[m], "median_s": statistics.median(samples[m]),
                        "gbps": out_bytes / statistics.median(samples[m]) / 1e9} for m in methods},
    }
    if op.name == "tile":
        result["reps"] = list(op.reps)
    return result


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
    if r.get("op") in REDUCTIONS:
        speedup, best, text = backward_verdict(r)
        return speedup, None, text
    m = r["methods"]
    t = lambda k: m[k]["median_s"] if k in m else None  # noqa: E731
    op = r.get("op", "tile")
    best_peer = min(t("numpy"), t("torch"))
    speedup = best_peer / t("tessera") if t("tessera") else None
    out_pct = t("c_api") / t("tessera_out") if t("c_api") and t("tessera_out") else None
    misses = []
    if t("tessera") is None:
        misses.append(f"no tessera.{op}")
    elif r["out_bytes"] >= LARGE_MIN_BYTES:
        vs_np, vs_torch = t("numpy") / t("tessera"), t("torch") / t("tessera")
        if op == "tile":
            need = NUMPY_TARGET.get(r["name"], NUMPY_TARGET_DEFAULT)
            if vs_np < need:
                misses.append(f"numpy {vs_np:.2f}x<{need:g}x")
        need_torch = TORCH_TARGET if op == "tile" else FAMILY_TORCH_TARGET[op]
        if vs_torch < need_torch:
            misses.append(f"torch {vs_torch:.2f}x<{need_torch:g}x")
    if op == "tile" and out_pct is not None and out_pct < OUT_TARGET:
        misses.append(f"out= {100 * out_pct:.0f}%<{100 * OUT_TARGET:.0f}%")
    if r["name"] == "tiny" and t("tessera") and t("tessera") * 1e9 > TINY_TARGET_NS:
        misses.append(f"call {t('tessera') * 1e9:.0f}ns>{TINY_TARGET_NS:.0f}ns")
    return speedup, out_pct, "PASS" if not misses else "MISS " + ", ".join(misses)


def backward_verdict(r):
    """(speed-up of tessera over the fastest peer, that peer, PASS/MISS text) for a reduction case."""
    m = r["methods"]
    peers = [k for k in ("numpy", "torch") if k in m]
    best = min(peers, key=lambda k: m[k]["median_s"])
    if "tessera" not in m:
        return None, best, "- (no tessera column)"
    speedup = m[best]["median_s"] / m["tessera"]["median_s"]
    read = m["read"]["gbps"] if "read" in m else None
    slow = read is not None and m[best]["gbps"] < SLOW_PEER_SHARE * read
    need = SLOW_PEER_SPEEDUP if slow else 1.0
    ok = speedup >= need if slow else speedup > need
    text = f"{'PASS' if ok else 'MISS'} {'>=' if slow else '>'}{need:g}x {best}"
    if read is None:
        text += " (no read limit: half of read not checked)"
    return speedup, best, text


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
    print(f"medians of {ctx['repetitions']} interleaved repetitions; each cell: time per call, GB/s of output "
          "(the backward table: of gradient read)")
    print()
    tile_results = [r for r in results if r.get("op", "tile") == "tile"]
    backward = [r for r in results if r.get("op") in REDUCTIONS]
    family = [r for r in results if r.get("op", "tile") != "tile" and r not in backward]
    if tile_results:
        rows = []
        for r in tile_results:
            m = r["methods"]
            cell = lambda k: (f"{fmt_time(m[k]['median_s'])} {fmt_gbps(m[k]['gbps'])}" if k in m else "-")  # noqa: E731
            speedup, out_pct, text = verdict(r)
            rows.append([r["name"], fmt_size(r["out_bytes"])] + [cell(k) for k in METHODS]
                        + [f"{speedup:.2f}x" if speedup else "-", f"{100 * out_pct:.0f}%" if out_pct else "-", text])
        print_table(["case", "output"] + [LABELS[k] for k in METHODS] + ["new/best", "out=/C", "targets"], rows)
        print()
    if family:
        rows = []
        for r in family:
            m = r["methods"]
            t = lambda k: m[k]["median_s"] if k in m else None  # noqa: E731
            cell = lambda k: (f"{fmt_time(m[k]['median_s'])} {fmt_gbps(m[k]['gbps'])}" if k in m else "-")  # noqa: E731
            ratio = lambda k: f"{t(k) / t('tessera'):.2f}x" if t(k) and t("tessera") else "-"  # noqa: E731
            speedup, out_pct, text = verdict(r)
            rows.append([r["name"], r["op"], fmt_size(r["out_bytes"])] + [cell(k) for k in METHODS]
                        + [ratio("numpy"), ratio("torch"), f"{100 * out_pct:.0f}%" if out_pct else "-",
                           r.get("kernel_path") or "-", text])
        print_table(["case", "op", "output"] + [FAMILY_LABELS[k] for k in METHODS]
                    + ["vs numpy", "vs torch", "out=/C", "kernel path", "targets"], rows)
        print("calls: " + "; ".join(f"{op}: numpy {c[0]}, torch {c[1]}, tessera {c[2]}, C API {c[3]}"
                                    for op, c in FAMILY_CALLS.items() if any(r["op"] == op for r in family)))
        print("vs numpy / vs torch: tessera (new output) as a speed-up over them; targets (outputs >= 60 MiB): "
              + ", ".join(f"{op} >= {v:g}x torch" for op, v in FAMILY_TORCH_TARGET.items())
              + "; out=/C: tessera out= as a share of the C API's speed (no target).")
        print()
    if backward:
        rows, met, missed = [], [], []
        for r in backward:
            m = r["methods"]
            cell = lambda k: (f"{fmt_time(m[k]['median_s'])} {fmt_gbps(m[k]['gbps'])}" if k in m else "-")  # noqa: E731
            speedup, best, text = backward_verdict(r)
            pct = (f"{100 * m['tessera']['gbps'] / m['read']['gbps']:.0f}%" if "tessera" in m and "read" in m
                   else "-")
            c_pct = f"{100 * m['c_api']['gbps'] / m['read']['gbps']:.0f}%" if "c_api" in m and "read" in m else "-"
            if speedup is not None and text.startswith("PASS"):
                met.append(f"{r['name']} {speedup:.2f}x {best}")
            elif speedup is not None:
                # The speed the target asks for, as a share of read, beside the C API's into a
                # preallocated result: where the first is above the second, the miss is the
                # kernel's own speed against that share of the memory's, not the binding's.
                need = (f" ({SLOW_PEER_SPEEDUP:g}x {best} = "
                        f"{100 * SLOW_PEER_SPEEDUP * m[best]['gbps'] / m['read']['gbps']:.0f}% of read; tessera {pct},"
                        f" the C API {c_pct})" if "read" in m and text.startswith("MISS >=") else "")
                missed.append(f"{r['name']} {speedup:.2f}x {best}{need}")
            rows.append([r["name"], r["op"], fmt_size(r["in_bytes"]), fmt_size(r["out_bytes"])]
                        + [cell(k) for k in BACKWARD_METHODS]
                        + [pct, c_pct, best, f"{speedup:.2f}x" if speedup else "-",
                           f"{m[best]['median_s'] / m['c_api']['median_s']:.2f}x" if "c_api" in m else "-",
                           r.get("kernel_path") or "-", text])
        print("backward (the gradients): time per call and GB/s of gradient read; read = the same bytes summed by a "
              f"float32 vector loop on {backward[0].get('read_threads') or '-'} threads; every call of every column "
              f"takes the next of {'/'.join(sorted({str(r.get('copies', '?')) for r in backward}))} copies of the "
              "gradient spanning > 2x the last-level cache: from DRAM")
        print_table(["case", "op", "gradient", "result"] + [BACKWARD_LABELS[k] for k in BACKWARD_METHODS]
                    + ["%read", "C %read", "fastest peer", "vs fastest", "C vs fastest", "kernel path", "targets"],
                    rows)
        print("calls: " + "; ".join(f"{op}: numpy {c[0]}, torch {c[1]}, tessera {c[2]}, C API {c[3]}"
                                    for op, c in BACKWARD_CALLS.items() if any(r["op"] == op for r in backward)))
        print("torch autograd: torch.autograd.grad(Y, X, G, retain_graph=True) on a graph built once (the backward "
              "node alone, as loss.backward() runs it); tessera and numpy allocate their result, the C API writes "
              "into a preallocated one. vs fastest / C vs fastest: tessera's / the C API's speed-up over the faster "
              "of numpy and torch; the targets are tessera's (Python).")
        print(f"targets: tessera faster than the fastest peer (numpy, torch), >= {SLOW_PEER_SPEEDUP:g}x it where that "
              f"peer runs below {100 * SLOW_PEER_SHARE:.0f}% of read: {len(met)} met, {len(missed)} missed"
              + (": " + "; ".join(missed) if missed else ""))
        missing = sorted({r["tessera_missing"] for r in backward if r.get("tessera_missing")})
        if missing:
            print("note: no tessera column where " + "; ".join(missing) + " (the Python functions are being added "
                  "to lib/python): no verdict there; the C API column measures the library.")
        print()
    if RUNTIME:
        runtime_peers.print_peer_table(results, print_table, fmt_time, fmt_gbps, fmt_size, RUNTIME, LARGE_MIN_BYTES)
    tiny = next((r for r in results if r["name"] == "tiny"), None)
    if tiny:
        m = tiny["methods"]
        ns = lambda k: m[k]["median_s"] * 1e9 if k in m else float("nan")  # noqa: E731
        print(f"tiny whole call: tessera.tile {ns('tessera'):.0f} ns "
              f"({'PASS' if ns('tessera') <= TINY_TARGET_NS else 'MISS'}, target <= {TINY_TARGET_NS:.0f} ns), "
              f"numpy.tile {ns('numpy'):.0f} ns, torch.tile {ns('torch'):.0f} ns, "
              f"tessera.tile(out=) {ns('tessera_out'):.0f} ns, C API through ctypes {ns('c_api'):.0f} ns")
    if tile_results:
        print("new/best: speed-up of tessera.tile (new output) over the faster of numpy.tile and torch.tile; "
              "out=/C: tessera.tile(out=) as a share of the C API's speed.")
        print(f"targets: outputs >= 60 MiB: tessera.tile >= {NUMPY_TARGET_DEFAULT:g}x numpy.tile "
              f"(>= 3x on {', '.join(NUMPY_TARGET)}) and >= {TORCH_TARGET:g}x torch.tile; "
              f"out= >= {100 * OUT_TARGET:.0f}% of the C API; tiny call <= {TINY_TARGET_NS:.0f} ns.")
    ov = ctx.get("ctypes_overhead_ns")
    print("C API: the tessera_*_ex call through ctypes (arguments prebuilt, GIL released); ctypes' own cost per call "
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
    global RUNTIME
    RUNTIME = runtime_peers.RuntimePeers(np)
    for p, why in RUNTIME.missing.items():
        print(f"python_bench: no {runtime_peers.LABELS[p]} column ({why}; bench/requirements-peers.txt)", file=sys.stderr)
    lib = find_lib(tessera, args.lib)
    capi = CApi(lib) if lib else None
    if not capi:
        print("python_bench: libtessera.so.0 not found (--lib); no C API column", file=sys.stderr)
    cases = load_cases(args.cases, args.filter)
    read_lib = None
    if any(c.get("op") in REDUCTIONS for c in cases):
        read_path = find_read_lib(tessera, args.read_lib)
        if read_path:
            read_lib = ctypes.CDLL(read_path)
            read_lib.tessera_bench_read.restype = ctypes.c_double
            read_lib.tessera_bench_read.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        else:
            print("python_bench: libtessera_bench_read.so not found (--read-lib); no read column", file=sys.stderr)
    ctx = {
        "tessera_version": tessera.__version__ if hasattr(tessera, "__version__")
        else (capi.lib.tessera_version().decode() if capi else "?"),
        "tessera_target": tessera.simd_target(), "python": platform.python_version(),
        "python_exe": sys.executable, "numpy": np.__version__, "torch": torch.__version__,
        "torch_threads": torch.get_num_threads(), "cpu_model": caches.cpu_model(), "cpus": os.cpu_count(),
        "transparent_hugepage": first_line("/sys/kernel/mm/transparent_hugepage/enabled"),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "repetitions": args.repetitions, "min_sample_ms": args.min_sample_ms, "lib": lib,
        "runtime_peers": dict(RUNTIME.versions),
    }
    if capi:
        ctx["ctypes_overhead_ns"] = capi.overhead_ns()
    ctx["module"] = os.path.dirname(os.path.abspath(tessera.__file__))
    rng = random.Random(args.seed)
    results = []
    busy0, own0, wall0 = machine_busy_seconds(), own_cpu_seconds(), time.monotonic()
    for case in cases:
        print(f"python_bench: {case['name']} ...", file=sys.stderr, flush=True)
        if case.get("op") in REDUCTIONS:
            results.append(run_backward_case(np, torch, tessera, capi, read_lib, case, args, rng))
        else:
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
