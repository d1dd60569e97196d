"""tessera.broadcast_to, expand, repeat and their Plans: numpy's own TestRepeat and broadcast_to tests
(the installed numpy's files, run with the function replaced), ONNX's Expand node data (Debian
libonnx-testdata), torch's own samples for repeat_interleave and expand; randomized against
numpy.broadcast_to(...).copy() and numpy.repeat over dtypes and layouts, with and without out=;
regions; every error class with out untouched; outputs past the thread and fresh-page thresholds."""
import doctest
import importlib
import inspect
import itertools
import sys
import types
import unittest
import zlib
from pathlib import Path

import numpy as np
import numpy.lib.tests.test_stride_tricks as numpy_stride_tests
import pytest
import torch

import tessera

from conftest import AxisError
from test_tile import DTYPES, NUMPY_MAX_NDIM, layouts, random_array, same_values

# numpy's TestRepeat: numpy/_core/tests from numpy 2 on, numpy/core/tests before.
numpy_multiarray_tests = importlib.import_module(
    "numpy._core.tests.test_multiarray" if np.lib.NumpyVersion(np.__version__) >= "2.0.0" else
    "numpy.core.tests.test_multiarray")


def test_docstring_examples_run():
    """The family's examples are doctests (test_tile.py runs the whole module's); these ran."""
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    names = {"tessera.broadcast_to", "tessera.expand", "tessera.repeat", "tessera.Plan.broadcast_to",
             "tessera.Plan.expand", "tessera.Plan.repeat"}
    tests = [t for t in finder.find(tessera) if t.name in names]
    assert {t.name for t in tests} == names
    for t in tests:
        assert t.examples, t.name
        runner.run(t)
    assert runner.failures == 0 and runner.tries >= 30


# --- numpy's own tests ---------------------------------------------------------------------------

REPEAT_METHODS = sorted(name for name in vars(numpy_multiarray_tests.TestRepeat) if name.startswith("test_"))


def test_testrepeat_is_numpys_own():
    assert numpy_multiarray_tests.__file__.startswith(str(np.__path__[0]))
    # numpy 1.24: test_basic, test_broadcast1, test_axis_spec, test_broadcast2
    assert len(REPEAT_METHODS) >= 4, REPEAT_METHODS
    assert numpy_multiarray_tests.np is np


class _NumpyWithTesseraRepeat(types.ModuleType):
    """numpy as TestRepeat sees it (its methods call np.repeat): numpy, but repeat."""

    def __init__(self, repeat):
        super().__init__("numpy")
        self.repeat = repeat

    def __getattr__(self, name):
        return getattr(np, name)


@pytest.mark.parametrize("name", REPEAT_METHODS)
def test_numpy_testrepeat(name, monkeypatch):
    calls = []

    def repeat(a, repeats, axis=None):
        calls.append((np.shape(a), repeats, axis))
        return tessera.repeat(a, repeats, axis=axis)

    monkeypatch.setattr(numpy_multiarray_tests, "np", _NumpyWithTesseraRepeat(repeat))
    case = numpy_multiarray_tests.TestRepeat()
    if hasattr(case, "setup_method"):  # numpy 1.x; numpy 2's TestRepeat makes its data in each test
        case.setup_method()
    getattr(case, name)()
    assert calls, f"numpy's TestRepeat.{name} did not call repeat"


def _functions_calling_broadcast_to():
    return sorted(name for name, f in vars(numpy_stride_tests).items()
                  if name.startswith("test_") and inspect.isfunction(f) and "broadcast_to(" in inspect.getsource(f))


# The numpy tests that call broadcast_to but check what only a view can have; what they check of
# shapes and values is asserted by test_view_only_tests_shape_and_values below.
VIEW_ONLY = {
    "test_writeable": "checks that broadcast_to returns a read-only view; tessera's result is a new, "
                      "writeable array",
    "test_subclasses": "checks broadcast_to(..., subok=True) keeping a subclass view; tessera writes a "
                       "new base ndarray (no subok)",
    "test_reference_types": "broadcasts an object array; tessera copies bytes and refuses object dtypes "
                            "(TypeError), as tessera.tile does",
}
BROADCAST_TESTS = [name for name in _functions_calling_broadcast_to() if name not in VIEW_ONLY]


def test_broadcast_to_tests_are_numpys_own():
    assert numpy_stride_tests.__file__.startswith(str(np.__path__[0]))
    assert numpy_stride_tests.broadcast_to is np.broadcast_to
    assert {"test_broadcast_to_succeeds", "test_broadcast_to_raises"} <= set(BROADCAST_TESTS)
    # every numpy test that calls broadcast_to is run or skipped with its reason: none is missed
    assert set(_functions_calling_broadcast_to()) == set(BROADCAST_TESTS) | set(VIEW_ONLY)


@pytest.mark.parametrize("name", BROADCAST_TESTS + sorted(VIEW_ONLY))
def test_numpy_broadcast_to_tests(name, monkeypatch):
    if name in VIEW_ONLY:
        pytest.skip(VIEW_ONLY[name])
    calls = []

    def broadcast_to(array, shape, subok=False):
        assert not subok
        calls.append(shape)
        return tessera.broadcast_to(array, shape)

    monkeypatch.setattr(numpy_stride_tests, "broadcast_to", broadcast_to)
    getattr(numpy_stride_tests, name)()
    assert calls, f"numpy's {name} did not call broadcast_to"


