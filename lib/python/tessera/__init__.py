"""tessera: numpy.tile and its family at the memory's speed, for numpy arrays and torch tensors.

tessera is a SIMD (Highway) + multithreaded (oneTBB) CPU kernel for the array tile operation and
its family. This package is its Python interface:

- `tile` -- a drop-in for `numpy.tile` (and `torch.tile` for torch tensors), with ``out=``;
- `broadcast_to` -- ``numpy.broadcast_to(A, shape).copy()`` (``torch.Tensor.expand``), written
  once, straight into new memory or ``out=``;
- `expand` -- ONNX ``Expand``: A broadcast with a shape, either side may be 1;
- `repeat` -- a drop-in for `numpy.repeat` (and `torch.repeat_interleave`), with ``out=``;
- `tile_backward`, `sum_to_shape`, `repeat_backward` -- the family's gradients (the way back):
  sums over the replicas, deterministic and accurate (float32 accumulated in float64, blocked
  pairwise order), with ``out=`` and ``accumulate=True`` to add into it;
- `tile_shape` -- the output shape of a tile, without computing it;
- `Plan` -- a reusable plan for one operation, shape, dtype and layout, and one chunk of its
  output (`Plan.execute_region`); `Plan.broadcast_to`, `Plan.expand` and `Plan.repeat` plan the
  family, `Plan.tile_backward`, `Plan.sum_to_shape` and `Plan.repeat_backward` its gradients;
- `simd_target` -- the SIMD target the kernels dispatch to on this CPU.

`tessera.torch` (imported on first use; it needs torch, which ``import tessera`` does not) has
``tile``, ``broadcast_to``, ``expand`` and ``repeat_interleave`` as ``torch.autograd.Function``s
whose forward and backward are tessera's. `tessera.dask` (imported on first use; it needs Dask) has
``tile``, ``broadcast_to`` and ``repeat`` as Dask arrays whose chunks are made by the region API
on the workers.

Units: shapes, reps, repeat counts and regions are in elements; strides and ``nbytes`` in bytes
(numpy's conventions). Every result is C-contiguous.

Threads: tessera writes large outputs (512 KiB or more) with the threads of its oneTBB task arena
(all cores by default; ``max_threads=N`` caps one call); a process's first such call runs on the
calling thread below 16 MiB (starting the threads costs about as much as writing 1 MiB), and below
256 MiB when it allocates its output afresh; the next starts them. The import does the one-time
set-up (the SIMD target, oneTBB's scheduler state, the cache sizes, a first tile and tile_backward
of a few bytes) so that the first call does not. It releases the GIL while it copies outputs of
16 KiB or more, so many Python threads may call it at once.
"""

import numbers as _numbers
import operator as _operator
import sys as _sys

import numpy as _np

from . import _tessera as _ext

__all__ = ["tile", "broadcast_to", "expand", "repeat", "tile_backward", "sum_to_shape", "repeat_backward",
           "tile_shape", "Plan", "simd_target", "show_config", "set_block_cache_limit", "set_block_cache_max_age",
           "__version__"]

#: The version of the tessera library this module carries ("MAJOR.MINOR.PATCH").
__version__ = _ext.version()

_ndarray = _np.ndarray

#: tessera's operations by name: their ids in the extension's table (``_ext.operations``: id, name,
#: argument kind, reduction, gradient's id, input's name), which every call passes instead of a name.
_OP = {name: op for op, name, _arg, _reduction, _gradient, _input in _ext.operations}
# The copying operations' common call, an ndarray with a plain shape or count: straight to the
# extension, which is what _run does for it after its checks for torch tensors (a few hundred ns,
# the most of a tiny call).
_TILE, _BROADCAST_TO, _EXPAND, _REPEAT = _OP["tile"], _OP["broadcast_to"], _OP["expand"], _OP["repeat"]
_PLAIN_ARG = (tuple, list, int)
_call = _ext.call  # one global lookup instead of two
#: The name of each operation's input in messages (the table's): "grad_out" for the gradients of
#: tile and repeat, "A" for the others.
_INPUT_NAME = {op: input_name for op, _name, _arg, _reduction, _gradient, input_name in _ext.operations}


def _run(op, A, in_shape, arg, axis, output_size, out, max_threads, nontemporal, negative_reps, accumulate):
    """Operation `op` (an id of _OP) on A, a torch tensor or anything numpy.asarray takes; in_shape
    (tile_backward, repeat_backward), arg (reps, a shape or repeat's counts), axis and output_size
    (repeat) as the operation takes them, None where it has none."""
    if type(A) is not _ndarray and _is_tensor(A):
        return _tensor_call(op, A, in_shape, arg, axis, output_size, out, max_threads, nontemporal, negative_reps,
                            accumulate)
    return _ext.call(op, A, in_shape, arg, axis, output_size, out, max_threads, nontemporal, negative_reps,
                     accumulate)


