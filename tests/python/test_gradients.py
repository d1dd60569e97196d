"""The family's gradients -- tessera.tile_backward, sum_to_shape, repeat_backward, their Plans -- and
tessera.torch (tile, broadcast_to, expand, repeat_interleave as autograd Functions).

Against a numpy reference computed exactly (integer-valued or dyadic data summed in float64 /
complex128, integers summed in 64 bits and wrapped) for every dtype and in every layout (strided,
reversed, transposed, stepped, zero strides), numpy arrays and torch tensors; out= and accumulate
(overlapping out included); errors with out untouched; torch.autograd.gradcheck and gradgradcheck
in float64; torch's own gradients in float32 and bfloat16; the accuracy requirement of issue 12
(on random float32 data the largest relative error against math.fsum is no worse than numpy's
pairwise float32 sum along a contiguous axis) and determinism (the same bits for max_threads 1, 2,
3 and repeated runs, on data whose sums depend on the order)."""
import itertools
import math
import subprocess
import sys
import textwrap
import time
import zlib

import numpy as np
import pytest
import torch

import tessera
import tessera.torch as tt

from conftest import BUILD_PYTHONPATH, AxisError, assert_gil_released

NP_DTYPES = [np.float16, np.float32, np.float64, np.complex64, np.complex128, np.int8, np.int16, np.int32,
             np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
TORCH_DTYPES = [torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.complex64, torch.complex128,
                torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8]


# --- exact references -----------------------------------------------------------------------------

def wide(a):
    """a's values in a type in which the test data sum exactly (float64 / complex128 for the
    integer-valued and dyadic floats of random_values) or wrap as tessera's do (64-bit integers:
    the low bits of a 64-bit sum are those of the narrow one)."""
    return a.astype({"f": np.float64, "c": np.complex128, "i": np.int64, "u": np.uint64}[a.dtype.kind])


def promoted(shape, reps):
    shape, reps = tuple(np.atleast_1d(shape)) if np.ndim(shape) else ((shape,) if shape != () else ()), reps
    reps = tuple(np.atleast_1d(reps)) if np.ndim(reps) else (reps,)
    n = max(len(shape), len(reps))
    return (1,) * (n - len(shape)) + tuple(shape), (1,) * (n - len(reps)) + tuple(reps)


def ref_tile_backward(g, in_shape, reps):
    """grad_out.reshape(r0, s0, r1, s1, ...).sum(axis=(0, 2, ...)), exactly, in g's dtype."""
    s, r = promoted(in_shape, reps)
    inter = [v for pair in zip(r, s) for v in pair]
    total = wide(g).reshape(inter).sum(axis=tuple(range(0, 2 * len(s), 2)))
    return total.reshape(np.empty(in_shape, dtype=np.int8).shape).astype(g.dtype)


def ref_sum_to_shape(a, shape):
    """torch.Tensor.sum_to_size(shape), exactly, in a's dtype."""
    shape = tuple(np.atleast_1d(shape)) if np.ndim(shape) else ((shape,) if shape != () else ())
    lead = a.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, e in enumerate(shape) if e == 1 and a.shape[lead + i] != 1)
    return wide(a).sum(axis=axes, keepdims=True).reshape(shape).astype(a.dtype)


def ref_repeat_backward(g, in_shape, repeats, axis):
    """Each element's segment of g summed (differences of a prefix sum: empty segments are 0)."""
    in_shape = np.empty(in_shape, dtype=np.int8).shape
    w = wide(g)
    if axis is None or in_shape == ():  # (a 0-d input is read as 1-d: axis 0 is its one element)
        n = math.prod(in_shape)
        counts = np.broadcast_to(np.asarray(repeats, dtype=np.int64), (n,))
        prefix = np.concatenate([[0], np.cumsum(counts)])
        cs = np.concatenate([np.zeros(1, w.dtype), np.cumsum(w)])
        return (cs[prefix[1:]] - cs[prefix[:-1]]).reshape(in_shape).astype(g.dtype)
    axis = axis % len(in_shape)
    counts = np.broadcast_to(np.asarray(repeats, dtype=np.int64), (in_shape[axis],))
    prefix = np.concatenate([[0], np.cumsum(counts)])
    zero = np.zeros(w.shape[:axis] + (1,) + w.shape[axis + 1:], w.dtype)
    cs = np.concatenate([zero, np.cumsum(w, axis=axis)], axis=axis)
    return (np.take(cs, prefix[1:], axis=axis) - np.take(cs, prefix[:-1], axis=axis)).astype(g.dtype)


def random_values(rng, shape, dtype):
    """Random values whose sums the references compute exactly: integers over their whole range
    (so sums wrap), floats that are small integers (float16: |v| <= 8, whose float32 partial sums
    are exact) or multiples of 1/8 (|v| <= 125, float32 and float64)."""
    dt = np.dtype(dtype)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return np.asarray(rng.integers(info.min, info.max, size=shape, dtype=dt, endpoint=True))
    scale, bound = (1, 8) if dt == np.float16 else (8, 1000)
    v = rng.integers(-bound, bound + 1, size=shape) / scale
    if dt.kind == "c":
        v = v + 1j * rng.integers(-bound, bound + 1, size=shape) / scale
    return np.asarray(v).astype(dt)


def layouts(a):
    """Views with a's shape in the layouts the reductions read in place: C, Fortran, transposed
    memory, every axis reversed (negative strides), stepped, stepped and reversed, read-only, and
    zero strides (a broadcast: its values differ from a's; the reference reads the view)."""
    yield "C", a
    if a.ndim:  # (numpy's asfortranarray and ascontiguousarray make a 0-d array 1-d)
        yield "F", np.asfortranarray(a)
        yield "transposed", np.ascontiguousarray(a.T).T
        rev = (slice(None, None, -1),) * a.ndim
        yield "reversed", a[rev].copy()[rev]
        big = np.empty(tuple(2 * e for e in a.shape), dtype=a.dtype)
        step = (slice(None, None, 2),) * a.ndim
        big[step] = a
        yield "stepped", big[step]
        big[step] = a[rev]
        yield "stepped-reversed", big[step][rev]
        if a.shape[0]:
            yield "zero-stride", np.broadcast_to(a[:1], a.shape)
    ro = a.copy()
    ro.flags.writeable = False
    yield "read-only", ro


def same(got, expected):
    """Equal values, dtype, shape and bytes (-0.0 and 0.0 compare equal: a sum's sign of zero is
    not specified)."""
    return got.dtype == expected.dtype and got.shape == expected.shape and np.array_equal(got, expected)


def new_result(got, shape, dtype):
    assert type(got) is np.ndarray and got.flags.c_contiguous and got.flags.writeable
    assert got.shape == shape and got.dtype == dtype


