"""tessera.dask: tile, broadcast_to and repeat as Dask arrays whose chunks the region API makes.

Against numpy.tile / broadcast_to / repeat for numpy and Dask inputs in many chunkings (input and
output), dtypes and edge cases; the graph's size (one task per output chunk, whatever the reps and
the input's chunking) and each task's dependencies (exactly the input chunks its region reads,
computed here independently by tiling / broadcasting / repeating an array of chunk numbers); the
numpy input in the graph once; bad arguments failing when the graph is built, with tessera's error.

The tests marked `cluster` (about 15 s) start a dask.distributed LocalCluster of 2 worker processes on
the loopback interface: results, a worker killed mid-computation, and an output four times a worker's
memory limit written to Zarr, each worker's peak memory measured.
"""
import os
import shutil
import signal
import threading
import time

import numpy as np
import pytest

import dask
import dask.array as da
import distributed  # noqa: F401 - the cluster tests' (imported here: missing, the module fails)
import torch
import zarr  # noqa: F401 - the out-of-core test writes a Zarr store
from dask.array.utils import assert_eq
from dask.core import get_dependencies

import tessera
import tessera.dask as td

from conftest import BUILD_PYTHONPATH, AxisError

SYNC = {"scheduler": "threads", "num_workers": 2}


def test_the_module_is_the_built_one():
    assert os.path.dirname(td.__file__) == os.path.join(str(BUILD_PYTHONPATH), "tessera")
    assert tessera.dask is td


# --- results against numpy ------------------------------------------------------------------------

def as_dask(x, chunks):
    return da.from_array(x, chunks=chunks)


TILE_CASES = [  # (shape, reps, output chunks, input chunks)
    ((5, 7), (3, 4), (4, 5), (2, 3)),
    ((5, 7), (2, 1, 3), (1, 3, 2), (3, 7)),
    ((5, 7), (1,), (5, 7), (5, 7)),
    ((5, 7), (7, 5), (11, 13), (1, 1)),
    ((3,), (4, 2), (3, 5), 2),
    ((4, 1, 3), (2, 5, 1), (3, 2, 2), (3, 1, 2)),
    ((6,), 10, 7, 4),
    ((2, 3), (0, 2), (1, 2), 1),
    ((0, 3), (2, 2), 2, 1),
]


@pytest.mark.parametrize("shape, reps, chunks, in_chunks", TILE_CASES)
def test_tile_equals_numpy(shape, reps, chunks, in_chunks):
    x = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    want = np.tile(x, reps)
    for src in (x, as_dask(x, in_chunks)):
        y = td.tile(src, reps, chunks=chunks)
        assert y.shape == want.shape and y.dtype == want.dtype
        y.__dask_graph__().validate()
        got = y.compute(**SYNC)
        assert got.shape == want.shape and (got == want).all()


BROADCAST_CASES = [  # (shape, target, output chunks, input chunks)
    ((5, 7), (3, 5, 7), (2, 2, 3), (2, 3)),
    ((1, 7), (4, 5, 7), (2, 3, 2), (1, 3)),
    ((5, 1), (5, 6), (3, 4), (2, 1)),
    ((), (3, 4), 2, ()),
    ((1,), (9,), 4, 1),
    ((2, 1), (0, 2, 3), 1, 1),
]


@pytest.mark.parametrize("shape, target, chunks, in_chunks", BROADCAST_CASES)
def test_broadcast_to_equals_numpy(shape, target, chunks, in_chunks):
    x = (np.arange(int(np.prod(shape)), dtype=np.float64) + 0.5).reshape(shape)
    want = np.broadcast_to(x, target)
    for src in (x, as_dask(x, in_chunks)):
        y = td.broadcast_to(src, target, chunks=chunks)
        y.__dask_graph__().validate()
        got = y.compute(**SYNC)
        assert got.shape == want.shape and (got == want).all()
        assert got.flags.writeable  # a new array, not a view


