# Type stubs of tessera.torch (see __init__.pyi): every function takes and returns torch tensors.
import torch as _torch
from collections.abc import Sequence
from typing import Any, SupportsIndex, overload

import numpy as np
from numpy.typing import NDArray
from typing_extensions import TypeAlias

__all__ = ["tile", "broadcast_to", "expand", "repeat_interleave"]

# A shape as broadcast_to and expand read it: one int, or a tuple (torch.Size included) or list of
# ints (not any sequence: an ndarray or a range is a TypeError).
_Sizes: TypeAlias = SupportsIndex | tuple[SupportsIndex, ...] | list[SupportsIndex]

# reps: an int, or a sequence or integer ndarray of ints (read as tessera.tile reads them).
def tile(x: _torch.Tensor,
         reps: SupportsIndex | Sequence[SupportsIndex] | NDArray[np.integer[Any]]) -> _torch.Tensor: ...
def broadcast_to(x: _torch.Tensor, shape: _Sizes) -> _torch.Tensor: ...
# x.expand's forms: the sizes one by one, or one tuple, list or torch.Size of them.
@overload
def expand(x: _torch.Tensor, *sizes: SupportsIndex) -> _torch.Tensor: ...
@overload
def expand(x: _torch.Tensor, sizes: tuple[SupportsIndex, ...] | list[SupportsIndex], /) -> _torch.Tensor: ...
def repeat_interleave(x: _torch.Tensor,
                      repeats: SupportsIndex | _torch.Tensor | Sequence[SupportsIndex] | NDArray[np.integer[Any]],
                      dim: SupportsIndex | None = None, output_size: SupportsIndex | None = None) -> _torch.Tensor: ...