TILE_CASES = [((), ()), ((), (3,)), ((5,), (3,)), ((3, 4), (2, 3)), ((1, 7), (4, 1)), ((4, 0), (2, 2)),
              ((2, 3, 5), (2,)), ((3,), (2, 1, 2)), ((3, 1, 2, 2), (1, 3, 1, 2)), ((2, 3), (0, 2)),
              ((17,), (9,)), ((40, 3), (3, 5)), (6, 4)]
SUM_CASES = [((3, 4), (1, 4)), ((3, 4), (3, 1)), ((3, 4), (4,)), ((3, 4), ()), ((2, 3, 4), (3, 1)),
             ((2, 3, 4), (1, 1, 1)), ((5,), (5,)), ((), ()), ((0, 3), (1, 3)), ((3, 0), (3, 1)),
             ((4, 1, 5), (1, 1, 5)), ((64, 33), (1, 33)), ((33, 64), (33, 1)), ((2, 1, 3), (1, 3))]
REPEAT_CASES = [((5,), 2, None), ((5,), [1, 0, 2, 3, 1], None), ((2, 3), 3, None), ((2, 3), 2, 0),
                ((2, 3), [2, 0, 1], 1), ((2, 3), [1, 2], -2), ((2, 3, 4), 2, 2), ((), 3, None), ((), 3, 0),
                ((3, 4), 0, 1), ((3,), [0, 0, 0], 0), ((6, 40), list(range(40)), 1), ((30, 2), [7], 0)]


def tile_grad_shape(in_shape, reps):
    return tessera.tile_shape(np.empty(in_shape, np.int8).shape, reps)


def repeat_grad_shape(in_shape, repeats, axis):
    return np.repeat(np.empty(in_shape, np.int8), repeats, axis).shape


# --- every dtype and layout against the references --------------------------------------------------

@pytest.mark.parametrize("dtype", NP_DTYPES, ids=lambda d: np.dtype(d).name)
def test_every_dtype_and_layout_against_exact_sums(dtype):
    rng = np.random.default_rng(zlib.crc32(np.dtype(dtype).name.encode()))
    checked = 0
    for in_shape, reps in TILE_CASES:
        g = random_values(rng, tile_grad_shape(in_shape, reps), dtype)
        for name, view in layouts(g):
            got = tessera.tile_backward(view, in_shape, reps)
            new_result(got, np.empty(in_shape, np.int8).shape, np.dtype(dtype))
            assert same(got, ref_tile_backward(view, in_shape, reps)), (name, in_shape, reps)
            checked += 1
    for shape, target in SUM_CASES:
        a = random_values(rng, shape, dtype)
        for name, view in layouts(a):
            got = tessera.sum_to_shape(view, target)
            assert same(got, ref_sum_to_shape(view, target)), (name, shape, target)
            checked += 1
    for in_shape, repeats, axis in REPEAT_CASES:
        g = random_values(rng, repeat_grad_shape(in_shape, repeats, axis), dtype)
        for name, view in layouts(g):
            got = tessera.repeat_backward(view, in_shape, repeats, axis)
            assert same(got, ref_repeat_backward(view, in_shape, repeats, axis)), (name, in_shape, repeats, axis)
            checked += 1
    assert checked > 250


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.complex64, np.complex128])
def test_sums_of_negative_zeros_are_positive_zero_as_numpys(dtype):
    g = np.full((6, 40, 9), -0.0, dtype=dtype)
    if np.iscomplexobj(g):
        g = g + np.complex128(-0.0j).astype(dtype)  # -0.0 in both components
    cases = [(tessera.tile_backward(g, (1, 40, 9), (6, 1, 1)), g.sum(axis=0, keepdims=True)),
             (tessera.tile_backward(g, (6, 40, 3), (1, 1, 3)), g.reshape(6, 40, 3, 3).sum(axis=2)),
             (tessera.sum_to_shape(g, (40, 1)), g.sum(axis=(0, 2))[:, None]),
             (tessera.repeat_backward(g, (6, 40, 3), 3, axis=2), g.reshape(6, 40, 3, 3).sum(axis=3)),
             (tessera.tile_backward(g[::2, ::-1], (3, 40, 9), (1, 1, 1)), g[::2].sum(axis=()))]
    for got, want in cases:
        assert got.shape == want.shape
        for part in (got.real, got.imag) if np.iscomplexobj(got) else (got,):
            assert not np.signbit(part).any()
        assert not np.signbit(want.real).any()  # numpy's own sums start from +0.0
    out = g[:1].copy()
    tessera.tile_backward(g, (1, 40, 9), (6, 1, 1), out=out, accumulate=True)
    assert not np.signbit(out.real).any()


def test_integers_wrap_in_their_own_type():
    g = np.full((4, 100), 100, dtype=np.int8)
    got = tessera.sum_to_shape(g, (4, 1))
    assert got.dtype == np.int8 and (got == 16).all()  # 100 * 100 = 10000 = 16 mod 256
    u = np.full((3, 2), np.iinfo(np.uint64).max, dtype=np.uint64)
    assert (tessera.tile_backward(u, (1, 2), (3, 1)) == np.uint64(2**64 - 3)).all()


def test_array_likes_and_promoted_axes():
    assert same(tessera.sum_to_shape([[1, 2], [3, 4]], 2), np.array([4, 6]))
    assert same(tessera.tile_backward(np.float32(2.5), (), ()), np.array(2.5, np.float32))
    g = np.arange(24.0).reshape(2, 3, 4)
    assert same(tessera.tile_backward(g, 4, (2, 3, 1)), g.sum(axis=(0, 1)))
    assert same(tessera.tile_backward(g, (3, 4), (2, 1, 1)), g.sum(axis=0))
    assert same(tessera.tile_backward(g, (2, 3, 4), ()), g)  # no reps: a copy
    big = random_values(np.random.default_rng(3), (3, 2, 6, 2), np.int32)
    assert same(tessera.tile_backward(big, (1, 3, 1), (3, 2, 2, 2)), ref_tile_backward(big, (1, 3, 1), (3, 2, 2, 2)))


def test_negative_reps_clamped():
    g = np.ones((2, 0), np.float32)
    got = tessera.tile_backward(g, (2, 3), (1, -1), negative_reps="clamp_to_zero")
    assert same(got, np.zeros((2, 3), np.float32))


# --- torch tensors --------------------------------------------------------------------------------

def torch_values(rng, shape, dtype):
    if dtype == torch.bfloat16:  # small integers: exact in bfloat16, and their float32 sums too
        return torch.from_numpy(rng.integers(-8, 9, size=shape).astype(np.float32)).to(torch.bfloat16)
    np_dtype = torch.empty(0, dtype=dtype).numpy().dtype
    return torch.from_numpy(random_values(rng, shape, np_dtype))