REPEAT_CASES = [  # (shape, repeats, axis, output chunks, input chunks)
    ((5, 7), 3, None, 7, (2, 3)),
    ((5, 7), 3, 1, (2, 4), (5, 2)),
    ((5, 7), [0, 1, 2, 0, 3, 1, 1], 1, (3, 5), (2, 3)),
    ((5, 7), [2, 0, 0, 1, 4], 0, (3, 2), 2),
    ((5, 7), [2, 0, 0, 1, 4], -2, (1, 7), 2),
    ((5, 7), 2, 0, (4, 3), (3, 3)),
    ((5, 7), list(np.arange(35) % 3), None, 6, (2, 4)),
    ((4,), [5], 0, 3, 3),
    ((3, 2), 0, 1, 2, 1),
    ((), 4, None, 3, ()),
]


@pytest.mark.parametrize("shape, repeats, axis, chunks, in_chunks", REPEAT_CASES)
def test_repeat_equals_numpy(shape, repeats, axis, chunks, in_chunks):
    x = np.arange(int(np.prod(shape)), dtype=np.int16).reshape(shape)
    want = np.repeat(x, repeats, axis=axis)
    for src in (x, as_dask(x, in_chunks)):
        y = td.repeat(src, repeats, axis=axis, chunks=chunks)
        y.__dask_graph__().validate()
        got = y.compute(**SYNC)
        assert got.shape == want.shape and (got == want).all()


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint16, np.float16, np.float32, np.complex128,
                                   np.dtype("S3"), np.dtype([("a", "<i4"), ("b", "u1")]), np.dtype("V5")])
def test_every_dtype_and_a_strided_input(dtype):
    rng = np.random.default_rng(1)
    raw = rng.integers(0, 256, size=(9, 8 * np.dtype(dtype).itemsize), dtype=np.uint8)
    x = raw.view(dtype)[::2, ::-1]  # strided and reversed, read in place
    for src in (x, as_dask(np.ascontiguousarray(x), (2, 3))):
        for got, want in [(td.tile(src, (2, 3), chunks=(3, 7)), np.tile(x, (2, 3))),
                          (td.broadcast_to(src[:1], (4,) + x.shape, chunks=3), np.broadcast_to(x[:1], (4,) + x.shape)),
                          (td.repeat(src, 3, axis=1, chunks=(2, 5)), np.repeat(x, 3, axis=1))]:
            r = got.compute(**SYNC)
            assert r.dtype == want.dtype and r.tobytes() == np.ascontiguousarray(want).tobytes()


def test_torch_tensor_and_lists_as_input():
    t = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    assert (td.tile(t, (2, 2), chunks=3).compute(**SYNC) == np.tile(t.numpy(), (2, 2))).all()
    assert (td.repeat([[1, 2], [3, 4]], [1, 2], axis=0).compute(**SYNC) == np.repeat([[1, 2], [3, 4]], [1, 2], 0)).all()


def test_chunks_auto_bytes_and_explicit():
    x = np.arange(1000, dtype=np.float64).reshape(10, 100)
    y = td.tile(x, (200, 3))  # auto: Dask's array.chunk-size
    with dask.config.set({"array.chunk-size": "1 MiB"}):
        small = td.tile(x, (200, 3))
    assert small.npartitions > y.npartitions >= 1
    assert max(small.chunks[0]) * max(small.chunks[1]) * 8 <= 1 << 20
    z = td.tile(x, (200, 3), chunks="256 KiB")
    assert max(z.chunks[0]) * max(z.chunks[1]) * 8 <= 256 << 10
    w = td.tile(x, (200, 3), chunks=((1000, 500, 500), (300,)))
    assert w.chunks == ((1000, 500, 500), (300,))
    for arr in (small, z, w):
        assert (arr[::97, ::7].compute(**SYNC) == np.tile(x, (200, 3))[::97, ::7]).all()


def test_a_graph_of_lazy_dask_input_is_not_computed_on_the_client():
    calls = []

    def source(block, block_info=None):
        calls.append(block_info[None]["chunk-location"])
        return block + 1

    x = da.zeros((6, 6), chunks=3, dtype=np.int64).map_blocks(source, dtype=np.int64)
    y = td.tile(x, (2, 2), chunks=4)
    assert calls == []  # building the graph computed nothing
    assert (y.compute(**SYNC) == 1).all() and len(calls) == 4


