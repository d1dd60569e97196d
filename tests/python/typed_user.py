"""A typed user of tessera: code as a user who runs `mypy --strict` writes it, calling every public
function of tessera, tessera.torch and tessera.dask with numpy arrays, array-likes, torch tensors,
out= and plans.

tests/python/test_types.py checks this file twice:
- statically, `mypy --strict` against tessera's stubs (lib/python/tessera/*.pyi): every
  `assert_type` states the type the stubs must give (numpy in -> numpy of the same scalar type out,
  torch in -> torch out, out= -> out's own type), and mypy fails on any other;
- at run time (`main()`), where each result is also checked to be what its static type says
  (`expect`), so the stubs cannot claim a type the module does not return.
"""
from __future__ import annotations

from typing import Any, Literal, TypeVar, assert_type

import numpy as np
import torch
from dask.array.core import Array as DaskArray
from numpy.typing import NDArray

import tessera
import tessera.dask as tdask

T = TypeVar("T")


def expect(value: T, cls: type[Any], dtype: np.dtype[Any] | torch.dtype | None = None) -> T:
    """value, checked at run time to be a `cls` (exactly: tessera returns base ndarrays and plain
    tensors) of dtype `dtype`."""
    kind: type[Any] = type(value)  # (not `type(value) is cls`, which mypy would narrow value to Any by)
    assert kind is cls, (kind, cls)
    if dtype is not None:
        assert getattr(value, "dtype") == dtype, (getattr(value, "dtype"), dtype)
    return value


# numpy arrays ------------------------------------------------------------------------------------

def tile_images(batch: NDArray[np.float32], reps: tuple[int, int, int]) -> NDArray[np.float32]:
    # The dtype's type parameter follows the input: no cast needed to return float32.
    return tessera.tile(batch, reps, max_threads=2)


def numpy_calls() -> None:
    f32: NDArray[np.float32] = np.arange(6, dtype=np.float32).reshape(2, 3)
    i16: NDArray[np.int16] = np.arange(3, dtype=np.int16)
    counts: NDArray[np.int64] = np.array([1, 0, 2])
    f32_dtype = np.dtype(np.float32)

    t = tile_images(f32[None], (1, 2, 2))
    expect(assert_type(t, NDArray[np.float32]), np.ndarray, f32_dtype)
    assert t.shape == (1, 4, 6)

    r = tessera.tile(i16, [-1, 2], negative_reps="clamp_to_zero", nontemporal=False)
    expect(assert_type(r, NDArray[np.int16]), np.ndarray, np.dtype(np.int16))
    assert r.shape == (0, 6)

    nested = tessera.tile([[1, 2], [3, 4]], 2)  # any array-like: an ndarray of unknown dtype
    expect(assert_type(nested, NDArray[Any]), np.ndarray)
    assert nested.shape == (2, 4)

    from_scalar = tessera.tile(7, (2, 2))
    expect(assert_type(from_scalar, NDArray[Any]), np.ndarray)

    with_tensor_reps = tessera.tile(f32, torch.tensor([2, 1]))  # reps as a tensor: still numpy out
    expect(assert_type(with_tensor_reps, NDArray[np.float32]), np.ndarray, f32_dtype)
    with_range = tessera.tile(f32, range(1, 3), max_threads=np.intp(2))  # any sequence; a numpy integer
    expect(assert_type(with_range, NDArray[np.float32]), np.ndarray, f32_dtype)
    assert with_range.shape == (2, 6)

    out: NDArray[np.float32] = np.empty((4, 6), np.float32)
    into = tessera.tile(f32, (2, 2), out=out)
    assert_type(into, NDArray[np.float32])
    assert into is out

    shape = tessera.tile_shape(f32.shape, (3, 1, 2))
    assert_type(shape, tuple[int, ...])
    assert shape == (3, 2, 6)
    assert tessera.tile_shape(4, -1, negative_reps="clamp_to_zero") == (0,)

    b = tessera.broadcast_to(i16, (4, 3))
    expect(assert_type(b, NDArray[np.int16]), np.ndarray, np.dtype(np.int16))
    b_out: NDArray[np.int16] = np.zeros((2, 3), np.int16)
    assert_type(tessera.broadcast_to(i16, [2, 3], out=b_out), NDArray[np.int16])
    assert (b_out == i16).all()

    column: NDArray[np.float32] = f32[:, :1]
    e = tessera.expand(column, (2, 1, 5))
    expect(assert_type(e, NDArray[np.float32]), np.ndarray, f32_dtype)
    assert e.shape == (2, 2, 5)

    rep = tessera.repeat(f32, counts, axis=1, output_size=3)
    expect(assert_type(rep, NDArray[np.float32]), np.ndarray, f32_dtype)
    assert rep.shape == (2, 3)
    flat = tessera.repeat(i16, 2)
    expect(assert_type(flat, NDArray[np.int16]), np.ndarray, np.dtype(np.int16))
    assert flat.tolist() == [0, 0, 1, 1, 2, 2]
    listed = tessera.repeat(["a", "b"], [2, 1])
    expect(assert_type(listed, NDArray[Any]), np.ndarray)
    assert listed.tolist() == ["a", "a", "b"]

    # The gradients: grad_out's dtype; accumulate into out=.
    g: NDArray[np.float64] = np.ones((4, 6))
    tb = tessera.tile_backward(g, (2, 3), (2, 2))
    expect(assert_type(tb, NDArray[np.float64]), np.ndarray, np.dtype(np.float64))
    assert (tb == 4).all()
    acc: NDArray[np.float64] = np.ones((2, 3))
    assert tessera.tile_backward(g, (2, 3), (2, 2), out=acc, accumulate=True) is acc
    assert (acc == 5).all()

    s = tessera.sum_to_shape(f32, (1, 3))
    expect(assert_type(s, NDArray[np.float32]), np.ndarray, f32_dtype)
    assert s.tolist() == [[3.0, 5.0, 7.0]]
    s_list = tessera.sum_to_shape([[1, 2], [3, 4]], 2)
    expect(assert_type(s_list, NDArray[Any]), np.ndarray)
    assert s_list.tolist() == [4, 6]

    g6: NDArray[np.float64] = np.arange(6.0)
    rb = tessera.repeat_backward(g6, 3, 2)
    expect(assert_type(rb, NDArray[np.float64]), np.ndarray, np.dtype(np.float64))
    assert rb.tolist() == [1.0, 5.0, 9.0]
    rb_out: NDArray[np.float32] = np.zeros((2, 2), np.float32)
    got = tessera.repeat_backward(f32, (2, 2), [2, 1], axis=-1, out=rb_out, max_threads=1)
    assert_type(got, NDArray[np.float32])
    assert got is rb_out and rb_out.tolist() == [[1.0, 2.0], [7.0, 5.0]]


