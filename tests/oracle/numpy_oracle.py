#!/usr/bin/python3
"""A second oracle: tessera's C API (through ctypes) against numpy itself — numpy.tile, and the rest of
the family: numpy.broadcast_to(...).copy(), the numpy broadcast of two shapes (ONNX Expand) and
numpy.repeat, with output regions of plans compared with numpy's slices.

On a seeded sweep of shapes (ranks 0-4, extents 0-5), reps (lengths 0-5, values 0-3), layouts
(contiguous, transposed, reversed [::-1], stepped [::2] / [1::3] / [::-2], np.broadcast_to with
zero strides, and all of these mixed) and dtypes (bool ... complex128, fixed-width bytes, an odd
structured dtype), calls tessera_tile (or a plan, every other case) with the array's data pointer,
shape, byte strides and itemsize, and compares the output bytes and tessera_tile_shape with
numpy.tile. Error cases check the status and that the destination is untouched. The reference in
tests/reference.cpp and the library could share a misreading of the semantics; numpy cannot.

The reductions (the gradients: tessera_tile_backward, tessera_sum_to_shape, tessera_repeat_backward,
one-shot, _ex and plans) are compared with numpy's own sums on gradients of every dtype numpy and
tessera share (all but bfloat16) in the same layouts, overwriting and accumulating, exactly (see
"The reductions" below), with gradients of 0.5-2.4 MiB that run threaded, and calls numpy or
torch rejects (TESSERA_INVALID_ARGUMENT, the output untouched).

Usage: /usr/bin/python3 tests/oracle/numpy_oracle.py [--lib build/tests/lib/libtessera.so.0] [--seed N]
Prints "N passed, M failed"; exits 1 if anything failed.
"""
import argparse
import ctypes
import itertools
import math
import pathlib
import sys
import time

import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[2]
I64P = ctypes.POINTER(ctypes.c_int64)
INT64_MAX = 2**63 - 1
MAX_OUTPUT_BYTES = 4 << 20  # some outputs pass tessera's 512 KiB threshold and run threaded
GUARD = 64  # bytes of fill kept before and after the destination
FILL = 0xCD

DTYPES = [
    np.dtype(np.bool_), np.dtype(np.int8), np.dtype(np.uint8), np.dtype(np.int16), np.dtype(np.int32),
    np.dtype(np.int64), np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64),
    np.dtype(np.complex64), np.dtype(np.complex128), np.dtype('S3'), np.dtype('S7'),
    np.dtype([('tag', 'u1'), ('value', '<f8'), ('name', 'S4')]),  # packed: itemsize 13
]
LAYOUTS = ['contiguous', 'transposed', 'reversed', 'stepped', 'broadcast', 'mixed']


class Options(ctypes.Structure):
    """struct tessera_options (tessera.h), as tessera_options_init fills it."""
    _fields_ = [('sizeof_options', ctypes.c_size_t), ('max_threads', ctypes.c_int), ('negative_reps', ctypes.c_int),
                ('nontemporal', ctypes.c_int), ('reserved0', ctypes.c_int), ('accumulate', ctypes.c_int)]

    def __init__(self, **fields):
        super().__init__(ctypes.sizeof(Options), 0, 0, 0, 0, 0)
        for name, value in fields.items():
            setattr(self, name, value)


