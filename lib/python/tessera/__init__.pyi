# mypy: warn-unused-ignores=False
# Type stubs of tessera (PEP 561: py.typed beside them). The runtime module is __init__.py; these
# mirror its public names and signatures (parameter names, defaults, keyword-only markers), which
# `python -m mypy.stubtest tessera` checks, with tessera.torch's and tessera.dask's
# (tests/python/test_types.py).
#
# Overloads give the result the input's type: a numpy array in, a numpy array of the same scalar
# type out (every operation keeps A's dtype); a torch tensor in, a torch tensor out; anything else
# numpy.asarray takes, an NDArray[Any]; with out=, `out` itself (its own type).
#
# torch is optional and imported here (the tensor overloads need torch.Tensor). Where tessera is
# installed (site-packages), mypy reports no error from an installed package's stubs, a missing
# torch included: torch.Tensor is then Any, and the numpy overloads, listed first, still give
# numpy in -> numpy out (the others give Any). Only stubs put on MYPYPATH without torch installed
# make mypy report the missing import here.
import torch as _torch
from collections.abc import Sequence
from typing import Any, Literal, SupportsIndex, TypeVar, overload

import numpy as np
from numpy.typing import ArrayLike, DTypeLike, NDArray
from typing_extensions import Self, TypeAlias

from . import dask as dask, torch as torch

__all__ = ["tile", "broadcast_to", "expand", "repeat", "tile_backward", "sum_to_shape", "repeat_backward",
           "tile_shape", "Plan", "simd_target", "show_config", "set_block_cache_limit", "set_block_cache_max_age",
           "__version__"]

__version__: str

_ScalarT = TypeVar("_ScalarT", bound=np.generic)
# The reductions sum numbers (float16/32/64, complex64/128, signed and unsigned integers).
_NumberT = TypeVar("_NumberT", bound=np.number[Any])
_ArrayT = TypeVar("_ArrayT", bound=np.ndarray[Any, Any])

# Shapes, reps, repeat counts, strides: an int, a sequence of ints, an integer ndarray or a torch
# tensor (read as numpy reads it). A region's start and extent: a sequence or ndarray of ints.
_Ints: TypeAlias = SupportsIndex | Sequence[SupportsIndex] | NDArray[np.integer[Any]] | _torch.Tensor
_Index: TypeAlias = Sequence[SupportsIndex] | NDArray[np.integer[Any]]
# max_threads: None (the caller's task arena) or a Python or numpy integer >= 1.
_Threads: TypeAlias = int | np.integer[Any] | None
_NegativeReps: TypeAlias = Literal["error", "clamp_to_zero"]
_Operation: TypeAlias = Literal["tile", "broadcast_to", "expand", "repeat", "tile_backward", "sum_to_shape",
                                "repeat_backward"]

# The tensor overloads (2nd) overlap the array-like ones (4th): a torch.Tensor has __array__, so it
# is also an ArrayLike. The tensor overload comes first and wins, as at run time (a tensor in, a
# tensor out). mypy 1.0 reports the overlap (code misc), which the `type: ignore[misc]` on each
# tensor overload silences; mypy 2 does not report it, and the file's first line turns off its
# warning that those comments are then unused.

@overload
def tile(A: NDArray[_ScalarT], reps: _Ints, *, out: None = None, max_threads: _Threads = None,
         nontemporal: bool | None = None, negative_reps: _NegativeReps = "error") -> NDArray[_ScalarT]: ...
@overload
def tile(A: _torch.Tensor, reps: _Ints, *, out: _torch.Tensor | None = None,  # type: ignore[misc]
         max_threads: _Threads = None, nontemporal: bool | None = None,
         negative_reps: _NegativeReps = "error") -> _torch.Tensor: ...
@overload
def tile(A: ArrayLike, reps: _Ints, *, out: _ArrayT, max_threads: _Threads = None,
         nontemporal: bool | None = None, negative_reps: _NegativeReps = "error") -> _ArrayT: ...
@overload
def tile(A: ArrayLike, reps: _Ints, *, out: None = None, max_threads: _Threads = None,
         nontemporal: bool | None = None, negative_reps: _NegativeReps = "error") -> NDArray[Any]: ...

def tile_shape(shape: _Ints, reps: _Ints, *, negative_reps: _NegativeReps = "error") -> tuple[int, ...]: ...

@overload
def broadcast_to(A: NDArray[_ScalarT], shape: _Ints, *, out: None = None, max_threads: _Threads = None,
                 nontemporal: bool | None = None) -> NDArray[_ScalarT]: ...
@overload
def broadcast_to(A: _torch.Tensor, shape: _Ints, *, out: _torch.Tensor | None = None,  # type: ignore[misc]
                 max_threads: _Threads = None, nontemporal: bool | None = None) -> _torch.Tensor: ...