def test_view_only_tests_shape_and_values():
    # test_writeable: the values and shape are numpy's; the array is a writeable copy
    original = np.array([1, 2, 3])
    result = tessera.broadcast_to(original, (2, 3))
    assert result.tolist() == [[1, 2, 3], [1, 2, 3]]
    assert result.flags.writeable and not np.shares_memory(result, original)
    result[:] = 0
    assert original.tolist() == [1, 2, 3]
    # test_subclasses: a subclass is read as its base ndarray; the shape is the one asked for
    a = numpy_stride_tests.SimpleSubClass([1, 2, 3, 4])
    got = tessera.broadcast_to(a, (2, 4))
    assert type(got) is np.ndarray and got.shape == (2, 4) and got.tolist() == [[1, 2, 3, 4]] * 2
    # test_reference_types: object arrays are refused, not copied pointer by pointer
    with pytest.raises(TypeError, match="holds Python objects"):
        tessera.broadcast_to(np.array("a", dtype=object), (3,))


# --- ONNX's Expand node data -----------------------------------------------------------------------

NODE_DATA = Path("/usr/share/libonnx-testdata/data/node")
EXPAND_DATA_SETS = sorted(NODE_DATA.glob("test_expand_dim_*/test_data_set_*"))


def read_tensor(path):
    import onnx
    from onnx import numpy_helper

    tensor = onnx.TensorProto()
    tensor.ParseFromString(path.read_bytes())
    return numpy_helper.to_array(tensor)


def test_onnx_expand_data_found():
    assert {p.parent.name for p in EXPAND_DATA_SETS} >= {"test_expand_dim_changed", "test_expand_dim_unchanged"}


@pytest.mark.parametrize("data_set", EXPAND_DATA_SETS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_onnx_expand(data_set):
    import onnx

    model = onnx.load(str(data_set.parent / "model.onnx"))
    assert [node.op_type for node in model.graph.node] == ["Expand"]
    inputs = [read_tensor(p) for p in sorted(data_set.glob("input_*.pb"))]
    expected = read_tensor(data_set / "output_0.pb")
    assert len(inputs) == 2 and inputs[1].dtype == np.int64
    got = tessera.expand(inputs[0], inputs[1])
    assert got.dtype == expected.dtype and got.shape == expected.shape and got.size > 0
    np.testing.assert_array_equal(got, expected)
    out = np.empty_like(expected)
    assert tessera.expand(inputs[0], inputs[1], out=out) is out
    np.testing.assert_array_equal(out, expected)
    plan = tessera.Plan.expand(inputs[0].shape, inputs[1], inputs[0].dtype)
    np.testing.assert_array_equal(plan(inputs[0]), expected)


# --- torch ---------------------------------------------------------------------------------------

# torch's test utilities import `expecttest` (a PyPI package Debian does not ship) for their
# TestCase base; the sample functions need none of it (as test_torch.py).
if "expecttest" not in sys.modules:
    try:
        import expecttest  # noqa: F401
    except ImportError:
        shim = types.ModuleType("expecttest")
        shim.TestCase = unittest.TestCase
        shim.ACCEPT = False
        sys.modules["expecttest"] = shim

from torch.testing._internal.common_methods_invocations import op_db  # noqa: E402

TORCH_DTYPES = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float16,
                torch.bfloat16, torch.float32, torch.float64, torch.complex64, torch.complex128]


def torch_layouts(x, keep_shape=False):
    """x, its transpose (all axes reversed; not with keep_shape), Fortran order and a stepped view
    of the same values."""
    yield x
    if x.dim() >= 2:
        if not keep_shape:
            yield x.permute(*reversed(range(x.dim())))
        yield x.transpose(0, 1).contiguous().transpose(0, 1)
    if x.numel() > 0 and x.dim() >= 1:
        wide = torch.zeros(*x.shape[:-1], 2 * x.shape[-1], dtype=x.dtype)
        wide[..., ::2] = x
        yield wide[..., ::2]


def check_tensor(got, expected, x):
    assert type(got) is torch.Tensor
    assert got.dtype == expected.dtype == x.dtype
    assert got.shape == expected.shape and got.is_contiguous()
    assert torch.equal(got, expected), (tuple(x.shape), x.stride())
    if got.numel() and x.numel():
        assert got.data_ptr() != x.data_ptr()


def resolve_minus_one(shape, target):
    """Tensor.expand's -1 (keep the input's extent) resolved: numpy's broadcast_to has none."""
    pad = len(target) - len(shape)
    return tuple(shape[i - pad] if t == -1 else t for i, t in enumerate(target))


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int64, torch.float32, torch.complex128], ids=str)
def test_torch_samples_expand(dtype):
    op = next(op for op in op_db if op.name == "expand")
    samples = list(op.sample_inputs("cpu", dtype, requires_grad=False))
    assert len(samples) >= 9  # torch 1.13 lists 9 cases
    checked = 0
    for sample in samples:
        (target,) = sample.args
        for x in torch_layouts(sample.input, keep_shape=True):
            expected = x.expand(tuple(target)).contiguous()
            shape = resolve_minus_one(tuple(x.shape), target)
            check_tensor(tessera.broadcast_to(x, shape), expected, x)
            check_tensor(tessera.expand(x, shape), expected, x)  # ONNX Expand agrees where the target is larger
            checked += 1
    assert checked > len(samples)


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int64, torch.float32, torch.complex128], ids=str)
def test_torch_samples_repeat_interleave(dtype):
    op = next(op for op in op_db if op.name == "repeat_interleave")
    samples = list(op.sample_inputs("cpu", dtype, requires_grad=False))
    assert len(samples) >= 4  # torch 1.13: scalar, flattened, along dim 1, tensor counts along dim 1
    assert any(isinstance(s.kwargs["repeats"], torch.Tensor) for s in samples)
    checked = 0
    for sample in samples:
        repeats, dim = sample.kwargs["repeats"], sample.kwargs.get("dim")
        # A tensor of counts fits only the input's own extent along dim: no transposed layout then.
        per_element = isinstance(repeats, torch.Tensor) and repeats.numel() > 1
        for x in torch_layouts(sample.input, keep_shape=per_element):
            expected = torch.repeat_interleave(x, repeats, dim=dim)
            check_tensor(tessera.repeat(x, repeats, axis=dim), expected, x)
            total = expected.shape[dim if dim is not None else 0]
            check_tensor(tessera.repeat(x, repeats, axis=dim, output_size=total), expected, x)
            checked += 1
    assert checked > len(samples)


