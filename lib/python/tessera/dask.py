"""tessera.dask: tile, broadcast_to and repeat as Dask arrays, each output chunk made on its worker.

- `tile` -- ``numpy.tile`` (`tessera.tile`) as a ``dask.array.Array``;
- `broadcast_to` -- ``numpy.broadcast_to(x, shape).copy()`` (`tessera.broadcast_to`);
- `repeat` -- ``numpy.repeat`` (`tessera.repeat`).

Each output chunk is one task that computes exactly that chunk with tessera's region API
(`tessera.Plan.execute_region`: serially, with ``max_threads=1`` -- Dask supplies the
parallelism -- and with the GIL released), straight from the input: nothing is replicated first
and then sliced. The output's chunks are the caller's (any valid Dask ``chunks``, ``"auto"`` by
default), whatever the input's chunking.

The graph has **one task per output chunk**, plus one key for a numpy input (and one for a list of
repeat counts): O(output chunks) whatever the reps and the input's chunking, where
``dask.array.tile`` makes ``prod(reps)`` times the input's chunks and needs a rechunk to reach other
output chunks. `x` may be

- a numpy array (or anything `numpy.asarray` takes): it is put in the graph once, under its own
  key, and reaches each worker once (the distributed scheduler sends it to the workers that need
  it; it is not embedded in the tasks);
- a Dask array: each output chunk's task depends only on the input chunks its region reads, and
  assembles them on the worker (nothing is gathered to the client).

The arguments are checked when the graph is built, on the client, by tessera itself (its plan of
the whole output): a bad shape, reps, repeat count, axis or dtype raises tessera's error there,
before any task runs. Reps, shapes and repeat counts must be known there: a Dask array given for
one of them is a TypeError (as ``dask.array.repeat`` refuses one), not computed behind your back.
Counts are copied into the graph: the caller's array is neither kept nor changed.

The result has x's dtype exactly, byte order and structure included (``>f8``, ``>U3``,
``[('a', '>i4')]``). A masked x (``numpy.ma.MaskedArray``, or a Dask array of masked chunks) gives
a masked result: its data and its mask are each tiled (broadcast, repeated), and x's fill value
kept, as ``dask.array.tile`` keeps a mask. An empty output (a zero rep or count, an empty axis)
depends on no input chunk. A 0-d x is read as 1-d by `repeat` with an axis (0 or -1), as numpy reads it.

Works with every Dask scheduler: the threaded one (``dask.compute``'s default for arrays), the
processes one and ``dask.distributed`` (which needs this module importable on the workers: it is
when tessera is installed, or on the workers' ``PYTHONPATH``).

This module needs Dask (Debian ``python3-dask``); ``import tessera`` does not import it.

Examples
--------
>>> import numpy as np, tessera.dask
>>> x = np.arange(6, dtype=np.int32).reshape(2, 3)
>>> y = tessera.dask.tile(x, (1000, 2), chunks=(500, 6))
>>> y
dask.array<tessera-tile, shape=(2000, 6), dtype=int32, chunksize=(500, 6), chunktype=numpy.ndarray>
>>> y[998:1001].compute()
array([[0, 1, 2, 0, 1, 2],
       [3, 4, 5, 3, 4, 5],
       [0, 1, 2, 0, 1, 2]], dtype=int32)
"""
import operator as _operator
import threading as _threading
import weakref as _weakref

import numpy as _np

try:
    import dask as _dask
    import dask.array as _da
    from dask.base import tokenize as _tokenize
    from dask.highlevelgraph import HighLevelGraph as _HighLevelGraph
except ImportError as _error:  # pragma: no cover - exercised only where dask is missing
    raise ImportError(f"tessera.dask needs Dask ({_error}; Debian python3-dask); `import tessera` itself works "
                      "without it") from _error

import tessera as _tessera

__all__ = ["tile", "broadcast_to", "repeat"]

# The operations by their ids in tessera's table (tessera._OP); the graph's keys name them.
_TILE, _BROADCAST_TO, _REPEAT = _tessera._OP["tile"], _tessera._OP["broadcast_to"], _tessera._OP["repeat"]
_NAME = {op: name for name, op in _tessera._OP.items()}


