"""torch tensors through tessera.tile (DLPack, no copy of the input) against torch.tile: torch's own
sample_repeat_tile matrix (torch/testing/_internal/common_methods_invocations.py, as Debian installs
it), each sample as given, transposed and as a stepped view; every torch dtype; out=; errors."""
import sys
import types
import unittest

import numpy as np
import pytest
import torch

import tessera

# torch's test utilities import `expecttest` (a PyPI package Debian does not ship) for their
# TestCase base; sample_repeat_tile needs none of it. Only the two names read at import time.
if "expecttest" not in sys.modules:
    try:
        import expecttest  # noqa: F401
    except ImportError:
        shim = types.ModuleType("expecttest")
        shim.TestCase = unittest.TestCase
        shim.ACCEPT = False
        sys.modules["expecttest"] = shim

from torch.testing._internal.common_methods_invocations import op_db, sample_repeat_tile  # noqa: E402

TILE_OP = next(op for op in op_db if op.name == "tile")
ALL_DTYPES = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float16,
              torch.bfloat16, torch.float32, torch.float64, torch.complex64, torch.complex128]


def layouts(x):
    """x, its transpose (all axes reversed) and a stepped, non-contiguous view of the same values."""
    yield x
    if x.dim() >= 2:
        yield x.permute(*reversed(range(x.dim())))
        yield x.transpose(0, 1).contiguous().transpose(0, 1)  # Fortran order
    if x.numel() > 0 and x.dim() >= 1:
        wide = torch.zeros(*x.shape[:-1], 2 * x.shape[-1], dtype=x.dtype)
        wide[..., ::2] = x
        yield wide[..., ::2]


def check(x, reps, **kwargs):
    expected = torch.tile(x, reps if isinstance(reps, tuple) else (reps,))
    got = tessera.tile(x, reps, **kwargs)
    assert type(got) is torch.Tensor
    assert got.dtype == x.dtype
    assert got.shape == expected.shape, (tuple(x.shape), reps)
    assert got.is_contiguous()
    assert torch.equal(got, expected), (tuple(x.shape), x.stride(), reps)
    if got.numel() and x.numel():
        assert got.data_ptr() != x.data_ptr()


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int64, torch.double, torch.complex128])
def test_sample_repeat_tile(dtype):
    samples = list(sample_repeat_tile(TILE_OP, "cpu", dtype, requires_grad=False))  # a generator in torch 2
    assert len(samples) == 9 * 6  # rep_dims x shapes, as listed in torch 1.13 and 2.13
    checked = 0
    for sample in samples:
        (reps,) = sample.args
        for x in layouts(sample.input):
            check(x, reps)
            checked += 1
    assert checked > len(samples)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_every_dtype_and_layout(dtype):
    gen = torch.Generator().manual_seed(7)
    for shape, reps in [((3, 5), (2, 3)), ((4, 1, 6), (1, 3, 1, 2)), ((70, 9), (3, 1)), ((2, 3, 4), 2)]:
        x = (torch.rand(shape, generator=gen) * 100 - 50).to(dtype)
        for v in layouts(x):
            check(v, reps)


def test_large_threaded_output():
    x = torch.arange(256 * 1024, dtype=torch.float32).reshape(512, 512).t()
    check(x, (2, 3))
    check(x, (2, 3), max_threads=1, nontemporal=True)


def test_lazy_views_and_grad():
    z = torch.randn(3, 4, dtype=torch.complex64)
    check(z.conj(), (2, 2))  # a lazy conjugate: the result holds the conjugated values
    check(torch.randn(3, 4)._neg_view() if hasattr(torch.Tensor, "_neg_view") else -torch.randn(3, 4), (2, 1))
    w = torch.randn(3, 4, requires_grad=True)
    got = tessera.tile(w, (2, 2))
    assert not got.requires_grad
    assert torch.equal(got, torch.tile(w.detach(), (2, 2)))