@pytest.mark.parametrize("dtype", TORCH_DTYPES, ids=str)
def test_torch_every_dtype_and_layout(dtype):
    gen = torch.Generator().manual_seed(11)
    for shape, target, counts, dim in [((3, 1), (2, 3, 5), [2, 0, 3], 0), ((1, 6), (4, 6), 3, 1),
                                       ((2, 1, 4), (2, 3, 4), [1, 2, 0, 1], -1), ((5,), (3, 5), [1], None)]:
        x = (torch.rand(shape, generator=gen) * 100 - 50).to(dtype)
        for v in torch_layouts(x, keep_shape=True):
            check_tensor(tessera.broadcast_to(v, target), v.expand(target).contiguous(), v)
            check_tensor(tessera.expand(v, (1,) * len(shape)), v.contiguous(), v)
            check_tensor(tessera.repeat(v, counts, axis=dim),
                         torch.repeat_interleave(v, torch.tensor(counts) if isinstance(counts, list) else counts,
                                                 dim=dim), v)


def test_torch_out_errors_and_large():
    x = torch.arange(12, dtype=torch.int32).reshape(3, 4).t()  # (4, 3), transposed
    out = torch.full((2, 4, 3), -1, dtype=torch.int32)
    assert tessera.broadcast_to(x, (2, 4, 3), out=out) is out
    assert torch.equal(out, x.expand(2, 4, 3))
    out = torch.full((8, 3), -1, dtype=torch.int32)
    assert tessera.repeat(x, torch.tensor([2]), axis=0, out=out) is out
    assert torch.equal(out, torch.repeat_interleave(x, 2, dim=0))
    # out overlapping A
    buf = torch.arange(24, dtype=torch.int64)
    a = buf[:6]
    expected = torch.repeat_interleave(a.clone(), 4)
    tessera.repeat(a, 4, out=buf)
    assert torch.equal(buf, expected)
    # errors: nothing written
    out = torch.full((8, 3), 7, dtype=torch.int32)
    with pytest.raises(ValueError, match="output_size = 9"):
        tessera.repeat(x, 2, axis=0, out=out, output_size=9)
    with pytest.raises(ValueError, match=r"repeats\[1\] = -1 is negative"):
        tessera.repeat(x, torch.tensor([1, -1, 1, 1]), axis=0, out=out)
    with pytest.raises(AxisError, match="axis 2 is out of bounds for array of dimension 2"):
        tessera.repeat(x, 2, axis=2, out=out)
    with pytest.raises(ValueError, match="out has dtype"):
        tessera.repeat(x, 2, axis=0, out=out.to(torch.int64))
    with pytest.raises(TypeError, match="torch.Tensor"):
        tessera.repeat(x, 2, axis=0, out=out.numpy())
    with pytest.raises(ValueError, match="input axis 0 has extent 4 but shape"):
        tessera.broadcast_to(x, (3, 3), out=out)
    assert (out == 7).all()
    with pytest.raises(ValueError, match="device 'meta'"):
        tessera.expand(torch.empty(2, 3, device="meta"), (2, 3))
    # large: the threaded path (8 MiB) and the lazy views torch has
    big = torch.arange(1024, dtype=torch.float64).reshape(1024, 1)
    check_tensor(tessera.broadcast_to(big, (1024, 1024)), big.expand(1024, 1024).contiguous(), big)
    z = torch.randn(64, 32, dtype=torch.complex64)
    check_tensor(tessera.repeat(z.conj(), 3, axis=1), torch.repeat_interleave(z.conj().resolve_conj(), 3, dim=1),
                 z)
    w = torch.randn(3, 1, requires_grad=True)
    got = tessera.expand(w, (3, 4))
    assert not got.requires_grad and torch.equal(got, w.detach().expand(3, 4))


# --- randomized against numpy ------------------------------------------------------------------------


def random_shape(rng):
    return tuple(int(rng.choice([0, 1, 1, 2, 3, 5])) for _ in range(rng.integers(0, 4)))


def random_target(rng, shape, bidirectional):
    """A target for an input of `shape`: broadcast_to's (the target has every input axis, each
    input extent 1 or the target's) or, bidirectional, expand's (either side may be 1 or shorter)."""
    target = [int(rng.choice([0, 1, 2, 4])) if e == 1 else e for e in shape]
    target = [int(rng.choice([1, 2, 3])) for _ in range(rng.integers(0, 3))] + target
    if bidirectional:
        target = [1 if rng.random() < 0.3 else t for t in target][int(rng.integers(0, 2)):]
    return tuple(target)


def counts_forms(counts, rng):
    """repeat's counts as the user may give them."""
    forms = [counts, list(counts), np.array(counts, dtype=np.int32), np.array(counts, dtype=np.uint8),
             tuple(np.int64(c) for c in counts), torch.tensor(counts, dtype=torch.int64)]
    if len(counts) == 1:
        forms += [counts[0], np.int16(counts[0]), np.array(counts[0])]
    return forms[int(rng.integers(len(forms)))]


def random_counts(rng, shape):
    """repeat's counts and axis for an input of `shape`."""
    if not shape or rng.random() < 0.3:
        axis, extent = None, int(np.prod(shape))
    else:
        axis = int(rng.integers(-len(shape), len(shape)))
        extent = shape[axis]
    if rng.random() < 0.4:
        counts = [int(rng.integers(0, 4))]
    else:
        counts = [int(c) for c in rng.integers(0, 4, size=extent)]
    return counts, axis