def to_wide_numpy(t):
    if t.dtype.is_complex:
        return t.to(torch.complex128).numpy()
    if t.dtype.is_floating_point:
        return t.to(torch.float64).numpy()
    return t.numpy()


def torch_ref(ref_fn, t, *args):
    """A reference computed on numpy arrays (floats in float64, whose sums of these values are
    exact), as a tensor of t's dtype."""
    wide_ref = ref_fn(to_wide_numpy(t), *args)
    if t.dtype.is_floating_point or t.dtype.is_complex:
        return torch.from_numpy(np.asarray(wide_ref)).to(t.dtype)
    return torch.from_numpy(np.asarray(wide_ref))


def torch_layouts(t):
    yield "contiguous", t
    if t.dim() >= 2:
        yield "transposed", t.transpose(0, 1).contiguous().transpose(0, 1)
    if t.dim() >= 1 and t.numel():
        wide = torch.zeros(*t.shape[:-1], 2 * t.shape[-1], dtype=t.dtype)
        wide[..., ::2] = t
        yield "stepped", wide[..., ::2]
        yield "expanded", t[..., :1].expand(t.shape)


@pytest.mark.parametrize("dtype", TORCH_DTYPES, ids=str)
def test_torch_tensors_every_dtype(dtype):
    rng = np.random.default_rng(zlib.crc32(str(dtype).encode()))
    for in_shape, reps in [((3, 4), (2, 3)), ((2, 3, 5), (2,)), ((3,), (2, 1, 2))]:
        g = torch_values(rng, tile_grad_shape(in_shape, reps), dtype)
        for name, view in torch_layouts(g):
            got = tessera.tile_backward(view, in_shape, reps)
            assert type(got) is torch.Tensor and got.dtype == dtype and got.is_contiguous()
            assert torch.equal(got, torch_ref(ref_tile_backward, view, in_shape, reps)), (name, in_shape, reps)
    for shape, target in [((3, 4), (1, 4)), ((33, 64), (33, 1)), ((2, 3, 4), (3, 1))]:
        a = torch_values(rng, shape, dtype)
        for name, view in torch_layouts(a):
            assert torch.equal(tessera.sum_to_shape(view, target), torch_ref(ref_sum_to_shape, view, target)), name
    for in_shape, repeats, axis in [((2, 3), [2, 0, 1], 1), ((5,), 2, None), ((2, 3, 4), 3, 0)]:
        g = torch_values(rng, repeat_grad_shape(in_shape, repeats, axis), dtype)
        for counts in (repeats, torch.tensor(repeats)):
            for name, view in torch_layouts(g):
                got = tessera.repeat_backward(view, in_shape, counts, axis)
                assert torch.equal(got, torch_ref(ref_repeat_backward, view, in_shape, repeats, axis)), name


def test_torch_lazy_views_and_requires_grad():
    z = torch.randn(4, 3, dtype=torch.complex64)
    expected = z.conj().resolve_conj().to(torch.complex128).sum(0, keepdim=True).to(torch.complex64)  # exact, rounded
    assert torch.equal(tessera.sum_to_shape(z.conj(), (1, 3)), expected)
    w = torch.randn(4, 3, requires_grad=True)
    got = tessera.sum_to_shape(w, (3,))
    assert not got.requires_grad and torch.allclose(got, w.detach().sum(0))


def test_torch_errors():
    with pytest.raises(ValueError, match="device 'meta'"):
        tessera.sum_to_shape(torch.empty(2, 3, device="meta"), (1, 3))
    with pytest.raises(ValueError, match="grad_out has layout"):
        tessera.tile_backward(torch.ones(2, 2).to_sparse(), (1, 2), (2, 1))
    with pytest.raises(TypeError, match="quantized"):
        tessera.sum_to_shape(torch.quantize_per_tensor(torch.ones(2, 2), 0.1, 0, torch.qint8), (1, 2))


# --- out= and accumulate ----------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.complex128, np.int8, np.uint64])
def test_out_and_accumulate(dtype):
    rng = np.random.default_rng(5)
    g = random_values(rng, (6, 8), dtype)
    calls = [(tessera.tile_backward, ((3, 4), (2, 2)), ref_tile_backward, (3, 4)),
             (tessera.sum_to_shape, ((1, 8),), ref_sum_to_shape, (1, 8)),
             (tessera.repeat_backward, ((6, 4), 2, 1), ref_repeat_backward, (6, 4))]
    for fn, args, ref_fn, shape in calls:
        for _, view in layouts(g):
            expected = ref_fn(view, *args)
            out = np.full(shape, 99, dtype=dtype)
            assert fn(view, *args, out=out) is out
            assert same(out, expected)
            start = random_values(rng, shape, dtype)
            acc = start.copy()
            assert fn(view, *args, out=acc, accumulate=True, max_threads=1) is acc
            assert same(acc, (wide(start) + wide(expected)).astype(dtype))
            acc2 = start.copy()
            fn(view, *args, out=acc2, accumulate=False)
            assert same(acc2, expected)


def test_accumulate_into_out_overlapping_the_input():
    a = np.arange(12.0).reshape(4, 3)
    a0 = a.copy()
    got = tessera.sum_to_shape(a, (1, 3), out=a[:1], accumulate=True)  # out is a's first row
    assert np.array_equal(got, a0[:1] + a0.sum(axis=0))
    assert np.array_equal(a[1:], a0[1:])
    b = np.arange(12.0)
    b0 = b.copy()
    tessera.repeat_backward(b, 6, 2, out=b[3:9])  # no accumulate: b read whole before b[3:9] is written
    assert np.array_equal(b[3:9], b0.reshape(6, 2).sum(axis=1))
    t = torch.arange(12.0).reshape(4, 3)
    t0 = t.clone()
    tessera.tile_backward(t, (2, 3), (2, 1), out=t[2:], accumulate=True)
    assert torch.equal(t[2:], t0[2:] + t0[:2] + t0[2:])


def test_torch_out_and_accumulate():
    g = torch.arange(36.0).reshape(6, 6).t()  # transposed
    out = torch.full((2, 3), 100.0)
    version = out._version
    assert tessera.tile_backward(g, (2, 3), (3, 2), out=out, accumulate=True) is out
    assert torch.equal(out, 100 + g.reshape(3, 2, 2, 3).sum((0, 2)))
    assert out._version > version
    grad = torch.zeros(3)
    for _ in range(3):  # frameworks accumulate gradients
        tessera.sum_to_shape(torch.ones(5, 3), (3,), out=grad, accumulate=True)
    assert torch.equal(grad, torch.full((3,), 15.0))
    with pytest.raises(ValueError, match="requires grad"):
        tessera.sum_to_shape(torch.ones(5, 3), (3,), out=torch.zeros(3, requires_grad=True), accumulate=True)
    with pytest.raises(TypeError, match="out must be a torch.Tensor"):
        tessera.sum_to_shape(torch.ones(5, 3), (3,), out=np.zeros(3, np.float32))
    with pytest.raises(ValueError, match="dtype"):
        tessera.sum_to_shape(torch.ones(5, 3), (3,), out=torch.zeros(3, dtype=torch.float64))