# torch tensors -----------------------------------------------------------------------------------

def torch_calls() -> None:
    x = torch.arange(6.0).reshape(2, 3)
    counts = torch.tensor([2, 0, 1])

    t = tessera.tile(x, (2, 1))
    expect(assert_type(t, torch.Tensor), torch.Tensor, torch.float32)
    assert torch.equal(t, x.tile((2, 1)))
    out = torch.empty(2, 6)
    into = tessera.tile(x, (1, 2), out=out)
    assert_type(into, torch.Tensor)
    assert into is out

    b = tessera.broadcast_to(x[0], torch.Size([4, 3]))
    expect(assert_type(b, torch.Tensor), torch.Tensor, torch.float32)
    e = tessera.expand(x[:, :1], [2, 4], nontemporal=True)
    expect(assert_type(e, torch.Tensor), torch.Tensor, torch.float32)
    r = tessera.repeat(x, counts, axis=1)
    expect(assert_type(r, torch.Tensor), torch.Tensor, torch.float32)
    assert torch.equal(r, torch.repeat_interleave(x, counts, dim=1))

    grad = torch.ones(4, 3, dtype=torch.float64)
    tb = tessera.tile_backward(grad, 3, (4, 1))
    expect(assert_type(tb, torch.Tensor), torch.Tensor, torch.float64)
    s = tessera.sum_to_shape(grad, (1, 3))
    expect(assert_type(s, torch.Tensor), torch.Tensor, torch.float64)
    acc = torch.zeros(3, dtype=torch.float64)
    assert_type(tessera.repeat_backward(grad.reshape(-1), 3, 4, out=acc, accumulate=True), torch.Tensor)
    assert acc.tolist() == [4.0, 4.0, 4.0]


def autograd_calls() -> None:
    x = torch.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
    y = tessera.torch.tile(x, (2, 2))  # tessera.torch, reached as an attribute of tessera
    assert_type(y, torch.Tensor)
    b = tessera.torch.broadcast_to(x, (3, -1))
    assert_type(b, torch.Tensor)
    e1 = tessera.torch.expand(x, 2, 1, 3)
    e2 = tessera.torch.expand(x, torch.Size([2, 1, 3]))
    assert_type(e1, torch.Tensor)
    assert_type(e2, torch.Tensor)
    assert torch.equal(e1, e2)
    ri = tessera.torch.repeat_interleave(x, torch.tensor([1, 0, 2]), dim=1, output_size=3)
    assert_type(ri, torch.Tensor)
    ri_int = tessera.torch.repeat_interleave(x, 2)
    torch.autograd.backward(y.sum() + b.sum() + e1.sum() + ri.sum() + ri_int.sum())
    grad = x.grad
    assert grad is not None
    assert grad.tolist() == [[4.0 + 3 + 2 + 1 + 2, 4.0 + 3 + 2 + 0 + 2, 4.0 + 3 + 2 + 2 + 2]]