class Tessera:
    """The C API of tessera.h through ctypes."""

    def __init__(self, path):
        lib = ctypes.CDLL(str(path))
        lib.tessera_tile.argtypes = [ctypes.c_void_p, ctypes.c_int, I64P, I64P, ctypes.c_size_t, ctypes.c_int, I64P,
                                     ctypes.c_void_p, ctypes.c_size_t]
        lib.tessera_tile.restype = ctypes.c_int
        lib.tessera_tile_shape.argtypes = [ctypes.c_int, I64P, ctypes.c_int, I64P, ctypes.POINTER(ctypes.c_int), I64P]
        lib.tessera_tile_shape.restype = ctypes.c_int
        lib.tessera_plan_create.argtypes = [ctypes.c_int, I64P, I64P, ctypes.c_size_t, ctypes.c_int, I64P,
                                            ctypes.POINTER(ctypes.c_void_p)]
        lib.tessera_plan_create.restype = ctypes.c_int
        lib.tessera_plan_execute.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
        lib.tessera_plan_execute.restype = ctypes.c_int
        lib.tessera_plan_output_bytes.argtypes = [ctypes.c_void_p]
        lib.tessera_plan_output_bytes.restype = ctypes.c_size_t
        lib.tessera_plan_destroy.argtypes = [ctypes.c_void_p]
        lib.tessera_plan_destroy.restype = None
        vp, sz, i64, ci = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int64, ctypes.c_int
        for name, args in (('tessera_broadcast_to', [vp, ci, I64P, I64P, sz, ci, I64P, vp, sz]),
                           ('tessera_expand', [vp, ci, I64P, I64P, sz, ci, I64P, vp, sz]),
                           ('tessera_repeat', [vp, ci, I64P, I64P, sz, i64, I64P, ci, vp, sz]),
                           ('tessera_plan_create_broadcast_to', [ci, I64P, I64P, sz, ci, I64P, vp, ctypes.POINTER(vp)]),
                           ('tessera_plan_create_expand', [ci, I64P, I64P, sz, ci, I64P, vp, ctypes.POINTER(vp)]),
                           ('tessera_plan_create_repeat', [ci, I64P, I64P, sz, i64, I64P, ci, vp, ctypes.POINTER(vp)]),
                           ('tessera_plan_execute_region', [vp, vp, I64P, I64P, vp, sz])):
            getattr(lib, name).argtypes = args
            getattr(lib, name).restype = ctypes.c_int
        # The reductions (the gradients): dtype codes instead of itemsizes, options with accumulate.
        op = ctypes.POINTER(Options)
        for name, args in (('tessera_tile_backward', [vp, ci, I64P, I64P, ci, ci, I64P, ci, I64P, vp, sz]),
                           ('tessera_tile_backward_ex', [vp, ci, I64P, I64P, ci, ci, I64P, ci, I64P, vp, sz, op]),
                           ('tessera_sum_to_shape', [vp, ci, I64P, I64P, ci, ci, I64P, vp, sz]),
                           ('tessera_sum_to_shape_ex', [vp, ci, I64P, I64P, ci, ci, I64P, vp, sz, op]),
                           ('tessera_repeat_backward', [vp, ci, I64P, I64P, ci, ci, I64P, i64, I64P, ci, vp, sz]),
                           ('tessera_repeat_backward_ex',
                            [vp, ci, I64P, I64P, ci, ci, I64P, i64, I64P, ci, vp, sz, op]),
                           ('tessera_plan_create_tile_backward',
                            [ci, I64P, I64P, ci, ci, I64P, ci, I64P, op, ctypes.POINTER(vp)]),
                           ('tessera_plan_create_sum_to_shape', [ci, I64P, I64P, ci, ci, I64P, op, ctypes.POINTER(vp)]),
                           ('tessera_plan_create_repeat_backward',
                            [ci, I64P, I64P, ci, ci, I64P, i64, I64P, ci, op, ctypes.POINTER(vp)]),
                           ('tessera_plan_output_shape', [vp, ctypes.POINTER(ci), I64P])):
            getattr(lib, name).argtypes = args
            getattr(lib, name).restype = ctypes.c_int
        lib.tessera_dtype_itemsize.argtypes = [ci]
        lib.tessera_dtype_itemsize.restype = sz
        lib.tessera_dtype_name.argtypes = [ci]
        lib.tessera_dtype_name.restype = ctypes.c_char_p
        lib.tessera_plan_describe.argtypes = [vp]
        lib.tessera_plan_describe.restype = ctypes.c_char_p
        for name in ('tessera_last_error', 'tessera_version', 'tessera_active_target'):
            getattr(lib, name).argtypes = []
            getattr(lib, name).restype = ctypes.c_char_p
        self.lib = lib
        self.max_ndim = 64

    @staticmethod
    def _list(values):
        values = list(values)
        return (ctypes.c_int64 * len(values))(*values) if values else None

    def tile_shape(self, shape, reps):
        out_ndim = ctypes.c_int(-1)
        out_shape = (ctypes.c_int64 * self.max_ndim)()
        status = self.lib.tessera_tile_shape(len(shape), self._list(shape), len(reps), self._list(reps),
                                             ctypes.byref(out_ndim), out_shape)
        return status, tuple(out_shape[:out_ndim.value]) if status == 0 else None

    def tile(self, a, reps, dst, dst_bytes, api):
        """Tiles the numpy view `a` into the address `dst` through 'oneshot' or 'plan'."""
        src = a.__array_interface__['data'][0]
        shape, strides = self._list(a.shape), self._list(a.strides)
        if api == 'oneshot':
            return self.lib.tessera_tile(src, a.ndim, shape, strides, a.itemsize, len(reps), self._list(reps), dst,
                                         dst_bytes)
        plan = ctypes.c_void_p()
        status = self.lib.tessera_plan_create(a.ndim, shape, strides, a.itemsize, len(reps), self._list(reps),
                                              ctypes.byref(plan))
        if status != 0:
            return status
        try:
            return self.lib.tessera_plan_execute(plan, src, dst, dst_bytes)
        finally:
            self.lib.tessera_plan_destroy(plan)

    AXIS_NONE = -2**31

    def family(self, op, a, arg, axis, dst, dst_bytes, api):
        """broadcast_to / expand (arg: the target shape) or repeat (arg: the counts, axis or None)
        of the numpy view `a` into `dst`, through 'oneshot' or 'plan'; returns the status."""
        src = a.__array_interface__['data'][0]
        shape, strides, arg_list = self._list(a.shape), self._list(a.strides), self._list(arg)
        ax = self.AXIS_NONE if axis is None else axis
        if api == 'oneshot':
            if op == 'repeat':
                return self.lib.tessera_repeat(src, a.ndim, shape, strides, a.itemsize, len(arg), arg_list, ax, dst,
                                               dst_bytes)
            return getattr(self.lib, 'tessera_' + op)(src, a.ndim, shape, strides, a.itemsize, len(arg), arg_list,
                                                      dst, dst_bytes)
        plan = ctypes.c_void_p()
        if op == 'repeat':
            status = self.lib.tessera_plan_create_repeat(a.ndim, shape, strides, a.itemsize, len(arg), arg_list, ax,
                                                         None, ctypes.byref(plan))
        else:
            status = getattr(self.lib, 'tessera_plan_create_' + op)(a.ndim, shape, strides, a.itemsize, len(arg),
                                                                    arg_list, None, ctypes.byref(plan))
        if status != 0:
            return status
        try:
            return self.lib.tessera_plan_execute(plan, src, dst, dst_bytes)
        finally:
            self.lib.tessera_plan_destroy(plan)

    def region(self, op, a, arg, axis, start, extent, dst, dst_bytes):
        """One region of a plan of tile (arg: reps) or of the family, written to dst."""
        src = a.__array_interface__['data'][0]
        shape, strides, arg_list = self._list(a.shape), self._list(a.strides), self._list(arg)
        plan = ctypes.c_void_p()
        if op == 'tile':
            status = self.lib.tessera_plan_create(a.ndim, shape, strides, a.itemsize, len(arg), arg_list,
                                                  ctypes.byref(plan))
        elif op == 'repeat':
            status = self.lib.tessera_plan_create_repeat(a.ndim, shape, strides, a.itemsize, len(arg), arg_list,
                                                         self.AXIS_NONE if axis is None else axis, None,
                                                         ctypes.byref(plan))
        else:
            status = getattr(self.lib, 'tessera_plan_create_' + op)(a.ndim, shape, strides, a.itemsize, len(arg),
                                                                    arg_list, None, ctypes.byref(plan))
        if status != 0:
            return status
        try:
            return self.lib.tessera_plan_execute_region(plan, src, self._list(start), self._list(extent), dst,
                                                        dst_bytes)
        finally:
            self.lib.tessera_plan_destroy(plan)

    def last_error(self):
        return self.lib.tessera_last_error().decode()

    def reduce(self, op, g, arg, dtype_code, dst, dst_bytes, api, options=None, null_strides=False, check=None):
        """A reduction of the numpy view `g` (the gradient in) into `dst`: op 'tile_backward' (arg:
        (in_shape, reps)), 'sum_to_shape' (arg: (target,)) or 'repeat_backward' (arg: (in_shape,
        counts, axis or None)), through 'oneshot' (the plain call; options must be None), 'ex' or
        'plan' (create, then tessera_plan_execute). Returns the status. With a plan, check(plan) is
        called before the execution (tessera_plan_output_bytes, _output_shape, _describe)."""
        src = g.__array_interface__['data'][0]
        shape = self._list(g.shape)
        strides = None if null_strides else self._list(g.strides)
        opt = None if options is None else ctypes.byref(options)
        if op == 'tile_backward':
            in_shape, reps = arg
            head = (len(in_shape), self._list(in_shape), len(reps), self._list(reps))
        elif op == 'sum_to_shape':
            (target,) = arg
            head = (len(target), self._list(target))
        else:
            in_shape, counts, axis = arg
            head = (len(in_shape), self._list(in_shape), len(counts), self._list(counts),
                    self.AXIS_NONE if axis is None else axis)
        if api == 'oneshot':
            return getattr(self.lib, 'tessera_' + op)(src, g.ndim, shape, strides, dtype_code, *head, dst, dst_bytes)
        if api == 'ex':
            return getattr(self.lib, 'tessera_' + op + '_ex')(src, g.ndim, shape, strides, dtype_code, *head, dst,
                                                                dst_bytes, opt)
        plan = ctypes.c_void_p()
        status = getattr(self.lib, 'tessera_plan_create_' + op)(g.ndim, shape, strides, dtype_code, *head, opt,
                                                                 ctypes.byref(plan))
        if status != 0:
            return status
        try:
            if check is not None:
                check(plan)
            return self.lib.tessera_plan_execute(plan, src, dst, dst_bytes)
        finally:
            self.lib.tessera_plan_destroy(plan)

    def plan_output_shape(self, plan):
        out_ndim = ctypes.c_int(-1)
        out_shape = (ctypes.c_int64 * self.max_ndim)()
        status = self.lib.tessera_plan_output_shape(plan, ctypes.byref(out_ndim), out_shape)
        return status, tuple(out_shape[:out_ndim.value]) if status == 0 else None


def random_bytes(rng, count, dtype):
    """`count` elements of `dtype` with random bytes (valid 0/1 for bool)."""
    if dtype == np.bool_:
        return rng.integers(0, 2, size=count).astype(np.bool_)
    return rng.integers(0, 256, size=count * dtype.itemsize, dtype=np.uint8).view(dtype)


def make_view(rng, shape, dtype, layout, fill=random_bytes):
    """A view with exactly `shape` whose strides follow `layout`, into a fresh parent of `count`
    elements made by fill(rng, count, dtype) (random bytes by default)."""
    ndim = len(shape)
    if layout == 'broadcast':
        # Broadcast a smaller array: leading axes dropped, others of extent 1 -> stride 0.
        drop = int(rng.integers(0, ndim + 1))
        small = tuple(1 if rng.random() < 0.5 else s for s in shape[drop:])
        inner = LAYOUTS[int(rng.integers(0, 4))]  # contiguous, transposed, reversed or stepped
        return np.broadcast_to(make_view(rng, small, dtype, inner, fill), shape)
    steps = [1] * ndim
    perm = list(range(ndim))
    if layout in ('transposed', 'mixed'):
        perm = [int(p) for p in rng.permutation(ndim)]
    if layout in ('reversed', 'mixed'):
        steps = [-1 if rng.random() < 0.5 else s for s in steps]
    if layout in ('stepped', 'mixed'):
        steps = [int(rng.choice([2, 3, -2])) if rng.random() < 0.6 else s for s in steps]
    offsets = [int(rng.integers(0, 2)) for _ in range(ndim)]
    parent_shape = [abs(st) * n + 1 for st, n in zip(steps, shape)]
    stored = tuple(parent_shape[p] for p in perm)  # the parent's memory order
    parent = fill(rng, int(np.prod(stored, dtype=np.int64)), dtype).reshape(stored)
    parent = parent.transpose(np.argsort(perm))  # back to the natural axis order
    first = tuple(slice(off, None, st) if st > 0 else slice(p - 1 - off, None, st)
                  for st, off, p in zip(steps, offsets, parent_shape))
    # (the trailing Ellipsis keeps a 0-d result an array view rather than a numpy scalar)
    view = parent[first + (Ellipsis,)][tuple(slice(0, n) for n in shape) + (Ellipsis,)]
    assert view.shape == tuple(shape), (view.shape, shape)
    return view