# --- the graph --------------------------------------------------------------------------------------

def layer_tasks(y):
    return dict(y.dask.layers[y.name])


def test_graph_is_one_task_per_output_chunk_whatever_the_reps():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    for reps, chunks in [((10, 10), 5), ((1000, 2000), (1500, 4000)), ((7, 1, 1), 2)]:
        y = td.tile(x, reps, chunks=chunks)
        n_chunks = int(np.prod(y.numblocks))
        graph = dict(y.__dask_graph__())
        assert len(graph) == n_chunks + 1  # the chunks and x's key
        held = [v for v in graph.values() if isinstance(v, np.ndarray)]
        assert len(held) == 1 and held[0] is x  # x is in the graph once, not embedded in the tasks
        assert all(not any(a is x for a in task[1:]) for k, task in graph.items() if k[0] == y.name)
    # A Dask input of 4 chunks: dask's own tile makes prod(reps) times its chunks (then a rechunk
    # to reach the output chunks asked for); tessera's graph is the output's 4 chunks and the input.
    xd = da.from_array(x, chunks=2)
    theirs = da.tile(xd, (40, 40)).rechunk((60, 80))
    ours = td.tile(xd, (40, 40), chunks=(60, 80))
    assert len(layer_tasks(ours)) == 4 and len(dict(ours.__dask_graph__())) == 4 + xd.npartitions == 8
    assert len(dict(theirs.__dask_graph__())) > 1000


def test_repeat_counts_are_in_the_graph_once():
    x = np.arange(1000, dtype=np.int8)
    counts = np.arange(1000) % 5
    y = td.repeat(x, counts, chunks=100)
    graph = dict(y.__dask_graph__())
    assert len(graph) == y.npartitions + 2
    assert sum(isinstance(v, np.ndarray) and v.size == 1000 and v.dtype == np.int64 for v in graph.values()) == 1
    assert (y.compute(**SYNC) == np.repeat(x, counts)).all()
    # from a Dask input, each task carries the counts of its own source elements only
    xd = da.from_array(x, chunks=300)
    yd = td.repeat(xd, counts, chunks=100)
    assert len(layer_tasks(yd)) == yd.npartitions
    assert (yd.compute(**SYNC) == np.repeat(x, counts)).all()


def chunk_ids(x):
    """An array of x's shape holding, at each element, the number of the chunk that holds it."""
    ids = np.empty(x.shape, dtype=np.int64)
    for n, idx in enumerate(np.ndindex(*x.numblocks)):
        sl = tuple(slice(sum(c[:k]), sum(c[:k + 1])) for c, k in zip(x.chunks, idx))
        ids[sl] = n
    return ids


def deps_of(y, idx, x):
    keys = get_dependencies(dict(y.__dask_graph__()), (y.name,) + idx)
    flat = {k: n for n, k in enumerate(np.ndindex(*x.numblocks))}
    assert all(k[0] == x.name for k in keys)
    return {flat[tuple(k[1:])] for k in keys}


@pytest.mark.parametrize("op", ["tile", "broadcast_to", "repeat", "repeat_counts"])
def test_each_task_depends_only_on_the_input_chunks_its_region_reads(op):
    shape = (7, 9) if op != "broadcast_to" else (1, 9)
    x = da.from_array(np.arange(int(np.prod(shape))).reshape(shape), chunks=(3, 2))
    ids = chunk_ids(x)
    if op == "tile":
        y, full = td.tile(x, (3, 2), chunks=(4, 5)), np.tile(ids, (3, 2))
    elif op == "broadcast_to":
        y, full = td.broadcast_to(x, (5, 6, 9), chunks=(2, 4, 4)), np.broadcast_to(ids, (5, 6, 9))
    elif op == "repeat":
        y, full = td.repeat(x, 3, axis=1, chunks=(5, 4)), np.repeat(ids, 3, axis=1)
    else:
        counts = [0, 2, 1, 0, 5, 1, 1, 0, 3]
        y, full = td.repeat(x, counts, axis=1, chunks=(5, 4)), np.repeat(ids, counts, axis=1)
    for idx in np.ndindex(*y.numblocks):
        region = tuple(slice(sum(c[:k]), sum(c[:k + 1])) for c, k in zip(y.chunks, idx))
        assert deps_of(y, idx, x) == set(np.unique(full[region]).tolist()), idx