def check_family(op, a, arg, expected, axis=None, out=False):
    """tessera's op on a equals `expected`: a new C-contiguous writeable array of a's dtype sharing no
    memory with a (or the given out, with out=True)."""
    kwargs = {} if axis is None else {"axis": axis}
    if out:
        got = np.empty(expected.shape, dtype=a.dtype)
        if got.itemsize:
            got.reshape(-1).view(np.uint8)[...] = 0x5A  # bytes the result must overwrite
        assert getattr(tessera, op)(a, arg, out=got, **kwargs) is got
    else:
        got = getattr(tessera, op)(a, arg, **kwargs)
        assert type(got) is np.ndarray
        assert got.flags.c_contiguous and got.flags.writeable
        assert not np.shares_memory(got, a)
    assert got.dtype == a.dtype
    assert got.shape == expected.shape, (op, a.shape, arg, axis)
    assert same_values(got, expected), (op, a.shape, a.strides, arg, axis)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_random_against_numpy(dtype):
    rng = np.random.default_rng(zlib.crc32(b"family" + str(dtype).encode()))
    checked = 0
    for k in range(20):
        a = random_array(rng, random_shape(rng), dtype)
        for (_, view), out in zip(layouts(a), itertools.cycle([k % 2 == 0, k % 2 == 1])):
            target = random_target(rng, view.shape, False)
            check_family("broadcast_to", view, target, np.broadcast_to(view, target).copy(), out=out)
            target = random_target(rng, view.shape, True)
            expected = np.broadcast_to(view, np.broadcast_shapes(view.shape, target)).copy()
            check_family("expand", view, target, expected, out=not out)
            counts, axis = random_counts(rng, view.shape)
            check_family("repeat", view, counts_forms(counts, rng), np.repeat(view, counts, axis=axis), axis=axis,
                         out=out)
            checked += 3
    assert checked > 300


def test_seeds():
    x = np.array([[1, 2], [3, 4]])
    assert tessera.repeat(3, 4).tolist() == [3, 3, 3, 3]
    assert tessera.repeat(x, 2).tolist() == [1, 1, 2, 2, 3, 3, 4, 4]
    assert tessera.repeat(x, 3, axis=1).tolist() == [[1, 1, 1, 2, 2, 2], [3, 3, 3, 4, 4, 4]]
    assert tessera.repeat(x, [1, 2], axis=0).tolist() == [[1, 2], [3, 4], [3, 4]]
    assert tessera.repeat(x, [1, 2, 0, 3]).tolist() == [1, 2, 2, 4, 4, 4]
    assert tessera.repeat(np.array(5), 3, axis=0).tolist() == np.repeat(np.array(5), 3, axis=0).tolist()
    assert tessera.repeat(np.array(5), [2], axis=-1).tolist() == [5, 5]
    assert tessera.repeat(np.zeros((0, 3)), [], axis=0).shape == (0, 3)
    assert tessera.repeat(np.zeros((2, 3)), np.array([True, False]), axis=0).shape == (1, 3)
    assert tessera.broadcast_to(x[:, :1], (3, 2, 4)).tolist() == [[[1] * 4, [3] * 4]] * 3
    assert tessera.broadcast_to(7, 3).tolist() == [7, 7, 7]
    assert tessera.broadcast_to([1.5], (2, 0)).shape == (2, 0)
    assert tessera.expand(x, (3, 1, 1)).tolist() == [x.tolist()] * 3
    assert tessera.expand(x[:1], ()).tolist() == [[1, 2]]
    assert tessera.expand(np.arange(3).reshape(3, 1), (2, 1, 4)).shape == (2, 3, 4)
    a = np.zeros((2, 3), dtype=[])  # itemsize 0: only a shape to make
    assert tessera.broadcast_to(a, (4, 2, 3)).shape == (4, 2, 3)
    assert tessera.repeat(a, 2, axis=1).shape == (2, 6)
    assert tessera.expand(a, (2, 1, 1)).shape == (2, 2, 3)


@pytest.mark.parametrize("op", ["broadcast_to", "expand", "repeat"])
def test_plan_and_regions(op):
    rng = np.random.default_rng(zlib.crc32(op.encode()))
    plans = 0
    for k in range(40):
        dtype = [np.int8, np.float32, ">i2", np.complex128, "V3"][k % 5]
        views = [view for _, view in layouts(random_array(rng, random_shape(rng), dtype))]
        a = views[k % len(views)]
        if op == "repeat":
            counts, axis = random_counts(rng, a.shape)
            arg = counts_forms(counts, rng)
        else:
            arg = random_target(rng, a.shape, op == "expand")
        if op == "repeat":
            expected = np.repeat(a, counts, axis=axis)
            plan = tessera.Plan.repeat(a.shape, arg, a.dtype, axis=axis, strides=a.strides)
        else:
            expected = np.broadcast_to(a, np.broadcast_shapes(a.shape, arg)).copy()
            plan = getattr(tessera.Plan, op)(a.shape, arg, a.dtype, strides=a.strides)
        assert isinstance(plan, tessera.Plan) and plan.operation == op
        assert plan.out_shape == expected.shape and plan.ndim == expected.ndim
        assert plan.nbytes == expected.nbytes and plan.itemsize == a.itemsize
        assert plan.shape == a.shape and plan.strides == a.strides and plan.dtype == a.dtype
        assert plan.kernel_path.split(".")[0] in {"none", "copy", "pattern", "fill", "gather", "repeat", "segments"}
        assert f"{op} plan" in plan.describe() and "kernel:" in plan.describe()
        assert repr(plan).startswith(f"tessera.Plan.{op}(")
        assert same_values(plan(a), expected)
        out = np.empty(expected.shape, a.dtype)
        assert plan(a, out=out) is out and same_values(out, expected)
        for _ in range(4):
            start = tuple(int(rng.integers(0, n + 1)) for n in expected.shape)
            extent = tuple(int(rng.integers(0, n - s + 1)) for s, n in zip(start, expected.shape))
            sl = tuple(slice(s, s + e) for s, e in zip(start, extent)) + (Ellipsis,)  # an array, also 0-d
            region = plan.execute_region(a, start, extent)
            assert region.shape == extent and same_values(region, expected[sl]), (start, extent)
            out = np.empty(extent, a.dtype)
            assert plan.execute_region(a, start, extent, out=out) is out and same_values(out, expected[sl])
        plans += 1
    assert plans == 40