def as_bytes(array):
    """The C-order bytes of `array` as a flat uint8 array."""
    return np.ascontiguousarray(array).reshape(-1).view(np.uint8)


class Oracle:
    def __init__(self, tessera, verbose_limit=10):
        self.t = tessera
        self.passed = 0
        self.failed = 0
        self.verbose_limit = verbose_limit
        self.negative_rep_divergences = 0
        self.large = 0
        self.family = 0

    def record(self, ok, what):
        if ok:
            self.passed += 1
            return
        self.failed += 1
        if self.failed <= self.verbose_limit:
            print(f"MISMATCH: {what}", file=sys.stderr)

    def describe(self, a, reps, layout, api):
        return (f"dtype {a.dtype.str} ({a.itemsize} B), layout {layout}, shape {a.shape}, strides {a.strides}, "
                f"reps {tuple(reps)}, api {api}")

    def compare(self, a, reps, layout, api, misalign):
        """Tiles `a` by `reps` and compares bytes and shape with numpy.tile."""
        what = self.describe(a, reps, layout, api)
        expected = np.tile(a, reps)
        status, shape = self.t.tile_shape(a.shape, reps)
        if status != 0 or shape != expected.shape:
            self.record(False, f"{what}: tessera_tile_shape status {status} shape {shape}, numpy {expected.shape}")
            return
        want = as_bytes(expected)
        nbytes = want.size
        buf = np.full(misalign + nbytes + GUARD, FILL, dtype=np.uint8)
        dst = buf.ctypes.data + misalign
        status = self.t.tile(a, reps, dst, nbytes, api)
        got = buf[misalign:misalign + nbytes]
        if status != 0:
            self.record(False, f"{what}: status {status} ({self.t.last_error()})")
        elif not np.array_equal(got, want):
            diff = int(np.flatnonzero(got != want)[0])
            self.record(False, f"{what}: byte {diff} (element {diff // a.itemsize}) is {got[diff]}, numpy "
                               f"{want[diff]}")
        elif (buf[:misalign] != FILL).any() or (buf[misalign + nbytes:] != FILL).any():
            self.record(False, f"{what}: wrote outside the output's {nbytes} bytes")
        else:
            self.record(True, what)

    def reject(self, a, reps, expected_status, shape_status, dst_bytes=None, numpy_raises=True, api='oneshot'):
        """A call that must fail with `expected_status` (tessera_tile_shape: `shape_status`, as it
        has no itemsize and no buffer) and leave dst untouched."""
        what = f"{self.describe(a, reps, 'error', api)}, dst_bytes {dst_bytes}"
        if numpy_raises:
            try:
                np.tile(a, reps)
                if not numpy_accepts_negative_rep(a.shape, reps):
                    self.record(False, f"{what}: numpy.tile accepted it")
                    return
                self.negative_rep_divergences += 1
            except (ValueError, MemoryError, OverflowError):
                pass
        capacity = 256 if dst_bytes is None else dst_bytes
        buf = np.full(capacity + GUARD, FILL, dtype=np.uint8)
        status = self.t.tile(a, reps, buf.ctypes.data, capacity, api)
        message = self.t.last_error()
        got_shape_status, _ = self.t.tile_shape(a.shape, reps)
        ok = status == expected_status and got_shape_status == shape_status and (buf == FILL).all() and message
        self.record(ok, f"{what}: status {status} (tile_shape {got_shape_status}), expected {expected_status} "
                        f"({shape_status}), "
                        f"dst untouched {bool((buf == FILL).all())}, message '{message}'")


def numpy_family(op, a, arg, axis):
    """numpy's result of the family call, or the exception numpy raises."""
    if op == 'broadcast_to':
        return np.broadcast_to(a, arg).copy()
    if op == 'expand':
        return np.broadcast_to(a, np.broadcast_shapes(a.shape, tuple(arg))).copy()
    return np.repeat(a, arg[0] if len(arg) == 1 else arg, axis=axis)


def check_output(oracle, what, status, buf, misalign, want):
    nbytes = want.size
    got = buf[misalign:misalign + nbytes]
    if status != 0:
        oracle.record(False, f"{what}: status {status} ({oracle.t.last_error()})")
    elif not np.array_equal(got, want):
        diff = int(np.flatnonzero(got != want)[0])
        oracle.record(False, f"{what}: byte {diff} is {got[diff]}, numpy {want[diff]}")
    elif (buf[:misalign] != FILL).any() or (buf[misalign + nbytes:] != FILL).any():
        oracle.record(False, f"{what}: wrote outside the output's {nbytes} bytes")
    else:
        oracle.record(True, what)


def random_family_call(rng, a):
    """A random valid call of the family on `a`: (op, arg, axis)."""
    op = ['broadcast_to', 'expand', 'repeat'][int(rng.integers(0, 3))]
    if op == 'broadcast_to':
        lead = [int(rng.integers(0, 4)) for _ in range(int(rng.integers(0, 3)))]
        return op, tuple(lead + [int(rng.integers(0, 5)) if s == 1 else s for s in a.shape]), None
    if op == 'expand':
        lead = [int(rng.integers(1, 4)) for _ in range(int(rng.integers(0, 3)))]
        keep = a.shape[int(rng.integers(0, a.ndim + 1)):] if not lead else a.shape
        tail = [int(rng.integers(0, 5)) if s == 1 else (1 if rng.random() < 0.3 else s) for s in keep]
        return op, tuple(lead + tail), None
    axis = int(rng.integers(-a.ndim, a.ndim)) if a.ndim and rng.random() < 0.7 else None
    n = a.size if axis is None else a.shape[axis]
    if rng.random() < 0.5 or n > 200:
        return op, (int(rng.integers(0, 5)),), axis
    return op, tuple(int(x) for x in rng.integers(0, 5, size=n)), axis