def test_large_results_and_options():
    """A result of 32 MiB comes from the allocating C++ call (fresh pages, freed with the array);
    streaming stores or not, threads or not: the same values."""
    a = np.random.default_rng(0).standard_normal((2, 2**23)).astype(np.float32)
    expected = (a[0].astype(np.float64) + a[1]).astype(np.float32).reshape(1, -1)
    for kwargs in ({}, dict(nontemporal=True), dict(nontemporal=False, max_threads=1)):
        got = tessera.sum_to_shape(a, (1, 2**23), **kwargs)
        new_result(got, (1, 2**23), np.float32)
        assert np.array_equal(got, expected), kwargs
    got = tessera.tile_backward(a[:, ::-1], (1, 2**23), (2, 1))
    assert np.array_equal(got, expected[:, ::-1])


# --- errors, with out untouched ----------------------------------------------------------------------

G = np.arange(12, dtype=np.float32).reshape(2, 6)

ERRORS = [
    ("tile_backward", ((2, 2), (1, 2)), {}, ValueError, "tile_backward: the gradient's axis 1 has extent 6"),
    ("tile_backward", ((2, 3, 1), (1, 2)), {}, ValueError,
     r"the gradient has 2 axes \(2, 6\) but the forward output has 3"),
    ("tile_backward", ((2, 3), (1, -2)), {}, ValueError, r"reps\[1\] = -2"),
    ("tile_backward", ((2, 3), (1, 2.5)), {}, TypeError, r"reps\[1\] = 2.5"),
    ("tile_backward", ((2, "3"), (1, 2)), {}, TypeError, r"in_shape\[1\] = '3'"),
    ("tile_backward", ((2, 3), (1, 2)), dict(negative_reps="wrap"), ValueError, "negative_reps"),
    ("sum_to_shape", ((2, 2),), {}, ValueError, "sum_to_shape: target axis 1 has extent 2 but the input's axis 1"),
    ("sum_to_shape", ((1, 2, 6),), {}, ValueError, "has 3 axes, more than the input's 2"),
    ("sum_to_shape", ((2, -6),), {}, ValueError, "-6"),
    ("repeat_backward", ((2, 3), 3, 1), {}, ValueError, "repeat_backward: the gradient's axis 1 has extent 6"),
    ("repeat_backward", ((2, 3), [1, 2], 1), {}, ValueError, "2 counts for 3 elements along axis 1"),
    ("repeat_backward", ((2, 3), -2, 1), {}, ValueError, "-2"),
    ("repeat_backward", ((2, 3), 2, 2), {}, AxisError, "repeat_backward: axis 2 is out of bounds"),
    ("repeat_backward", ((2, 3), 2.0, 1), {}, TypeError, r"repeats\[0\] = 2.0"),
    ("sum_to_shape", ((1, 6),), dict(accumulate=1), TypeError, "accumulate = 1"),
    ("sum_to_shape", ((1, 6),), dict(max_threads=0), ValueError, "max_threads = 0"),
    ("sum_to_shape", ((1, 6),), dict(nontemporal="yes"), TypeError, "nontemporal"),
]


@pytest.mark.parametrize("op, args, kwargs, error, match", ERRORS)
def test_errors_name_the_value_and_leave_out_untouched(op, args, kwargs, error, match):
    for A in (G, G.T.copy().T, torch.from_numpy(G)):
        with pytest.raises(error, match=match):
            getattr(tessera, op)(A, *args, **kwargs)
        for shape in [(2, 3), (1, 6), (2, 2)]:
            out = np.full(shape, 77, np.float32)
            dst = torch.from_numpy(out) if isinstance(A, torch.Tensor) else out
            with pytest.raises(error, match=match):
                getattr(tessera, op)(A, *args, out=dst, **kwargs)
            for accumulate in (True, False):
                with pytest.raises(error, match=match):
                    getattr(tessera, op)(A, *args, out=dst, **{"accumulate": accumulate, **kwargs})
            assert (out == 77).all()


@pytest.mark.parametrize("A", [torch.from_numpy(G), G])
def test_accumulate_without_out(A):
    for call in (lambda: tessera.tile_backward(A, (2, 3), (1, 2), accumulate=True),
                 lambda: tessera.sum_to_shape(A, (1, 6), accumulate=True),
                 lambda: tessera.repeat_backward(A, (2, 3), 2, 1, accumulate=True)):
        with pytest.raises(ValueError, match="accumulate=True adds the result into out, and no out was given"):
            call()


BAD_DTYPES = [np.bool_, object, "M8[s]", "m8[ns]", np.longdouble, np.clongdouble, ">f4", ">i8", "S3", "U2",
              [("a", "<f4"), ("b", "<f4")]]


@pytest.mark.parametrize("dtype", BAD_DTYPES, ids=str)
def test_bad_dtype_is_typeerror_naming_it(dtype):
    a = np.zeros((2, 6), dtype=dtype)
    name = repr(np.dtype(dtype))
    out = np.full((2, 3), 5, np.float32)
    for call in (lambda **k: tessera.tile_backward(a, (2, 3), (1, 2), **k),
                 lambda **k: tessera.sum_to_shape(a, (2, 3), **k),
                 lambda **k: tessera.repeat_backward(a, (2, 3), 2, 1, **k)):
        with pytest.raises(TypeError, match="which tessera cannot sum") as info:
            call(out=out)
        assert name in str(info.value), str(info.value)
        with pytest.raises(TypeError, match="which tessera cannot sum"):
            call()
    assert (out == 5).all()
    with pytest.raises(TypeError, match="which tessera cannot sum"):
        tessera.Plan.sum_to_shape((2, 6), (1, 6), dtype)


@pytest.mark.filterwarnings("ignore:ComplexHalf support is experimental")
@pytest.mark.parametrize("dtype", [torch.bool, torch.complex32], ids=str)
def test_bad_torch_dtype_is_typeerror_naming_it(dtype):
    t = torch.zeros(2, 6, dtype=dtype)
    out = torch.ones(1, 6, dtype=torch.bool)
    with pytest.raises(TypeError, match=f"{dtype}, which tessera cannot sum"):
        tessera.sum_to_shape(t, (1, 6), out=out)
    with pytest.raises(TypeError, match=f"{dtype}, which tessera cannot sum"):
        tessera.tile_backward(t, (2, 3), (1, 2))
    with pytest.raises(TypeError, match=f"{dtype}, which tessera cannot sum"):
        tessera.repeat_backward(t, (2, 3), 2, 1)
    assert out.all()


