"""tessera.tile, tile_shape and Plan for numpy arrays: the seeds' examples, randomized against
numpy.tile over every dtype family, layout and form of reps; out=; every error class with out
untouched; threads; reference leaks; the module's own docstring examples."""
import doctest
import itertools
import sys
import zlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

import tessera

from conftest import BUILD_PYTHONPATH, assert_gil_released


def test_module_is_the_build_under_test():
    assert Path(tessera.__file__).resolve().parent == BUILD_PYTHONPATH / "tessera"
    assert tessera.__version__.count(".") == 2
    assert tessera.simd_target() != ""


def test_docstring_examples():
    result = doctest.testmod(tessera, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 10
    assert result.failed == 0


def check(A, reps, **kwargs):
    """tessera.tile(A, reps) equals numpy.tile(A, reps) and is a new C-contiguous writeable array of
    A's dtype sharing no memory with A."""
    a = np.asarray(A)
    expected = np.tile(a, reps)
    got = tessera.tile(A, reps, **kwargs)
    assert type(got) is np.ndarray
    assert got.dtype == a.dtype  # byte order included
    assert got.shape == expected.shape
    assert got.flags.c_contiguous and got.flags.writeable
    assert not np.shares_memory(got, a)
    assert same_values(got, expected)
    return got


def same_values(got, expected):
    """Equal bytes (NaNs and NaTs compare equal; void dtypes too), field by field for structured
    dtypes (numpy leaves their padding bytes unwritten)."""
    if got.dtype.names:
        return all(same_values(got[name], expected[name]) for name in got.dtype.names)
    return np.ascontiguousarray(expected).tobytes() == np.ascontiguousarray(got).tobytes()


# --- the seeds -------------------------------------------------------------------------------


def test_seed_numpy_docstring():
    a = np.array([0, 1, 2])
    assert check(a, 2).tolist() == [0, 1, 2, 0, 1, 2]
    assert check(a, (2, 2)).tolist() == [[0, 1, 2, 0, 1, 2], [0, 1, 2, 0, 1, 2]]
    assert check(a, (2, 1, 2)).tolist() == [[[0, 1, 2, 0, 1, 2]], [[0, 1, 2, 0, 1, 2]]]
    b = np.array([[1, 2], [3, 4]])
    assert check(b, 2).tolist() == [[1, 2, 1, 2], [3, 4, 3, 4]]
    assert check(b, (2, 1)).tolist() == [[1, 2], [3, 4], [1, 2], [3, 4]]
    assert check(np.array([1, 2, 3, 4]), (4, 1)).tolist() == [[1, 2, 3, 4]] * 4
    assert check([1, 2], (3, 1)).tolist() == [[1, 2]] * 3


def test_seed_mxnet():
    x = np.array([[1.0, 2.0], [3.0, 4.0]], dtype=np.float32)
    row = [1.0, 2.0, 1.0, 2.0, 1.0, 2.0], [3.0, 4.0, 3.0, 4.0, 3.0, 4.0]
    assert check(x, (2, 3)).tolist() == [*row, *row]
    assert check(x, (2,)).tolist() == [[1.0, 2.0, 1.0, 2.0], [3.0, 4.0, 3.0, 4.0]]
    assert check(x, (2, 2, 3)).tolist() == [[*row, *row]] * 2


def test_seed_openvino_shapes():
    data = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    assert check(data, [1, 2, 3]).shape == (2, 6, 12)
    assert check(data, [5, 1, 2, 3]).shape == (5, 2, 6, 12)
    assert check(np.arange(120, dtype=np.int32).reshape(5, 2, 3, 4), [1, 2, 3]).shape == (5, 2, 6, 12)
    assert tessera.tile(data, [1, -2, 3], negative_reps="clamp_to_zero").shape == (2, 0, 12)


# --- randomized against numpy.tile -------------------------------------------------------------

#: The most axes the running numpy's arrays hold: 32 before numpy 2, 64 from numpy 2 on.
NUMPY_MAX_NDIM = 64 if np.lib.NumpyVersion(np.__version__) >= "2.0.0" else 32


def test_outputs_have_as_many_axes_as_the_running_numpy_holds():
    """One build runs on numpy 1.x and 2.x: the output's limit is the running numpy's, not the headers'."""
    a = np.arange(6, dtype=np.int16).reshape(2, 3)
    reps = (2,) + (1,) * (NUMPY_MAX_NDIM - 1)
    got = tessera.tile(a, reps)
    assert got.shape == np.tile(a, reps).shape and got.ndim == NUMPY_MAX_NDIM
    assert np.array_equal(got, np.tile(a, reps))
    if NUMPY_MAX_NDIM < 64:
        with pytest.raises(ValueError, match=f"{NUMPY_MAX_NDIM + 1} axes; numpy arrays have at most {NUMPY_MAX_NDIM}"):
            tessera.tile(a, (1,) * (NUMPY_MAX_NDIM + 1))


DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64,
          np.float16, np.float32, np.float64, np.longdouble, np.complex64, np.complex128, np.clongdouble,
          "M8[ns]", "m8[s]", "S5", "U3", "V7", ">i4", ">f8", ">c16", "<u2",
          [("a", "<i4"), ("b", ">f8", (2,)), ("c", "S3")], np.dtype({"names": ["x"], "formats": ["<i2"],
                                                                          "offsets": [2], "itemsize": 6})]