def test_tasks_use_the_region_api_serially(monkeypatch):
    seen = []
    original = tessera.Plan.execute_region

    def spy(self, A, start, extent, out=None):
        seen.append((self.operation, tuple(start), tuple(extent), threading.current_thread().name))
        return original(self, A, start, extent, out)

    monkeypatch.setattr(tessera.Plan, "execute_region", spy)
    x = np.arange(20, dtype=np.int64).reshape(4, 5)
    y = td.tile(x, (50, 40), chunks=(100, 70))
    assert (y.compute(**SYNC) == np.tile(x, (50, 40))).all()
    assert len(seen) == y.npartitions and {s[0] for s in seen} == {"tile"}
    starts = {s[1] for s in seen}
    assert starts == {(i, j) for i in range(0, 200, 100) for j in range(0, 200, 70)}


def test_large_chunks_come_from_tesseras_allocator():
    x = np.arange(20, dtype=np.float64).reshape(4, 5)
    y = td.tile(x, (2000, 1000), chunks=(2000, 2500))  # 38 MiB chunks
    # The chunk as its task makes it and a worker holds it (compute() of one block may copy it while
    # finalizing: Dask 2026 concatenates even a single chunk).
    block = dask.get(dict(y.__dask_graph__()), (y.name, 1, 1))
    assert block.flags.c_contiguous and block.flags.writeable and block.flags.owndata is False
    assert "tessera.output" in repr(block.base)  # huge-page blocks, kept for reuse when freed
    assert (block == np.tile(x, (1000, 1000))[:2000, :2500]).all()


# --- errors: on the client, when the graph is built --------------------------------------------------

@pytest.mark.parametrize("call, error, match", [
    (lambda x: td.tile(x, (2, -1)), ValueError, "-1"),
    (lambda x: td.tile(x, (2, 1.5)), TypeError, "1.5"),
    (lambda x: td.broadcast_to(x, (3, 4)), ValueError, r"shape\[0\] = 3"),
    (lambda x: td.repeat(x, [1, 2], axis=1), ValueError, "2"),
    (lambda x: td.repeat(x, -3, axis=0), ValueError, "-3"),
    (lambda x: td.repeat(x, 2, axis=2), AxisError, "2"),
    (lambda x: td.tile(x, (2, 2), chunks=((1, 1), (10,))), ValueError, "chunks"),
])
def test_bad_arguments_fail_when_the_graph_is_built(call, error, match):
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    for src in (x, da.from_array(x, chunks=1)):
        with pytest.raises(error, match=match):
            call(src)


def test_object_dtype_and_unknown_chunks_are_errors():
    with pytest.raises(TypeError, match="object"):
        td.tile(np.array([object()]), 2)
    x = da.from_array(np.arange(10), chunks=3)
    with pytest.raises(ValueError, match="unknown chunk sizes"):
        td.tile(x[x > 3], 2)


# --- every graph valid, against numpy: a sweep over the class ----------------------------------------

def check_graph(y, want):
    """y's graph passes Dask's own checks (HighLevelGraph.validate(), which assert_eq runs too) and y
    equals `want` (numpy's) in shape, dtype and values, chunk by chunk."""
    y.__dask_graph__().validate()
    assert y.dtype == want.dtype, (y.dtype, want.dtype)
    assert_eq(y, want, scheduler="sync")
    got = y.compute(scheduler="sync")
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == np.ascontiguousarray(want).tobytes()


CHUNK_FORMS = ["auto", 2, -1, "1 KiB", "explicit", "per-axis"]


def chunks_of(form, shape):
    """One `chunks` argument of each form for an output of `shape`."""
    if form == "explicit":  # tuples of sizes, uneven
        return tuple(tuple(c) for c in (([n] if n < 3 else [1, n - 1]) for n in shape))
    if form == "per-axis":  # an int or -1 per axis
        return tuple(-1 if i % 2 else 3 for i in range(len(shape)))
    return form