def bad_outs():
    yield np.zeros((3, 3), np.float32), ValueError, r"out has shape \(3, 3\) but the result has shape \(2, 3\)"
    yield np.zeros((2, 3), np.float64), ValueError, "out has dtype"
    yield np.zeros((2, 3), ">f4"), ValueError, "out has dtype"
    yield np.zeros((3, 2), np.float32).T, ValueError, "not C-contiguous"
    ro = np.zeros((2, 3), np.float32)
    ro.flags.writeable = False
    yield ro, ValueError, "read-only"
    yield [[0.0] * 3] * 2, TypeError, "out must be a numpy.ndarray"


@pytest.mark.parametrize("out, error, match", list(bad_outs()), ids=lambda v: getattr(v, "__name__", ""))
def test_bad_out_is_untouched(out, error, match):
    before = np.array(out, copy=True)
    for accumulate in (False, True):
        with pytest.raises(error, match=match):
            tessera.tile_backward(G, (2, 3), (1, 2), out=out, accumulate=accumulate)
    assert np.array_equal(np.asarray(out), before)


# --- plans ---------------------------------------------------------------------------------------------

def test_plans():
    rng = np.random.default_rng(11)
    g = random_values(rng, (6, 8), np.float64)
    for view in (g, g[::-1], np.asfortranarray(g)):
        plan = tessera.Plan.tile_backward(view.shape, (3, 4), (2, 2), view.dtype, view.strides)
        assert plan.operation == "tile_backward" and plan.out_shape == (3, 4) and plan.kernel_path.startswith("reduce")
        assert not plan.accumulate and plan.itemsize == 8 and plan.nbytes == 96
        assert same(plan(view), ref_tile_backward(view, (3, 4), (2, 2)))
        assert "tessera.Plan.tile_backward(" in repr(plan) and plan.describe()
        plan = tessera.Plan.sum_to_shape(view.shape, (1, 8), view.dtype, view.strides)
        assert same(plan(view), ref_sum_to_shape(view, (1, 8)))
        plan = tessera.Plan.repeat_backward(view.shape, (6, 4), torch.tensor([1, 3, 2, 2]), view.dtype, axis=-1,
                                            strides=view.strides)
        assert same(plan(view), ref_repeat_backward(view, (6, 4), [1, 3, 2, 2], -1))
        with pytest.raises(ValueError, match="has no regions"):
            plan.execute_region(view, (0, 0), (1, 1))
    acc = tessera.Plan.sum_to_shape((6, 8), 8, np.float64, accumulate=True, max_threads=2)
    assert acc.accumulate
    out = np.ones(8)
    assert acc(g, out=out) is out and same(out, 1 + g.sum(axis=0))
    with pytest.raises(ValueError, match="accumulates"):
        acc(g)
    with pytest.raises(ValueError, match="strides"):
        acc(g[::-1], out=out)
    with pytest.raises(ValueError, match="the gradient's axis 0"):
        tessera.Plan.tile_backward((5, 8), (3, 4), (2, 2), np.float32)
    with pytest.raises(AxisError):
        tessera.Plan.repeat_backward((6, 8), (6, 4), 2, np.float32, axis=3)


# --- tessera.torch: autograd ---------------------------------------------------------------------------

def f64(shape, seed=0):
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=gen, dtype=torch.float64, requires_grad=True)


GRADCHECK_CASES = [
    ("tile", (3, 4), lambda x: tt.tile(x, (2, 3))),
    ("tile promoted", (3,), lambda x: tt.tile(x, (2, 1, 2))),
    ("tile reps short", (2, 1, 3), lambda x: tt.tile(x, 2)),
    ("tile 0-d", (), lambda x: tt.tile(x, (3, 2))),
    ("tile transposed in and out", (3, 4), lambda x: tt.tile(x.t(), (2, 1, 2)).transpose(0, 2)),
    ("broadcast_to", (3, 1), lambda x: tt.broadcast_to(x, (2, 3, 4))),
    ("broadcast_to -1", (3, 1), lambda x: tt.broadcast_to(x, (-1, 4))),
    ("broadcast_to stepped out", (1, 4), lambda x: tt.broadcast_to(x, (5, 4))[::2]),
    ("expand", (1, 3, 1), lambda x: tt.expand(x, 2, 4, -1, 5)),
    ("expand size", (2, 1), lambda x: tt.expand(x, torch.Size([3, 2, 3]))),
    ("expand 0-d", (), lambda x: tt.expand(x, 2, 3)),
    ("repeat_interleave", (3, 4), lambda x: tt.repeat_interleave(x, 2)),
    ("repeat_interleave dim", (3, 4), lambda x: tt.repeat_interleave(x, 3, dim=1)),
    ("repeat_interleave counts", (3, 4), lambda x: tt.repeat_interleave(x, torch.tensor([2, 0, 3]), dim=0)),
    ("repeat_interleave counts -1", (3, 4),
     lambda x: tt.repeat_interleave(x, torch.tensor([1, 3, 0, 2]), dim=-1, output_size=6).t()),
    ("repeat_interleave flat counts", (2, 3), lambda x: tt.repeat_interleave(x, torch.tensor([1, 2, 0, 1, 3, 1]))),
    ("repeat_interleave one count", (2, 3), lambda x: tt.repeat_interleave(x, torch.tensor([2]), dim=1)),
]


@pytest.mark.parametrize("name, shape, fn", GRADCHECK_CASES, ids=[c[0] for c in GRADCHECK_CASES])
def test_gradcheck_and_gradgradcheck(name, shape, fn):
    x = f64(shape, seed=zlib.crc32(name.encode()))
    assert torch.autograd.gradcheck(fn, (x,))
    assert torch.autograd.gradgradcheck(fn, (x,))


def test_grad_fn_and_forward_values():
    x = torch.arange(12, dtype=torch.int16).reshape(3, 4)
    assert torch.equal(tt.tile(x, (2, 1)), torch.tile(x, (2, 1)))
    assert torch.equal(tt.expand(x[:, :1], 2, 3, 5), x[:, :1].expand(2, 3, 5))
    assert torch.equal(tt.broadcast_to(x, (2, 3, 4)), torch.broadcast_to(x, (2, 3, 4)))
    counts = torch.tensor([1, 2, 0])
    assert torch.equal(tt.repeat_interleave(x, counts, 0), torch.repeat_interleave(x, counts, 0))
    b = torch.tensor([True, False])
    assert torch.equal(tt.tile(b, 3), torch.tile(b, (3,)))
    y = tt.tile(torch.ones(2, requires_grad=True), 2)
    assert y.requires_grad and type(y.grad_fn).__name__ == "_TileBackward"  # the node of tessera.torch's _Tile
    assert not tt.tile(torch.ones(2), 2).requires_grad