def test_out():
    x = torch.arange(12, dtype=torch.int32).reshape(3, 4).t()
    out = torch.full((8, 6), -1, dtype=torch.int32)
    assert tessera.tile(x, (2, 2), out=out) is out
    assert torch.equal(out, torch.tile(x, (2, 2)))
    # out overlapping A: A is read whole before out is written
    buf = torch.arange(24, dtype=torch.int64)
    a = buf[:6].view(2, 3)
    expected = torch.tile(a.clone(), (2, 2))
    assert tessera.tile(a, (2, 2), out=buf.view(4, 6)) is not None
    assert torch.equal(buf.view(4, 6), expected)


@pytest.mark.parametrize("bad_out, error, match", [
    (torch.zeros(8, 5, dtype=torch.int32), ValueError, "shape"),
    (torch.zeros(8, 6, dtype=torch.int64), ValueError, "dtype"),
    (torch.zeros(6, 8, dtype=torch.int32).t(), ValueError, "contiguous"),
    (torch.zeros(8, 6, dtype=torch.float32, requires_grad=True), ValueError, "dtype"),
    (np.zeros((8, 6), dtype=np.int32), TypeError, "torch.Tensor"),
])
def test_bad_out_is_untouched(bad_out, error, match):
    x = torch.arange(12, dtype=torch.int32).reshape(3, 4).t()
    before = torch.tensor(bad_out.detach().numpy().copy()) if isinstance(bad_out, torch.Tensor) else bad_out.copy()
    with pytest.raises(error, match=match):
        tessera.tile(x, (2, 2), out=bad_out)
    after = bad_out.detach() if isinstance(bad_out, torch.Tensor) else bad_out
    assert np.array_equal(np.asarray(after), np.asarray(before))


def test_out_requiring_grad():
    x = torch.ones(2, 2)
    out = torch.zeros(4, 4, requires_grad=True)
    with pytest.raises(ValueError, match="requires grad"):
        tessera.tile(x, 2 * [2], out=out)
    assert torch.count_nonzero(out.detach()) == 0


def test_errors():
    x = torch.ones(2, 3)
    with pytest.raises(ValueError, match="device 'meta'"):
        tessera.tile(torch.empty(2, 3, device="meta"), (2, 2))
    with pytest.raises(ValueError, match="layout"):
        tessera.tile(x.to_sparse(), (2, 2))
    with pytest.raises(ValueError, match=r"reps\[1\] = -2"):
        tessera.tile(x, (2, -2))
    with pytest.raises(TypeError, match=r"reps\[0\] = 1.5"):
        tessera.tile(x, (1.5, 2))
    assert tessera.tile(x, (2, -2), negative_reps="clamp_to_zero").shape == (4, 0)


def test_generator_reps_read_once():
    x = torch.ones(2, 3)
    got = tessera.tile(x, (r for r in (2, 2)))
    assert got.shape == (4, 6) and torch.equal(got, torch.ones(4, 6))


def test_out_bumps_the_autograd_version():
    w = torch.ones(4, 4, requires_grad=True)
    out = torch.zeros(4, 4)
    y = (w * out).sum()  # saves out for backward
    version = out._version
    tessera.tile(torch.full((2, 2), 3.0), (2, 2), out=out)
    assert out._version > version
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_quantized_is_typeerror():
    q = torch.quantize_per_tensor(torch.ones(2, 2), 0.1, 0, torch.qint8)
    with pytest.raises(TypeError, match="quantized"):
        tessera.tile(q, (2, 2))


def test_torch_calls_do_not_leak():
    x = torch.arange(12, dtype=torch.float32).reshape(3, 4).t()
    out = torch.empty(8, 6)
    refs = sys.getrefcount(x), sys.getrefcount(out)
    for _ in range(2000):
        tessera.tile(x, (2, 2))
        tessera.tile(x, [2, 2], out=out)
    assert (sys.getrefcount(x), sys.getrefcount(out)) == refs