def inputs_of(x):
    """x as numpy and as Dask arrays in several chunkings (one chunk, one element per chunk, uneven)."""
    yield x
    yield da.from_array(x, chunks=-1)
    if x.size:
        yield da.from_array(x, chunks=1)
    if x.ndim:
        yield da.from_array(x, chunks=tuple((max(n - 1, 1), 1) if n > 1 else (n,) for n in x.shape))


SWEEP = [  # (x's shape, operation, argument, axis): empty outputs, zero-size inputs, 0-d inputs
    ((2, 3), "tile", (2, 2), None),
    ((2, 3), "tile", (0, 2), None),           # a zero rep: an empty output
    ((2, 3), "tile", (2, 1, 0), None),
    ((0, 3), "tile", (2, 2), None),           # a zero-size input
    ((), "tile", (3, 2), None),               # a 0-d input
    ((), "tile", 0, None),
    ((1, 3), "broadcast_to", (2, 2, 3), None),
    ((1, 3), "broadcast_to", (0, 4, 3), None),  # an empty axis
    ((1, 0), "broadcast_to", (5, 0), None),
    ((), "broadcast_to", (3, 2), None),
    ((), "broadcast_to", (), None),
    ((2, 3), "repeat", 2, None),
    ((2, 3), "repeat", [1, 0, 2], 1),
    ((2, 3), "repeat", 0, 1),                 # every count zero
    ((2, 3), "repeat", [0, 0], 0),
    ((2, 3), "repeat", [0, 0, 0, 0, 0, 0], None),
    ((0, 3), "repeat", 3, 0),
    ((0, 3), "repeat", 2, None),
    ((), "repeat", 3, None),
    ((), "repeat", 3, 0),                     # a 0-d input with an axis: read as 1-d (numpy)
    ((), "repeat", [2], -1),
    ((), "repeat", 0, 0),
]


def numpy_op(op, x, arg, axis):
    if op == "tile":
        return np.tile(x, arg)
    if op == "broadcast_to":
        return np.broadcast_to(x, arg)
    return np.repeat(x, arg, axis=axis)


def dask_op(op, x, arg, axis, chunks):
    if op == "repeat":
        return td.repeat(x, arg, axis=axis, chunks=chunks)
    return getattr(td, op)(x, arg, chunks=chunks)


@pytest.mark.parametrize("shape, op, arg, axis", SWEEP, ids=lambda v: str(v))
def test_every_graph_is_valid_and_equals_numpy(shape, op, arg, axis):
    x = (np.arange(int(np.prod(shape)), dtype=np.int32) * 3 + 1).reshape(shape)
    want = numpy_op(op, x, arg, axis)
    for form in CHUNK_FORMS:
        for src in inputs_of(x):
            y = dask_op(op, src, arg, axis, chunks_of(form, want.shape))
            check_graph(y, want)


NON_NATIVE = [">f8", ">i4", ">u2", ">c16", ">U3", ">M8[s]", ">m8[ms]", [("a", ">i4"), ("b", "<f2")],
              [("a", ">i4")], "<f8", "|S2"]


@pytest.mark.parametrize("dtype", NON_NATIVE, ids=str)
def test_every_entry_point_keeps_the_byte_order_and_dtype(dtype):
    dtype = np.dtype(dtype)
    raw = np.random.default_rng(5).integers(0, 50, size=(3, 4 * dtype.itemsize), dtype=np.uint8)
    x = raw.view(dtype)
    if dtype.kind == "U":
        x = np.array([["ab", "c", "xyz", ""], ["d", "ee", "fff", "g"], ["h", "", "ij", "k"]], dtype=dtype)
    assert x.shape == (3, 4) and x.dtype == dtype
    for src in (x, da.from_array(x, chunks=(2, 3)), da.from_array(x, chunks=-1), x[1], da.from_array(x[1], 3),
                x[1, 1, ...], da.from_array(x[1, 1, ...])):
        n = np.ndim(src)
        wide = (2,) + np.shape(src)
        cases = [(td.tile(src, (2, 3), chunks=2), np.tile(np.asarray(src), (2, 3))),
                 (td.broadcast_to(src, wide, chunks=2), np.broadcast_to(np.asarray(src), wide)),
                 (td.repeat(src, 2, chunks=3), np.repeat(np.asarray(src), 2))]
        if n:
            cases.append((td.repeat(src, [1, 0, 2, 1][:np.shape(src)[-1]], axis=-1, chunks=2),
                          np.repeat(np.asarray(src), [1, 0, 2, 1][:np.shape(src)[-1]], axis=-1)))
        else:
            cases.append((td.repeat(src, 3, axis=0, chunks=2), np.repeat(np.asarray(src), 3, axis=0)))
        for y, want in cases:
            assert want.dtype == dtype
            check_graph(y, want)