def test_plan_reads_counts_once_and_keeps_options():
    counts = np.array([3, 0, 2])
    plan = tessera.Plan.repeat((3,), counts, np.int32, max_threads=1, nontemporal=False)
    counts[:] = 9  # the plan copied them
    assert plan(np.arange(3, dtype=np.int32)).tolist() == [0, 0, 0, 2, 2]
    plan = tessera.Plan.repeat((3, 2), torch.tensor([2]), np.int32, axis=0)
    assert plan.out_shape == (6, 2)
    plan = tessera.Plan.broadcast_to((1, 3), (4, 3), "<u2", nontemporal=True)
    odd = np.lib.stride_tricks.as_strided(np.arange(3, dtype="<u2"), (1, 3), (999, 2))  # size-1 axis stride
    assert plan(odd).tolist() == [[0, 1, 2]] * 4


def test_plan_errors():
    with pytest.raises(ValueError, match="input axis 0 has extent 3 but shape"):
        tessera.Plan.broadcast_to((3,), (2,), np.int8)
    with pytest.raises(ValueError, match="input axis 1 has extent 3 but shape"):
        tessera.Plan.expand((2, 3), (2, 4), np.int8)
    with pytest.raises(AxisError, match="axis -3 is out of bounds for array of dimension 2"):
        tessera.Plan.repeat((2, 3), 2, np.int8, axis=-3)
    with pytest.raises(ValueError, match=r"repeats\[0\] = -1"):
        tessera.Plan.repeat((2, 3), [-1, 2], np.int8, axis=0)
    with pytest.raises(TypeError, match="holds Python objects"):
        tessera.Plan.broadcast_to((2,), (2, 2), object)
    with pytest.raises(ValueError, match="max_threads = 0"):
        tessera.Plan.expand((2,), (2, 2), np.int8, max_threads=0)
    plan = tessera.Plan.repeat((2, 3), [1, 2, 0], np.int16, axis=1)
    good = np.arange(6, dtype=np.int16).reshape(2, 3)
    out = np.full((2, 3), 5, np.int16)
    with pytest.raises(ValueError, match=r"A has shape \(3, 2\)"):
        plan(good.reshape(3, 2), out=out)
    with pytest.raises(ValueError, match="strides"):
        plan(np.asfortranarray(good), out=out)
    with pytest.raises(ValueError, match="region axis 1"):
        plan.execute_region(good, (0, 2), (2, 2), out=out[:, :2].copy())
    assert (out == 5).all()


# --- errors ------------------------------------------------------------------------------------------

ERRORS = [
    ("broadcast_to", dict(arg=(2, 2)), ValueError, r"input axis 1 has extent 3 but shape\[1\] = 2"),
    ("broadcast_to", dict(arg=(3,)), ValueError, r"the input has 2 axes but shape \(3,\) has 1"),
    ("broadcast_to", dict(arg=(2, -3)), ValueError, r"shape\[1\] = -3 is negative"),
    ("broadcast_to", dict(arg=(2, 3.0)), TypeError, r"shape\[1\] = 3.0 \(float\) is not an integer"),
    ("broadcast_to", dict(arg=(2**40, 2**40, 2, 3)), ValueError, "overflow|too big"),
    ("broadcast_to", dict(arg=(1,) * 65), ValueError, "more than 64"),
    # numpy 1.x's arrays hold at most 32 axes (numpy 2's 64: tessera's limit, the case above).
    *([("broadcast_to", dict(arg=(1,) * 31 + (2, 3), numpy_only=True), ValueError,
        "33 axes; numpy arrays have at most 32")] if NUMPY_MAX_NDIM == 32 else []),
    ("broadcast_to", dict(arg=(2, 3), max_threads=0), ValueError, "max_threads = 0"),
    ("broadcast_to", dict(arg=(2, 3), nontemporal="yes"), TypeError, "nontemporal = 'yes'"),
    ("expand", dict(arg=(4, 1)), ValueError, r"input axis 0 has extent 2 but shape\[0\] = 4"),
    ("expand", dict(arg=(2, 5)), ValueError, "input axis 1 has extent 3"),
    ("expand", dict(arg=(-1, 3)), ValueError, r"shape\[0\] = -1 is negative"),
    ("expand", dict(arg=["a"]), TypeError, r"shape\[0\] = 'a'"),
    ("repeat", dict(arg=2, axis=2), AxisError, "axis 2 is out of bounds for array of dimension 2"),
    ("repeat", dict(arg=2, axis=-3), AxisError, "axis -3 is out of bounds for array of dimension 2"),
    ("repeat", dict(arg=2, axis=2**70), AxisError, "axis 1180591620717411303424 is out of bounds"),
    ("repeat", dict(arg=2, axis=1.0), TypeError, r"axis = 1.0 \(float\) is not an integer"),
    ("repeat", dict(arg=-2), ValueError, r"repeats\[0\] = -2 is negative"),
    ("repeat", dict(arg=[1, -1, 1], axis=1), ValueError, r"repeats\[1\] = -1 is negative"),
    ("repeat", dict(arg=[1, 2], axis=1), ValueError, "2 counts for 3 elements along axis 1"),
    ("repeat", dict(arg=[1, 2, 3]), ValueError, "3 counts for 6 elements along the flattened input"),
    ("repeat", dict(arg=np.ones((2, 3), int)), ValueError, "2-d array"),
    ("repeat", dict(arg=2.0), TypeError, r"repeats\[0\] = 2.0 \(float\) is not an integer"),
    ("repeat", dict(arg=np.array([1.0, 2.0, 1.0]), axis=1), TypeError, r"repeats\[0\] = 1.0 \(float\)"),
    ("repeat", dict(arg=np.array([2**63, 1, 1], np.uint64), axis=1), ValueError,
     r"repeats\[0\] = 9223372036854775808 is too large"),
    ("repeat", dict(arg=2**64), ValueError, r"repeats\[0\] = 18446744073709551616 is too large"),
    ("repeat", dict(arg=2**62, axis=1), ValueError, "overflow"),
    ("repeat", dict(arg=2, axis=0, output_size=5), ValueError,
     r"output_size = 5 but the result has 4 elements along axis 0"),
    ("repeat", dict(arg=2, output_size=11), ValueError, "output_size = 11 but the result has 12 elements"),
    ("repeat", dict(arg=2, output_size="12"), TypeError, "output_size = '12'"),
    ("repeat", dict(arg=2, max_threads=1.5), TypeError, "max_threads"),
]