def __getattr__(name):
    # tessera.torch and tessera.dask, imported on first use: `import tessera` neither needs nor
    # imports torch or dask.
    if name in ("torch", "dask"):
        import importlib

        return importlib.import_module("." + name, __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def tile(A, reps, *, out=None, max_threads=None, nontemporal=None, negative_reps="error"):
    """Construct an array by repeating A the number of times given by reps.

    The semantics of `numpy.tile` (also `torch.tile`, ONNX ``Tile``, OpenVINO ``Tile-1``):
    the result has ``max(A.ndim, len(reps))`` axes; the shorter of ``A.shape`` and `reps` is
    promoted by prepending 1s; ``result.shape[i] = A.shape[i] * reps[i]`` and
    ``result[i0, i1, ...] = A[i0 % A.shape[0], i1 % A.shape[1], ...]``.

    Parameters
    ----------
    A : array_like or torch.Tensor
        The input array: anything `numpy.asarray` takes (scalars, nested sequences, 0-d arrays,
        ndarray subclasses, read as their base ndarray), of any dtype but object (bool, integers,
        floats, complex, datetime64/timedelta64, bytes ``S``, str ``U``, void and structured),
        in any layout (C or Fortran order, transposed, negative or zero strides, stepped views,
        read-only, non-native byte order), read in place: never copied first. Or a CPU torch
        tensor of any dtype and strides, read in place through DLPack.
    reps : int, sequence of ints, or integer ndarray or torch.Tensor
        The number of repetitions of A along each axis (elements); at most 64 values (bools
        count as 0 and 1, as numpy reads them).
    out : ndarray or torch.Tensor, optional
        Where to write the result: exactly the result's shape and dtype (byte order included),
        C-contiguous and writeable (a torch tensor for a torch A: not an inference tensor outside
        ``torch.inference_mode()``, nor one autograd forbids writing in place). It may overlap
        A: the result is still right (A is then tiled into new memory first and copied into
        `out`).
    max_threads : int, optional
        At most this many threads (>= 1) write the result; None (default): the threads of the
        caller's oneTBB task arena (all cores). Outputs under 512 KiB are written by the calling
        thread alone.
    nontemporal : bool, optional
        True: write the result with streaming (non-temporal) stores, which bypass the caches;
        False: ordinary stores; None (default): streaming stores for outputs of at least 3/4 of
        the last-level cache (ordinary stores for a new output of 32 MiB or more, whose freshly
        zeroed pages are still cached).
    negative_reps : {"error", "clamp_to_zero"}, optional
        "error" (default, numpy): a negative rep raises ValueError. "clamp_to_zero" (OpenVINO
        Tile-1): a negative rep acts as 0 (an empty axis).

    Returns
    -------
    ndarray or torch.Tensor
        A new C-contiguous, writeable array with A's dtype, of shape ``tile_shape(A.shape,
        reps)``, sharing no memory with A (even when every rep is 1: a copy, never a view) --
        or `out` itself. For a torch tensor, a torch tensor of A's dtype (it does not record an
        autograd history: A is read detached).

    Raises
    ------
    ValueError
        A negative rep (naming the axis and value); an output whose element count or byte size
        overflows, or that has more axes than numpy allows (raised before anything is
        allocated); more than 64 reps; a bad `out` (its shape, dtype, layout or
        writeability, named); a torch tensor on another device (named); an invalid option.
    TypeError
        A non-integer rep (named); an object dtype (copying object pointers would break their
        reference counts); an `out` that is not an ndarray (a tensor, for a torch A).

    On any error nothing is written to `out`.

    See Also
    --------
    numpy.tile, torch.Tensor.repeat, tile_shape, Plan

    Examples
    --------
    >>> import numpy as np, tessera
    >>> a = np.array([0, 1, 2])
    >>> tessera.tile(a, 2)
    array([0, 1, 2, 0, 1, 2])
    >>> tessera.tile(a, (2, 2))
    array([[0, 1, 2, 0, 1, 2],
           [0, 1, 2, 0, 1, 2]])
    >>> tessera.tile(a, (2, 1, 2))
    array([[[0, 1, 2, 0, 1, 2]],
    <BLANKLINE>
           [[0, 1, 2, 0, 1, 2]]])
    >>> b = np.array([[1, 2], [3, 4]])
    >>> tessera.tile(b.T, (2, 1))
    array([[1, 3],
           [2, 4],
           [1, 3],
           [2, 4]])
    >>> out = np.empty((4, 4), dtype=b.dtype)
    >>> tessera.tile(b, (2, 2), out=out) is out
    True
    """
    if type(A) is _ndarray and type(reps) in _PLAIN_ARG:
        return _call(_TILE, A, None, reps, None, None, out, max_threads, nontemporal, negative_reps, False)
    return _run(_TILE, A, None, _tensor_arg(reps), None, None, out, max_threads, nontemporal, negative_reps, False)


def tile_shape(shape, reps, *, negative_reps="error"):
    """The shape of ``tile(A, reps)`` for an A of the given shape, without computing it.

    numpy.tile's rule: ``max(len(shape), len(reps))`` axes, the shorter list promoted by
    prepending 1s, ``result[i] = shape[i] * reps[i]``.

    Parameters
    ----------
    shape : int or sequence of ints
        The input's shape (elements).
    reps : int, sequence of ints, or integer ndarray
        The repetitions per axis, as for `tile`.
    negative_reps : {"error", "clamp_to_zero"}, optional
        As for `tile`.

    Returns
    -------
    tuple of ints
        The output shape (elements).

    Raises
    ------
    ValueError
        A negative extent or rep (naming the axis), an element count that overflows int64, more
        than 64 values.
    TypeError
        A value that is not an integer.

    Examples
    --------
    >>> import tessera
    >>> tessera.tile_shape((2, 3), (2, 2, 2))
    (2, 4, 6)
    >>> tessera.tile_shape((4, 5, 6), 2)
    (4, 5, 12)
    """
    return _ext.tile_shape(_tensor_arg(shape), _tensor_arg(reps), negative_reps)


def broadcast_to(A, shape, *, out=None, max_threads=None, nontemporal=None):
    """Broadcast A to a new shape, into new memory: ``numpy.broadcast_to(A, shape).copy()``.

    numpy's broadcasting rule, one way: A's axes are aligned with the trailing axes of `shape`
    (A may have fewer axes, not more), and each of them must have extent 1 (it is repeated) or
    the extent `shape` gives. ``result[..., i, j] = A[..., i % A.shape[-2], j % A.shape[-1]]``
    -- written once, C-contiguous, where `numpy.broadcast_to` returns a read-only view of A
    (also ``torch.Tensor.expand(*shape).contiguous()``, with no ``-1`` entries).

    Parameters
    ----------
    A : array_like or torch.Tensor
        The input array: anything `numpy.asarray` takes, of any dtype but object, in any layout,
        read in place (as for `tile`); or a CPU torch tensor of any dtype and strides, read in
        place through DLPack.
    shape : int or sequence of ints
        The output shape (elements), at least A's number of axes. No ``-1``: every extent is
        given.
    out : ndarray or torch.Tensor, optional
        Where to write the result: exactly `shape` and A's dtype (byte order included),
        C-contiguous and writeable (a torch tensor for a torch A). It may overlap A.
    max_threads : int, optional
        At most this many threads (>= 1) write the result; None (default): the threads of the
        caller's oneTBB task arena. Outputs under 512 KiB are written by the calling thread.
    nontemporal : bool, optional
        True: streaming (non-temporal) stores; False: ordinary stores; None (default): as for
        `tile` (streaming stores for outputs of at least 3/4 of the last-level cache).

    Returns
    -------
    ndarray or torch.Tensor
        A new C-contiguous, writeable array of A's dtype and shape `shape`, sharing no memory
        with A -- or `out` itself. For a torch tensor, a torch tensor of A's dtype (read
        detached: no autograd history).

    Raises
    ------
    ValueError
        An axis of A that does not broadcast (the message names the axis and both extents), a
        negative extent, fewer axes in `shape` than in A, an output too big for memory or numpy;
        a bad `out` (its shape, dtype, layout or writeability, named); an invalid option.
    TypeError
        A non-integer or bool extent (named); an object dtype; an `out` that is not an ndarray (a
        tensor, for a torch A).

    On any error nothing is written to `out`.

    See Also
    --------
    numpy.broadcast_to, torch.Tensor.expand, expand, tile, Plan.broadcast_to

    Examples
    --------
    >>> import numpy as np, tessera
    >>> x = np.array([1, 2, 3])
    >>> tessera.broadcast_to(x, (3, 3))
    array([[1, 2, 3],
           [1, 2, 3],
           [1, 2, 3]])
    >>> tessera.broadcast_to(np.array([[1], [2]]), (2, 2, 3))
    array([[[1, 1, 1],
            [2, 2, 2]],
    <BLANKLINE>
           [[1, 1, 1],
            [2, 2, 2]]])
    >>> y = tessera.broadcast_to(x, (2, 3))
    >>> y.flags.writeable, np.shares_memory(x, y)
    (True, False)
    >>> tessera.broadcast_to(x, (3, 2))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    ValueError: tessera: broadcast_to: input axis 0 has extent 3 but shape[1] = 2 ...
    """
    if type(A) is _ndarray and type(shape) in _PLAIN_ARG:
        return _call(_BROADCAST_TO, A, None, shape, None, None, out, max_threads, nontemporal, "error", False)
    return _run(_BROADCAST_TO, A, None, _tensor_arg(shape), None, None, out, max_threads, nontemporal, "error", False)


def expand(A, shape, *, out=None, max_threads=None, nontemporal=None):
    """Broadcast A and `shape` together, into new memory: ONNX ``Expand``.

    The numpy broadcast of ``A.shape`` and `shape` (ONNX Expand-8/13, OpenVINO Broadcast-3
    "bidirectional"): the shorter of the two is promoted by prepending 1s; on each axis the two
    extents must be equal or one of them 1, and the output has the larger. Unlike
    `broadcast_to`, `shape` may have fewer axes than A and may hold 1 where A does not:
    ``expand(A, shape)`` is ``(A * numpy.ones(shape, A.dtype))`` for numbers, with no arithmetic.

    Parameters
    ----------
    A : array_like or torch.Tensor
        The input array, as for `broadcast_to`.
    shape : int or sequence of ints
        The shape to broadcast with (elements).
    out : ndarray or torch.Tensor, optional
        Where to write the result: exactly the result's shape and A's dtype, C-contiguous,
        writeable (a torch tensor for a torch A). It may overlap A.
    max_threads : int, optional
        As for `broadcast_to`.
    nontemporal : bool, optional
        As for `broadcast_to`.

    Returns
    -------
    ndarray or torch.Tensor
        A new C-contiguous, writeable array of A's dtype and the broadcast shape, sharing no
        memory with A -- or `out` itself (a torch tensor for a torch A).

    Raises
    ------
    ValueError
        Extents that do not broadcast (the message names the axis and both extents), a negative
        extent, an output too big; a bad `out` (named); an invalid option.
    TypeError
        A non-integer or bool extent (named); an object dtype; an `out` of the wrong type.

    On any error nothing is written to `out`.

    See Also
    --------
    broadcast_to, numpy.broadcast_shapes, tile, Plan.expand

    Examples
    --------
    >>> import numpy as np, tessera
    >>> x = np.array([[1], [2], [3]])
    >>> tessera.expand(x, (2, 1, 6)).shape
    (2, 3, 6)
    >>> tessera.expand(x, (1, 4))
    array([[1, 1, 1, 1],
           [2, 2, 2, 2],
           [3, 3, 3, 3]])
    >>> tessera.expand(x, 1)  # shape may be shorter and hold 1s: A as it is, copied
    array([[1],
           [2],
           [3]])
    """
    if type(A) is _ndarray and type(shape) in _PLAIN_ARG:
        return _call(_EXPAND, A, None, shape, None, None, out, max_threads, nontemporal, "error", False)
    return _run(_EXPAND, A, None, _tensor_arg(shape), None, None, out, max_threads, nontemporal, "error", False)


def repeat(A, repeats, axis=None, *, out=None, output_size=None, max_threads=None, nontemporal=None):
    """Repeat each element of A after itself: `numpy.repeat` (``torch.repeat_interleave``).

    Along `axis`, element i of A is written ``repeats[i]`` times in a row; the output has A's
    shape but for that axis, whose extent is ``sum(repeats)`` (``A.shape[axis] * repeats`` for
    one count). With ``axis=None`` the input is flattened (C order) first and the output is 1-d.

    Parameters
    ----------
    A : array_like or torch.Tensor
        The input array, as for `tile`: any dtype but object, any layout, read in place; or a
        CPU torch tensor, read in place through DLPack.
    repeats : int, or sequence, ndarray or torch.Tensor of ints
        The counts (>= 0): one for every element, or one per element along the axis (a length-1
        sequence is one count for all). Integers only (numpy 1.24 truncates floats; tessera
        raises TypeError). A 1-d int32 or int64 ndarray or CPU tensor, contiguous or strided, is
        read in place while planning (no copy, no conversion); other integer types are cast to
        int64 first.
    axis : int, optional
        The axis along which to repeat (negative counts from the end). None (default): the
        flattened input. A 0-d A is read as 1-d, as numpy reads it (axis 0 or -1).
    out : ndarray or torch.Tensor, optional
        Where to write the result: exactly the result's shape and A's dtype, C-contiguous,
        writeable (a torch tensor for a torch A). It may overlap A.
    output_size : int, optional
        ``torch.repeat_interleave``'s: the output's extent along the axis (the total count), if
        known; checked against the counts (ValueError when it differs).
    max_threads : int, optional
        As for `tile`.
    nontemporal : bool, optional
        As for `tile`.

    Returns
    -------
    ndarray or torch.Tensor
        A new C-contiguous, writeable array of A's dtype, sharing no memory with A -- or `out`
        itself. For a torch tensor, ``torch.repeat_interleave(A, repeats, axis)`` as a tensor of
        A's dtype (read detached).

    Raises
    ------
    numpy.exceptions.AxisError
        (numpy.AxisError before numpy 1.25) `axis` out of range (the message names it and A's
        number of axes); it is a ValueError and an IndexError, as numpy's.
    ValueError
        A negative count, a count list whose length is neither 1 nor A's extent along the axis,
        a count list of more than one axis (each names the value); an `output_size` that
        differs from the result's; an output too big; a bad `out` (named); an invalid option.
    TypeError
        A non-integer count, axis or output_size, or a bool axis or output_size (named, as numpy
        and torch refuse them; a bool count is 0 or 1, as numpy reads it); an object dtype; an
        `out` of the wrong type.

    On any error nothing is written to `out`.

    See Also
    --------
    numpy.repeat, torch.repeat_interleave, tile, Plan.repeat

    Examples
    --------
    >>> import numpy as np, tessera
    >>> tessera.repeat(3, 4)
    array([3, 3, 3, 3])
    >>> x = np.array([[1, 2], [3, 4]])
    >>> tessera.repeat(x, 2)
    array([1, 1, 2, 2, 3, 3, 4, 4])
    >>> tessera.repeat(x, 3, axis=1)
    array([[1, 1, 1, 2, 2, 2],
           [3, 3, 3, 4, 4, 4]])
    >>> tessera.repeat(x, [1, 2], axis=0)
    array([[1, 2],
           [3, 4],
           [3, 4]])
    >>> tessera.repeat(x, [1, 2], axis=-1, output_size=3)
    array([[1, 2, 2],
           [3, 4, 4]])
    >>> tessera.repeat(x, 2, axis=2)  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
        ...
    numpy.exceptions.AxisError: tessera: repeat: axis 2 is out of bounds for array of dimension 2
    """
    if type(A) is _ndarray and type(repeats) in _PLAIN_ARG:
        return _call(_REPEAT, A, None, repeats, axis, output_size, out, max_threads, nontemporal, "error", False)
    return _run(_REPEAT, A, None, _tensor_arg(repeats), axis, output_size, out, max_threads, nontemporal, "error",
                False)


# The reductions: the family's gradients ---------------------------------------------------------

_ACCURACY_NOTES = """
    Accuracy: floating-point sums are blocked and pairwise, never one long running sum, whatever
    the axis being reduced: per output element the addends (in the order of the reduced axes,
    outer first) are summed in leaves of 8 and the leaves combined by a binary tree; a reduced run
    that is contiguous in memory (at least 16 elements) is summed in 16 interleaved partial sums
    of blocks, again leaves of 8 blocks and a binary tree, the 16 then added by a halving tree.
    float32 and complex64 are accumulated in float64, float16 and bfloat16 in float32, float64
    and complex128 in float64; the sum is rounded to the element type once (to nearest even). On
    float32 data the result is then about as accurate as float32 allows (the exact sum rounded
    once), never worse than numpy's pairwise ``sum`` along a contiguous axis (and ~10x better than
    numpy along a strided axis, which numpy sums one row at a time). Integers wrap modulo 2**bits
    (C unsigned arithmetic: exact whatever the order), in A's own type: where ``numpy.sum``
    promotes int8 to int64, these do not. A sum of only -0.0 values is +0.0, as ``numpy.sum``'s.

    Determinism: the order of the additions is a function of the plan (shapes, strides, dtype)
    only: the same bits for every thread count, every `max_threads`, every run and every SIMD
    target (the partial sums are laid out in 16 lanes whatever the vector width; there is no
    fused multiply-add).

    With ``accumulate=True``: ``out = round(out + sum)``, the sum added once. A reduction over no
    element (a rep or count of 0) gives 0 (or leaves `out` as it is when accumulating).
"""

_REDUCE_DTYPES = """float16, float32, float64, complex64, complex128, int8, int16, int32,
        int64, uint8, uint16, uint32 or uint64 (numpy's or torch's), or torch.bfloat16"""


def tile_backward(grad_out, in_shape, reps, *, out=None, max_threads=None, nontemporal=None,
                  negative_reps="error", accumulate=False):
    """The gradient of `tile`: grad_out summed over the replicas, back to the input's shape.

    The backward of ``torch.tile`` (and of `tile` / `numpy.tile`): ``result[i]`` is the sum of
    ``grad_out[j]`` over every output index j that ``tile(A, reps)`` copied from ``A[i]``, for an
    A of shape `in_shape`. With numpy.tile's promotion (the shorter of `in_shape` and `reps`
    prepended with 1s; leading promoted axes are summed away), it is
    ``grad_out.reshape(r0, s0, r1, s1, ...).sum(axis=(0, 2, ...)).reshape(in_shape)`` -- computed
    in place from any layout of grad_out, without the copy numpy's reshape makes of a strided
    array, and more accurately (Notes).

    Parameters
    ----------
    grad_out : array_like or torch.Tensor
        The gradient of tile's output: an array of shape ``tile_shape(in_shape, reps)`` in any
        layout (transposed, negative or zero strides, stepped views, read-only), read in place;
        or a CPU torch tensor of any strides, read in place through DLPack (a non-contiguous
        ``grad_output`` included). Its dtype is one tessera sums:
        {dtypes}.
    in_shape : int or sequence of ints
        The shape of tile's input A: the result's shape (elements).
    reps : int, sequence of ints, or integer ndarray
        tile's repetitions, as for `tile`.
    out : ndarray or torch.Tensor, optional
        Where to write the result: exactly `in_shape` and grad_out's dtype, C-contiguous and
        writeable (a torch tensor for a torch grad_out). It may overlap grad_out.
    max_threads : int, optional
        At most this many threads (>= 1) sum; None (default): the threads of the caller's oneTBB
        task arena. Inputs under 512 KiB are summed by the calling thread alone.
    nontemporal : bool, optional
        As for `tile` (streaming stores for the result).
    negative_reps : {{"error", "clamp_to_zero"}}, optional
        As for `tile`: with "clamp_to_zero" a negative rep is 0 (an empty grad_out axis, whose sum
        is 0).
    accumulate : bool, optional
        False (default): write the result. True: add it into `out` (which must be given), as
        frameworks accumulate gradients: ``out += tile_backward(grad_out, in_shape, reps)``, with
        one rounding.

    Returns
    -------
    ndarray or torch.Tensor
        A new C-contiguous, writeable array of shape `in_shape` and grad_out's dtype -- or `out`
        itself. For a torch tensor, a torch tensor (read detached: no autograd history; see
        `tessera.torch` for the differentiable functions).

    Raises
    ------
    ValueError
        grad_out's shape is not ``tile_shape(in_shape, reps)`` (the message names the axis and
        both extents); a negative rep or extent (named); more than 64 values; a bad `out` (its
        shape, dtype, layout or writeability, named); ``accumulate=True`` without `out`; a torch
        tensor on another device; an invalid option.
    TypeError
        A dtype tessera cannot sum (bool, object, datetime64, longdouble, strings, structured,
        non-native byte order, quantized tensors, ... -- the message names it); a non-integer
        extent or rep (named); an `out` that is not an ndarray (a tensor, for a torch grad_out).

    On any error nothing is written to `out`.

    See Also
    --------
    tile, sum_to_shape, repeat_backward, Plan.tile_backward, tessera.torch.tile

    Notes
    -----{notes}
    Examples
    --------
    >>> import numpy as np, tessera
    >>> g = np.arange(12.0).reshape(2, 6)  # the gradient of tile(A, (1, 2)) for an A of shape (2, 3)
    >>> tessera.tile_backward(g, (2, 3), (1, 2))
    array([[ 3.,  5.,  7.],
           [15., 17., 19.]])
    >>> s = tessera.tile_backward(g, 3, (2, 2))  # reps longer than in_shape: the leading axis summed away
    >>> s
    array([18., 22., 26.])
    >>> np.array_equal(s, g.reshape(2, 2, 3).sum(axis=(0, 1)))
    True
    >>> acc = np.ones(3)
    >>> tessera.tile_backward(g, 3, (2, 2), out=acc, accumulate=True) is acc
    True
    >>> acc
    array([19., 23., 27.])
    >>> tessera.tile_backward(g, (2, 2), (1, 2))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    ValueError: tessera: tile_backward: ...
    """
    return _run(_OP["tile_backward"], grad_out, _tensor_arg(in_shape), _tensor_arg(reps), None, None, out,
                max_threads, nontemporal, negative_reps, accumulate)


def sum_to_shape(A, shape, *, out=None, max_threads=None, nontemporal=None, accumulate=False):
    """Sum A down to `shape`: the gradient of `broadcast_to` / `expand`, ``torch.Tensor.sum_to_size``.

    The semantics of ``torch.Tensor.sum_to_size(shape)`` (the backward of ``torch.Tensor.expand``
    and ``torch.broadcast_to``, and of `broadcast_to` / `expand`): `shape` is aligned with A's
    trailing axes (it may have fewer axes than A, not more); A is summed over its leading axes
    beyond `shape`'s and over every axis where `shape` has extent 1 and A does not. Every other
    extent of `shape` must equal A's. Unlike ``numpy.sum(..., keepdims=True)``, the axes are given
    by the shape they sum to, A is read in place in any layout, and the sum is more accurate
    (Notes).

    Parameters
    ----------
    A : array_like or torch.Tensor
        The array to sum (the gradient of a broadcast's output), in any layout, read in place;
        or a CPU torch tensor of any strides, read in place through DLPack. Its dtype is one
        tessera sums:
        {dtypes}.
    shape : int or sequence of ints
        The result's shape (elements): at most A's number of axes, each extent A's or 1.
    out : ndarray or torch.Tensor, optional
        Where to write the result: exactly `shape` and A's dtype, C-contiguous and writeable (a
        torch tensor for a torch A). It may overlap A.
    max_threads : int, optional
        As for `tile_backward`.
    nontemporal : bool, optional
        As for `tile`.
    accumulate : bool, optional
        False (default): write the result. True: add it into `out` (which must be given).

    Returns
    -------
    ndarray or torch.Tensor
        A new C-contiguous, writeable array of shape `shape` and A's dtype -- or `out` itself. For
        a torch tensor, a torch tensor (read detached: no autograd history).

    Raises
    ------
    ValueError
        `shape` has more axes than A, or an extent that is neither A's nor 1 (the message names
        the axis and both extents); a negative extent; a bad `out` (named); ``accumulate=True``
        without `out`; a torch tensor on another device; an invalid option.
    TypeError
        A dtype tessera cannot sum (named); a non-integer extent (named); an `out` of the wrong
        type.

    On any error nothing is written to `out`.

    See Also
    --------
    broadcast_to, expand, torch.Tensor.sum_to_size, numpy.sum, tile_backward, Plan.sum_to_shape,
    tessera.torch.broadcast_to, tessera.torch.expand

    Notes
    -----{notes}
    Examples
    --------
    >>> import numpy as np, tessera
    >>> a = np.arange(6).reshape(2, 3)
    >>> tessera.sum_to_shape(a, (1, 3))
    array([[3, 5, 7]])
    >>> tessera.sum_to_shape(a, 3)  # the leading axis summed away
    array([3, 5, 7])
    >>> tessera.sum_to_shape(a.T, (3, 1))  # a transposed view, read in place
    array([[3],
           [5],
           [7]])
    >>> tessera.sum_to_shape(a, ())
    array(15)
    >>> tessera.sum_to_shape(a, (2, 2))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    ValueError: tessera: sum_to_shape: ...
    """
    return _run(_OP["sum_to_shape"], A, None, _tensor_arg(shape), None, None, out, max_threads, nontemporal,
                "error", accumulate)


def repeat_backward(grad_out, in_shape, repeats, axis=None, *, out=None, max_threads=None, nontemporal=None,
                    accumulate=False):
    """The gradient of `repeat`: each element's repeated copies in grad_out summed back into it.

    The backward of ``torch.repeat_interleave`` (and of `repeat` / `numpy.repeat`): for an A of
    shape `in_shape`, ``result[..., k, ...]`` is the sum of the ``repeats[k]`` (or ``repeats``)
    consecutive elements of grad_out along `axis` that ``repeat(A, repeats, axis)`` wrote from
    ``A[..., k, ...]`` -- a segment sum. With ``axis=None`` grad_out is the 1-d repeat of the
    flattened A, and the result still has `in_shape`.

    Parameters
    ----------
    grad_out : array_like or torch.Tensor
        The gradient of repeat's output, of shape ``repeat(A, repeats, axis).shape``, in any
        layout, read in place; or a CPU torch tensor of any strides, read in place through
        DLPack. Its dtype is one tessera sums:
        {dtypes}.
    in_shape : int or sequence of ints
        The shape of repeat's input A: the result's shape (elements).
    repeats : int, or sequence, ndarray or torch.Tensor of ints
        repeat's counts (>= 0), as for `repeat`: one for every element, or one per element along
        the axis.
    axis : int, optional
        repeat's axis, an axis of `in_shape` (negative counts from the end); None (default): the
        flattened A.
    out : ndarray or torch.Tensor, optional
        Where to write the result: exactly `in_shape` and grad_out's dtype, C-contiguous and
        writeable (a torch tensor for a torch grad_out). It may overlap grad_out.
    max_threads : int, optional
        As for `tile_backward`.
    nontemporal : bool, optional
        As for `tile`.
    accumulate : bool, optional
        False (default): write the result. True: add it into `out` (which must be given).

    Returns
    -------
    ndarray or torch.Tensor
        A new C-contiguous, writeable array of shape `in_shape` and grad_out's dtype -- or `out`
        itself. For a torch tensor, a torch tensor (read detached: no autograd history).

    Raises
    ------
    numpy.exceptions.AxisError
        (numpy.AxisError before numpy 1.25) `axis` out of range for `in_shape` (named; a
        ValueError and an IndexError).
    ValueError
        grad_out's shape is not repeat's output shape (the message names the axis and both
        extents); a negative count, a count list whose length is neither 1 nor the axis' extent
        (named); a bad `out` (named); ``accumulate=True`` without `out`; a torch tensor on another
        device; an invalid option.
    TypeError
        A dtype tessera cannot sum (named); a non-integer count, extent or axis (named); an `out`
        of the wrong type.

    On any error nothing is written to `out`.

    See Also
    --------
    repeat, torch.repeat_interleave, tile_backward, Plan.repeat_backward,
    tessera.torch.repeat_interleave

    Notes
    -----{notes}
    Examples
    --------
    >>> import numpy as np, tessera
    >>> tessera.repeat_backward(np.arange(6.0), 3, 2)  # the gradient of repeat(A, 2) for an A of shape (3,)
    array([1., 5., 9.])
    >>> g = np.arange(12).reshape(2, 6)
    >>> tessera.repeat_backward(g, (2, 3), [3, 1, 2], axis=1)
    array([[ 3,  3,  9],
           [21,  9, 21]])
    >>> tessera.repeat_backward(np.arange(8.0), (2, 2), 2)  # axis=None: grad_out is 1-d
    array([[ 1.,  5.],
           [ 9., 13.]])
    """
    repeats = _tensor_arg(repeats)
    return _run(_OP["repeat_backward"], grad_out, _tensor_arg(in_shape), repeats, axis, None, out, max_threads,
                nontemporal, "error", accumulate)


for _f in (tile_backward, sum_to_shape, repeat_backward):
    if _f.__doc__:  # None under python -OO
        _f.__doc__ = _f.__doc__.format(notes=_ACCURACY_NOTES, dtypes=_REDUCE_DTYPES)
del _f


def simd_target():
    """The SIMD target tessera's kernels dispatch to on this CPU.

    Returns
    -------
    str
        A Highway target name, e.g. ``"AVX3"``, ``"AVX2"``, ``"SSE4"``, ``"NEON"``, ``"SVE"``,
        ``"SCALAR"``.
    """
    return _ext.simd_target()


def show_config(mode="stdout"):
    """Show how tessera was built and what it runs with here (as `numpy.show_config`).

    Every value is read from the running library and the libraries this process mapped, not
    restated: tessera's version; the SIMD targets its kernels were compiled for, those this CPU
    supports and the one they dispatch to (Highway); oneTBB's version (the mapped library's and
    the headers') and default concurrency; the streaming threshold and the block cache's limit
    (bytes); the files the extension, oneTBB and Highway were loaded from (a wheel carries its own
    copies of oneTBB and Highway in ``tessera.libs/``); numpy's version and C-API versions (the
    running numpy's, the headers' the module was compiled with, and the oldest it supports); and
    Python's.

    Parameters
    ----------
    mode : {"stdout", "dicts"}, optional
        "stdout" (default): print the report, one section per heading (YAML, like numpy's).
        "dicts": return it instead.

    Returns
    -------
    None or dict
        None for "stdout". For "dicts", ``{section: {key: value}}`` with the sections
        ``"tessera"`` (``version``), ``"SIMD Extensions"`` (``compiled`` and ``supported``: lists
        of Highway target names, best first; ``dispatched``: `simd_target`;
        ``highway_compiled_version``: Highway's headers, which libhwy does not report at run
        time), ``"oneTBB"`` (``version`` and ``interface_version`` of the mapped library;
        ``compiled_version`` and ``compiled_interface_version`` of the headers;
        ``default_concurrency``: ``tbb::info::default_concurrency()``, the CPUs of the process's
        affinity mask when oneTBB first looked; ``max_concurrency``: the calling thread's task
        arena's, the threads a call without ``max_threads`` may use), ``"Memory"``
        (``streaming_threshold_bytes``: the smallest output written with streaming stores under
        ``nontemporal=None``, 3/4 of the last-level cache clamped to 4-256 MiB (four times the L2 on
        Intel CPUs with a last-level cache over 64 MiB, a Xeon's mesh L3; 16 MiB where Linux's
        sysfs does not give the cache's size), or the environment variable
        ``TESSERA_STREAM_MIN_BYTES``; a gradient's result streams from 2/3 of it;
        ``reduce_prefetch_bytes``: how far ahead the gradients' kernels prefetch the dense runs
        each summed to one output element or to a short row of them (and, on some CPUs, short
        strips of output rows),
        16384 on AMD CPU family 26 (Zen 5: runs of at most 4 KiB and short strips) and on Intel
        CPUs with a last-level cache over 64 MiB (runs of at most 4 KiB, longer runs of single
        elements, and strips of 2-8 short rows read one row after another, prefetched along the
        rows 4096 bytes ahead), 0 (none)
        on other CPUs, or the environment variable ``TESSERA_PREFETCH_BYTES`` (for every kind;
        ``repeat_backward`` of per-element counts of at most 4 prefetches its float32 gradient at
        most 4096 bytes ahead and its counts 4096 bytes ahead wherever this is not 0);
        ``block_cache_limit_bytes``: the most bytes of freed large outputs tessera keeps for
        reuse: `set_block_cache_limit`'s, else
        ``TESSERA_ALLOC_CACHE_BYTES`` or 256 MiB; ``block_cache_max_age_seconds``: how long an unused
        one is kept, `set_block_cache_max_age`'s or 10.0),
        ``"Native Libraries"`` (``_tessera``, ``libtbb``, ``libhwy``: the real paths of the files
        mapped, None where unknown), ``"numpy"`` (``version``; ``runtime_abi_version``,
        ``runtime_api_version``, ``compiled_abi_version``, ``compiled_api_version`` and
        ``target_api_version``: numpy's C-API version numbers as hexadecimal strings, e.g.
        ``"0x00000010"``, numpy 1.23's and 1.24's API) and ``"Python Information"``
        (``version``, ``implementation``, ``executable``).

    Raises
    ------
    ValueError
        `mode` is neither "stdout" nor "dicts" (the message names it).

    See Also
    --------
    numpy.show_config, simd_target

    Examples
    --------
    >>> import tessera
    >>> config = tessera.show_config(mode="dicts")
    >>> list(config)
    ['tessera', 'SIMD Extensions', 'oneTBB', 'Memory', 'Native Libraries', 'numpy', 'Python Information']
    >>> config["SIMD Extensions"]["dispatched"] == tessera.simd_target()
    True
    >>> tessera.show_config()  # doctest: +ELLIPSIS
    tessera:
      version: ...
    SIMD Extensions:
      compiled:
      - ...
      dispatched: ...
    oneTBB:
      version: ...
    """
    if mode not in ("stdout", "dicts"):
        raise ValueError(f"tessera.show_config: mode={mode!r} is not 'stdout' or 'dicts'")
    import platform

    config = _ext.config()
    config["numpy"] = {"version": _np.__version__, **config["numpy"]}
    config["Python Information"] = {"version": platform.python_version(),
                                    "implementation": platform.python_implementation(),
                                    "executable": _sys.executable}
    if mode == "dicts":
        return config
    lines = []
    for section, values in config.items():
        lines.append(f"{section}:")
        for key, value in values.items():
            if isinstance(value, list):
                lines.append(f"  {key}:")
                lines.extend(f"  - {item}" for item in value)
            elif value is None:
                lines.append(f"  {key}: null")
            elif key.endswith("_bytes") and value >= 2**20:
                lines.append(f"  {key}: {value}  # {value / 2**20:g} MiB")
            elif key.endswith("_bytes") and value > 0:
                lines.append(f"  {key}: {value}  # {value / 2**10:g} KiB")
            else:
                lines.append(f"  {key}: {value}")
    print("\n".join(lines))
    return None


def set_block_cache_limit(nbytes):
    """Bound, or disable, the cache of freed large outputs, for the whole process.

    The allocating calls (those without ``out=``) give outputs of 32 MiB or more 2 MiB-aligned
    blocks of huge pages; when such an output is released, its block is kept, still resident, for
    a later output of about its size (one that fills at least 4/5 of it), which then takes no page
    fault -- up to this many bytes, each for `set_block_cache_max_age`'s seconds unused (10 by
    default; a library thread releases blocks on time, and a released block's memory leaves the
    process at once). A process that watches its resident memory (a Dask worker under its nanny, a
    container with a memory limit) can bound it lower, or pass 0 to keep nothing.

    Parameters
    ----------
    nbytes : int
        The most bytes kept, >= 0 (0: none). Replaces the environment variable
        ``TESSERA_ALLOC_CACHE_BYTES`` (read once; default 256 MiB) from now on.

    Returns
    -------
    None
        Shrinking releases the kept blocks past the new bound, oldest first, before it returns.
        ``show_config(mode="dicts")["Memory"]["block_cache_limit_bytes"]`` reports the bound.

    Raises
    ------
    TypeError
        `nbytes` is not an integer (a bool is not accepted either).
    ValueError
        `nbytes` is negative or does not fit in the platform's size_t (the message names it).

    See Also
    --------
    set_block_cache_max_age, show_config

    Examples
    --------
    >>> import tessera
    >>> limit = tessera.show_config(mode="dicts")["Memory"]["block_cache_limit_bytes"]
    >>> tessera.set_block_cache_limit(64 * 2**20)  # at most 64 MiB
    >>> tessera.show_config(mode="dicts")["Memory"]["block_cache_limit_bytes"]
    67108864
    >>> tessera.set_block_cache_limit(limit)
    """
    if isinstance(nbytes, bool):
        raise TypeError(f"tessera.set_block_cache_limit: nbytes={nbytes!r} is not an integer number of bytes")
    try:
        n = _operator.index(nbytes)
    except TypeError:
        raise TypeError(f"tessera.set_block_cache_limit: nbytes={nbytes!r} is not an integer number of bytes") \
            from None
    if n < 0 or n >= 2 ** (8 * _np.dtype(_np.uintp).itemsize):
        raise ValueError(f"tessera.set_block_cache_limit: nbytes={n} is not in [0, 2**"
                         f"{8 * _np.dtype(_np.uintp).itemsize}) (bytes)")
    _ext.set_block_cache_limit(n)


def set_block_cache_max_age(seconds):
    """Set how long a freed large output's block is kept unused (see `set_block_cache_limit`).

    Parameters
    ----------
    seconds : float
        0 <= seconds <= 86400 (one day); 10 by default. 0 releases each block when its output is
        released. Applies to the blocks already kept too.

    Returns
    -------
    None
        The blocks kept at least that long are released before it returns; a library thread
        releases the others when they reach it, without waiting for another call.
        ``show_config(mode="dicts")["Memory"]["block_cache_max_age_seconds"]`` reports it.

    Raises
    ------
    TypeError
        `seconds` is not a real number.
    ValueError
        `seconds` is negative, larger than 86400, or not finite (the message names it).

    See Also
    --------
    set_block_cache_limit, show_config

    Examples
    --------
    >>> import tessera
    >>> tessera.set_block_cache_max_age(1.5)
    >>> tessera.show_config(mode="dicts")["Memory"]["block_cache_max_age_seconds"]
    1.5
    >>> tessera.set_block_cache_max_age(10)
    """
    if isinstance(seconds, bool) or not isinstance(seconds, _numbers.Real):
        raise TypeError(f"tessera.set_block_cache_max_age: seconds={seconds!r} is not a real number")
    s = float(seconds)
    if not 0 <= s <= 86400:  # NaN fails too
        raise ValueError(f"tessera.set_block_cache_max_age: seconds={s!r} is not in [0, 86400]")
    _ext.set_block_cache_max_age(s)


class Plan(_ext.Plan):
    """A reusable plan for ``tile(A, reps)`` with A of one shape, dtype and layout.

    Planning (promotion, validation, the loops and the kernel) is done once; calling the plan
    only checks A and writes. A plan is immutable and may be called from many threads at once.
    The constructor plans `tile`; `Plan.broadcast_to`, `Plan.expand` and `Plan.repeat` plan the
    rest of the family, and their plans are called, and their regions computed, the same way.
    `Plan.tile_backward`, `Plan.sum_to_shape` and `Plan.repeat_backward` plan the gradients, whose
    plans are called the same way (A is then the gradient) but have no regions.

    Parameters
    ----------
    shape : int or sequence of ints
        The input's shape (elements).
    reps : int, sequence of ints, or integer ndarray
        The repetitions per axis, as for `tile`.
    dtype : data-type
        The input's dtype (anything `numpy.dtype` takes, but object dtypes and subarray dtypes).
    strides : sequence of ints, optional
        The input's strides in bytes (numpy's ``A.strides``, any sign); None (default): C-contiguous.
    max_threads, nontemporal, negative_reps
        As for `tile`; kept by the plan for every call.

    Attributes
    ----------
    operation : str
        ``"tile"``, ``"broadcast_to"``, ``"expand"``, ``"repeat"``, ``"tile_backward"``,
        ``"sum_to_shape"`` or ``"repeat_backward"``.
    out_shape : tuple of ints
        The output shape (elements).
    shape, strides, dtype
        What the plan was made for (strides in bytes).
    ndim : int
        The number of output axes.
    nbytes : int
        The output's size in bytes.
    itemsize : int
        Bytes per element.
    kernel_path : str
        The executor path the output's rows take, e.g. ``"pattern.long"``, ``"fill.4.nt"``,
        ``"fill.4.lines"`` (rows of one 64-byte cache line each), ``"repeat.shuffle"``
        (``"reduce.*"`` for the gradients).
    accumulate : bool
        Whether calling the plan adds into ``out=`` (the gradients' plans; False for the others).

    Raises
    ------
    ValueError, TypeError
        As `tile` for bad shapes, reps, strides or options. A plan whose constructor raised (or
        an object made by ``Plan.__new__`` alone) is not a plan: its methods and attributes raise
        ValueError saying so, and its repr says so too.

    Examples
    --------
    >>> import numpy as np, tessera
    >>> plan = tessera.Plan((2, 2), (2, 3), np.float32)
    >>> plan.out_shape, plan.nbytes
    ((4, 6), 96)
    >>> a = np.arange(4, dtype=np.float32).reshape(2, 2)
    >>> plan(a)
    array([[0., 1., 0., 1., 0., 1.],
           [2., 3., 2., 3., 2., 3.],
           [0., 1., 0., 1., 0., 1.],
           [2., 3., 2., 3., 2., 3.]], dtype=float32)
    >>> plan.execute_region(a, (1, 2), (2, 3))
    array([[2., 3., 2.],
           [0., 1., 0.]], dtype=float32)
    """

    def __init__(self, shape, reps, dtype, strides=None, *, max_threads=None, nontemporal=None,
                 negative_reps="error"):
        super().__init__(_OP["tile"], _tensor_arg(shape), _tensor_arg(reps), dtype, _tensor_arg(strides), None,
                         max_threads, nontemporal, negative_reps)

    @classmethod
    def broadcast_to(cls, shape, target, dtype, strides=None, *, max_threads=None, nontemporal=None):
        """A reusable plan for ``broadcast_to(A, target)`` with A of one shape, dtype and layout.

        Parameters
        ----------
        shape : int or sequence of ints
            The input's shape (elements).
        target : int or sequence of ints
            The output shape, as `broadcast_to`'s `shape`.
        dtype : data-type
            The input's dtype, as for `Plan`.
        strides : sequence of ints, optional
            The input's strides in bytes; None (default): C-contiguous.
        max_threads, nontemporal
            As for `broadcast_to`; kept by the plan for every call.

        Returns
        -------
        Plan
            Called as ``plan(A, out=None)``; ``plan.execute_region(A, start, extent)`` computes
            one region of the output.

        Raises
        ------
        ValueError, TypeError
            As `broadcast_to` for a bad shape, target, strides or option; a dtype as `Plan`.

        See Also
        --------
        broadcast_to, Plan.expand

        Examples
        --------
        >>> import numpy as np, tessera
        >>> plan = tessera.Plan.broadcast_to((3, 1), (2, 3, 4), np.int16)
        >>> plan.out_shape, plan.nbytes
        ((2, 3, 4), 48)
        >>> a = np.array([[7], [8], [9]], dtype=np.int16)
        >>> plan.execute_region(a, (1, 1, 2), (1, 2, 2))
        array([[[8, 8],
                [9, 9]]], dtype=int16)
        >>> np.array_equal(plan(a), np.broadcast_to(a, (2, 3, 4)))
        True
        """
        return cls._family(_OP["broadcast_to"], shape, target, dtype, strides, None, max_threads, nontemporal)

    @classmethod
    def expand(cls, shape, target, dtype, strides=None, *, max_threads=None, nontemporal=None):
        """A reusable plan for ``expand(A, target)`` with A of one shape, dtype and layout.

        Parameters
        ----------
        shape : int or sequence of ints
            The input's shape (elements).
        target : int or sequence of ints
            The shape to broadcast with, as `expand`'s `shape`.
        dtype : data-type
            The input's dtype, as for `Plan`.
        strides : sequence of ints, optional
            The input's strides in bytes; None (default): C-contiguous.
        max_threads, nontemporal
            As for `expand`; kept by the plan for every call.

        Returns
        -------
        Plan
            Called as ``plan(A, out=None)``, with regions (`execute_region`).

        Raises
        ------
        ValueError, TypeError
            As `expand` for a bad shape, target, strides or option; a dtype as `Plan`.

        See Also
        --------
        expand, Plan.broadcast_to

        Examples
        --------
        >>> import numpy as np, tessera
        >>> plan = tessera.Plan.expand((3, 1), (2, 1, 4), np.float32)
        >>> plan.out_shape
        (2, 3, 4)
        >>> plan(np.array([[1], [2], [3]], dtype=np.float32))[1]
        array([[1., 1., 1., 1.],
               [2., 2., 2., 2.],
               [3., 3., 3., 3.]], dtype=float32)
        """
        return cls._family(_OP["expand"], shape, target, dtype, strides, None, max_threads, nontemporal)

    @classmethod
    def repeat(cls, shape, repeats, dtype, axis=None, strides=None, *, max_threads=None, nontemporal=None):
        """A reusable plan for ``repeat(A, repeats, axis)`` with A of one shape, dtype and layout.

        Per-element counts are copied into the plan (their prefix sums, computed once).

        Parameters
        ----------
        shape : int or sequence of ints
            The input's shape (elements).
        repeats : int, or sequence, ndarray or torch.Tensor of ints
            The counts, as for `repeat`.
        dtype : data-type
            The input's dtype, as for `Plan`.
        axis : int, optional
            As for `repeat` (None: the flattened input).
        strides : sequence of ints, optional
            The input's strides in bytes; None (default): C-contiguous.
        max_threads, nontemporal
            As for `repeat`; kept by the plan for every call.

        Returns
        -------
        Plan
            Called as ``plan(A, out=None)``, with regions (`execute_region`).

        Raises
        ------
        numpy.exceptions.AxisError, ValueError, TypeError
            As `repeat` for a bad axis, counts, strides or option; a dtype as `Plan`.

        See Also
        --------
        repeat, Plan

        Examples
        --------
        >>> import numpy as np, tessera
        >>> plan = tessera.Plan.repeat((2, 3), [3, 1, 2], np.int64, axis=1)
        >>> plan.out_shape, plan.operation
        ((2, 6), 'repeat')
        >>> a = np.arange(6).reshape(2, 3)
        >>> plan(a)
        array([[0, 0, 0, 1, 2, 2],
               [3, 3, 3, 4, 5, 5]])
        >>> plan.execute_region(a, (1, 2), (1, 3))
        array([[3, 4, 5]])
        """
        repeats = _tensor_arg(repeats)
        return cls._family(_OP["repeat"], shape, repeats, dtype, strides, axis, max_threads, nontemporal)

    @classmethod
    def tile_backward(cls, shape, in_shape, reps, dtype, strides=None, *, max_threads=None, nontemporal=None,
                      negative_reps="error", accumulate=False):
        """A reusable plan for ``tile_backward(grad_out, in_shape, reps)`` with grad_out of one shape,
        dtype and layout.

        Parameters
        ----------
        shape : int or sequence of ints
            grad_out's shape (elements): ``tile_shape(in_shape, reps)``, checked.
        in_shape : int or sequence of ints
            The shape of tile's input: the result's shape.
        reps : int, sequence of ints, or integer ndarray
            tile's repetitions, as for `tile`.
        dtype : data-type
            grad_out's dtype: one `tile_backward` sums (anything `numpy.dtype` takes).
        strides : sequence of ints, optional
            grad_out's strides in bytes (any sign, zero); None (default): C-contiguous.
        max_threads, nontemporal, negative_reps, accumulate
            As for `tile_backward`; kept by the plan for every call (a plan made with
            ``accumulate=True`` is called with ``out=``, which it adds into).

        Returns
        -------
        Plan
            Called as ``plan(grad_out, out=None)``; no `execute_region`.

        Raises
        ------
        ValueError, TypeError
            As `tile_backward` for a bad shape, in_shape, reps, strides, dtype or option.

        See Also
        --------
        tile_backward, Plan

        Examples
        --------
        >>> import numpy as np, tessera
        >>> plan = tessera.Plan.tile_backward((4, 6), (2, 3), (2, 2), np.float32)
        >>> plan.out_shape, plan.operation
        ((2, 3), 'tile_backward')
        >>> plan(np.ones((4, 6), np.float32))
        array([[4., 4., 4.],
               [4., 4., 4.]], dtype=float32)
        """
        return cls._reduction(_OP["tile_backward"], shape, in_shape, reps, dtype, strides, None, max_threads,
                              nontemporal, negative_reps, accumulate)

    @classmethod
    def sum_to_shape(cls, shape, target, dtype, strides=None, *, max_threads=None, nontemporal=None,
                     accumulate=False):
        """A reusable plan for ``sum_to_shape(A, target)`` with A of one shape, dtype and layout.

        Parameters
        ----------
        shape : int or sequence of ints
            A's shape (elements).
        target : int or sequence of ints
            The result's shape, as `sum_to_shape`'s `shape`.
        dtype : data-type
            A's dtype: one `sum_to_shape` sums.
        strides : sequence of ints, optional
            A's strides in bytes; None (default): C-contiguous.
        max_threads, nontemporal, accumulate
            As for `sum_to_shape`; kept by the plan for every call.

        Returns
        -------
        Plan
            Called as ``plan(A, out=None)``; no `execute_region`.

        Raises
        ------
        ValueError, TypeError
            As `sum_to_shape` for a bad shape, target, strides, dtype or option.

        See Also
        --------
        sum_to_shape, Plan.broadcast_to

        Examples
        --------
        >>> import numpy as np, tessera
        >>> a = np.arange(12, dtype=np.int32).reshape(3, 4)
        >>> plan = tessera.Plan.sum_to_shape(a.T.shape, (4, 1), a.dtype, a.T.strides)
        >>> plan(a.T)
        array([[12],
               [15],
               [18],
               [21]], dtype=int32)
        >>> out = np.full((4, 1), 100, np.int32)
        >>> acc = tessera.Plan.sum_to_shape((4, 3), (4, 1), np.int32, a.T.strides, accumulate=True)
        >>> acc(a.T, out=out) is out, out.ravel()
        (True, array([112, 115, 118, 121], dtype=int32))
        """
        return cls._reduction(_OP["sum_to_shape"], shape, None, target, dtype, strides, None, max_threads, nontemporal,
                              "error", accumulate)

    @classmethod
    def repeat_backward(cls, shape, in_shape, repeats, dtype, axis=None, strides=None, *, max_threads=None,
                        nontemporal=None, accumulate=False):
        """A reusable plan for ``repeat_backward(grad_out, in_shape, repeats, axis)`` with grad_out of
        one shape, dtype and layout.

        Per-element counts are copied into the plan (their prefix sums, computed once).

        Parameters
        ----------
        shape : int or sequence of ints
            grad_out's shape (elements): repeat's output shape, checked.
        in_shape : int or sequence of ints
            The shape of repeat's input: the result's shape.
        repeats : int, or sequence, ndarray or torch.Tensor of ints
            repeat's counts, as for `repeat`.
        dtype : data-type
            grad_out's dtype: one `repeat_backward` sums.
        axis : int, optional
            As for `repeat_backward` (None: the flattened input).
        strides : sequence of ints, optional
            grad_out's strides in bytes; None (default): C-contiguous.
        max_threads, nontemporal, accumulate
            As for `repeat_backward`; kept by the plan for every call.

        Returns
        -------
        Plan
            Called as ``plan(grad_out, out=None)``; no `execute_region`.

        Raises
        ------
        numpy.exceptions.AxisError, ValueError, TypeError
            As `repeat_backward` for a bad axis, counts, shape, strides, dtype or option.

        See Also
        --------
        repeat_backward, Plan.repeat

        Examples
        --------
        >>> import numpy as np, tessera
        >>> plan = tessera.Plan.repeat_backward((2, 6), (2, 3), [3, 1, 2], np.float64, axis=1)
        >>> plan(np.ones((2, 6)))
        array([[3., 1., 2.],
               [3., 1., 2.]])
        """
        repeats = _tensor_arg(repeats)
        return cls._reduction(_OP["repeat_backward"], shape, in_shape, repeats, dtype, strides, axis, max_threads,
                              nontemporal, "error", accumulate)

    @classmethod
    def _reduction(cls, op, shape, in_shape, arg, dtype, strides, axis, max_threads, nontemporal, negative_reps,
                   accumulate):
        plan = cls.__new__(cls)
        shape, in_shape, arg = _tensor_arg(shape), _tensor_arg(in_shape), _tensor_arg(arg)
        _ext.Plan.__init__(plan, op, shape, in_shape, arg, dtype, _tensor_arg(strides), axis, max_threads,
                           nontemporal, negative_reps, accumulate)
        return plan

    @classmethod
    def _family(cls, op, shape, arg, dtype, strides, axis, max_threads, nontemporal):
        plan = cls.__new__(cls)
        shape, arg, strides = _tensor_arg(shape), _tensor_arg(arg), _tensor_arg(strides)
        _ext.Plan.__init__(plan, op, shape, arg, dtype, strides, axis, max_threads, nontemporal, "error")
        return plan

    def __call__(self, A, out=None):
        """Run the plan on A: tile (or broadcast, expand, repeat) it, or sum it (the gradients).

        Parameters
        ----------
        A : ndarray
            An array of exactly the planned shape and dtype, with the planned strides (on every
            axis of extent > 1).
        out : ndarray, optional
            As for `tile`: the output's shape and dtype, C-contiguous, writeable. Required by a
            plan made with ``accumulate=True``, which adds into it.

        Returns
        -------
        ndarray
            A new C-contiguous array of shape `out_shape`, or `out`.

        Raises
        ------
        ValueError
            A's shape, dtype or strides differ from the plan's (named); a bad `out`; no `out` for
            an accumulating plan.
        TypeError
            A or `out` is not an ndarray.
        """
        return _ext.Plan.__call__(self, A, out)

    def execute_region(self, A, start, extent, out=None):
        """One rectangular region of the output: ``plan(A)[start[0]:start[0] + extent[0], ...]``.

        Only the region is computed (one chunk of a chunked array), serially on the calling thread
        with ordinary stores, with the GIL released. A new region of 256 KiB or more is allocated
        by tessera as the allocating calls' outputs are (on a 64-byte line; from 32 MiB
        2 MiB-aligned, huge-page-advised, or a block of a freed output reused); `tessera.dask`
        makes its chunks this way.

        Parameters
        ----------
        A : ndarray
            As for calling the plan.
        start, extent : sequence of ints
            One value per output axis (`ndim`), in elements: the region is output indices
            ``[start[i], start[i] + extent[i])`` on axis i.
        out : ndarray, optional
            Shape `extent`, the plan's dtype, C-contiguous, writeable.

        Returns
        -------
        ndarray
            A new C-contiguous array of shape `extent`, or `out`.

        Raises
        ------
        ValueError
            A start or extent that is negative or reaches past the output (naming the axis), the
            wrong number of values, a bad A or `out`; a plan of a gradient (tile_backward,
            sum_to_shape, repeat_backward), which has no regions.
        TypeError
            A non-integer start or extent; A or `out` not an ndarray.
        """
        return _ext.Plan.execute_region(self, A, start, extent, out)

    def describe(self):
        """The loops the plan runs (extent, source and destination byte strides) and its kernel.

        Returns
        -------
        str
            One line per loop, then the innermost kernel.
        """
        return _ext.Plan.describe(self)


# torch tensors -----------------------------------------------------------------------------------

def _is_tensor(A):
    torch = _sys.modules.get("torch")  # a tensor exists only where torch is imported
    return torch is not None and isinstance(A, torch.Tensor)


def _tensor_call(op, A, in_shape, arg, axis, output_size, out, max_threads, nontemporal, negative_reps, accumulate):
    """Operation `op` on a torch tensor A, as _run: the options and arguments read once, into plain
    values, and the whole call checked (a reduction's dtype included) before the output is
    allocated; from then on no user code runs, so the tensors' memory cannot change between reading
    their DLPack pointers and writing."""
    from torch.utils.dlpack import to_dlpack

    src = _tensor_source(A, _INPUT_NAME[op])
    in_shape, arg, axis, output_size, shape = _ext.prepare(op, tuple(src.shape), str(src.dtype), in_shape, arg, axis,
                                                           output_size, max_threads, nontemporal, negative_reps,
                                                           accumulate, out is not None)
    src = _resolved(src)
    result = _tensor_out(out, src, shape)
    s, d = _as_bytes(src, result)
    _mark_written(out)
    _ext.call_dlpack(op, to_dlpack(s), to_dlpack(d), in_shape, arg, axis, output_size, max_threads, nontemporal,
                     negative_reps, accumulate)
    return result


def _tensor_source(A, what="A"):
    """A checked (a CPU, strided, unquantized tensor) and detached."""
    import torch

    if A.device.type != "cpu":
        raise ValueError(f"tessera: {what} is a tensor on device '{A.device}'; tessera works on CPU tensors "
                         f"(move it with {what}.cpu())")
    if A.layout != torch.strided:
        raise ValueError(f"tessera: {what} has layout {A.layout}; tessera works on strided tensors "
                         f"(use {what}.to_dense())")
    if A.is_quantized:
        raise TypeError(f"tessera: {what} has the quantized dtype {A.dtype}; dequantize it first "
                        f"({what}.dequantize())")
    return A.detach()


def _resolved(src):
    """src with a lazy conjugate or negative view resolved: its bytes are then its values."""
    if src.is_conj():
        src = src.resolve_conj()
    if src.is_neg():
        src = src.resolve_neg()
    return src


def _tensor_out(out, src, shape):
    """A new tensor of `shape` and src's dtype, or `out` checked against them."""
    import torch

    if out is None:
        return torch.empty(shape, dtype=src.dtype)
    if not isinstance(out, torch.Tensor):
        raise TypeError(f"tessera: out must be a torch.Tensor for a tensor A, got {type(out).__name__}")
    if out.device.type != "cpu":
        raise ValueError(f"tessera: out is a tensor on device '{out.device}'; give a CPU tensor")
    if out.dtype != src.dtype:
        raise ValueError(f"tessera: out has dtype {out.dtype} but the result has dtype {src.dtype}")
    if tuple(out.shape) != shape:
        raise ValueError(f"tessera: out has shape {tuple(out.shape)} but the result has shape {shape}")
    if out.layout != torch.strided or not out.is_contiguous():
        raise ValueError("tessera: out is not C-contiguous")
    if out.requires_grad:
        raise ValueError("tessera: out requires grad; tessera writes it in place (give a tensor that does not)")
    if out.is_conj() or out.is_neg():
        raise ValueError("tessera: out is a lazy conjugate or negative view; give a plain tensor")
    if out.is_inference() and not torch.is_inference_mode_enabled():
        raise ValueError("tessera: out is an inference tensor (made under torch.inference_mode()); it can be "
                         "written in place only inside inference mode")
    return out


def _mark_written(out):
    """Just before tessera writes `out` (None: a new tensor, nothing to do), every argument checked,
    before the DLPack capsules are made: an in-place op on none of out's elements. It raises
    (ValueError) wherever torch forbids writing `out` in place (a view made in no_grad mode of a
    tensor that requires grad, ...), before anything is written; and it bumps out's version
    counter, as torch's own out= ops do, so that a graph that saved `out` raises instead of using
    the new values. Once per call, and only on the way to a write: a call refused before leaves
    out's version as it was."""
    if out is None:
        return
    try:
        out.view(-1)[:0].zero_()
    except RuntimeError as error:
        raise ValueError(f"tessera: out cannot be written in place: {error}") from None


def _as_bytes(s, d):
    """The tensors as DLPack can carry them: bool (which torch 1.13's DLPack lacks) as uint8."""
    import torch

    if s.dtype == torch.bool:
        return s.view(torch.uint8), d.view(torch.uint8)
    return s, d


def _tensor_arg(arg):
    """A shape, reps, in_shape or repeat's counts given as a torch tensor, as an ndarray: read as
    numpy's are (a 2-d one is a ValueError, not flattened); anything else as it is."""
    return arg.detach().cpu().numpy() if _is_tensor(arg) else arg


# A first copy and a first sum at import, of a few bytes each, as the extension does the process's
# other one-time set-up at import: the first call of a process runs code of the extension, the
# library and numpy that nothing has run yet (their pages' first touches): a fresh process's first
# 4 KiB tessera.tile took 24-40 us, 7-12 us after a tile of this kind (2026-11-29, AMD EPYC, a KVM
# guest). A few elements on one thread: they start no thread and leave the first parallel call's
# rule (docs: threads) to the user's first large call.
tile(_np.zeros(1, _np.float32), 2)
tile_backward(_np.zeros(2, _np.float32), (1,), 2)