def tile(x, reps, chunks="auto"):
    """Construct a Dask array by repeating x the number of times given by reps: `numpy.tile`.

    The semantics of `tessera.tile` (``numpy.tile``): the result has ``max(x.ndim, len(reps))``
    axes, the shorter of ``x.shape`` and `reps` promoted by prepending 1s, and
    ``result.shape[i] == x.shape[i] * reps[i]``. Each output chunk is computed by one task with
    tessera's region API (see the module's documentation).

    Parameters
    ----------
    x : array_like or dask.array.Array
        The input array, any dtype but object. A numpy array is put in the graph once; a Dask
        array's chunks are read by the tasks whose regions need them.
    reps : int or sequence of ints
        The number of repetitions of x along each axis (>= 0); not a Dask array (TypeError).
    chunks : Dask chunks, optional
        The output's chunks, in any form `dask.array.core.normalize_chunks` takes: ``"auto"``
        (default: Dask's ``array.chunk-size``), an int or a tuple of ints per axis (elements),
        explicit tuples of chunk sizes, ``-1`` for a whole axis, or a byte size such as
        ``"64 MiB"``.

    Returns
    -------
    dask.array.Array
        Of shape ``tessera.tile_shape(x.shape, reps)``, x's dtype and the requested chunks; its
        graph holds one task per output chunk (plus x's key, or x's own graph).

    Raises
    ------
    ValueError, TypeError
        As `tessera.tile` for bad reps (naming the value), an object dtype or an output too
        big, and as Dask for bad `chunks` -- all when the graph is built, before any task runs.

    See Also
    --------
    tessera.tile, numpy.tile, dask.array.tile

    Examples
    --------
    >>> import numpy as np, tessera.dask
    >>> y = tessera.dask.tile(np.array([1, 2, 3]), (2, 2), chunks=(1, 4))
    >>> y.numblocks, y.compute()
    ((2, 2), array([[1, 2, 3, 1, 2, 3],
           [1, 2, 3, 1, 2, 3]]))
    """
    x = _input(x)
    if _is_masked(x):
        return _masked(tile, x, reps, chunks=chunks)
    reps = _tessera._ext.reps_tuple(_tessera._tensor_arg(_not_dask(reps, "reps")), "error")  # read once
    plan = _tessera.Plan(x.shape, reps, x.dtype)  # checks everything; raises tessera's error
    return _build(_TILE, x, plan, reps, None, chunks)


def broadcast_to(x, shape, chunks="auto"):
    """Broadcast x to a new shape, as a new Dask array: ``numpy.broadcast_to(x, shape).copy()``.

    The semantics of `tessera.broadcast_to`: numpy's broadcasting rules (x's axes aligned at
    the end; an axis of extent 1 repeated to the target's extent; leading axes added). Each output
    chunk is computed by one task with tessera's region API (see the module's documentation);
    unlike ``dask.array.broadcast_to``, the result is not a view: its chunks are new arrays, in
    the chunks you ask for.

    Parameters
    ----------
    x : array_like or dask.array.Array
        The input array, as for `tile`.
    shape : int or sequence of ints
        The output shape (elements); not a Dask array (TypeError).
    chunks : Dask chunks, optional
        The output's chunks, as for `tile`.

    Returns
    -------
    dask.array.Array
        Of shape `shape`, x's dtype and the requested chunks; one task per output chunk.

    Raises
    ------
    ValueError, TypeError
        As `tessera.broadcast_to` for a shape x does not broadcast to (naming the axis and both
        extents), a bad shape or dtype; as Dask for bad `chunks` -- when the graph is built.

    See Also
    --------
    tessera.broadcast_to, numpy.broadcast_to, dask.array.broadcast_to

    Examples
    --------
    >>> import numpy as np, tessera.dask
    >>> tessera.dask.broadcast_to(np.array([[1], [2]]), (3, 2, 2), chunks=2).compute()[2]
    array([[1, 1],
           [2, 2]])
    """
    x = _input(x)
    if _is_masked(x):
        return _masked(broadcast_to, x, shape, chunks=chunks)
    shape = _not_dask(shape, "shape")
    plan = _tessera.Plan.broadcast_to(x.shape, shape, x.dtype)  # checks everything; raises tessera's error
    return _build(_BROADCAST_TO, x, plan, tuple(plan.out_shape), None, chunks)


