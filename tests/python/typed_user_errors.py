"""Calls that tessera's stubs must refuse: tests/python/test_types.py runs `mypy --strict` on this
file and asserts that mypy reports errors on exactly the lines marked `# E: <error code>`, with
that code, and on no other line -- so the stubs are precise, not Any everywhere. Never run (each
marked line would fail at run time too, as the comment says)."""
from typing import Any

import numpy as np
import torch
from numpy.typing import NDArray

import tessera
import tessera.dask
import tessera.torch


def wrong(a: NDArray[np.float32], t: torch.Tensor, plan: tessera.Plan) -> None:
    # Right: these type-check (the lines around the wrong ones show what is allowed).
    ok: NDArray[np.float32] = tessera.tile(a, (2, 2))
    ok_t: torch.Tensor = tessera.tile(t, 2)

    tessera.tile(a, 2.5)  # E: call-overload  (reps are ints: TypeError)
    tessera.tile(a, 2, negative_reps="wrap")  # E: call-overload  (ValueError)
    tessera.tile(a, 2, max_threads="4")  # E: call-overload  (TypeError)
    tessera.tile(a, 2, out=t)  # E: call-overload  (a numpy A writes a numpy out: TypeError)
    tiled = tessera.tile(a, 2)
    as_int: NDArray[np.int64] = tiled  # E: assignment  (the result is float32)
    # (Written in one line, `as_int: NDArray[np.int64] = tessera.tile(a, 2)` type-checks, as it does
    # with numpy.repeat: mypy then picks the array-like overload, whose result is NDArray[Any].)
    as_array: NDArray[Any] = tessera.tile(t, 2)  # E: assignment  (a tensor in, a tensor out)
    as_tensor: torch.Tensor = tessera.repeat(a, 2)  # E: assignment  (numpy in, numpy out)
    tessera.repeat(a, 2, axis="0")  # E: call-overload  (TypeError)
    tessera.broadcast_to(a, (2, 3), accumulate=True)  # E: call-overload  (no such option)
    tessera.sum_to_shape(a, (3,), accumulate=1.5)  # E: call-overload  (a bool)
    shape: list[int] = tessera.tile_shape((2, 3), 2)  # E: assignment  (a tuple)
    target: int = tessera.simd_target()  # E: assignment  (a str)
    tessera.tile_shapes((2, 3), 2)  # E: attr-defined  (no such function)

    tessera.Plan((2, 3), 2)  # E: call-arg  (the dtype is required)
    plan.out_shape = (1,)  # E: misc  (read-only)
    plan(t)  # E: call-overload  (a plan runs on numpy arrays: TypeError)
    plan.execute_region(a, 0, 1)  # E: call-overload  (start and extent are sequences)
    operation: int = plan.operation  # E: assignment  (a str)

    tessera.torch.tile(a, 2)  # E: arg-type  (x must be a tensor: TypeError)
    tessera.torch.expand(t, 2.0)  # E: call-overload  (sizes are ints: TypeError)
    tessera.torch.broadcast_to(t, range(3))  # E: arg-type  (a tuple, list or torch.Size: TypeError)
    lazy: NDArray[Any] = tessera.dask.tile(a, 2)  # E: assignment  (a dask array)

    config: dict[str, Any] = tessera.show_config()  # E: assignment  (prints, returns None)
    tessera.show_config("json")  # E: call-overload  (ValueError)
    sections: list[str] = tessera.show_config("dicts")  # E: assignment  (a dict of dicts)
