"""tessera: numpy.tile at the memory's speed, for numpy arrays and torch tensors.

tessera is a SIMD (Highway) + multithreaded (oneTBB) CPU kernel for the array tile operation.
This package is its Python interface:

- `tile` -- a drop-in for `numpy.tile` (and `torch.tile` for torch tensors), with ``out=``;
- `tile_shape` -- the output shape of a tile, without computing it;
- `Plan` -- a reusable plan for one shape, dtype and layout, and one chunk of its output
  (`Plan.execute_region`);
- `simd_target` -- the SIMD target the kernels dispatch to on this CPU.

Units: shapes, reps and regions are in elements; strides and ``nbytes`` in bytes (numpy's
conventions). Every result is C-contiguous.

Threads: tessera writes large outputs (512 KiB or more) with the threads of its oneTBB task arena
(all cores by default; ``max_threads=N`` caps one call). It releases the GIL while it copies
outputs of 16 KiB or more, so many Python threads may call it at once.
"""

import sys as _sys

import numpy as _np

from . import _tessera as _ext

__all__ = ["tile", "tile_shape", "Plan", "simd_target", "__version__"]

#: The version of the tessera library this module carries ("MAJOR.MINOR.PATCH").
__version__ = _ext.version()

_ndarray = _np.ndarray


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
    reps : int, sequence of ints, or integer ndarray
        The number of repetitions of A along each axis (elements); at most 64 values.
    out : ndarray or torch.Tensor, optional
        Where to write the result: exactly the result's shape and dtype (byte order included),
        C-contiguous and writeable (a torch tensor for a torch A). It may overlap A: the result
        is still right (A is then tiled into new memory first and copied into `out`).
    max_threads : int, optional
        At most this many threads (>= 1) write the result; None (default): the threads of the
        caller's oneTBB task arena (all cores). Outputs under 512 KiB are written by the calling
        thread alone.
    nontemporal : bool, optional
        True: write the result with streaming (non-temporal) stores, which bypass the caches;
        False: ordinary stores; None (default): streaming stores for outputs of at least half the
        last-level cache (ordinary stores for a new output of 32 MiB or more, whose freshly
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
    if type(A) is not _ndarray and _is_tensor(A):
        return _tile_tensor(A, reps, out, max_threads, nontemporal, negative_reps)
    return _ext.tile(A, reps, out, max_threads, nontemporal, negative_reps)


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
    return _ext.tile_shape(shape, reps, negative_reps)


def simd_target():
    """The SIMD target tessera's kernels dispatch to on this CPU.

    Returns
    -------
    str
        A Highway target name, e.g. ``"AVX3"``, ``"AVX2"``, ``"SSE4"``, ``"NEON"``, ``"SVE"``,
        ``"SCALAR"``.
    """
    return _ext.simd_target()


class Plan(_ext.Plan):
    """A reusable plan for ``tile(A, reps)`` with A of one shape, dtype and layout.

    Planning (promotion, validation, the loops and the kernel) is done once; calling the plan
    only checks A and writes. A plan is immutable and may be called from many threads at once.

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
        The executor path the output's rows take, e.g. ``"pattern.long"``, ``"fill.4.nt"``.

    Raises
    ------
    ValueError, TypeError
        As `tile` for bad shapes, reps, strides or options.

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
        super().__init__(shape, reps, dtype, strides, max_threads, nontemporal, negative_reps)

    def __call__(self, A, out=None):
        """Tile A by the plan.

        Parameters
        ----------
        A : ndarray
            An array of exactly the planned shape and dtype, with the planned strides (on every
            axis of extent > 1).
        out : ndarray, optional
            As for `tile`: the output's shape and dtype, C-contiguous, writeable.

        Returns
        -------
        ndarray
            A new C-contiguous array of shape `out_shape`, or `out`.

        Raises
        ------
        ValueError
            A's shape, dtype or strides differ from the plan's (named); a bad `out`.
        TypeError
            A or `out` is not an ndarray.
        """
        return _ext.Plan.__call__(self, A, out)

    def execute_region(self, A, start, extent, out=None):
        """One rectangular region of the output: ``tile(A, reps)[start[0]:start[0] + extent[0], ...]``.

        Only the region is computed (one chunk of a chunked array), serially on the calling thread
        with ordinary stores, with the GIL released.

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
            wrong number of values, a bad A or `out`.
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


def _tile_tensor(A, reps, out, max_threads, nontemporal, negative_reps):
    import torch
    from torch.utils.dlpack import to_dlpack

    if A.device.type != "cpu":
        raise ValueError(f"tessera: A is a tensor on device '{A.device}'; tessera works on CPU tensors "
                         "(move it with A.cpu())")
    if A.layout != torch.strided:
        raise ValueError(f"tessera: A has layout {A.layout}; tessera works on strided tensors "
                         "(use A.to_dense())")
    if A.is_quantized:
        raise TypeError(f"tessera: A has the quantized dtype {A.dtype}; dequantize it first (A.dequantize())")
    # reps are read once, into a tuple of ints: what runs from here on runs no user code, so the
    # tensors' memory cannot change between reading their DLPack pointers and writing.
    reps = _ext.reps_tuple(reps, negative_reps)
    src = A.detach()
    if src.is_conj():  # a lazy conjugate view: its bytes are not the values
        src = src.resolve_conj()
    if src.is_neg():
        src = src.resolve_neg()
    shape = _ext.tile_shape(tuple(src.shape), reps, negative_reps)  # checks reps before any allocation
    if out is None:
        result = torch.empty(shape, dtype=src.dtype)
    else:
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
        result = out
    s, d = src, result
    if s.dtype == torch.bool:  # DLPack has no bool in torch 1.13: the same bytes as uint8
        s, d = s.view(torch.uint8), d.view(torch.uint8)
    _ext.tile_dlpack(to_dlpack(s), reps, to_dlpack(d), max_threads, nontemporal, negative_reps)
    if out is not None:
        _bump_version(out)
    return result


def _bump_version(t):
    """Tell autograd that `t` was written in place (as torch's own out= ops do), so that a graph
    that saved `t` raises instead of using the new values."""
    import torch

    increment = getattr(getattr(torch.autograd, "graph", None), "increment_version", None)
    if increment is not None:  # torch >= 2.1
        increment(t)
    else:
        t.view(-1)[:0].zero_()  # an in-place op on no element: bumps t's version counter