def repeat(x, repeats, axis=None, chunks="auto"):
    """Repeat each element of x after itself, as a Dask array: `numpy.repeat`.

    The semantics of `tessera.repeat`: along `axis`, element i of x is written ``repeats[i]``
    (or ``repeats``) times in a row; with ``axis=None`` x is flattened (C order) first and the
    result is 1-d. Each output chunk is computed by one task with tessera's region API from the
    input elements whose copies it holds (see the module's documentation).

    Parameters
    ----------
    x : array_like or dask.array.Array
        The input array, as for `tile`.
    repeats : int, or sequence or ndarray of ints
        The counts (>= 0): one for every element, or one per element along the axis (a length-1
        sequence is one count for all). A list of counts is copied into the graph once (the
        caller's array is not kept); not a Dask array (TypeError: compute it first).
    axis : int, optional
        The axis along which to repeat (negative counts from the end); None (default): the
        flattened input. A 0-d x is read as 1-d (axis 0 or -1), as `numpy.repeat` reads it.
    chunks : Dask chunks, optional
        The output's chunks, as for `tile`.

    Returns
    -------
    dask.array.Array
        Of shape ``tessera.repeat(x, repeats, axis).shape``, x's dtype and the requested chunks;
        one task per output chunk.

    Raises
    ------
    numpy.exceptions.AxisError
        (numpy.AxisError before numpy 1.25) `axis` out of range.
    ValueError, TypeError
        As `tessera.repeat` for bad counts (naming the value) or dtype; as Dask for bad `chunks`
        -- when the graph is built.

    See Also
    --------
    tessera.repeat, numpy.repeat, dask.array.repeat

    Examples
    --------
    >>> import numpy as np, tessera.dask
    >>> tessera.dask.repeat(np.array([[1, 2], [3, 4]]), [1, 3], axis=1, chunks=(1, 2)).compute()
    array([[1, 2, 2, 2],
           [3, 4, 4, 4]])
    """
    x = _input(x)
    if _is_masked(x):
        return _masked(repeat, x, repeats, axis, chunks=chunks)
    repeats = _not_dask(repeats, "repeats")
    repeats = _tessera._tensor_arg(repeats)
    # The counts read once, as tessera reads them: int64, in a new array of our own (the caller's
    # array is neither kept nor changed).
    counts = _np.array(_tessera._ext.canonical_args(_REPEAT, repeats, None, None, None, None)[0], dtype=_np.int64)
    plan = _tessera.Plan.repeat(x.shape, counts, x.dtype, axis)  # checks everything (tessera's errors)
    if counts.size == 1:  # one count for all
        arg = int(counts.reshape(()))
    else:
        arg = counts.reshape(-1)
        arg.flags.writeable = False
    if axis is not None:
        axis = _operator.index(axis)
        axis = axis + x.ndim if axis < 0 else axis
        if x.ndim == 0:  # a 0-d x is read as 1-d (numpy's rule, checked by the plan): its one element repeated
            axis = None
    return _build(_REPEAT, x, plan, arg, axis, chunks)


# --- the graph ------------------------------------------------------------------------------------

def _input(x):
    if isinstance(x, _da.Array):
        if any(_np.isnan(c) for cs in x.chunks for c in cs):
            raise ValueError("tessera.dask: x has unknown chunk sizes (nan); call x.compute_chunk_sizes() first")
        return x
    if type(x).__module__.startswith("torch"):
        x = x.detach().cpu().numpy() if hasattr(x, "detach") else x
    if isinstance(x, _np.ma.MaskedArray):
        return x
    return _np.asarray(x)


def _not_dask(arg, what):
    """reps, a shape or counts, which must be known when the graph is built: a Dask array (or any
    Dask collection) is refused, as ``dask.array.repeat`` refuses one, rather than computed behind
    the caller's back. So is a sequence holding one (``[n, 2]`` with ``n`` a 0-d Dask array)."""
    items = arg if isinstance(arg, (list, tuple)) else (arg,)
    for i, item in enumerate(items):
        if _dask.is_dask_collection(item):
            where = what if item is arg else f"{what}[{i}]"
            raise TypeError(f"tessera.dask: {where} is a Dask collection ({type(item).__name__}); the graph is built "
                            f"from {what} known on the client: compute it first ({where}.compute())")
    return arg


def _is_masked(x):
    """x is a masked array (numpy's), or a Dask array of masked chunks."""
    if isinstance(x, _da.Array):
        return isinstance(getattr(x, "_meta", None), _np.ma.MaskedArray)
    return isinstance(x, _np.ma.MaskedArray)


def _masked(op, x, *args, **kwargs):
    """op of a masked x: its data and its mask each made by op, then put together (as dask.array.tile
    keeps a mask); the fill value is x's."""
    if isinstance(x, _da.Array):
        data, mask = _da.ma.getdata(x), _da.ma.getmaskarray(x)
        fill_value = x._meta.fill_value
    else:
        data, mask, fill_value = _np.ma.getdata(x), _np.ma.getmaskarray(x), x.fill_value
    return _da.ma.masked_array(op(data, *args, **kwargs), mask=op(mask, *args, **kwargs), fill_value=fill_value)