@overload
def broadcast_to(A: ArrayLike, shape: _Ints, *, out: _ArrayT, max_threads: _Threads = None,
                 nontemporal: bool | None = None) -> _ArrayT: ...
@overload
def broadcast_to(A: ArrayLike, shape: _Ints, *, out: None = None, max_threads: _Threads = None,
                 nontemporal: bool | None = None) -> NDArray[Any]: ...

@overload
def expand(A: NDArray[_ScalarT], shape: _Ints, *, out: None = None, max_threads: _Threads = None,
           nontemporal: bool | None = None) -> NDArray[_ScalarT]: ...
@overload
def expand(A: _torch.Tensor, shape: _Ints, *, out: _torch.Tensor | None = None,  # type: ignore[misc]
           max_threads: _Threads = None, nontemporal: bool | None = None) -> _torch.Tensor: ...
@overload
def expand(A: ArrayLike, shape: _Ints, *, out: _ArrayT, max_threads: _Threads = None,
           nontemporal: bool | None = None) -> _ArrayT: ...
@overload
def expand(A: ArrayLike, shape: _Ints, *, out: None = None, max_threads: _Threads = None,
           nontemporal: bool | None = None) -> NDArray[Any]: ...

@overload
def repeat(A: NDArray[_ScalarT], repeats: _Ints, axis: SupportsIndex | None = None, *, out: None = None,
           output_size: SupportsIndex | None = None, max_threads: _Threads = None,
           nontemporal: bool | None = None) -> NDArray[_ScalarT]: ...
@overload
def repeat(A: _torch.Tensor, repeats: _Ints, axis: SupportsIndex | None = None, *,  # type: ignore[misc]
           out: _torch.Tensor | None = None, output_size: SupportsIndex | None = None,
           max_threads: _Threads = None, nontemporal: bool | None = None) -> _torch.Tensor: ...
@overload
def repeat(A: ArrayLike, repeats: _Ints, axis: SupportsIndex | None = None, *, out: _ArrayT,
           output_size: SupportsIndex | None = None, max_threads: _Threads = None,
           nontemporal: bool | None = None) -> _ArrayT: ...
@overload
def repeat(A: ArrayLike, repeats: _Ints, axis: SupportsIndex | None = None, *, out: None = None,
           output_size: SupportsIndex | None = None, max_threads: _Threads = None,
           nontemporal: bool | None = None) -> NDArray[Any]: ...

# The gradients: a result of grad_out's (A's) dtype, one of the numeric dtypes tessera sums.

@overload
def tile_backward(grad_out: NDArray[_NumberT], in_shape: _Ints, reps: _Ints, *, out: None = None,
                  max_threads: _Threads = None, nontemporal: bool | None = None,
                  negative_reps: _NegativeReps = "error", accumulate: bool = False) -> NDArray[_NumberT]: ...
@overload
def tile_backward(grad_out: _torch.Tensor, in_shape: _Ints, reps: _Ints, *,  # type: ignore[misc]
                  out: _torch.Tensor | None = None, max_threads: _Threads = None, nontemporal: bool | None = None,
                  negative_reps: _NegativeReps = "error", accumulate: bool = False) -> _torch.Tensor: ...
@overload
def tile_backward(grad_out: ArrayLike, in_shape: _Ints, reps: _Ints, *, out: _ArrayT,
                  max_threads: _Threads = None, nontemporal: bool | None = None,
                  negative_reps: _NegativeReps = "error", accumulate: bool = False) -> _ArrayT: ...
@overload
def tile_backward(grad_out: ArrayLike, in_shape: _Ints, reps: _Ints, *, out: None = None,
                  max_threads: _Threads = None, nontemporal: bool | None = None,
                  negative_reps: _NegativeReps = "error", accumulate: bool = False) -> NDArray[Any]: ...

@overload
def sum_to_shape(A: NDArray[_NumberT], shape: _Ints, *, out: None = None, max_threads: _Threads = None,
                 nontemporal: bool | None = None, accumulate: bool = False) -> NDArray[_NumberT]: ...
@overload
def sum_to_shape(A: _torch.Tensor, shape: _Ints, *, out: _torch.Tensor | None = None,  # type: ignore[misc]
                 max_threads: _Threads = None, nontemporal: bool | None = None,
                 accumulate: bool = False) -> _torch.Tensor: ...
@overload
def sum_to_shape(A: ArrayLike, shape: _Ints, *, out: _ArrayT, max_threads: _Threads = None,
                 nontemporal: bool | None = None, accumulate: bool = False) -> _ArrayT: ...
@overload
def sum_to_shape(A: ArrayLike, shape: _Ints, *, out: None = None, max_threads: _Threads = None,
                 nontemporal: bool | None = None, accumulate: bool = False) -> NDArray[Any]: ...

@overload
def repeat_backward(grad_out: NDArray[_NumberT], in_shape: _Ints, repeats: _Ints, axis: SupportsIndex | None = None,
                    *, out: None = None, max_threads: _Threads = None, nontemporal: bool | None = None,
                    accumulate: bool = False) -> NDArray[_NumberT]: ...