def non_contiguous(shape, seed):
    """Positive values (sums without cancellation) in a transposed, stepped tensor of `shape`."""
    gen = torch.Generator().manual_seed(seed)
    base = torch.rand(*reversed([2 * e for e in shape]), generator=gen) * 1.5 + 0.5
    view = base[(slice(None, None, 2),) * len(shape)].permute(*reversed(range(len(shape))))
    assert view.shape == tuple(shape) and not view.is_contiguous()
    return view


TORCH_PAIRS = [
    ("tile", (3, 4), lambda x: tt.tile(x, (2, 3)), lambda x: torch.tile(x, (2, 3))),
    ("tile promoted", (5,), lambda x: tt.tile(x, (2, 1, 4)), lambda x: torch.tile(x, (2, 1, 4))),
    ("broadcast_to", (3, 1), lambda x: tt.broadcast_to(x, (2, 3, 4)), lambda x: torch.broadcast_to(x, (2, 3, 4))),
    ("expand", (1, 3, 1), lambda x: tt.expand(x, 2, 2, -1, 2), lambda x: x.expand(2, 2, -1, 2)),
    ("repeat_interleave", (3, 4), lambda x: tt.repeat_interleave(x, 2, 1),
     lambda x: torch.repeat_interleave(x, 2, 1)),
    ("repeat_interleave counts", (3, 4), lambda x: tt.repeat_interleave(x, torch.tensor([3, 0, 8]), 0),
     lambda x: torch.repeat_interleave(x, torch.tensor([3, 0, 8]), 0)),
    ("repeat_interleave flat", (3, 4), lambda x: tt.repeat_interleave(x, 3), lambda x: torch.repeat_interleave(x, 3)),
]


@pytest.mark.parametrize("name, shape, ours, theirs", TORCH_PAIRS, ids=[c[0] for c in TORCH_PAIRS])
def test_gradients_equal_torchs_own(name, shape, ours, theirs):
    seed = zlib.crc32(name.encode())
    x = torch.rand(*shape, generator=torch.Generator().manual_seed(seed)) + 0.5
    out_shape = theirs(x).shape
    grad_out = non_contiguous(out_shape, seed)
    # float32: torch's gradient (float32 sums of at most 8 positive addends) within 1e-6
    a, b = x.clone().requires_grad_(), x.clone().requires_grad_()
    ya, yb = ours(a), theirs(b)
    assert torch.equal(ya, yb)
    ya.backward(grad_out)
    yb.backward(grad_out)
    assert a.grad.dtype == torch.float32 and a.grad.shape == x.shape
    assert torch.allclose(a.grad, b.grad, rtol=1e-6, atol=0), (a.grad, b.grad)
    # bfloat16: torch's float32 gradient rounded to bfloat16, within one bfloat16 ulp
    xb = x.to(torch.bfloat16).requires_grad_()
    gb = grad_out.to(torch.bfloat16)
    ours(xb).backward(gb)
    x32 = xb.detach().float().requires_grad_()
    theirs(x32).backward(gb.float())
    expected = x32.grad.to(torch.bfloat16)
    assert xb.grad.dtype == torch.bfloat16
    ulps = (xb.grad.view(torch.int16).int() - expected.view(torch.int16).int()).abs()
    assert (expected >= 0).all() and ulps.max() <= 1, (xb.grad, expected)
    # float64: exact agreement on sums of doubles is not promised, but within rounding
    xd = x.double().requires_grad_()
    xe = x.double().requires_grad_()
    ours(xd).backward(grad_out.double())
    theirs(xe).backward(grad_out.double())
    assert torch.allclose(xd.grad, xe.grad, rtol=1e-14, atol=0)


def test_backward_reads_expanded_and_strided_grads():
    x = torch.randn(3, 4, requires_grad=True)
    tt.tile(x, (2, 2)).sum().backward()  # sum's backward hands an expanded (zero-stride) gradient
    assert torch.equal(x.grad, torch.full((3, 4), 4.0))
    for g in (torch.arange(48.0).reshape(8, 6).t(),  # transposed
              torch.arange(96.0).reshape(6, 16)[:, ::2],  # stepped
              torch.arange(6.0).reshape(6, 1).expand(6, 8)):  # one zero stride
        x.grad = None
        tt.tile(x, (2, 2)).backward(g)
        assert not g.is_contiguous()
        assert torch.equal(x.grad, g.reshape(2, 3, 2, 4).sum((0, 2)))


def test_double_backward_and_accumulated_grads():
    x = torch.randn(3, 1, dtype=torch.float64, requires_grad=True)
    y = tt.expand(x, 2, 3, 4)
    (g,) = torch.autograd.grad((y ** 2).sum(), x, create_graph=True)
    assert torch.allclose(g, 16 * x)
    g.sum().backward()
    assert torch.allclose(x.grad, torch.full((3, 1), 16.0, dtype=torch.float64))
    w = torch.ones(2, 2, requires_grad=True)
    tt.tile(w, 3).sum().backward()
    tt.repeat_interleave(w, 2, 0).sum().backward()
    assert torch.equal(w.grad, torch.full((2, 2), 5.0))


def test_torch_function_errors():
    x = torch.ones(3, 1)
    with pytest.raises(ValueError, match="new leading dimension"):
        tt.expand(x, -1, 3, 4)
    with pytest.raises(ValueError, match="size -2"):
        tt.expand(x, 3, -2)
    with pytest.raises(ValueError, match="at least one size per dimension"):
        tt.expand(x, 4)
    with pytest.raises(ValueError, match="axis 0"):
        tt.expand(x, 4, 4)
    with pytest.raises(TypeError, match="size 2.5"):
        tt.broadcast_to(x, (3, 2.5))
    with pytest.raises(TypeError, match="must be a torch.Tensor"):
        tt.tile(np.ones(3), 2)
    with pytest.raises(ValueError, match=r"reps\[0\] = -1"):
        tt.tile(x, (-1, 1))
    with pytest.raises(AxisError):
        tt.repeat_interleave(x, 2, dim=2)
    with pytest.raises(ValueError, match="output_size = 5"):
        tt.repeat_interleave(x, 2, dim=0, output_size=5)
    with pytest.raises(ValueError, match="device 'meta'"):
        tt.tile(torch.ones(2, device="meta"), 2)