def _build(op, x, plan, arg, axis, chunks):
    shape = tuple(plan.out_shape)
    chunks = _da.core.normalize_chunks(chunks, shape, dtype=x.dtype)
    token = _tokenize(op, x, arg, axis, chunks)
    name = f"tessera-{_NAME[op]}-{token}"
    layer = {}
    dependencies = []
    offsets = [_np.concatenate(([0], _np.cumsum(c, dtype=_np.int64))).tolist() for c in chunks]
    blocks = _np.ndindex(*(len(c) for c in chunks))
    if isinstance(x, _da.Array) and 0 in shape:
        # An empty output reads nothing: its tasks are empty arrays, with no dependency on x
        # (HighLevelGraph.validate() checks that each declared dependency is used).
        for idx in blocks:
            layer[(name,) + idx] = (_np.empty, tuple(chunks[i][k] for i, k in enumerate(idx)), x.dtype)
    elif isinstance(x, _da.Array):
        dependencies.append(x)
        if op == _REPEAT and axis is None:
            x = x.ravel()
            dependencies = [x]
            axis = 0
        local = _Localizer(op, x, arg, axis, shape)
        for idx in blocks:
            start = tuple(offsets[i][k] for i, k in enumerate(idx))
            extent = tuple(chunks[i][k] for i, k in enumerate(idx))
            layer[(name,) + idx] = local.task(start, extent)
    else:
        x_key = f"tessera-input-{_tokenize(x)}"
        layer[x_key] = x
        arg_key = arg
        if isinstance(arg, _np.ndarray):  # a list of repeat counts: one key, not in every task
            arg_key = f"tessera-{_NAME[op]}-repeats-{_tokenize(arg)}"
            layer[arg_key] = arg
        for idx in blocks:
            start = tuple(offsets[i][k] for i, k in enumerate(idx))
            extent = tuple(chunks[i][k] for i, k in enumerate(idx))
            layer[(name,) + idx] = (_region, op, x_key, arg_key, axis, start, extent)
    graph = _HighLevelGraph.from_collections(name, layer, dependencies=dependencies)
    return _da.Array(graph, name, chunks, dtype=x.dtype, meta=_np.empty((0,) * len(shape), dtype=x.dtype))


# --- the tasks ------------------------------------------------------------------------------------

_plans = {}  # (op, id(x), id(arg), axis) -> (weakref(x), arg, plan): one plan per input on a worker
_plans_lock = _threading.Lock()


def _plan_of(op, x, arg, axis):
    """The plan of the whole output for this x, made once per worker process and input."""
    key = (op, id(x), id(arg) if isinstance(arg, _np.ndarray) else arg, axis, x.shape, x.strides, x.dtype.str)
    with _plans_lock:
        hit = _plans.get(key)
        if hit is not None and hit[0]() is x and (not isinstance(arg, _np.ndarray) or hit[1] is arg):
            return hit[2]
    plan = _make_plan(op, x.shape, x.strides, x.dtype, arg, axis)
    with _plans_lock:
        if len(_plans) >= 64:
            _plans.clear()
        try:
            _plans[key] = (_weakref.ref(x), arg, plan)
        except TypeError:  # an input that takes no weak reference: not cached
            pass
    return plan


def _make_plan(op, shape, strides, dtype, arg, axis):
    return _tessera.Plan._family(op, shape, arg, dtype, strides, axis, 1, None)


def _region(op, x, arg, axis, start, extent):
    """One output chunk from a whole (numpy) input: the region API, serially, GIL released."""
    if 0 in extent:
        return _np.empty(extent, dtype=x.dtype)
    return _plan_of(op, x, arg, axis).execute_region(x, start, extent)


def _local_region(op, blocks, slices, arg, axis, start, extent, dtype):
    """One output chunk from the input chunks its region reads (a Dask input): the pieces
    assembled into a small local input, then the region of the local problem."""
    if 0 in extent:
        return _np.empty(extent, dtype=dtype)
    if all(len(s) == 1 for s in slices):  # one chunk (or x 0-d): read in place
        x = blocks
        while isinstance(x, list):
            x = x[0]
        x = _np.asarray(x)
        if slices:
            x = x[tuple(s[0] for s in slices)]
        if x.dtype != dtype:
            x = x.astype(dtype)
    else:
        # The pieces copied into one array of x's own dtype (numpy.block would give a native byte
        # order, a promoted dtype or a lost structure).
        sizes = [[sl.stop - sl.start for sl in s] for s in slices]
        x = _np.empty(tuple(sum(n) for n in sizes), dtype=dtype)

        def place(b, depth, where):
            if depth == len(slices):
                x[tuple(where)] = _np.asarray(b)[tuple(slices[j][k] for j, k in enumerate(index))]
                return
            lo = 0
            for k, bb in enumerate(b):
                index.append(k)
                place(bb, depth + 1, where + [slice(lo, lo + sizes[depth][k])])
                index.pop()
                lo += sizes[depth][k]

        index = []
        place(blocks, 0, [])
    return _make_plan(op, x.shape, x.strides, x.dtype, arg, axis).execute_region(x, start, extent)