def family(oracle, rng, per_combo):
    """broadcast_to, expand and repeat against numpy, every dtype and layout, both APIs, with a
    random region of each plan; then calls numpy rejects, which tessera must reject untouched."""
    n = 0
    for dtype, layout, rank in itertools.product(DTYPES, LAYOUTS, range(5)):
        for _ in range(per_combo):
            a = make_view(rng, random_shape(rng, rank), dtype, layout)
            op, arg, axis = random_family_call(rng, a)
            expected = numpy_family(op, a, arg, axis)
            if expected.nbytes > MAX_OUTPUT_BYTES:
                continue
            want = as_bytes(expected)
            misalign = int(rng.integers(0, 16))
            buf = np.full(misalign + want.size + GUARD, FILL, dtype=np.uint8)
            api = 'oneshot' if n % 2 == 0 else 'plan'
            status = oracle.t.family(op, a, arg, axis, buf.ctypes.data + misalign, want.size, api)
            what = f"{op} {arg} axis {axis}: {oracle.describe(a, (), layout, api)}"
            check_output(oracle, what, status, buf, misalign, want)
            if expected.size:
                start = [int(rng.integers(0, e)) for e in expected.shape]
                extent = [int(rng.integers(1, e - s + 1)) for e, s in zip(expected.shape, start)]
                box = as_bytes(expected[tuple(slice(s, s + e) for s, e in zip(start, extent))])
                buf = np.full(misalign + box.size + GUARD, FILL, dtype=np.uint8)
                status = oracle.t.region(op, a, arg, axis, start, extent, buf.ctypes.data + misalign, box.size)
                check_output(oracle, f"{what}, region {start} + {extent}", status, buf, misalign, box)
            n += 1
    # Calls numpy rejects: a shape that does not broadcast, an axis out of range, a wrong number
    # of counts, a negative count. tessera: TESSERA_INVALID_ARGUMENT, nothing written.
    for dtype in DTYPES[:4]:
        a = make_view(rng, (2, 3), dtype, 'mixed')
        for op, arg, axis in (('broadcast_to', (2, 4), None), ('broadcast_to', (3,), None), ('expand', (4, 1), None),
                              ('repeat', (2,), 2), ('repeat', (2,), -3), ('repeat', (1, 2), 1), ('repeat', (1, -1, 1), 1),
                              ('repeat', (-1,), None)):
            try:
                numpy_family(op, a, arg, axis)
                oracle.record(False, f"{op} {arg} axis {axis}: numpy accepted it")
                continue
            except (ValueError, IndexError):
                pass
            buf = np.full(256, FILL, dtype=np.uint8)
            for api in ('oneshot', 'plan'):
                status = oracle.t.family(op, a, arg, axis, buf.ctypes.data, 200, api)
                oracle.record(status == 1 and (buf == FILL).all() and oracle.t.last_error(),
                              f"{op} {arg} axis {axis} ({api}): status {status}, message '{oracle.t.last_error()}'")
    oracle.family = n


def tile_regions(oracle, rng, count):
    """Random regions of tile plans against numpy.tile's slices."""
    for i in range(count):
        dtype = DTYPES[i % len(DTYPES)]
        a = make_view(rng, random_shape(rng, int(rng.integers(0, 5))), dtype, LAYOUTS[i % len(LAYOUTS)])
        reps = random_reps(rng)
        expected = np.tile(a, reps)
        if not expected.size or expected.nbytes > MAX_OUTPUT_BYTES:
            continue
        start = [int(rng.integers(0, e)) for e in expected.shape]
        extent = [int(rng.integers(1, e - s + 1)) for e, s in zip(expected.shape, start)]
        box = as_bytes(expected[tuple(slice(s, s + e) for s, e in zip(start, extent))])
        buf = np.full(box.size + GUARD, FILL, dtype=np.uint8)
        status = oracle.t.region('tile', a, reps, None, start, extent, buf.ctypes.data, box.size)
        check_output(oracle, f"tile region {start} + {extent}: {oracle.describe(a, reps, 'region', 'plan')}", status,
                     buf, 0, box)


def numpy_accepts_negative_rep(shape, reps):
    """numpy.tile's one divergence from its own rule: for an EMPTY input it skips the repeat
    loop and only reshapes to shape * reps, so a negative rep on an extent-0 axis (product 0) goes
    through. tessera rejects every negative rep (tessera.h: "A negative rep is an error")."""
    n = max(len(shape), len(reps))
    shape = (1,) * (n - len(shape)) + tuple(shape)
    reps = (1,) * (n - len(reps)) + tuple(reps)
    return 0 in shape and all(s * r >= 0 for s, r in zip(shape, reps))


def random_shape(rng, rank):
    return tuple(int(rng.choice([0, 1, 2, 3, 4, 5], p=[0.06, 0.19, 0.25, 0.2, 0.15, 0.15])) for _ in range(rank))


def random_reps(rng):
    length = int(rng.integers(0, 6))
    return tuple(int(rng.choice([0, 1, 2, 3], p=[0.08, 0.32, 0.35, 0.25])) for _ in range(length))


def sweep(oracle, rng, per_combo):
    n = 0
    for dtype, layout, rank in itertools.product(DTYPES, LAYOUTS, range(5)):
        for _ in range(per_combo):
            shape = random_shape(rng, rank)
            while True:
                reps = random_reps(rng)
                out = np.prod(shape, dtype=np.int64) * np.prod(reps, dtype=np.int64) * dtype.itemsize
                if out <= MAX_OUTPUT_BYTES:
                    break
            a = make_view(rng, shape, dtype, layout)
            oracle.compare(a, reps, layout, 'oneshot' if n % 2 == 0 else 'plan', int(rng.integers(0, 16)))
            n += 1


def large(oracle, rng):
    """Outputs of 0.5-4 MiB, past tessera's threshold for running threaded (extents up to 8 and
    reps up to 4 here, so that 1-byte dtypes get there too)."""
    for dtype, layout in itertools.product(DTYPES, LAYOUTS):
        for _ in range(10000):
            shape = tuple(int(x) for x in rng.integers(3, 9, size=4))
            reps = tuple(int(x) for x in rng.integers(2, 5, size=int(rng.integers(4, 6))))
            out = np.prod(shape, dtype=np.int64) * np.prod(reps, dtype=np.int64) * dtype.itemsize
            if (512 << 10) <= out <= MAX_OUTPUT_BYTES:
                break
        else:
            raise AssertionError(f"no large case found for {dtype}")
        a = make_view(rng, shape, dtype, layout)
        for api in ('oneshot', 'plan'):
            oracle.compare(a, reps, layout, api, int(rng.integers(0, 16)))
            oracle.large += 1


def errors(oracle, rng):
    for dtype in DTYPES:
        for layout in LAYOUTS:
            a = make_view(rng, random_shape(rng, int(rng.integers(0, 5))), dtype, layout)
            reps = list(random_reps(rng)) or [1]
            reps[int(rng.integers(0, len(reps)))] = -int(rng.integers(1, 4))
            for api in ('oneshot', 'plan'):
                oracle.reject(a, tuple(reps), 1, 1, api=api)  # negative rep: TESSERA_INVALID_ARGUMENT
        one = random_bytes(rng, 2, dtype)
        # Output count overflows int64 (numpy: "array is too big").
        oracle.reject(one, (INT64_MAX,), 2, 2)
        # The count fits, the byte size does not (itemsize >= 2; bool/int8/uint8/S... of 1 byte fit).
        if dtype.itemsize >= 2:
            oracle.reject(one[:1], (2**62,), 2, 0)
        # A valid output with dst_bytes one short: TESSERA_BUFFER_TOO_SMALL, not computed by numpy.
        a = make_view(rng, (3, 2), dtype, 'mixed')
        nbytes = 3 * 2 * 2 * dtype.itemsize
        for api in ('oneshot', 'plan'):
            oracle.reject(a, (2, 1), 3, 0, dst_bytes=nbytes - 1, numpy_raises=False, api=api)


# ---- The reductions (the gradients of the family) ---------------------------------------------
#
# tessera_tile_backward, tessera_sum_to_shape and tessera_repeat_backward (one-shot, _ex and plans)
# against numpy's own sums: grad.reshape(r0, s0, r1, s1, ...).sum(axis=(0, 2, ...)), a.sum over
# the leading axes and the target's 1s, np.add.reduceat along the repeat axis. Exact comparison,
# bit for bit: integers take random bytes (numpy's sum with dtype=the same type wraps modulo
# 2**bits, as tessera's does); floats take small integers (times 1/8 for float32/64 and complex),
# bounded so that every partial sum in any order is exact in numpy's own float16/float32 sums.

REDUCE_CODES = {  # tessera_dtype of each numpy dtype (bfloat16, 3, has no numpy dtype)
    np.dtype(np.float32): 0, np.dtype(np.float64): 1, np.dtype(np.float16): 2, np.dtype(np.complex64): 4,
    np.dtype(np.complex128): 5, np.dtype(np.int8): 6, np.dtype(np.int16): 7, np.dtype(np.int32): 8,
    np.dtype(np.int64): 9, np.dtype(np.uint8): 10, np.dtype(np.uint16): 11, np.dtype(np.uint32): 12,
    np.dtype(np.uint64): 13}