def test_repeat_of_a_0d_dask_input_with_an_axis():
    x = np.array(7.5)
    for axis in (0, -1):
        check_graph(td.repeat(da.from_array(x), 3, axis=axis, chunks=2), np.repeat(x, 3, axis=axis))
    for axis in (1, -2):  # out of range as for numpy's 0-d input (read as 1-d)
        with pytest.raises(AxisError, match="out of bounds for array of dimension 1"):
            td.repeat(da.from_array(x), 3, axis=axis)


def flags_of(a):
    return {k: a.flags[k] for k in ("C_CONTIGUOUS", "F_CONTIGUOUS", "OWNDATA", "WRITEABLE", "ALIGNED",
                                    "WRITEBACKIFCOPY")}


def test_the_callers_counts_are_neither_changed_nor_kept():
    x = np.arange(12, dtype=np.int16).reshape(3, 4)
    for counts in (np.array([1, 0, 2, 3], dtype=np.int64), np.array([1, 0, 2, 3], dtype=np.int32),
                   np.array([1, 0, 2, 3], dtype=np.int64)[::-1].copy()):
        want = np.repeat(x, counts, axis=1)
        before = flags_of(counts)
        for src in (x, da.from_array(x, chunks=2)):
            y = td.repeat(src, counts, axis=1, chunks=2)
            assert flags_of(counts) == before and counts.flags.writeable
            graph = dict(y.__dask_graph__())
            assert not any(v is counts for v in graph.values())
            saved = counts.copy()
            counts[:] = 9  # the caller reuses its array: the graph must not see it
            check_graph(y, want)
            counts[:] = saved


def test_dask_collections_as_reps_counts_or_shape_are_refused_uncomputed():
    computed = []

    def counted(block):
        computed.append(1)
        return block

    x = np.arange(6).reshape(2, 3)
    lazy = da.from_array(np.array([1, 2, 0]), chunks=2).map_blocks(counted, meta=np.array((), np.int64))
    for call, what in [(lambda: td.repeat(x, lazy, axis=1), "repeats"),
                       (lambda: td.repeat(da.from_array(x), lazy, axis=1), "repeats"),
                       (lambda: td.tile(x, lazy[:2]), "reps"),
                       (lambda: td.broadcast_to(x, lazy[:2] + 2), "shape"),
                       # a 0-d Dask array inside a sequence
                       (lambda: td.repeat(x, [1, lazy[1], 0], axis=1), r"repeats\[1\]"),
                       (lambda: td.tile(x, (lazy[1], 2)), r"reps\[0\]"),
                       (lambda: td.broadcast_to(x, [2, lazy[2] + 2, 3]), r"shape\[1\]")]:
        with pytest.raises(TypeError, match=f"{what} is a Dask collection"):
            call()
    assert computed == []