def test_import_tessera_without_torch(tmp_path):
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(BUILD_PYTHONPATH)!r})
        sys.modules["torch"] = None  # `import torch` raises ImportError
        import numpy as np, tessera
        assert "torch" not in dir(tessera)
        assert tessera.sum_to_shape(np.ones((3, 2)), 2).tolist() == [3.0, 3.0]
        try:
            import tessera.torch
        except ImportError as e:
            assert "tessera.torch needs PyTorch" in str(e), e
        else:
            raise AssertionError("tessera.torch imported without torch")
        print("ok")
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr


def test_tessera_torch_is_a_lazy_attribute():
    import tessera.torch
    assert tessera.torch is tt and tessera.__getattr__("torch") is tt
    with pytest.raises(AttributeError):
        tessera.no_such_name  # noqa: B018


# --- accuracy (issue 12) ---------------------------------------------------------------------------------

def max_rel_error(got, exact):
    got = np.asarray(got, dtype=np.float64).ravel()
    return float(np.max(np.abs(got - exact) / np.abs(exact)))


def exact_sums(groups):
    """math.fsum of each row of `groups` (the float64 values of float32 data): the exact sums,
    correctly rounded to float64."""
    return np.array([math.fsum(row) for row in groups.astype(np.float64).tolist()])


