# Type stubs of tessera.dask (see __init__.pyi): every function returns a dask.array.Array.
# Dask is optional, as torch for __init__.pyi: without it installed, dask.array.Array is Any.
from collections.abc import Mapping, Sequence
from typing import Any, SupportsIndex

from dask.array.core import Array as _DaskArray
import numpy as np
from numpy.typing import ArrayLike, NDArray
from typing_extensions import TypeAlias

__all__ = ["tile", "broadcast_to", "repeat"]

# Anything dask.array.core.normalize_chunks takes: "auto", a byte size ("64 MiB"), an int, -1, a
# tuple of chunk sizes per axis or of explicit tuples, or a mapping of axis to chunks.
_Chunks: TypeAlias = str | int | tuple[Any, ...] | list[Any] | Mapping[int, Any]
_Ints: TypeAlias = SupportsIndex | Sequence[SupportsIndex] | NDArray[np.integer[Any]]

def tile(x: ArrayLike | _DaskArray, reps: _Ints, chunks: _Chunks = "auto") -> _DaskArray: ...
def broadcast_to(x: ArrayLike | _DaskArray, shape: _Ints, chunks: _Chunks = "auto") -> _DaskArray: ...
def repeat(x: ArrayLike | _DaskArray, repeats: _Ints, axis: SupportsIndex | None = None,
           chunks: _Chunks = "auto") -> _DaskArray: ...
