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

Usage: /usr/bin/python3 tests/oracle/numpy_oracle.py [--lib build/tests/lib/libtessera.so.0] [--seed N]
Prints "N passed, M failed"; exits 1 if anything failed.
"""
import argparse
import ctypes
import itertools
import pathlib
import sys

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


def random_bytes(rng, count, dtype):
    """`count` elements of `dtype` with random bytes (valid 0/1 for bool)."""
    if dtype == np.bool_:
        return rng.integers(0, 2, size=count).astype(np.bool_)
    return rng.integers(0, 256, size=count * dtype.itemsize, dtype=np.uint8).view(dtype)


def make_view(rng, shape, dtype, layout):
    """A view with exactly `shape` whose strides follow `layout`, into a fresh random parent."""
    ndim = len(shape)
    if layout == 'broadcast':
        # Broadcast a smaller array: leading axes dropped, others of extent 1 -> stride 0.
        drop = int(rng.integers(0, ndim + 1))
        small = tuple(1 if rng.random() < 0.5 else s for s in shape[drop:])
        inner = LAYOUTS[int(rng.integers(0, 4))]  # contiguous, transposed, reversed or stepped
        return np.broadcast_to(make_view(rng, small, dtype, inner), shape)
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
    parent = random_bytes(rng, int(np.prod(stored, dtype=np.int64)), dtype).reshape(stored)
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
    print(f"numpy_oracle: broadcast_to/expand/repeat: {oracle.family} random cases (each with a region), "
          f"rejections; 2000 random tile regions")
    print(f"numpy_oracle: {len(DTYPES)} dtypes x {len(LAYOUTS)} layouts x ranks 0-4 x {args.per_combo} random "
          f"cases, {oracle.large} outputs of 0.5-4 MiB, error cases")
    if oracle.negative_rep_divergences:
        print(f"numpy_oracle: {oracle.negative_rep_divergences} negative-rep cases on an empty input that numpy.tile "
              f"accepts and tessera rejects (status 1), as tessera.h documents")
    print(f"{oracle.passed} passed, {oracle.failed} failed")
    return 1 if oracle.failed else 0


if __name__ == '__main__':
    sys.exit(main())