@pytest.mark.parametrize("rows, cols", [(256, 4096), (64, 65536)], ids=["2**20", "2**22"])
def test_accuracy_no_worse_than_numpy_pairwise_sum(rows, cols):
    """tessera's largest relative error against the exact sum, on random float32 data, in several
    layouts (reducing a contiguous axis, a strided axis, the leading axis, interleaved replicas),
    is at most numpy's float32 `sum` along a contiguous axis of the same groups -- and at most half
    an ulp: float32 summed in float64 and rounded once."""
    rng = np.random.default_rng(rows)
    data = np.where(rng.random((rows, cols)) < 0.5, rng.standard_normal((rows, cols)),
                    rng.random((rows, cols)) * 3).astype(np.float32)
    exact = exact_sums(data)
    numpy_err = max_rel_error(np.sum(data, axis=1, dtype=np.float32), exact)
    fortran = np.asfortranarray(data)
    transposed = np.ascontiguousarray(data.T)
    results = {
        "contiguous axis (sum_to_shape)": tessera.sum_to_shape(data, (rows, 1)),
        "contiguous axis (tile_backward)": tessera.tile_backward(data, (rows, 1), (1, cols)),
        "strided axis (sum_to_shape)": tessera.sum_to_shape(fortran, (rows, 1)),
        "strided axis (tile_backward)": tessera.tile_backward(fortran, (rows, 1), (1, cols)),
        "leading axis (sum_to_shape)": tessera.sum_to_shape(transposed, (rows,)),
        "leading axis (tile_backward)": tessera.tile_backward(transposed, (1, rows), (cols, 1)),
        "reversed strided axis": tessera.sum_to_shape(fortran[::-1, ::-1], (rows, 1))[::-1],
    }
    numpy_strided_err = max_rel_error(np.sum(fortran, axis=1, dtype=np.float32), exact)
    report = {name: max_rel_error(r, exact) for name, r in results.items()}
    print(f"\n{rows}x{cols}: numpy contiguous {numpy_err:.3g}, numpy strided {numpy_strided_err:.3g}, "
          + ", ".join(f"{k} {v:.3g}" for k, v in report.items()))
    for name, err in report.items():
        assert err <= numpy_err, (name, err, numpy_err)
        assert err <= 2.0**-24 * (1 + 1e-6), (name, err)  # the exact sum rounded once: half an ulp
    # interleaved replicas (tile_backward of reps along the last axis): groups of stride cols/k
    k = 16
    got = tessera.tile_backward(data, (rows, cols // k), (1, k))
    groups = np.ascontiguousarray(data.reshape(rows, k, cols // k).transpose(0, 2, 1)).reshape(-1, k)
    exact_k = exact_sums(groups)
    numpy_k = max_rel_error(np.sum(groups, axis=1, dtype=np.float32), exact_k)
    err_k = max_rel_error(got, exact_k)
    assert err_k <= numpy_k and err_k <= 2.0**-24 * (1 + 1e-6), (err_k, numpy_k)


# --- determinism ---------------------------------------------------------------------------------------

def bits(a):
    a = np.ascontiguousarray(a)
    return a.view(np.uint8).tobytes()


DETERMINISM_CASES = {
    "rows": lambda d, c, mt: tessera.sum_to_shape(d, (d.shape[0], 1), max_threads=mt),
    # two outputs of 2**20 addends each: the threads split each output's own sum
    "two long rows": lambda d, c, mt: tessera.sum_to_shape(d.reshape(2, -1), (2, 1), max_threads=mt),
    "columns": lambda d, c, mt: tessera.sum_to_shape(d, (1, d.shape[1]), max_threads=mt),
    "all": lambda d, c, mt: tessera.sum_to_shape(d, (), max_threads=mt),
    "strided": lambda d, c, mt: tessera.tile_backward(d.T, (1, d.shape[0]), (d.shape[1], 1), max_threads=mt),
    "reversed": lambda d, c, mt: tessera.sum_to_shape(d[::-1, ::-3], (1, 1), max_threads=mt),
    "periodic": lambda d, c, mt: tessera.tile_backward(d, (d.shape[0] // 8, 128), (8, d.shape[1] // 128),
                                                       max_threads=mt),
    "segments": lambda d, c, mt: tessera.repeat_backward(d.ravel()[:c.sum()], c.shape, c, max_threads=mt),
}

# The same sums in float64 in numpy's order (pairwise), for the cases whose float32 results the
# order decides on the data of determinism_data (segments: sums of at most 3 addends, exact).
ORDER_REFERENCES = {
    "rows": lambda d: d.astype(np.float64).sum(axis=1, keepdims=True),
    "two long rows": lambda d: d.reshape(2, -1).astype(np.float64).sum(axis=1, keepdims=True),
    "columns": lambda d: d.astype(np.float64).sum(axis=0, keepdims=True),
    "all": lambda d: d.astype(np.float64).sum(),
    "strided": lambda d: d.astype(np.float64).sum(axis=1)[None, :],
    "reversed": lambda d: d[::-1, ::-3].astype(np.float64).sum(keepdims=True),
    "periodic": lambda d: d.astype(np.float64).reshape(8, d.shape[0] // 8, d.shape[1] // 128, 128).sum(axis=(0, 2)),
}


def determinism_data(rng, dtype, rows=1024, cols=2048):
    """Normal values times 10 and, for float32 and complex64, huge values in cancelling quadruples
    (+h at (i, j), -h at (i, j + 128) and at (i + rows/8, j), +h at (i + rows/8, j + 128)): every
    row, column and periodic output that holds one holds all four, so the exact sums are the small
    values', but float64 partial sums near 2**45 lose their low bits -- differently in each order,
    visibly in float32 (without them float32 sums of these values are exact in float64)."""
    data = rng.standard_normal((rows, cols)) * 10
    if dtype in (np.float32, np.complex64):
        primary_rows = [i for i in range(rows) if (i // (rows // 8)) % 2 == 0]
        primary_cols = [j for j in range(cols) if (j // 128) % 2 == 0]
        for i in primary_rows:
            for j in rng.choice(primary_cols, size=4, replace=False):
                h = float(np.float32(rng.uniform(1, 2) * 2.0**45))
                data[i, j], data[i, j + 128] = h, -h
                data[i + rows // 8, j], data[i + rows // 8, j + 128] = -h, h
    return data.astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64, np.complex64])
def test_determinism_across_threads_and_runs(dtype):
    """The same bits for max_threads 1, 2, 3 and the arena's default, and on repeated runs, on
    inputs past the threads' threshold (2**21 elements) reduced to many outputs, few, or one (two
    long rows, all, columns: the threads split one output's sum). Every float leg's sums depend on
    the order (float32: checked against float64 sums in numpy's order, rounded once)."""
    rng = np.random.default_rng(42)
    data = determinism_data(rng, dtype)
    counts = rng.integers(0, 4, size=2**19)  # per-element counts: about 1.5 * 2**19 addends in all
    for name, fn in DETERMINISM_CASES.items():
        first = bits(fn(data, counts, 1))
        for mt in (2, 3, None, 1, 2):
            assert bits(fn(data, counts, mt)) == first, (name, mt)
        if dtype == np.float32 and name in ORDER_REFERENCES:
            # the data show the order: numpy's (pairwise) float64 sums rounded once differ
            got = fn(data, counts, 1)
            other = np.asarray(ORDER_REFERENCES[name](data)).astype(np.float32).reshape(got.shape)
            differ = np.count_nonzero(got.view(np.uint32) != other.view(np.uint32))
            assert differ * 10 >= got.size, (name, differ, got.size)


def test_torch_determinism():
    t = torch.randn(2048, 1024, generator=torch.Generator().manual_seed(1)).to(torch.bfloat16)
    first = tessera.sum_to_shape(t, (1024,), max_threads=1)
    for mt in (2, 3, None):
        assert torch.equal(tessera.sum_to_shape(t, (1024,), max_threads=mt).view(torch.int16), first.view(torch.int16))
    x = t.float().requires_grad_()
    grads = []
    for _ in range(3):
        x.grad = None
        tt.expand(x[:1], 2048, 1024).backward(t.float())
        grads.append(x.grad[:1].clone())
    assert all(torch.equal(g.view(torch.int32), grads[0].view(torch.int32)) for g in grads)


def test_gil_is_released_while_summing():
    """A reduction's work is its input: a sum of many elements into one is done with the GIL
    released (this thread keeps running; with the GIL held it would stop for the whole sum)."""
    n = 2**22
    while True:  # zero strides: any number of addends in 4 bytes; enough for a call of 30 ms or more
        src = np.broadcast_to(np.float32(1), (n,))
        t0 = time.perf_counter()
        tessera.sum_to_shape(src, (), max_threads=1)
        if time.perf_counter() - t0 > 0.03 or n >= 2**31:
            break
        n *= 2
    sums = []
    assert_gil_released(lambda: sums.append(tessera.sum_to_shape(src, (), max_threads=1)))
    assert len(sums) >= 2 and all(s == n for s in sums), sums


def test_calls_do_not_leak_references():
    g = np.arange(24, dtype=np.float32).reshape(4, 6)
    t = torch.from_numpy(g.copy()).t()
    out, tout = np.empty((2, 3), np.float32), torch.empty(3, 4)
    counts = torch.tensor([1, 3, 2])
    plan = tessera.Plan.sum_to_shape(g.shape, (1, 6), g.dtype)
    objects = (g, t, out, tout, counts, plan)
    refs = [sys.getrefcount(o) for o in objects]
    for _ in range(1000):
        tessera.tile_backward(g, (2, 3), (2, 2), out=out, accumulate=True)
        tessera.sum_to_shape(t, (6, 1))
        tessera.repeat_backward(t, (3, 4), counts, 0, out=tout)
        plan(g)
        for bad in (lambda: tessera.sum_to_shape(g, (2, 2)), lambda: tessera.sum_to_shape(t, (4, 4), out=tout)):
            with pytest.raises(ValueError):
                bad()
    assert [sys.getrefcount(o) for o in objects] == refs


def test_docstring_examples_run():
    import doctest
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    names = {"tessera.tile_backward", "tessera.sum_to_shape", "tessera.repeat_backward",
             "tessera.Plan.tile_backward", "tessera.Plan.sum_to_shape", "tessera.Plan.repeat_backward"}
    tests = [t for t in finder.find(tessera) if t.name in names] + finder.find(tt)
    assert names <= {t.name for t in tests}
    for t in tests:
        runner.run(t)
    assert runner.failures == 0 and runner.tries >= 40


def test_reference_helpers_agree_with_numpy():
    """The references are right: against numpy's own reshape-sum and np.repeat's adjoint."""
    g = np.arange(24.0).reshape(4, 6)
    assert np.array_equal(ref_tile_backward(g, (2, 3), (2, 2)), g.reshape(2, 2, 2, 3).sum(axis=(0, 2)))
    x = np.arange(6.0).reshape(2, 3)
    for repeats, axis in [([2, 0, 1], 1), (3, None), ([1, 2], 0)]:
        y = np.repeat(x, repeats, axis)
        w = np.arange(y.size, dtype=np.float64).reshape(y.shape)
        # <repeat(x), w> = <x, repeat_backward(w)>
        assert np.isclose((y * w).sum(), (x * ref_repeat_backward(w, x.shape, repeats, axis)).sum())
    for combo in itertools.product([1, 3], repeat=2):
        a = np.ones((3, 3))
        assert ref_sum_to_shape(a, combo).sum() == 9


@pytest.mark.parametrize("counts_dtype", [torch.int32, torch.int64])
def test_repeat_interleave_backward_uses_the_counts_of_its_forward(counts_dtype):
    # torch.repeat_interleave's backward sums with the counts the forward ran with; tessera reads
    # int32/int64 counts in place, so the autograd node must keep its own copy of them.
    x = torch.arange(3.0, requires_grad=True)
    counts = torch.tensor([1, 0, 3], dtype=counts_dtype)
    y = tt.repeat_interleave(x, counts)
    counts.copy_(torch.tensor([3, 0, 1], dtype=counts_dtype))  # same sum, other segments
    g = torch.arange(1.0, 5.0)  # [1, 2, 3, 4]
    y.backward(g)
    assert x.grad.tolist() == [1.0, 0.0, 9.0]  # segments [1] and [2, 3, 4] of the forward's counts