class _Localizer:
    """Maps an output region to the input chunks it reads and to a local problem on them."""

    def __init__(self, op, x, arg, axis, out_shape):
        self.op, self.x, self.arg, self.axis = op, x, arg, axis
        self.name = x.name
        self.D = len(out_shape)
        self.lead = self.D - x.ndim if op != _REPEAT else 0  # output axes before x's first
        self.bounds = [_np.concatenate(([0], _np.cumsum(c, dtype=_np.int64))) for c in x.chunks]
        if op == _REPEAT and isinstance(arg, _np.ndarray):
            self.prefix = _np.concatenate(([0], _np.cumsum(arg, dtype=_np.int64)))

    def _blocks(self, j, lo, hi):
        """The chunks of x's axis j covering [lo, hi): (block index, slice in the block) pairs."""
        b = self.bounds[j]
        first = int(_np.searchsorted(b, lo, side="right")) - 1
        out = []
        k = first
        while k < len(b) - 1 and b[k] < hi:
            s0, s1 = max(lo, int(b[k])) - int(b[k]), min(hi, int(b[k + 1])) - int(b[k])
            out.append((k, slice(s0, s1)))
            k += 1
        return out

    def task(self, start, extent):
        if 0 in extent:
            return (_np.empty, extent, self.x.dtype)
        pieces = []            # per input axis: the (lo, hi) ranges of x read, in order
        local_start = []       # the region's start in the local problem, per output axis
        local_arg = None
        if self.op == _TILE:
            local_reps = []
            for i in range(self.D):
                a, n = start[i], extent[i]
                s = self.x.shape[i - self.lead] if i >= self.lead else 1
                if i < self.lead:
                    local_start.append(0)
                    local_reps.append(n)
                    continue
                if n >= s:
                    pieces.append([(0, s)])
                    local_start.append(a % s)
                    local_reps.append(-(-(a % s + n) // s))
                else:
                    lo = a % s
                    pieces.append([(lo, lo + n)] if lo + n <= s else [(lo, s), (0, lo + n - s)])
                    local_start.append(0)
                    local_reps.append(1)
            local_arg = tuple(local_reps)
        elif self.op == _BROADCAST_TO:
            for i in range(self.D):
                if i < self.lead:
                    local_start.append(0)
                    continue
                s = self.x.shape[i - self.lead]
                pieces.append([(0, 1)] if s == 1 else [(start[i], start[i] + extent[i])])
                local_start.append(0)
            local_arg = tuple(extent)
        else:  # repeat along self.axis (axis None: x was flattened)
            for i in range(self.D):
                if i != self.axis:
                    pieces.append([(start[i], start[i] + extent[i])])
                    local_start.append(0)
                    continue
                a, b = start[i], start[i] + extent[i]
                if isinstance(self.arg, _np.ndarray):
                    lo = int(_np.searchsorted(self.prefix, a, side="right")) - 1
                    hi = int(_np.searchsorted(self.prefix, b - 1, side="right")) - 1
                    local_arg = _np.ascontiguousarray(self.arg[lo:hi + 1])
                    local_start.append(a - int(self.prefix[lo]))
                else:
                    r = self.arg
                    lo, hi = a // r, (b - 1) // r
                    local_arg = r
                    local_start.append(a - lo * r)
                pieces.append([(lo, hi + 1)])
        # Per input axis: the blocks (with their slices) the pieces cover, in order.
        per_axis = []
        for j, ranges in enumerate(pieces):
            per_axis.append([blk for lo, hi in ranges for blk in self._blocks(j, lo, hi)])
        keys = self._nested_keys(per_axis, 0, ())
        slices = [[sl for _, sl in blks] for blks in per_axis]
        return (_local_region, self.op, keys, slices, local_arg, self.axis, tuple(local_start), tuple(extent),
                self.x.dtype)

    def _nested_keys(self, per_axis, depth, idx):
        if depth == len(per_axis):
            return (self.name,) + idx
        return [self._nested_keys(per_axis, depth + 1, idx + (k,)) for k, _ in per_axis[depth]]