@overload
def repeat_backward(grad_out: _torch.Tensor, in_shape: _Ints, repeats: _Ints,  # type: ignore[misc]
                    axis: SupportsIndex | None = None, *, out: _torch.Tensor | None = None,
                    max_threads: _Threads = None, nontemporal: bool | None = None,
                    accumulate: bool = False) -> _torch.Tensor: ...
@overload
def repeat_backward(grad_out: ArrayLike, in_shape: _Ints, repeats: _Ints, axis: SupportsIndex | None = None, *,
                    out: _ArrayT, max_threads: _Threads = None, nontemporal: bool | None = None,
                    accumulate: bool = False) -> _ArrayT: ...
@overload
def repeat_backward(grad_out: ArrayLike, in_shape: _Ints, repeats: _Ints, axis: SupportsIndex | None = None, *,
                    out: None = None, max_threads: _Threads = None, nontemporal: bool | None = None,
                    accumulate: bool = False) -> NDArray[Any]: ...

def simd_target() -> str: ...

# "stdout" prints the report; "dicts" returns it: {section: {key: value}}.
@overload
def show_config(mode: Literal["stdout"] = "stdout") -> None: ...
@overload
def show_config(mode: Literal["dicts"]) -> dict[str, dict[str, Any]]: ...

# The block cache's bounds: bytes (0 disables it), seconds in [0, 86400].
def set_block_cache_limit(nbytes: SupportsIndex) -> None: ...
def set_block_cache_max_age(seconds: float) -> None: ...

class Plan:
    def __init__(self, shape: _Ints, reps: _Ints, dtype: DTypeLike, strides: _Ints | None = None, *,
                 max_threads: _Threads = None, nontemporal: bool | None = None,
                 negative_reps: _NegativeReps = "error") -> None: ...
    @classmethod
    def broadcast_to(cls, shape: _Ints, target: _Ints, dtype: DTypeLike, strides: _Ints | None = None, *,
                     max_threads: _Threads = None, nontemporal: bool | None = None) -> Self: ...
    @classmethod
    def expand(cls, shape: _Ints, target: _Ints, dtype: DTypeLike, strides: _Ints | None = None, *,
               max_threads: _Threads = None, nontemporal: bool | None = None) -> Self: ...
    @classmethod
    def repeat(cls, shape: _Ints, repeats: _Ints, dtype: DTypeLike, axis: SupportsIndex | None = None,
               strides: _Ints | None = None, *, max_threads: _Threads = None,
               nontemporal: bool | None = None) -> Self: ...
    @classmethod
    def tile_backward(cls, shape: _Ints, in_shape: _Ints, reps: _Ints, dtype: DTypeLike, strides: _Ints | None = None,
                      *, max_threads: _Threads = None, nontemporal: bool | None = None,
                      negative_reps: _NegativeReps = "error", accumulate: bool = False) -> Self: ...
    @classmethod
    def sum_to_shape(cls, shape: _Ints, target: _Ints, dtype: DTypeLike, strides: _Ints | None = None, *,
                     max_threads: _Threads = None, nontemporal: bool | None = None,
                     accumulate: bool = False) -> Self: ...
    @classmethod
    def repeat_backward(cls, shape: _Ints, in_shape: _Ints, repeats: _Ints, dtype: DTypeLike,
                        axis: SupportsIndex | None = None, strides: _Ints | None = None, *,
                        max_threads: _Threads = None, nontemporal: bool | None = None,
                        accumulate: bool = False) -> Self: ...

    # A plan runs on numpy arrays only (exactly the planned shape, dtype and strides); the result
    # has A's (the plan's) dtype.
    @overload
    def __call__(self, A: NDArray[_ScalarT], out: None = None) -> NDArray[_ScalarT]: ...
    @overload
    def __call__(self, A: NDArray[Any], out: _ArrayT) -> _ArrayT: ...
    @overload
    def execute_region(self, A: NDArray[_ScalarT], start: _Index, extent: _Index,
                       out: None = None) -> NDArray[_ScalarT]: ...
    @overload
    def execute_region(self, A: NDArray[Any], start: _Index, extent: _Index, out: _ArrayT) -> _ArrayT: ...
    def describe(self) -> str: ...

    @property
    def operation(self) -> _Operation: ...
    @property
    def out_shape(self) -> tuple[int, ...]: ...
    @property
    def shape(self) -> tuple[int, ...]: ...
    @property
    def strides(self) -> tuple[int, ...]: ...
    @property
    def dtype(self) -> np.dtype[Any]: ...
    @property
    def ndim(self) -> int: ...
    @property
    def nbytes(self) -> int: ...
    @property
    def itemsize(self) -> int: ...
    @property
    def kernel_path(self) -> str: ...
    @property
    def accumulate(self) -> bool: ...