# plans -------------------------------------------------------------------------------------------

def plan_calls() -> None:
    a: NDArray[np.float32] = np.arange(4, dtype=np.float32).reshape(2, 2)
    plan = tessera.Plan(a.shape, (2, 3), np.float32, a.strides, max_threads=1)
    assert_type(plan, tessera.Plan)
    out_shape = plan.out_shape
    assert_type(out_shape, tuple[int, ...])
    assert out_shape == (4, 6)
    operation = plan.operation
    assert_type(operation, Literal["tile", "broadcast_to", "expand", "repeat", "tile_backward", "sum_to_shape",
                                   "repeat_backward"])
    assert operation == "tile"
    assert_type(plan.dtype, np.dtype[Any])
    assert plan.dtype == np.float32
    sizes: list[int] = [plan.ndim, plan.nbytes, plan.itemsize]
    assert sizes == [2, 96, 4]
    assert_type(plan.shape, tuple[int, ...])
    assert_type(plan.strides, tuple[int, ...])
    assert plan.strides == (8, 4)
    path: str = plan.kernel_path
    assert path
    assert_type(plan.accumulate, bool)
    description: str = plan.describe()
    assert description

    whole = plan(a)
    expect(assert_type(whole, NDArray[np.float32]), np.ndarray, np.dtype(np.float32))
    region = plan.execute_region(a, (1, 2), (2, 3))
    expect(assert_type(region, NDArray[np.float32]), np.ndarray, np.dtype(np.float32))
    assert (region == whole[1:3, 2:5]).all()
    buf: NDArray[np.float32] = np.empty((2, 3), np.float32)
    assert_type(plan.execute_region(a, [0, 0], [2, 3], out=buf), NDArray[np.float32])
    full: NDArray[np.float32] = np.empty((4, 6), np.float32)
    assert plan(a, full) is full

    plans: list[tessera.Plan] = [
        tessera.Plan.broadcast_to((3, 1), (2, 3, 4), np.int16),
        tessera.Plan.expand((3, 1), (2, 1, 4), "float32"),
        tessera.Plan.repeat((2, 3), [3, 1, 2], np.int64, axis=1),
    ]
    assert [p.operation for p in plans] == ["broadcast_to", "expand", "repeat"]
    tb = tessera.Plan.tile_backward((4, 6), (2, 3), (2, 2), np.float32, accumulate=True)
    assert_type(tb, tessera.Plan)
    assert tb.accumulate
    acc: NDArray[np.float32] = np.zeros((2, 3), np.float32)
    assert tb(np.ones((4, 6), np.float32), out=acc) is acc
    st = tessera.Plan.sum_to_shape((4, 3), (4, 1), np.int32)
    assert st(np.ones((4, 3), np.int32)).tolist() == [[3]] * 4
    rb = tessera.Plan.repeat_backward((2, 6), (2, 3), [3, 1, 2], np.float64, axis=1, nontemporal=False)
    assert rb(np.ones((2, 6))).tolist() == [[3.0, 1.0, 2.0]] * 2

    class MyPlan(tessera.Plan):  # the classmethods make plans of the class they are called on
        pass

    mine = MyPlan.broadcast_to(3, (2, 3), np.uint8)
    expect(assert_type(mine, MyPlan), MyPlan)


# Dask --------------------------------------------------------------------------------------------

def dask_calls() -> None:
    x: NDArray[np.int32] = np.arange(6, dtype=np.int32).reshape(2, 3)
    y = tdask.tile(x, (1000, 2), chunks=(500, 6))
    expect(assert_type(y, DaskArray), DaskArray)
    assert y.shape == (2000, 6)
    z = tessera.dask.broadcast_to(y[:2], (3, 2, 6), chunks="auto")
    assert_type(z, DaskArray)
    w = tdask.repeat(x, [1, 3, 0], axis=1, chunks={0: 1})
    assert_type(w, DaskArray)
    computed = np.asarray(w)  # computes it
    assert computed.tolist() == [[0, 1, 1, 1], [3, 4, 4, 4]]
    assert (np.asarray(z) == np.tile(x, (1, 2))).all()


# the module --------------------------------------------------------------------------------------

def module_calls() -> None:
    version: str = tessera.__version__
    assert version.count(".") == 2
    target = tessera.simd_target()
    assert_type(target, str)
    tessera.show_config()  # prints; returns None
    config = tessera.show_config(mode="dicts")
    assert_type(config, dict[str, dict[str, Any]])
    expect(config, dict)
    for section in config.values():
        expect(section, dict)
    assert config["tessera"]["version"] == version
    assert config["SIMD Extensions"]["dispatched"] == target
    names: list[str] = list(tessera.__all__)
    assert "tile" in names


def main() -> None:
    numpy_calls()
    torch_calls()
    autograd_calls()
    plan_calls()
    dask_calls()
    module_calls()


if __name__ == "__main__":
    main()