def random_array(rng, shape, dtype):
    dtype = np.dtype(dtype)
    raw = rng.integers(0, 256, size=int(np.prod(shape)) * dtype.itemsize, dtype=np.uint8)
    if dtype.kind == "b":
        raw = raw % 2
    if dtype.kind in "SUV":  # printable bytes and valid code points
        raw = raw % 26 + 97
        if dtype.kind == "U":
            raw = raw.view(np.uint8) * np.array([1, 0, 0, 0] * (raw.size // 4), dtype=np.uint8)
    return raw.view(dtype).reshape(shape)


def layouts(a):
    """a in the layouts tile must read in place: C, Fortran, transposed, reversed (negative
    strides), broadcast (zero strides), stepped, read-only."""
    yield "C", a
    yield "F", np.asfortranarray(a)
    yield "transposed", a.T
    if a.ndim:
        yield "reversed", a[::-1]
        big = np.empty((2,) * a.ndim + a.shape, dtype=a.dtype)
        big[...] = a
        yield "stepped", np.lib.stride_tricks.as_strided(big, a.shape, [2 * s for s in a.strides])[::1]
        yield "zero-stride", np.broadcast_to(a[:1], (3,) + a.shape[1:]) if a.shape[0] else a
    ro = a.copy()
    ro.flags.writeable = False
    yield "read-only", ro


def reps_forms(reps):
    yield reps
    yield list(reps)
    yield np.array(reps, dtype=np.int32)
    yield np.array(reps, dtype=np.uint8)
    yield tuple(np.int64(r) for r in reps)
    if len(reps) == 1:
        yield reps[0]
        yield np.int16(reps[0])
        yield np.array(reps[0])


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_random_against_numpy(dtype):
    rng = np.random.default_rng(zlib.crc32(str(dtype).encode()))
    shapes = [(), (0,), (1,), (5,), (3, 4), (1, 7), (4, 0), (2, 3, 5), (3, 1, 2, 2)]
    repses = [(), (0,), (1,), (3,), (2, 1), (1, 3), (2, 3), (3, 0, 2), (2, 1, 2, 3), (1, 1, 1, 1, 2)]
    checked = 0
    for shape, reps in itertools.product(shapes, repses):
        a = random_array(rng, shape, dtype)
        for (_, view), r in zip(layouts(a), itertools.cycle(reps_forms(reps))):
            check(view, r)
            checked += 1
    assert checked > 400


@pytest.mark.parametrize("layout", ["C", "F", "transposed", "reversed", "stepped", "zero-stride", "read-only"])
def test_large_outputs_every_option(layout):
    """Outputs past the thread and streaming thresholds, and past 32 MiB (the fresh-page path)."""
    a = dict(layouts(np.arange(512 * 384, dtype=np.float32).reshape(512, 384)))[layout]
    check(a, (3, 5))  # 11.8 MiB
    for options in [dict(max_threads=1), dict(max_threads=2, nontemporal=True), dict(nontemporal=False)]:
        check(a, (2, 3), **options)
    if layout in ("C", "transposed"):
        check(a, (9, 5))  # 35 MiB: tessera's allocating path


def test_array_likes():
    assert check(3, 4).tolist() == [3, 3, 3, 3]
    assert check(2.5, (2, 2)).tolist() == [[2.5, 2.5], [2.5, 2.5]]
    assert check("ab", 2).tolist() == ["ab", "ab"]
    assert check(True, ()).shape == ()
    assert check(1 + 2j, (1, 2)).dtype == np.complex128
    assert check([[1, 2], [3, 4]], (2, 1)).tolist() == [[1, 2], [3, 4], [1, 2], [3, 4]]
    assert check(np.array(7), ()).shape == ()
    m = np.matrix([[1, 2], [3, 4]])
    got = tessera.tile(m, (2, 2))  # a subclass is read as its base ndarray
    assert type(got) is np.ndarray and got.tolist() == np.asarray(np.tile(m, (2, 2))).tolist()
    assert check(range(3), range(1, 3)).tolist() == [[0, 1, 2, 0, 1, 2]]


def test_all_ones_reps_is_a_copy():
    a = np.arange(6).reshape(2, 3)
    for reps in [1, (1, 1), (), (1, 1, 1)]:
        got = check(a, reps)
        got += 1
        assert a.tolist() == [[0, 1, 2], [3, 4, 5]]


def test_zero_itemsize_dtype():
    a = np.zeros((2, 3), dtype=[])
    got = tessera.tile(a, (2, 2))
    assert got.shape == (4, 6) and got.dtype == a.dtype and got.itemsize == 0


# --- out= -----------------------------------------------------------------------------------------


def test_out():
    a = np.arange(12, dtype=">i4").reshape(3, 4).T
    out = np.full((8, 6), -1, dtype=">i4")
    assert tessera.tile(a, (2, 2), out=out) is out
    assert out.tobytes() == np.tile(a, (2, 2)).tobytes()
    big = np.empty((1024, 1536), dtype=np.float32)
    src = np.arange(512 * 384, dtype=np.float32).reshape(512, 384)
    assert tessera.tile(src, (2, 4), out=big) is big
    assert np.array_equal(big, np.tile(src, (2, 4)))


def test_out_overlapping_A():
    buf = np.arange(24, dtype=np.int64)
    a = buf[:6].reshape(2, 3)
    expected = np.tile(a.copy(), (2, 2))
    assert tessera.tile(a, (2, 2), out=buf.reshape(4, 6)) is not None
    assert np.array_equal(buf.reshape(4, 6), expected)
    # A a reversed, stepped view into the output's memory
    buf = np.arange(4 * 10**5, dtype=np.float32)
    a = buf[-1::-4].reshape(500, 200)
    expected = np.tile(a.copy(), (2, 2))
    out = buf.reshape(1000, 400)
    tessera.tile(a, (2, 2), out=out)
    assert np.array_equal(out, expected)


def bad_outs():
    yield np.zeros((8, 5), np.int32), ValueError, r"out has shape \(8, 5\) but the result has shape \(8, 6\)"
    yield np.zeros((8, 6), np.int64), ValueError, "out has dtype dtype\\('int64'\\)"
    yield np.zeros((8, 6), ">i4"), ValueError, "out has dtype"
    yield np.zeros((6, 8), np.int32).T, ValueError, "not C-contiguous"
    yield np.zeros((8, 12), np.int32)[:, ::2], ValueError, "not C-contiguous"
    ro = np.zeros((8, 6), np.int32)
    ro.flags.writeable = False
    yield ro, ValueError, "read-only"
    yield [[0] * 6] * 8, TypeError, "out must be a numpy.ndarray"


@pytest.mark.parametrize("out, error, match", list(bad_outs()), ids=lambda v: getattr(v, "__name__", ""))
def test_bad_out_is_untouched(out, error, match):
    a = np.arange(12, dtype=np.int32).reshape(3, 4).T
    before = np.array(out, copy=True)
    with pytest.raises(error, match=match):
        tessera.tile(a, (2, 2), out=out)
    assert np.array_equal(np.asarray(out), before)


# --- errors ---------------------------------------------------------------------------------------

ERRORS = [
    (dict(reps=(2, -1)), ValueError, r"reps\[1\] = -1 is negative"),
    (dict(reps=-3), ValueError, r"reps\[0\] = -3 is negative"),
    (dict(reps=(2, 1.5)), TypeError, r"reps\[1\] = 1.5 \(float\) is not an integer"),
    (dict(reps=2.0), TypeError, r"reps\[0\] = 2.0"),
    (dict(reps="ab"), TypeError, r"reps\[0\] = 'a'"),
    (dict(reps=np.array([1.0, 2.0])), TypeError, r"reps\[0\] = 1.0 \(float\) is not an integer"),
    (dict(reps=np.ones((2, 2), int)), ValueError, "2-d array"),
    (dict(reps=-2**70), ValueError, r"reps\[0\] = -1180591620717411303424 is negative"),
    (dict(reps=(2**62, 2**62)), ValueError, "overflows"),
    (dict(reps=(2**31, 2**31, 2**3)), ValueError, "overflows|too big"),
    (dict(reps=2**64), ValueError, r"reps\[0\] = 18446744073709551616 is too large"),
    (dict(reps=(1,) * 65), ValueError, "more than 64"),
    # numpy 1.x's arrays hold at most 32 axes (numpy 2's 64, tessera's own limit, checked above).
    *([(dict(reps=(1,) * 33), ValueError, "33 axes; numpy arrays have at most 32")] if NUMPY_MAX_NDIM == 32 else []),
    (dict(reps=2, max_threads=0), ValueError, "max_threads = 0"),
    (dict(reps=2, max_threads=1.5), TypeError, "max_threads"),
    (dict(reps=2, nontemporal="yes"), TypeError, "nontemporal = 'yes'"),
    (dict(reps=2, negative_reps="wrap"), ValueError, "negative_reps = 'wrap'"),
    (dict(reps=2, negative_reps=None), TypeError, "negative_reps = None"),
]


@pytest.mark.parametrize("kwargs, error, match", ERRORS)
def test_errors_name_the_value_and_leave_out_untouched(kwargs, error, match):
    a = np.arange(6, dtype=np.int16).reshape(2, 3)
    out = np.full((4, 6), 77, dtype=np.int16)
    reps = kwargs.pop("reps")
    with pytest.raises(error, match=match):
        tessera.tile(a, reps, **kwargs)
    with pytest.raises(error, match=match):
        tessera.tile(a, reps, out=out, **kwargs)
    assert (out == 77).all()


def test_byte_size_too_big_is_valueerror_before_allocation():
    a = np.zeros((1, 1), dtype="V1024")
    with pytest.raises(ValueError, match="too big|overflows"):
        tessera.tile(a, (2**30, 2**30))


def test_object_dtype_is_typeerror():
    with pytest.raises(TypeError, match="holds Python objects"):
        tessera.tile(np.array([1, "a", None], dtype=object), 2)
    with pytest.raises(TypeError, match="holds Python objects"):
        tessera.tile(np.zeros(2, dtype=[("a", "O"), ("b", "i4")]), 2)


def test_clamp_to_zero():
    a = np.arange(6).reshape(2, 3)
    assert tessera.tile(a, (-1, 2), negative_reps="clamp_to_zero").shape == (0, 6)
    assert tessera.tile_shape((2, 3), (-5, 2), negative_reps="clamp_to_zero") == (0, 6)


def test_tile_shape():
    assert tessera.tile_shape((2, 3), (2, 2, 2)) == (2, 4, 6)
    assert tessera.tile_shape((4, 5, 6), 2) == (4, 5, 12)
    assert tessera.tile_shape((), ()) == ()
    assert tessera.tile_shape(3, np.array([2, 2])) == (2, 6)
    for shape, reps in itertools.product([(), (3,), (2, 0), (1, 2, 3)], [(), (2,), (0, 3), (1, 2, 3, 1)]):
        assert tessera.tile_shape(shape, reps) == np.tile(np.empty(shape), reps).shape
    with pytest.raises(ValueError, match="negative"):
        tessera.tile_shape((2, -3), 2)
    with pytest.raises(TypeError, match="not an integer"):
        tessera.tile_shape((2, 3.0), 2)


# --- Plan -------------------------------------------------------------------------------------


def test_plan():
    a = np.arange(48, dtype=np.float64).reshape(6, 8)[:, ::2].T  # (4, 6), strided
    plan = tessera.Plan(a.shape, (3, 1, 2), a.dtype, strides=a.strides)
    assert plan.out_shape == (3, 4, 12) == np.tile(a, (3, 1, 2)).shape
    assert plan.nbytes == 3 * 4 * 12 * 8 and plan.itemsize == 8 and plan.ndim == 3
    assert plan.shape == (4, 6) and plan.strides == a.strides and plan.dtype == a.dtype
    assert plan.kernel_path.startswith("gather")
    assert "kernel:" in plan.describe()
    assert np.array_equal(plan(a), np.tile(a, (3, 1, 2)))
    out = np.empty(plan.out_shape)
    assert plan(a, out=out) is out and np.array_equal(out, np.tile(a, (3, 1, 2)))
    expected = np.tile(a, (3, 1, 2))
    for start, extent in [((0, 0, 0), (3, 4, 12)), ((1, 2, 5), (2, 2, 7)), ((2, 3, 11), (1, 1, 1)),
                          ((0, 1, 3), (3, 0, 4))]:
        region = plan.execute_region(a, start, extent)
        sl = tuple(slice(s, s + e) for s, e in zip(start, extent))
        assert region.shape == extent and np.array_equal(region, expected[sl])
    out = np.zeros((2, 2, 7))
    assert plan.execute_region(a, (1, 2, 5), (2, 2, 7), out=out) is out
    assert np.array_equal(out, expected[1:3, 2:4, 5:12])
    assert "out_shape=(3, 4, 12)" in repr(plan)


def test_plan_c_contiguous_default_and_size_one_axes():
    plan = tessera.Plan((3, 1, 4), 2, "<u2")
    a = np.arange(12, dtype="<u2").reshape(3, 1, 4)
    assert np.array_equal(plan(a), np.tile(a, 2))
    odd = np.lib.stride_tricks.as_strided(a, a.shape, (a.strides[0], 999, a.strides[2]))  # size-1 axis stride
    assert np.array_equal(plan(odd), np.tile(a, 2))


def test_plan_errors():
    plan = tessera.Plan((2, 3), (2, 2), np.int32)
    good = np.arange(6, dtype=np.int32).reshape(2, 3)
    with pytest.raises(ValueError, match=r"A has shape \(3, 2\)"):
        plan(good.reshape(3, 2))
    with pytest.raises(ValueError, match="A has dtype"):
        plan(good.astype(np.int64))
    with pytest.raises(ValueError, match="strides"):
        plan(np.asfortranarray(good))
    with pytest.raises(TypeError, match="numpy.ndarray"):
        plan(good.tolist())
    out = np.full((4, 6), 5, np.int32)
    with pytest.raises(ValueError, match="out has dtype"):
        plan(good, out=out.astype(np.int64))
    region_out = np.full((2, 2), 5, np.int32)
    with pytest.raises(ValueError, match="region axis 1: start 5 \\+ extent 2 exceeds"):
        plan.execute_region(good, (0, 5), (2, 2), out=region_out)
    with pytest.raises(ValueError, match="start -1 is negative"):
        plan.execute_region(good, (-1, 0), (2, 2), out=region_out)
    with pytest.raises(ValueError, match="2 axes"):
        plan.execute_region(good, (0,), (2,), out=region_out)
    assert (region_out == 5).all() and (out == 5).all()
    with pytest.raises(TypeError, match="holds Python objects"):
        tessera.Plan((2,), 2, object)
    with pytest.raises(ValueError, match="negative"):
        tessera.Plan((2, 3), (2, -2), np.int32)
    assert tessera.Plan((2, 3), (2, -2), np.int32, negative_reps="clamp_to_zero").out_shape == (4, 0)


# --- threads and leaks ----------------------------------------------------------------------------


def test_eight_threads_at_once():
    rng = np.random.default_rng(3)
    cases = []
    for i in range(8):
        a = rng.standard_normal((64 + 32 * i, 48)).astype([np.float32, np.float64, np.int16, np.uint8][i % 4])
        if i % 2:
            a = a.T
        cases.append((a, (1 + i % 3, 2 + i % 4), np.tile(a, (1 + i % 3, 2 + i % 4))))

    def work(i):
        a, reps, expected = cases[i]
        plan = tessera.Plan(a.shape, reps, a.dtype, strides=a.strides)
        for k in range(60):
            got = tessera.tile(a, reps) if k % 2 else plan(a)
            if not np.array_equal(got, expected):
                return False
        return True

    with ThreadPoolExecutor(max_workers=8) as pool:
        assert all(pool.map(work, range(8)))


def test_gil_is_released_while_copying():
    """While another thread copies, this one keeps running: the longest pause between its loop
    iterations stays far below the length of one copy (with the GIL held through a copy, this
    thread would stop for the whole copy)."""
    src = np.arange(8192, dtype=np.float32).reshape(8, 1024)
    out = np.empty((8 * 16384, 1024), dtype=np.float32)  # 512 MiB, written by one thread
    np.copyto(out, 0)  # mapped before timing
    assert_gil_released(lambda: tessera.tile(src, (16384, 1), out=out, max_threads=1, nontemporal=False), times=3)
    assert np.array_equal(out[-8:], src)


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def test_no_reference_or_memory_leaks():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = a.T
    out = np.empty((4, 9), np.float32)
    plan = tessera.Plan((2, 3), (2, 3), np.float32)
    big = np.arange(1 << 16, dtype=np.uint8)
    refs = [sys.getrefcount(x) for x in (a, t, out, a.dtype, plan)]
    dtype_refs = sys.getrefcount(np.dtype(np.float32))

    def burst(n):
        for i in range(n):
            tessera.tile(a, (2, 3))
            tessera.tile(t, [2, 2], out=None)
            tessera.tile(a, (2, 3), out=out)
            plan(a)
            if i % 16 == 0:
                tessera.tile(big, 3)
                plan.execute_region(a, (1, 2), (2, 3))
                try:
                    tessera.tile(a, (2, -1), out=out)
                except ValueError:
                    pass
                try:
                    tessera.tile(a, (2, 1.5))
                except TypeError:
                    pass

    burst(5_000)  # warm up: allocator pools, caches
    before = rss_bytes()
    burst(25_000)  # 10^5 tile calls in all
    grown = rss_bytes() - before
    assert [sys.getrefcount(x) for x in (a, t, out, a.dtype, plan)] == refs
    assert abs(sys.getrefcount(np.dtype(np.float32)) - dtype_refs) <= 2
    assert grown < 4 << 20, f"RSS grew by {grown} bytes over 10^5 calls"


# --- Python code that runs while tessera reads its arguments ----------------------------------------


def test_reps_index_that_changes_A_is_read_before_A():
    A = np.zeros(16, np.int32)

    class Rep:
        def __index__(self):
            A.dtype = np.int64  # A becomes (8,) int64 while reps are read
            return 4

    got = tessera.tile(A, Rep())
    assert got.dtype == np.int64 and got.shape == (32,) and not got.any()


def test_reps_list_mutated_by_index():
    class Evil:
        def __init__(self, lst):
            self.lst = lst

        def __index__(self):
            self.lst.clear()
            return 2

    reps = [None, 3]
    reps[0] = Evil(reps)
    got = tessera.tile(np.arange(3), reps)  # the list is read as it was when the call began
    assert np.array_equal(got, np.tile(np.arange(3), (2, 3)))


def test_iterators_and_bool_arrays_as_reps():
    a = np.arange(6).reshape(2, 3)
    assert np.array_equal(tessera.tile(a, (r for r in (2, 2))), np.tile(a, (2, 2)))
    assert np.array_equal(tessera.tile(a, iter([1, 3])), np.tile(a, (1, 3)))
    assert np.array_equal(tessera.tile(a, np.array([True, True])), np.tile(a, np.array([True, True])))
    assert np.array_equal(tessera.tile(a, np.array([2, 1], dtype=object)), np.tile(a, (2, 1)))


def test_region_out_overlapping_A():
    buf = np.arange(64, dtype=np.int32)
    a = buf[:6].reshape(2, 3)
    plan = tessera.Plan((2, 3), (3, 3), np.int32)
    expected = np.tile(a.copy(), (3, 3))[1:5, 2:7]
    out = buf[3:23].reshape(4, 5)
    assert plan.execute_region(a, (1, 2), (4, 5), out=out) is out
    assert np.array_equal(out, expected)


def test_plan_output_too_big_even_when_empty():
    with pytest.raises(ValueError, match="too big"):
        tessera.Plan((0,), (2**40, 2**40, 1), "u1")