REDUCE_DTYPES = list(REDUCE_CODES)
REDUCE_OPS = ('tile_backward', 'sum_to_shape', 'repeat_backward')
REDUCE_PATHS = ('reduce.zeros', 'reduce.lanes', 'reduce.strided', 'reduce.interleaved', 'reduce.periodic',
                'reduce.segments')
# The largest |sum| of value units exact in numpy's float sums: float16 integers up to 2048;
# float32 multiples of 1/8 up to 2**24 eighths; float64 (and float32 accumulated in float64 by
# tessera) far beyond the bound of 1000 per value.
EXACT_UNITS = {'e': 2048, 'f': 2**24, 'd': 2**53, 'F': 2**24, 'D': 2**53}


def exact_fill(bound):
    """A make_view fill: integers of random bytes (their sums wrap); floats small integers in
    [-bound, bound] (float16) or eighths of them, so that sums of few enough addends are exact."""
    def fill(rng, count, dtype):
        if dtype.kind in 'iu':
            return random_bytes(rng, count, dtype)
        k = rng.integers(-bound, bound + 1, size=count)
        if dtype.kind == 'c':
            return (k / 8 + 1j * (rng.integers(-bound, bound + 1, size=count) / 8)).astype(dtype)
        return (k if dtype == np.float16 else k / 8).astype(dtype)
    return fill


def unaligned(fill):
    """`fill`, its parent moved to an address that is not a multiple of the itemsize (numpy's
    unaligned arrays; tessera.h asks for no alignment of the gradient)."""
    def moved(rng, count, dtype):
        values = fill(rng, count, dtype)
        shift = int(rng.integers(1, dtype.itemsize)) if dtype.itemsize > 1 else 0
        raw = np.empty(values.nbytes + 16, dtype=np.uint8)
        start = (-raw.ctypes.data) % 16 + shift
        view = raw[start:start + values.nbytes].view(dtype)
        view[...] = values
        return view
    return moved


def value_bound(dtype, addends):
    """The largest |value| (in units) for which `addends` values, and the value accumulated onto,
    sum exactly in any order; 0 if even +-1 values could not (float16 beyond 2047 addends)."""
    if dtype.kind in 'iu':
        return 1
    limit = EXACT_UNITS[dtype.char] // (addends + 1)
    return min(1000, limit)


def numpy_tile_backward(g, in_shape, reps):
    """grad.reshape(r0, s0, r1, s1, ...).sum(axis=(0, 2, ...)), numpy.tile's promotion."""
    d = g.ndim
    s = (1,) * (d - len(in_shape)) + tuple(in_shape)
    r = (1,) * (d - len(reps)) + tuple(reps)
    split = [x for pair in zip(r, s) for x in pair]
    return g.reshape(split).sum(axis=tuple(range(0, 2 * d, 2)), dtype=g.dtype).reshape(in_shape)


def numpy_sum_to_shape(a, target):
    """torch's sum_to_size: the leading axes beyond target's and those where target has 1."""
    lead = a.ndim - len(target)
    axes = tuple(range(lead)) + tuple(lead + j for j, t in enumerate(target) if t == 1)
    return a.sum(axis=axes, dtype=a.dtype).reshape(target)


def numpy_repeat_backward(g, in_shape, counts, axis):
    """The segment sums along the repeat axis (flattened for axis None and for a 0-d input):
    np.add.reduceat at the starts of the non-empty segments, 0 for the empty ones."""
    if axis is None or len(in_shape) == 0:
        g, ax, n = g.reshape(-1), 0, int(np.prod(in_shape, dtype=np.int64))
    else:
        ax = axis % len(in_shape)
        n = in_shape[ax]
    counts = np.array(counts * n if len(counts) == 1 else counts, dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(counts)])[:-1]
    out_shape = list(g.shape)
    out_shape[ax] = n
    out = np.zeros(out_shape, dtype=g.dtype)
    nonempty = np.flatnonzero(counts > 0)
    if nonempty.size and g.size:
        index = [slice(None)] * g.ndim
        index[ax] = nonempty
        out[tuple(index)] = np.add.reduceat(g, starts[nonempty], axis=ax, dtype=g.dtype)
    return out.reshape(in_shape)


def numpy_reduction(op, g, arg):
    if op == 'tile_backward':
        return numpy_tile_backward(g, *arg)
    if op == 'sum_to_shape':
        return numpy_sum_to_shape(g, *arg)
    return numpy_repeat_backward(g, *arg)


def prod(values):
    return math.prod(int(v) for v in values)


def reduction_shapes(op, arg):
    """(the gradient's shape, the largest number of addends per output element) of a call."""
    if op == 'tile_backward':
        in_shape, reps = arg
        d = max(len(in_shape), len(reps))
        s = (1,) * (d - len(in_shape)) + tuple(in_shape)
        r = (1,) * (d - len(reps)) + tuple(reps)
        return tuple(a * b for a, b in zip(s, r)), prod(r)
    if op == 'sum_to_shape':
        shape, target = arg
        lead = len(shape) - len(target)
        return tuple(shape), prod(shape[:lead]) * prod(e for e, t in zip(shape[lead:], target) if t == 1)
    in_shape, counts, axis = arg
    if axis is None or not in_shape:
        n = prod(in_shape)
        return (n * counts[0] if len(counts) == 1 else sum(counts),), max(counts, default=0)
    ax = axis % len(in_shape)
    total = in_shape[ax] * counts[0] if len(counts) == 1 else sum(counts)
    return tuple(total if i == ax else e for i, e in enumerate(in_shape)), max(counts, default=0)


def random_reduction(rng, op, rank):
    """A random valid call of `op` on a gradient of rank `rank` (sum_to_shape) or of an input of
    that rank: (the arguments as Tessera.reduce takes them, the arguments of reduction_shapes)."""
    if op == 'tile_backward':
        arg = (random_shape(rng, rank), random_reps(rng))
        return arg, arg
    if op == 'sum_to_shape':
        shape = random_shape(rng, rank)
        drop = int(rng.integers(0, rank + 1))
        target = tuple(1 if rng.random() < 0.4 else e for e in shape[drop:])
        return (target,), (shape, target)
    in_shape = random_shape(rng, rank)
    if rank == 0:
        axis = [None, 0, -1][int(rng.integers(0, 3))]
    else:
        axis = int(rng.integers(-rank, rank)) if rng.random() < 0.7 else None
    n = prod(in_shape) if axis is None or rank == 0 else in_shape[axis]
    if rng.random() < 0.5 or n > 200:
        counts = (int(rng.integers(0, 5)),)
    else:
        counts = tuple(int(x) for x in rng.integers(0, 5, size=n))
    return (in_shape, counts, axis), (in_shape, counts, axis)


class ReduceStats:
    def __init__(self):
        self.cases = 0
        self.large = 0
        self.accumulated = 0
        self.rejections = 0
        self.paths = {p: 0 for p in REDUCE_PATHS}
        self.unchecked_references = 0