@pytest.mark.parametrize("op, kwargs, error, match", ERRORS, ids=lambda v: getattr(v, "__name__", None))
def test_errors_name_the_value_and_leave_out_untouched(op, kwargs, error, match):
    a = np.arange(6, dtype=np.int16).reshape(2, 3)
    kwargs = dict(kwargs)
    arg = kwargs.pop("arg")
    inputs = (a,) if kwargs.pop("numpy_only", False) else (a, torch.from_numpy(a))
    out = np.full(12, 77, dtype=np.int16)
    for A in inputs:
        with pytest.raises(error, match=match):
            getattr(tessera, op)(A, arg, **kwargs)
        dst = out if isinstance(A, np.ndarray) else torch.from_numpy(out)
        for shape in [(12,), (4, 3), (2, 6), (2, 2, 3)]:  # out of each shape a valid call would give
            with pytest.raises(error, match=match):
                getattr(tessera, op)(A, arg, out=dst.reshape(shape), **kwargs)
    assert (out == 77).all()


def test_axis_error_is_valueerror_and_indexerror():
    with pytest.raises(ValueError):
        tessera.repeat(np.arange(3), 2, axis=1)
    with pytest.raises(IndexError):
        tessera.repeat(np.arange(3), 2, axis=-2)
    with pytest.raises(AxisError, match="axis 1 is out of bounds for array of dimension 1"):
        tessera.repeat(np.array(5), 2, axis=1)  # a 0-d array is read as 1-d, as numpy does


def bad_outs():
    yield np.zeros((4, 4), np.int32), ValueError, r"out has shape \(4, 4\) but the result has shape \(4, 3\)"
    yield np.zeros((4, 3), np.int64), ValueError, "out has dtype dtype\\('int64'\\)"
    yield np.zeros((4, 3), ">i4"), ValueError, "out has dtype"
    yield np.zeros((3, 4), np.int32).T, ValueError, "not C-contiguous"
    ro = np.zeros((4, 3), np.int32)
    ro.flags.writeable = False
    yield ro, ValueError, "read-only"
    yield [[0] * 3] * 4, TypeError, "out must be a numpy.ndarray"
    yield torch.zeros(4, 3, dtype=torch.int32), TypeError, "out must be a numpy.ndarray"


@pytest.mark.parametrize("out, error, match", list(bad_outs()), ids=lambda v: getattr(v, "__name__", ""))
@pytest.mark.parametrize("op, arg, kwargs", [("broadcast_to", (4, 3), {}), ("expand", (4, 1), {}),
                                             ("repeat", [3, 1], dict(axis=0))])
def test_bad_out_is_untouched(op, arg, kwargs, out, error, match):
    a = np.arange(6, dtype=np.int32).reshape(2, 3)[:, ::-1]
    if op != "repeat":
        a = a[:1]
    before = out.clone() if isinstance(out, torch.Tensor) else np.array(out, copy=True)
    with pytest.raises(error, match=match):
        getattr(tessera, op)(a, arg, out=out, **kwargs)
    if isinstance(out, torch.Tensor):
        assert torch.equal(out, before)
    else:
        assert np.array_equal(np.asarray(out), before)


def test_object_dtype_is_typeerror():
    for op, arg in [("broadcast_to", (2, 3)), ("expand", (2, 1)), ("repeat", 2)]:
        with pytest.raises(TypeError, match="holds Python objects"):
            getattr(tessera, op)(np.array([1, "a", None], dtype=object), arg)


# --- out=, overlap, large outputs -----------------------------------------------------------------


def test_out_overlapping_A():
    buf = np.arange(24, dtype=np.int64)
    a = buf[:6].reshape(2, 3)
    expected = np.repeat(a.copy(), 4, axis=0)
    assert tessera.repeat(a, 4, axis=0, out=buf.reshape(8, 3)) is not None
    assert np.array_equal(buf.reshape(8, 3), expected)
    buf = np.arange(4 * 10**5, dtype=np.float32)
    a = buf[-1::-4000].reshape(100, 1)  # reversed, stepped, inside the output
    expected = np.broadcast_to(a.copy(), (100, 4000)).copy()
    out = buf.reshape(100, 4000)
    tessera.broadcast_to(a, (100, 4000), out=out)
    assert np.array_equal(out, expected)
    plan = tessera.Plan.repeat((6,), [1, 2, 3, 1, 2, 3], np.int32)
    buf = np.arange(64, dtype=np.int32)
    a = buf[:6]
    expected = np.repeat(a.copy(), [1, 2, 3, 1, 2, 3])[2:9]
    region_out = buf[3:10]
    assert plan.execute_region(a, (2,), (7,), out=region_out) is region_out
    assert np.array_equal(region_out, expected)