@pytest.mark.parametrize("as_dask", [False, True])
def test_a_masked_input_keeps_its_mask(as_dask):
    x = np.ma.masked_array(np.arange(6, dtype=np.float32).reshape(2, 3), mask=[[0, 1, 0], [1, 0, 0]],
                           fill_value=-5)
    src = da.from_array(x, chunks=(1, 2), asarray=False) if as_dask else x
    for y, want in [(td.tile(src, (2, 2), chunks=3), np.ma.concatenate([np.ma.concatenate([x, x], 1)] * 2, 0)),
                    (td.broadcast_to(src, (2, 2, 3), chunks=2), np.ma.masked_array(np.broadcast_to(x.data, (2, 2, 3)),
                                                                                   np.broadcast_to(x.mask, (2, 2, 3)))),
                    (td.repeat(src, [1, 0, 2], axis=1, chunks=2), np.ma.repeat(x, [1, 0, 2], axis=1))]:
        y.__dask_graph__().validate()
        got = y.compute(scheduler="sync")
        assert isinstance(got, np.ma.MaskedArray)
        assert np.array_equal(np.ma.getmaskarray(got), np.ma.getmaskarray(want))
        assert np.array_equal(got.data, want.data)
        assert got.fill_value == x.fill_value


# --- dask.distributed: a LocalCluster of 2 worker processes --------------------------------------------

WORKER_MEMORY = 384 << 20  # each worker's memory limit (bytes)


@pytest.fixture(scope="module")
def cluster():
    from distributed import Client, LocalCluster

    env = {"PYTHONPATH": os.pathsep.join([str(BUILD_PYTHONPATH)] + os.environ.get("PYTHONPATH", "").split(os.pathsep))}
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None,
                      memory_limit=WORKER_MEMORY, env=env, silence_logs=40) as lc, Client(lc) as client:
        yield client


def worker_pids(client):
    return client.run(os.getpid)


@pytest.mark.cluster
def test_distributed_results(cluster):
    x = np.arange(35, dtype=np.float32).reshape(5, 7)
    xd = da.from_array(x, chunks=(2, 3))
    for got, want in [(td.tile(x, (30, 40), chunks=(40, 50)), np.tile(x, (30, 40))),
                      (td.tile(xd, (30, 40), chunks=(40, 50)), np.tile(x, (30, 40))),
                      (td.broadcast_to(xd, (6, 5, 7), chunks=3), np.broadcast_to(x, (6, 5, 7))),
                      (td.repeat(xd, np.arange(7) % 4, axis=1, chunks=(2, 5)), np.repeat(x, np.arange(7) % 4, 1)),
                      (td.repeat(x, 3, chunks=13), np.repeat(x, 3))]:
        assert (cluster.compute(got).result() == want).all()
    # tasks ran on both workers (the region API there), and tessera came from the build
    files = cluster.run(lambda: __import__("tessera").__file__)
    assert len(files) == 2 and all(f.startswith(str(BUILD_PYTHONPATH)) for f in files.values())


def held_by_worker(dask_scheduler, name):
    """On the scheduler: per worker address, the keys (name, i, j) of the layer `name` (Dask appends
    a token to it) that it holds in memory and those it is running (the scheduler's task states:
    who_has, processing_on)."""
    import ast

    held = {}
    for ts in dask_scheduler.tasks.values():
        key = ast.literal_eval(ts.key) if isinstance(ts.key, str) and ts.key.startswith("(") else ts.key
        if not (isinstance(key, tuple) and (key[0] == name or key[0].startswith(name + "-"))):
            continue
        for ws in ts.who_has or ():  # an empty set, or None in newer distributed
            held.setdefault(ws.address, {"memory": [], "processing": []})["memory"].append(key)
        if ts.processing_on is not None:
            held.setdefault(ts.processing_on.address, {"memory": [], "processing": []})["processing"].append(key)
    return held