def run_reduction(oracle, rng, op, g, arg, api, accumulate=False, max_threads=0, bound=1, stats=None, label=''):
    """One reduction of `g` through `api` (with `accumulate`: onto random values) compared with
    numpy's, bytes and the fill around the output."""
    t = oracle.t
    expected = numpy_reduction(op, g, arg)
    dtype = g.dtype
    want = as_bytes(expected)
    nbytes = want.size
    misalign = int(rng.integers(0, 16))
    buf = np.full(misalign + nbytes + GUARD, FILL, dtype=np.uint8)
    if accumulate:
        init = exact_fill(bound)(rng, expected.size, dtype).reshape(expected.shape)
        buf[misalign:misalign + nbytes] = as_bytes(init)
        want = as_bytes(np.add(init, expected, dtype=dtype))
    options = None
    if api != 'oneshot':
        options = Options(accumulate=int(accumulate), max_threads=max_threads, nontemporal=int(rng.integers(0, 3)))
    null_strides = g.flags.c_contiguous and rng.random() < 0.5
    problems = []

    def check(plan):
        if t.lib.tessera_plan_output_bytes(plan) != nbytes:
            problems.append(f"tessera_plan_output_bytes {t.lib.tessera_plan_output_bytes(plan)}, numpy {nbytes}")
        status, shape = t.plan_output_shape(plan)
        if status != 0 or shape != expected.shape:
            problems.append(f"tessera_plan_output_shape status {status} shape {shape}, numpy {expected.shape}")
        text = t.lib.tessera_plan_describe(plan).decode()
        path = text.rsplit('kernel: ', 1)[-1].split(' ', 1)[0] if 'kernel: ' in text else '?'
        if path not in REDUCE_PATHS and path != 'reduce.none':
            problems.append(f"tessera_plan_describe names no reduction path: {text!r}")
        elif stats is not None and path in stats.paths:
            stats.paths[path] += 1

    status = t.reduce(op, g, arg, REDUCE_CODES[dtype], buf.ctypes.data + misalign, nbytes, api, options,
                      null_strides, check)
    what = (f"{label}{op} {arg}: gradient dtype {dtype.str}, shape {g.shape}, strides "
            f"{'NULL' if null_strides else g.strides}, api {api}, accumulate {int(accumulate)}, max_threads "
            f"{max_threads}, misalign {misalign}")
    if problems:
        oracle.record(False, f"{what}: {'; '.join(problems)}")
        return
    check_output(oracle, what, status, buf, misalign, want)
    if stats is not None:
        stats.cases += 1
        stats.accumulated += int(accumulate)


def reductions(oracle, rng, per_combo, stats):
    """Random gradients of every numpy dtype tessera sums, every layout, ranks 0-4, each op,
    through the one-shot call, the _ex call (accumulating, some max_threads) and a plan."""
    n = 0
    for dtype, layout, rank, op in itertools.product(REDUCE_DTYPES, LAYOUTS, range(5), REDUCE_OPS):
        for _ in range(per_combo):
            arg, shape_arg = random_reduction(rng, op, rank)
            gshape, addends = reduction_shapes(op, shape_arg)
            bound = value_bound(dtype, addends)
            if prod(gshape) * dtype.itemsize > MAX_OUTPUT_BYTES or bound == 0:
                continue
            fill = exact_fill(bound)
            g = make_view(rng, gshape, dtype, layout, unaligned(fill) if n % 10 == 9 else fill)
            api = ('oneshot', 'ex', 'plan')[n % 3]
            accumulate = api != 'oneshot' and rng.random() < 0.4
            run_reduction(oracle, rng, op, g, arg, api, accumulate, int(rng.integers(0, 4)), bound, stats,
                          f"layout {layout}: ")
            n += 1


def long_reductions(oracle, rng, per_combo, stats):
    """Random calls whose gradient has one long axis (17-300 elements; the others 1-5), mostly the
    last: long contiguous runs and narrow rows (the periodic and interleaved paths) in every layout."""
    for dtype, layout, op in itertools.product(REDUCE_DTYPES, LAYOUTS, REDUCE_OPS):
        for _ in range(per_combo):
            rank = int(rng.integers(1, 4))
            long_axis = rank - 1 if rng.random() < 0.7 else int(rng.integers(0, rank))
            shape = [int(rng.integers(1, 6)) for _ in range(rank)]
            shape[long_axis] = int(rng.integers(17, 301))
            if op == 'tile_backward':
                # The long axis is the gradient's: its extent a rep (narrow rows) or the input's.
                reps = [int(rng.integers(1, 4)) for _ in range(rank)]
                if rng.random() < 0.5:
                    reps[long_axis], shape[long_axis] = shape[long_axis] // 3 + 1, int(rng.integers(1, 16))
                arg = shape_arg = (tuple(shape), tuple(reps))
            elif op == 'sum_to_shape':
                target = tuple(1 if rng.random() < 0.5 else e for e in shape[int(rng.integers(0, rank + 1)):])
                arg, shape_arg = (target,), (tuple(shape), target)
            else:
                axis = long_axis if rng.random() < 0.6 else (int(rng.integers(-rank, rank)) if rng.random() < 0.7 else None)
                n = prod(shape) if axis is None else shape[axis]
                counts = ((int(rng.integers(0, 6)),) if rng.random() < 0.5 or n > 400
                          else tuple(int(x) for x in rng.integers(0, 100 if rng.random() < 0.2 else 5, size=n)))
                arg = shape_arg = (tuple(shape), counts, axis)
            gshape, addends = reduction_shapes(op, shape_arg)
            bound = value_bound(dtype, addends)
            if prod(gshape) * dtype.itemsize > MAX_OUTPUT_BYTES or bound == 0:
                continue
            g = make_view(rng, gshape, dtype, layout, exact_fill(bound))
            api = ('oneshot', 'ex', 'plan')[int(rng.integers(0, 3))]
            run_reduction(oracle, rng, op, g, arg, api, api != 'oneshot' and rng.random() < 0.4, 0, bound, stats,
                          f"long axis, layout {layout}: ")


def path_reductions(oracle, rng, stats):
    """Calls shaped for each executor path (tessera.h's "The reductions"; lib/reduce.hpp) — an
    empty sum (zeros), contiguous rows (lanes), a transposed input (strided), repeat-by-2..4
    (interleaved), long contiguous runs and narrow rows (periodic), per-element counts
    (segments) — for every dtype, contiguous and in a random layout, overwriting and accumulating."""
    calls = [  # (op, the arguments of reduction_shapes)
        ('tile_backward', ((3, 4), (0, 2))),                     # zeros
        ('repeat_backward', ((3, 4), (0,), 0)),                  # zeros
        ('tile_backward', ((3, 0), (2, 2))),                     # nothing to write
        ('sum_to_shape', ((40, 33), (1, 33))),                   # lanes
        ('tile_backward', ((3, 35), (4, 2))),                    # lanes
        ('sum_to_shape', ((24, 9), (24, 1))),                    # strided when transposed
        ('repeat_backward', ((5, 20), (2,), 1)),                 # interleaved
        ('repeat_backward', ((7, 11), (3,), -1)),                # interleaved
        ('repeat_backward', ((31,), (4,), None)),                # interleaved
        ('sum_to_shape', ((6, 300), (6, 1))),                    # periodic: a contiguous run
        ('sum_to_shape', ((1000,), ())),                         # periodic
        ('tile_backward', ((50, 3), (1, 40))),                   # periodic: narrow rows folded
        ('tile_backward', ((4, 5), (2, 4, 14))),                 # periodic: narrow rows folded
        ('repeat_backward', ((4, 6), (0, 1, 2, 3, 4, 5), 1)),    # segments
        ('repeat_backward', ((2, 3), (1, 0, 4, 2, 9, 5), None)),  # segments
    ]
    for dtype in REDUCE_DTYPES:
        for op, shape_arg in calls:
            gshape, addends = reduction_shapes(op, shape_arg)
            arg = shape_arg[1:] if op == 'sum_to_shape' else shape_arg
            bound = value_bound(dtype, addends)
            for layout in ('contiguous', LAYOUTS[int(rng.integers(1, len(LAYOUTS)))]):
                g = make_view(rng, gshape, dtype, layout, exact_fill(bound))
                for api, accumulate in (('oneshot', False), ('plan', False), ('plan', True)):
                    run_reduction(oracle, rng, op, g, arg, api, accumulate, 0, bound, stats, f"layout {layout}: ")