LARGE_LAYOUTS = ["C", "transposed", "reversed", "stepped", "zero-stride"]


@pytest.mark.parametrize("layout", LARGE_LAYOUTS)
def test_large_outputs(layout):
    """Outputs of several MiB (written by more than one thread) with every option."""
    a = dict(layouts(np.arange(384 * 256, dtype=np.float32).reshape(384, 256)))[layout]
    column = a[:, :1]
    target = (4, a.shape[0], 1024)
    counts = np.arange(a.shape[1]) % 5 + 14  # per-element counts, 16 on average
    for options in [{}, dict(max_threads=1), dict(max_threads=2, nontemporal=True), dict(nontemporal=False)]:
        got = tessera.broadcast_to(column, target, **options)  # up to 6 MiB
        assert np.array_equal(got, np.broadcast_to(column, target))
        got = tessera.expand(a, (4, 1, 1), **options)
        assert np.array_equal(got, np.broadcast_to(a, (4,) + a.shape))
        got = tessera.repeat(a, counts, axis=1, **options)  # up to 6 MiB
        assert np.array_equal(got, np.repeat(a, counts, axis=1))
    out = np.empty((2, a.shape[0], a.shape[1] * 8), np.float32)
    with pytest.raises(ValueError, match="not C-contiguous"):
        tessera.expand(a, (2, 1, 1), out=out[:, :, :a.shape[1]])
    assert tessera.repeat(a[None], 8, axis=2, out=out[:1]) is not None
    assert np.array_equal(out[0], np.repeat(a, 8, axis=1))
    rows = out[0].reshape(-1, 8, a.shape[1])
    assert tessera.broadcast_to(a[:, None, :], rows.shape, out=rows) is rows
    assert np.array_equal(rows, np.broadcast_to(a[:, None, :], rows.shape))


def test_fresh_page_path():
    """New outputs of 256 KiB or more come from tessera's allocator (adopted by the array), on a
    64-byte line (huge-page blocks from 32 MiB); smaller ones from numpy's."""
    a = np.arange(4096, dtype=np.float64).reshape(4096, 1)
    got = tessera.broadcast_to(a, (4096, 1100))  # 34 MiB
    assert got.flags.c_contiguous and got.flags.writeable
    assert type(got.base).__name__ == "PyCapsule"  # tessera's memory, freed with the array
    assert np.array_equal(got, np.broadcast_to(a, (4096, 1100)))
    got = tessera.repeat(a.T, 1100, axis=0)
    assert type(got.base).__name__ == "PyCapsule"
    assert got.shape == (1100, 4096) and np.array_equal(got, np.repeat(a.T, 1100, axis=0))
    for count in (8, 40):  # 256 KiB and 1.25 MiB: malloc's blocks, each starting on a line
        mid = tessera.repeat(a.T, count, axis=0)
        assert type(mid.base).__name__ == "PyCapsule" and mid.ctypes.data % 64 == 0
        assert np.array_equal(mid, np.repeat(a.T, count, axis=0))
    small = tessera.repeat(a.T, 7, axis=0)  # 224 KiB: numpy's allocator
    assert small.base is None and np.array_equal(small, np.repeat(a.T, 7, axis=0))
    plan = tessera.Plan(a.shape, (1, 8), np.float64)  # a plan's new outputs: the same allocation
    mid = plan(a)
    assert type(mid.base).__name__ == "PyCapsule" and mid.ctypes.data % 64 == 0
    assert np.array_equal(mid, np.tile(a, (1, 8)))
    small = tessera.Plan(a.shape, (1, 7), np.float64)(a)
    assert small.base is None and np.array_equal(small, np.tile(a, (1, 7)))
    big = tessera.Plan(a.shape, (1, 1100), np.float64)(a)  # 34 MiB: a huge-page block
    assert type(big.base).__name__ == "PyCapsule" and big.ctypes.data % (2 << 20) == 0
    assert np.array_equal(big, np.tile(a, (1, 1100)))
    del got, big


def test_no_reference_leaks():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    counts = np.array([1, 2, 3])
    out = np.empty((4, 2, 3), np.float32)
    plan = tessera.Plan.repeat((2, 3), counts, np.float32, axis=1)
    refs = [sys.getrefcount(x) for x in (a, counts, out, plan)]
    for i in range(2000):
        tessera.broadcast_to(a, (4, 2, 3), out=out)
        tessera.expand(a, (4, 1, 1))
        tessera.repeat(a, counts, axis=1)
        plan(a)
        try:
            tessera.repeat(a, counts, axis=3)
        except AxisError:
            pass
    assert [sys.getrefcount(x) for x in (a, counts, out, plan)] == refs


def test_counts_read_once():
    class Evil:
        def __init__(self, lst):
            self.lst = lst

        def __index__(self):
            self.lst.clear()
            return 2

    counts = [None, 1, 3]
    counts[0] = Evil(counts)
    got = tessera.repeat(np.arange(3), counts)  # the list as it was when the call began
    assert got.tolist() == [0, 0, 1, 2, 2, 2]
    assert tessera.repeat(np.arange(3), (c for c in (1, 0, 2))).tolist() == [0, 2, 2]