@pytest.mark.cluster
def test_a_worker_killed_mid_computation(cluster, tmp_path):
    x = np.arange(4096, dtype=np.float64).reshape(64, 64)
    reps = (64, 32)
    y = td.tile(x, reps, chunks=(256, 256))  # 128 chunks of 512 KiB
    log = str(tmp_path)

    def slow_sum(block, block_info=None):  # enough time per chunk for the kill to land mid-way
        time.sleep(0.05)
        i, j = block_info[None]["chunk-location"]
        with open(os.path.join(log, f"{os.getpid()}"), "a") as f:  # which process ran which chunk
            f.write(f"{i} {j}\n")
        return np.array([[block.sum(dtype=np.float64)]])

    sums = y.map_blocks(slow_sum, chunks=(1, 1), dtype=np.float64, name="slow-sum")
    future = cluster.compute(sums)
    pids = worker_pids(cluster)  # address -> pid
    deadline = time.time() + 60
    while True:
        held = cluster.run_on_scheduler(held_by_worker, name="slow-sum")
        victim_address = min(pids)
        if len(held.get(victim_address, {}).get("memory", [])) >= 5:
            break
        assert time.time() < deadline, f"the computation did not start: {held}"
        time.sleep(0.01)
    assert not future.done()
    victim = pids[victim_address]
    lost = held[victim_address]["memory"]  # results only the victim holds
    os.kill(victim, signal.SIGKILL)
    got = future.result(timeout=120)
    want = np.tile(x, reps).reshape(y.numblocks[0], 256, y.numblocks[1], 256).sum(axis=(1, 3))
    assert got.shape == want.shape and (got == want).all()
    # the victim's results were computed there, and computed again by another process
    ran = {}
    for name in os.listdir(log):
        for line in open(os.path.join(log, name)):
            ran.setdefault(tuple(int(v) for v in line.split()), []).append(int(name))
    for key in lost:
        runs = ran[tuple(key[1:])]
        assert victim in runs and any(p != victim for p in runs), (key, runs, victim)
    assert sum(len(r) for r in ran.values()) >= sums.npartitions + len({tuple(k[1:]) for k in lost})
    cluster.wait_for_workers(2, timeout=60)
    assert victim not in worker_pids(cluster).values()  # the nanny restarted the killed worker


@pytest.mark.cluster
def test_an_output_larger_than_the_workers_memory_to_zarr(cluster, tmp_path):
    limit = WORKER_MEMORY
    x = np.arange(3 * 1000, dtype=np.float32).reshape(3, 1000) * 0.5
    reps = (136 * 1024, 1)  # 3 * 136 Ki * 1000 float32 = 1.56 GiB: 4x a worker's memory, 2x both
    y = td.tile(x, reps, chunks=(8192, 1000))  # 31 MiB chunks
    assert y.nbytes > 4 * limit
    store = str(tmp_path / "tiled.zarr")
    cluster.wait_for_workers(2, timeout=60)
    before = worker_pids(cluster)  # address -> pid
    try:
        check_store(cluster, y, x, store, limit)
        # the same worker processes at the same addresses: none was restarted by its nanny (which
        # kills a worker past 95% of its memory limit) or lost
        assert worker_pids(cluster) == before
        workers = cluster.run_on_scheduler(lambda dask_scheduler: {
            a: (ws.nanny, ws.memory_limit) for a, ws in dask_scheduler.workers.items()})
        assert set(workers) == set(before) and all(n and m == limit for n, m in workers.values()), workers
    finally:
        shutil.rmtree(store, ignore_errors=True)  # 1.5 GiB: not left in pytest's kept temporary directories


def check_store(cluster, y, x, store, limit):
    # uncompressed: Zarr 3 names the option `compressors`, Zarr 2 `compressor`
    option = "compressors" if int(zarr.__version__.split(".")[0]) >= 3 else "compressor"
    y.to_zarr(store, compute=True, **{option: None})
    # each worker's peak resident memory: VmHWM (ru_maxrss would count the parent's memory before a
    # spawned worker's exec); a lambda, which reaches the workers by value
    peaks = cluster.run(lambda: next(int(line.split()[1]) * 1024 for line in open("/proc/self/status")
                                     if line.startswith("VmHWM:")))
    assert all(p < limit for p in peaks.values()), peaks
    z = zarr.open(store, mode="r")
    assert z.shape == y.shape and z.dtype == x.dtype
    rng = np.random.default_rng(3)
    for _ in range(20):
        i = int(rng.integers(0, y.shape[0] - 100))
        j = int(rng.integers(0, 900))
        rows = np.arange(i, i + 100)
        assert (z[i:i + 100, j:j + 100] == x[rows % 3][:, j:j + 100]).all()


def test_docstring_examples_run():
    import doctest

    result = doctest.testmod(td, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 8 and result.failed == 0