def large_reductions(oracle, rng, stats):
    """Gradients of 0.5-2 MiB, past tessera's threshold for running threaded (over the output or
    over the replicas), every dtype and op, through _ex (max_threads 0 or 2) and plans."""
    lo, hi = 512 << 10, 2 << 20
    for dtype, op in itertools.product(REDUCE_DTYPES, REDUCE_OPS):
        for layout in (LAYOUTS[int(rng.integers(0, 4))], ('broadcast', 'mixed')[int(rng.integers(0, 2))]):
            rank_hi = 2 if layout == 'mixed' else 4  # stepped axes grow the parent 3x each
            for _ in range(100000):
                rank = int(rng.integers(1, rank_hi + 1))
                if op == 'tile_backward':
                    in_shape = tuple(int(x) for x in rng.integers(1, 300 if rank == 1 else 40, size=rank))
                    reps = tuple(int(x) for x in rng.integers(1, 64 if rank <= 2 else 8, size=int(rng.integers(1, 4))))
                    arg = shape_arg = (in_shape, reps)
                elif op == 'sum_to_shape':
                    shape = tuple(int(x) for x in rng.integers(2, 4096 if rank == 1 else (1024 if rank == 2 else 40),
                                                               size=rank))
                    drop = int(rng.integers(0, rank + 1))
                    target = tuple(1 if rng.random() < 0.5 else e for e in shape[drop:])
                    arg, shape_arg = (target,), (shape, target)
                else:
                    in_shape = tuple(int(x) for x in rng.integers(2, 1024 if rank <= 2 else 40, size=rank))
                    axis = int(rng.integers(-rank, rank)) if rng.random() < 0.8 else None
                    n = prod(in_shape) if axis is None else in_shape[axis]
                    counts = ((int(rng.integers(1, 9)),) if rng.random() < 0.6 or n > 5000
                              else tuple(int(x) for x in rng.integers(0, 6, size=n)))
                    arg = shape_arg = (in_shape, counts, axis)
                gshape, addends = reduction_shapes(op, shape_arg)
                bound = value_bound(dtype, addends)
                if lo <= prod(gshape) * dtype.itemsize <= hi and bound > 0:
                    break
            else:
                raise AssertionError(f"no large {op} case found for {dtype}")
            g = make_view(rng, gshape, dtype, layout, exact_fill(bound))
            run_reduction(oracle, rng, op, g, arg, 'ex', rng.random() < 0.3, (0, 2)[int(rng.integers(0, 2))], bound,
                          stats, f"large, layout {layout}: ")
            run_reduction(oracle, rng, op, g, arg, 'plan', False, 0, bound, stats, f"large, layout {layout}: ")
            stats.large += 2
    # Few outputs of many addends each: split over the replicas (lanes and periodic), and a
    # repeat-by-2 gradient (interleaved) and per-element counts split over the output.
    for dtype in REDUCE_DTYPES:
        n = (600 << 10) // dtype.itemsize
        for op, shape_arg in (('sum_to_shape', ((n // 256, 256), (1, 256))),
                              ('sum_to_shape', ((4, n // 4), (4, 1))),
                              ('sum_to_shape', ((n,), ())),
                              ('tile_backward', ((2, 5), (n // 80, 8))),
                              ('repeat_backward', ((n // 2,), (2,), 0)),
                              ('repeat_backward', ((n // 6, 2), (0, 5, 1, 6) * (n // 24), 0))):
            gshape, addends = reduction_shapes(op, shape_arg)
            bound = value_bound(dtype, addends)
            if bound == 0:
                continue  # float16 sums of more than 2047 addends are not exact in numpy
            arg = shape_arg[1:] if op == 'sum_to_shape' else shape_arg
            g = make_view(rng, gshape, dtype, LAYOUTS[int(rng.integers(0, 3))], exact_fill(bound))
            run_reduction(oracle, rng, op, g, arg, ('ex', 'plan')[int(rng.integers(0, 2))], rng.random() < 0.3, 0,
                          bound, stats, "large, few outputs: ")
            stats.large += 1


def torch_module():
    """Debian's python3-torch, whose autograd rejects gradients of the wrong shape; None if absent."""
    try:
        import torch
        return torch
    except ImportError:
        return None


def raises(fn):
    try:
        fn()
    except (ValueError, IndexError, TypeError, RuntimeError):
        return True
    return False


def reduction_rejections(oracle, rng, stats, torch):
    """Calls numpy or torch rejects: tessera's TESSERA_INVALID_ARGUMENT with a message and the
    output untouched, through every API. Then values with no numpy counterpart: dtype codes that
    are no tessera_dtype, accumulate out of range, a buffer one byte short (TESSERA_BUFFER_TOO_SMALL),
    a region of a reduction plan."""
    t = oracle.t
    zeros = np.zeros

    def numpy_rejects(fn):
        return lambda: raises(fn)

    def torch_rejects(forward, in_shape, gshape):
        """torch.autograd.grad of forward(x) with a gradient of shape gshape raises (None: no torch)."""
        def check():
            if torch is None:
                return None
            x = torch.zeros(in_shape, dtype=torch.float64, requires_grad=True)
            return raises(lambda: torch.autograd.grad(forward(x), x, torch.zeros(gshape, dtype=torch.float64)))
        return check

    cases = [
        # tile_backward: a gradient numpy cannot reshape to (r0, s0, r1, s1) / torch refuses; a
        # negative rep or extent (numpy.tile refuses).
        ('tile_backward', (2, 5), ((2, 3), (2,)),
         numpy_rejects(lambda: numpy_tile_backward(zeros((2, 5)), (2, 3), (2,)))),
        ('tile_backward', (3, 4), ((2, 3), (2, 1)), torch_rejects(lambda x: x.tile((2, 1)), (2, 3), (3, 4))),
        ('tile_backward', (24,), ((2, 3), (2, 2)), torch_rejects(lambda x: x.tile((2, 2)), (2, 3), (24,))),
        ('tile_backward', (4, 6, 1), ((2, 3), (2, 2)), torch_rejects(lambda x: x.tile((2, 2)), (2, 3), (4, 6, 1))),
        ('tile_backward', (4, 3), ((2, 3), (2, -1)), numpy_rejects(lambda: np.tile(zeros((2, 3)), (2, -1)))),
        ('tile_backward', (4, 3), ((-2, 3), (2, 1)), numpy_rejects(lambda: np.tile(zeros((-2, 3)), (2, 1)))),
        # sum_to_shape: a target the input does not broadcast from (numpy.broadcast_to refuses the
        # forward; torch's sum_to_size refuses too).
        ('sum_to_shape', (2, 3), ((2, 2),), numpy_rejects(lambda: np.broadcast_to(zeros((2, 2)), (2, 3)))),
        ('sum_to_shape', (3,), ((1, 3),), numpy_rejects(lambda: np.broadcast_to(zeros((1, 3)), (3,)))),
        ('sum_to_shape', (2, 3), ((2,),), numpy_rejects(lambda: np.broadcast_to(zeros((2,)), (2, 3)))),
        ('sum_to_shape', (4, 1), ((4, 2),), numpy_rejects(lambda: np.broadcast_to(zeros((4, 2)), (4, 1)))),
        ('sum_to_shape', (2, 3), ((3, 3),),
         (lambda: None if torch is None else raises(lambda: torch.zeros((2, 3)).sum_to_size((3, 3))))),
        ('sum_to_shape', (2, 3), ((-1, 3),), numpy_rejects(lambda: np.broadcast_to(zeros((2, 3)), (-1, 3)))),
        # repeat_backward: numpy.repeat's rejections, and gradients torch refuses.
        ('repeat_backward', (2, 6), ((2, 3), (2,), 2), numpy_rejects(lambda: np.repeat(zeros((2, 3)), 2, axis=2))),
        ('repeat_backward', (4, 3), ((2, 3), (2,), -3), numpy_rejects(lambda: np.repeat(zeros((2, 3)), 2, axis=-3))),
        ('repeat_backward', (2, 3), ((2, 3), (1, 2), 1),
         numpy_rejects(lambda: np.repeat(zeros((2, 3)), (1, 2), axis=1))),
        ('repeat_backward', (2, 1), ((2, 3), (1, -1, 1), 1),
         numpy_rejects(lambda: np.repeat(zeros((2, 3)), (1, -1, 1), axis=1))),
        ('repeat_backward', (0,), ((2, 3), (-1,), None), numpy_rejects(lambda: np.repeat(zeros((2, 3)), -1))),
        ('repeat_backward', (2, 5), ((2, 3), (2,), 1),
         torch_rejects(lambda x: x.repeat_interleave(2, dim=1), (2, 3), (2, 5))),
        ('repeat_backward', (4, 3), ((2, 3), (2,), 1),
         torch_rejects(lambda x: x.repeat_interleave(2, dim=1), (2, 3), (4, 3))),
        ('repeat_backward', (12, 1), ((2, 3), (2,), None),
         torch_rejects(lambda x: x.repeat_interleave(2), (2, 3), (12, 1))),
    ]
    for op, gshape, arg, reference in cases:
        rejected = reference()
        if rejected is None:
            stats.unchecked_references += 1
        elif not rejected:
            oracle.record(False, f"{op} {arg} of a {gshape} gradient: numpy/torch accepted it (not a rejection)")
            continue
        for dtype in (np.dtype(np.float32), np.dtype(np.int16), np.dtype(np.complex128)):
            what = f"{op} {arg} of a {gshape} {dtype} gradient"
            g = make_view(rng, gshape, dtype, 'mixed')
            for api in ('oneshot', 'ex', 'plan'):
                buf = np.full(256, FILL, dtype=np.uint8)
                status = t.reduce(op, g, arg, REDUCE_CODES[dtype], buf.ctypes.data, 200, api,
                                  None if api == 'oneshot' else Options(accumulate=1))
                message = t.last_error()
                oracle.record(status == 1 and (buf == FILL).all() and message != '',
                              f"{what} ({api}): status {status}, untouched {bool((buf == FILL).all())}, "
                              f"message '{message}'")
                stats.rejections += 1
    g = make_view(rng, (4, 6), np.dtype(np.float32), 'mixed', exact_fill(10))
    valid = [('tile_backward', ((2, 3), (2, 2)), 24), ('sum_to_shape', ((1, 6),), 24),
             ('repeat_backward', ((4, 3), (2,), 1), 48)]
    for code in (-1, 14, 99, 2**31 - 1):
        if t.lib.tessera_dtype_itemsize(code) != 0 or t.lib.tessera_dtype_name(code) != b'':
            oracle.record(False, f"tessera_dtype_itemsize/name({code}) are not 0 and ''")
    for op, arg, nbytes in valid:
        for code in (-1, 14, 99, 2**31 - 1):
            for api in ('oneshot', 'ex', 'plan'):
                buf = np.full(256, FILL, dtype=np.uint8)
                status = t.reduce(op, g, arg, code, buf.ctypes.data, 200, api, None if api == 'oneshot' else Options())
                message = t.last_error()
                oracle.record(status == 1 and (buf == FILL).all() and str(code) in message,
                              f"{op} {arg} with dtype {code} ({api}): status {status}, message '{message}'")
                stats.rejections += 1
        for accumulate in (2, -1):
            for api in ('ex', 'plan'):
                buf = np.full(256, FILL, dtype=np.uint8)
                status = t.reduce(op, g, arg, 0, buf.ctypes.data, 200, api, Options(accumulate=accumulate))
                message = t.last_error()
                oracle.record(status == 1 and (buf == FILL).all() and 'accumulate' in message,
                              f"{op} {arg} with accumulate {accumulate} ({api}): status {status}, message '{message}'")
                stats.rejections += 1
        # A 0.1 caller's options (sizeof 24: its padding, reserved0 now, holds garbage): accumulate
        # is not read, 0; the result overwrites.
        expected = as_bytes(numpy_reduction(op, g, arg))
        for api in ('ex', 'plan'):
            buf = np.full(nbytes + GUARD, FILL, dtype=np.uint8)
            old = Options(reserved0=0x5A5A5A5A, accumulate=1)
            old.sizeof_options = Options.reserved0.offset + 4
            status = t.reduce(op, g, arg, 0, buf.ctypes.data, nbytes, api, old)
            check_output(oracle, f"{op} {arg} with a 0.1 caller's options ({api})", status, buf, 0, expected)
        for api in ('oneshot', 'ex', 'plan'):
            buf = np.full(nbytes + GUARD, FILL, dtype=np.uint8)
            status = t.reduce(op, g, arg, 0, buf.ctypes.data, nbytes - 1, api, None if api == 'oneshot' else Options())
            oracle.record(status == 3 and (buf == FILL).all(),
                          f"{op} {arg} into {nbytes - 1} of its {nbytes} bytes ({api}): status {status}")
            stats.rejections += 1
        # A reduction plan has no regions: TESSERA_INVALID_ARGUMENT, nothing written.
        region = np.full(nbytes + GUARD, FILL, dtype=np.uint8)
        got = []

        def try_region(plan):
            got.append(t.lib.tessera_plan_execute_region(plan, g.__array_interface__['data'][0], t._list([0, 0]),
                                                         t._list([1, 1]), region.ctypes.data, nbytes))
        out = np.full(nbytes, FILL, dtype=np.uint8)
        t.reduce(op, g, arg, 0, out.ctypes.data, nbytes, 'plan', None, check=try_region)
        oracle.record(got == [1] and (region == FILL).all(),
                      f"{op} {arg}: tessera_plan_execute_region of a reduction plan returned {got}")
        stats.rejections += 1


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--lib', default=str(REPO / 'build/tests/lib/libtessera.so.0'))
    parser.add_argument('--seed', type=int, default=20240611)
    parser.add_argument('--per-combo', type=int, default=40, help='random cases per (dtype, layout, rank)')
    args = parser.parse_args()

    tessera = Tessera(args.lib)
    print(f"numpy_oracle: numpy {np.__version__}, tessera {tessera.lib.tessera_version().decode()} "
          f"({args.lib}), target {tessera.lib.tessera_active_target().decode()}, seed {args.seed}")
    oracle = Oracle(tessera)
    rng = np.random.default_rng(args.seed)
    sweep(oracle, rng, args.per_combo)
    large(oracle, rng)
    errors(oracle, rng)
    family(oracle, rng, max(1, args.per_combo // 2))
    tile_regions(oracle, rng, 2000)
    t0 = time.monotonic()
    stats = ReduceStats()
    torch = torch_module()
    reductions(oracle, rng, max(1, args.per_combo // 4), stats)
    long_reductions(oracle, rng, max(1, args.per_combo // 10), stats)
    path_reductions(oracle, rng, stats)
    large_reductions(oracle, rng, stats)
    reduction_rejections(oracle, rng, stats, torch)
    unreached = [p for p, n in stats.paths.items() if n == 0]
    oracle.record(not unreached, f"reduction paths no plan took: {unreached}")
    print(f"numpy_oracle: broadcast_to/expand/repeat: {oracle.family} random cases (each with a region), "
          f"rejections; 2000 random tile regions")
    print(f"numpy_oracle: {len(DTYPES)} dtypes x {len(LAYOUTS)} layouts x ranks 0-4 x {args.per_combo} random "
          f"cases, {oracle.large} outputs of 0.5-4 MiB, error cases")
    if oracle.negative_rep_divergences:
        print(f"numpy_oracle: {oracle.negative_rep_divergences} negative-rep cases on an empty input that numpy.tile "
              f"accepts and tessera rejects (status 1), as tessera.h documents")
    print(f"numpy_oracle: reductions: {stats.cases} calls ({len(REDUCE_DTYPES)} dtypes x {len(LAYOUTS)} layouts x "
          f"ranks 0-4 x 3 ops, with a long axis, the paths' shapes, {stats.large} gradients of 0.5-2.4 MiB; {stats.accumulated} "
          f"accumulating), {stats.rejections} rejections"
          + (f" ({stats.unchecked_references} without torch's verdict: no torch)" if stats.unchecked_references else "")
          + f", {time.monotonic() - t0:.1f} s; plans per path: "
          + ", ".join(f"{p} {n}" for p, n in stats.paths.items()))
    print(f"{oracle.passed} passed, {oracle.failed} failed")
    return 1 if oracle.failed else 0


if __name__ == '__main__':
    sys.exit(main())