@pytest.mark.parametrize("stack", ["numpy", "torch"])
@pytest.mark.parametrize("ctype", ["int32", "int64"])
@pytest.mark.parametrize("contiguous", [True, False])
def test_counts_in_place_int32_int64(stack, ctype, contiguous):
    """Per-element counts as int32 or int64 arrays or tensors, contiguous or strided (read in place by
    the planner): numpy.repeat's and torch.repeat_interleave's results, new output and out=."""
    rng = np.random.default_rng(zlib.crc32(f"{stack}{ctype}{contiguous}".encode()))
    x = rng.random((3, 1000), dtype=np.float32)
    wide = rng.integers(0, 5, 2000).astype(ctype)
    counts = wide[::2] if not contiguous else wide[:1000].copy()
    assert counts.flags.c_contiguous == contiguous
    expected = np.repeat(x, counts.astype(np.int64), axis=1)
    flat = np.repeat(x, np.tile(counts, 3).astype(np.int64))
    if stack == "numpy":
        got = tessera.repeat(x, counts, axis=1)
        np.testing.assert_array_equal(got, expected)
        out = np.full(expected.shape, -1, np.float32)
        assert tessera.repeat(x, counts, axis=-1, out=out) is out
        np.testing.assert_array_equal(out, expected)
        np.testing.assert_array_equal(tessera.repeat(x, np.tile(counts, 3)), flat)
        plan = tessera.Plan.repeat(x.shape, counts, x.dtype, axis=1)
        np.testing.assert_array_equal(plan(x), expected)
    else:
        tx, tc = torch.from_numpy(x), torch.from_numpy(wide)
        tc = tc[::2] if not contiguous else tc[:1000].clone()
        assert tc.is_contiguous() == contiguous
        got = tessera.repeat(tx, tc, axis=1)
        torch.testing.assert_close(got, torch.repeat_interleave(tx, tc, dim=1), rtol=0, atol=0)
        out = torch.full(expected.shape, -1.0)
        assert tessera.repeat(tx, tc, axis=1, out=out) is out
        np.testing.assert_array_equal(out.numpy(), expected)
    np.testing.assert_array_equal(counts, wide[::2] if not contiguous else wide[:1000])  # not written


@pytest.mark.parametrize("stack", ["numpy", "torch"])
@pytest.mark.parametrize("ctype", ["int32", "int64"])
def test_counts_in_place_errors(stack, ctype):
    """Negative counts (named with their index, out untouched), a wrong length and the sum's overflow,
    for int32 and int64 counts, strided ones included."""
    x = np.arange(5, dtype=np.float32)
    wrap = (lambda a: torch.from_numpy(a)) if stack == "torch" else (lambda a: a)
    xs = wrap(x)
    bad = np.array([1, 7, 2, 7, -3, 7, 0, 7, -1, 7], ctype)[::2]  # strided: 1, 2, -3, 0, -1
    out = wrap(np.full(2, 9, np.float32))
    with pytest.raises(ValueError, match=r"repeats\[2\] = -3 is negative"):
        tessera.repeat(xs, wrap(bad), out=out)
    assert (np.asarray(out) == 9).all()
    with pytest.raises(ValueError, match=r"repeats\[2\] = -3 is negative"):
        tessera.repeat(xs, wrap(bad))
    with pytest.raises(ValueError, match="4 counts for 5 elements"):
        tessera.repeat(xs, wrap(np.array([1, 2, 3, 4], ctype)))
    if ctype == "int64":
        huge = np.array([2**63 - 1, 1, 0, 0, 0], ctype)
        with pytest.raises((OverflowError, ValueError), match="overflows"):
            tessera.repeat(xs, wrap(huge))
    else:
        big = np.full(6, 2**31 - 1, ctype)[::2].copy()
        big[1] = 2**31 - 2  # not one count: per-element sums past int32 are int64 sums, not wrapped
        assert tessera.Plan.repeat((3,), wrap(big), np.float32).out_shape == (3 * (2**31 - 1) - 1,)


def test_repeated_small_calls_read_each_calls_arguments():
    """A loop of small calls (the thread's last plan kept): each call's arguments, dtype, layout and
    options are its own, and a bad call after good ones is still an error with out untouched."""
    a = np.arange(4, dtype=np.float32).reshape(2, 2)
    for _ in range(3):
        np.testing.assert_array_equal(tessera.tile(a, (2, 3)), np.tile(a, (2, 3)))
    np.testing.assert_array_equal(tessera.tile(a, (3, 2)), np.tile(a, (3, 2)))
    np.testing.assert_array_equal(tessera.tile(a.T, (2, 3)), np.tile(a.T, (2, 3)))
    np.testing.assert_array_equal(tessera.tile(a.astype(np.float64), (2, 3)), np.tile(a.astype(np.float64), (2, 3)))
    np.testing.assert_array_equal(tessera.tile(a + 1, (2, 3)), np.tile(a + 1, (2, 3)))
    np.testing.assert_array_equal(tessera.repeat(a, 2, axis=1), np.repeat(a, 2, axis=1))
    np.testing.assert_array_equal(tessera.repeat(a, 3, axis=1), np.repeat(a, 3, axis=1))
    np.testing.assert_array_equal(tessera.repeat(a, 3, axis=0), np.repeat(a, 3, axis=0))
    np.testing.assert_array_equal(tessera.repeat(a, [1, 2], axis=0), np.repeat(a, [1, 2], axis=0))
    np.testing.assert_array_equal(tessera.repeat(a, [2, 1], axis=0), np.repeat(a, [2, 1], axis=0))
    out = np.full((4, 6), -1, np.float32)
    with pytest.raises(ValueError):
        tessera.tile(a, (2, 2), out=out)
    assert (out == -1).all()
    with pytest.raises(ValueError, match="output_size"):
        tessera.repeat(a, 2, axis=1, output_size=5)
    assert tessera.tile(a, (2, 3), out=out) is out
    np.testing.assert_array_equal(out, np.tile(a, (2, 3)))
