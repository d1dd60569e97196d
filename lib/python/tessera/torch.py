"""tessera.torch: torch's replication ops as autograd functions whose forward and backward are tessera's.

- `tile` -- ``torch.tile``; backward `tessera.tile_backward`;
- `broadcast_to` -- ``torch.broadcast_to``; backward `tessera.sum_to_shape`;
- `expand` -- ``torch.Tensor.expand``; backward `tessera.sum_to_shape`;
- `repeat_interleave` -- ``torch.repeat_interleave``; backward `tessera.repeat_backward`.

Each is a ``torch.autograd.Function``: the forward writes a new C-contiguous tensor with
`tessera.tile`, `tessera.broadcast_to` or `tessera.repeat` (where torch's ``expand`` and
``broadcast_to`` return views, these return copies: ``x.expand(*sizes).contiguous()``); the
backward sums the output's gradient with tessera's reductions, reading it in place in whatever
layout autograd hands it (non-contiguous, expanded) -- deterministically, the same bits for every
thread count and run, float32 summed in float64 and bfloat16 / float16 in float32 (see
`tessera.tile_backward`). The gradients are differentiable again (the backward of the backward is
the forward), so ``create_graph=True`` and double backward work.

CPU tensors only (tessera is a CPU library: a tensor on another device is a ValueError). Errors
are tessera's (ValueError, TypeError, numpy.exceptions.AxisError), not torch's RuntimeError.

This module needs torch; ``import tessera`` does not (it imports this module on first use of
``tessera.torch``).

Examples
--------
>>> import torch, tessera.torch
>>> x = torch.tensor([1., 2., 3.], requires_grad=True)
>>> y = tessera.torch.tile(x, (2, 2))
>>> y.shape
torch.Size([2, 6])
>>> (y * torch.arange(12.).reshape(2, 6)).sum().backward()
>>> x.grad
tensor([18., 22., 26.])
"""
import operator as _operator

try:
    import torch as _torch
except ImportError as _error:  # pragma: no cover - exercised only where torch is missing
    raise ImportError(f"tessera.torch needs PyTorch ({_error}); `import tessera` itself works without it") from _error

from . import _OP
from . import _tessera as _ext
from . import broadcast_to as _broadcast_to
from . import repeat as _repeat
from . import repeat_backward as _repeat_backward
from . import sum_to_shape as _sum_to_shape
from . import tile as _tile
from . import tile_backward as _tile_backward

__all__ = ["tile", "broadcast_to", "expand", "repeat_interleave"]


def _check_tensor(x, who):
    if not isinstance(x, _torch.Tensor):
        raise TypeError(f"tessera.torch.{who}: x must be a torch.Tensor, got {type(x).__name__}")


# Each operation and its gradient are a pair of Functions, each the other's backward: the gradient
# of tile is tile_backward and the gradient of tile_backward (a linear map) is tile again, so
# double backward runs tessera too. Only plain Python values (shapes, reps, counts) are saved.

class _Tile(_torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, reps):
        ctx.in_shape = tuple(x.shape)
        ctx.reps = reps
        return _tile(x, reps)

    @staticmethod
    def backward(ctx, grad):
        return _TileGrad.apply(grad, ctx.in_shape, ctx.reps), None


class _TileGrad(_torch.autograd.Function):
    @staticmethod
    def forward(ctx, grad, in_shape, reps):
        ctx.reps = reps
        return _tile_backward(grad, in_shape, reps)

    @staticmethod
    def backward(ctx, grad2):
        return _Tile.apply(grad2, ctx.reps), None, None


class _BroadcastTo(_torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, shape):
        ctx.in_shape = tuple(x.shape)
        return _broadcast_to(x, shape)

    @staticmethod
    def backward(ctx, grad):
        return _SumToShape.apply(grad, ctx.in_shape), None


class _SumToShape(_torch.autograd.Function):
    @staticmethod
    def forward(ctx, grad, shape):
        ctx.grad_shape = tuple(grad.shape)
        return _sum_to_shape(grad, shape)

    @staticmethod
    def backward(ctx, grad2):
        return _BroadcastTo.apply(grad2, ctx.grad_shape), None


class _RepeatInterleave(_torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, counts, dim, output_size):
        ctx.in_shape = tuple(x.shape)
        ctx.counts, ctx.dim = counts, dim
        return _repeat(x, counts, dim, output_size=output_size)

    @staticmethod
    def backward(ctx, grad):
        return _RepeatGrad.apply(grad, ctx.in_shape, ctx.counts, ctx.dim), None, None, None


class _RepeatGrad(_torch.autograd.Function):
    @staticmethod
    def forward(ctx, grad, in_shape, counts, dim):
        ctx.counts, ctx.dim = counts, dim
        return _repeat_backward(grad, in_shape, counts, dim)

    @staticmethod
    def backward(ctx, grad2):
        return _RepeatInterleave.apply(grad2, ctx.counts, ctx.dim, None), None, None, None


def tile(x, reps):
    """``torch.tile(x, reps)``, differentiable, with tessera's forward and backward.

    The result has ``max(x.dim(), len(reps))`` dimensions (the shorter of ``x.shape`` and `reps`
    prepended with 1s); dimension i is ``x.shape[i] * reps[i]`` long and repeats x along it.

    Parameters
    ----------
    x : torch.Tensor
        A CPU tensor of any dtype and strides.
    reps : int or sequence of ints
        The repetitions per dimension (>= 0).

    Returns
    -------
    torch.Tensor
        A new C-contiguous tensor of x's dtype. If x requires grad, its gradient is
        ``tessera.tile_backward(grad, x.shape, reps)``: the sum over the replicas.

    Raises
    ------
    ValueError, TypeError
        As `tessera.tile` (a negative or non-integer rep, a tensor on another device, ...).

    See Also
    --------
    torch.tile, tessera.tile, tessera.tile_backward

    Examples
    --------
    >>> import torch, tessera.torch
    >>> x = torch.tensor([[1., 2.]], requires_grad=True)
    >>> y = tessera.torch.tile(x, (3, 2))
    >>> y.sum().backward()
    >>> x.grad
    tensor([[6., 6.]])
    """
    _check_tensor(x, "tile")
    return _Tile.apply(x, _ext.reps_tuple(reps, "error"))


def _sizes(sizes, who):
    """A shape given as ints or as one sequence (torch.Size, tuple, list), as a tuple of ints."""
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list, _torch.Size)):
        sizes = tuple(sizes[0])
    result = []
    for s in sizes:
        try:
            result.append(_operator.index(s))
        except TypeError:
            raise TypeError(f"tessera.torch.{who}: size {s!r} ({type(s).__name__}) is not an integer") from None
    return tuple(result)


def _expanded(x, sizes, who):
    """torch.Tensor.expand's target: -1 keeps an existing dimension's size (not allowed for a new,
    leading dimension); the sizes are then checked by tessera.broadcast_to."""
    lead = len(sizes) - x.dim()
    if lead < 0:
        raise ValueError(f"tessera.torch.{who}: {len(sizes)} sizes {sizes} for a tensor of {x.dim()} dimensions "
                         f"{tuple(x.shape)}: give at least one size per dimension")
    shape = []
    for i, s in enumerate(sizes):
        if s == -1 and i >= lead:
            shape.append(x.shape[i - lead])
        elif s < 0:
            where = "a new leading dimension" if i < lead else "an existing dimension"
            raise ValueError(f"tessera.torch.{who}: size {s} at dimension {i} ({where}); a size is >= 0, or -1 "
                             "to keep an existing dimension's size")
        else:
            shape.append(s)
    return tuple(shape)


def broadcast_to(x, shape):
    """``torch.broadcast_to(x, shape)`` into new memory, differentiable, with tessera's forward and
    backward.

    x's dimensions are aligned with the trailing entries of `shape`; each must be 1 (it is
    repeated) or the size `shape` gives (or `shape` holds -1 there: x's size is kept). New
    leading dimensions take `shape`'s sizes. Where torch returns a view, this writes
    ``torch.broadcast_to(x, shape).contiguous()``.

    Parameters
    ----------
    x : torch.Tensor
        A CPU tensor of any dtype and strides.
    shape : sequence of ints or torch.Size
        The result's shape; -1 keeps the size of an existing dimension.

    Returns
    -------
    torch.Tensor
        A new C-contiguous tensor of x's dtype. Its gradient is ``tessera.sum_to_shape(grad,
        x.shape)`` (``grad.sum_to_size(x.shape)``).

    Raises
    ------
    ValueError
        A dimension that does not broadcast (named, with both sizes), a negative size other than
        -1 on an existing dimension, fewer sizes than x has dimensions.
    TypeError
        A size that is not an integer.

    See Also
    --------
    torch.broadcast_to, expand, tessera.broadcast_to, tessera.sum_to_shape

    Examples
    --------
    >>> import torch, tessera.torch
    >>> b = torch.tensor([1., 2., 3.], requires_grad=True)
    >>> y = tessera.torch.broadcast_to(b, (4, 3))
    >>> (y * y).sum().backward()
    >>> b.grad
    tensor([ 8., 16., 24.])
    """
    _check_tensor(x, "broadcast_to")
    return _BroadcastTo.apply(x, _expanded(x, _sizes((shape,), "broadcast_to"), "broadcast_to"))


def expand(x, *sizes):
    """``x.expand(*sizes)`` into new memory, differentiable, with tessera's forward and backward.

    ``torch.Tensor.expand``'s semantics: `sizes` has at least x's number of dimensions, aligned
    with x's trailing ones; -1 keeps a dimension's size; a dimension of size 1 may take any size;
    new leading dimensions (which cannot be -1) are prepended. Where torch returns a view, this
    writes ``x.expand(*sizes).contiguous()``.

    Parameters
    ----------
    x : torch.Tensor
        A CPU tensor of any dtype and strides.
    *sizes : ints, or one sequence of ints or torch.Size
        The result's sizes, as ``x.expand`` takes them.

    Returns
    -------
    torch.Tensor
        A new C-contiguous tensor of x's dtype. Its gradient is ``tessera.sum_to_shape(grad,
        x.shape)``.

    Raises
    ------
    ValueError
        A dimension that does not broadcast (named, with both sizes); -1 for a new leading
        dimension or any other negative size; fewer sizes than x has dimensions.
    TypeError
        A size that is not an integer.

    See Also
    --------
    torch.Tensor.expand, broadcast_to, tessera.broadcast_to, tessera.sum_to_shape

    Examples
    --------
    >>> import torch, tessera.torch
    >>> x = torch.tensor([[1.], [2.]], requires_grad=True)
    >>> y = tessera.torch.expand(x, 3, -1, 4)
    >>> y.shape
    torch.Size([3, 2, 4])
    >>> y.sum().backward()
    >>> x.grad
    tensor([[12.],
            [12.]])
    """
    _check_tensor(x, "expand")
    return _BroadcastTo.apply(x, _expanded(x, _sizes(sizes, "expand"), "expand"))


def repeat_interleave(x, repeats, dim=None, output_size=None):
    """``torch.repeat_interleave(x, repeats, dim, output_size=...)``, differentiable, with
    tessera's forward and backward.

    Along `dim`, element i of x is written ``repeats[i]`` times in a row (``repeats`` times for
    one count); with ``dim=None`` x is flattened first and the result is 1-d.

    Parameters
    ----------
    x : torch.Tensor
        A CPU tensor of any dtype and strides.
    repeats : int or torch.Tensor of ints
        One count for every element, or a 1-d tensor (or sequence) of one count per element along
        `dim` (one element: the same count for all). Counts are >= 0.
    dim : int, optional
        The dimension to repeat along (negative counts from the end); None (default): the
        flattened input.
    output_size : int, optional
        The result's size along `dim` (the sum of the counts), if known: checked.

    Returns
    -------
    torch.Tensor
        A new C-contiguous tensor of x's dtype. Its gradient is ``tessera.repeat_backward(grad,
        x.shape, repeats, dim)``: each element's copies summed.

    Raises
    ------
    numpy.exceptions.AxisError
        (numpy.AxisError before numpy 1.25) `dim` out of range (a ValueError and an IndexError).
    ValueError, TypeError
        As `tessera.repeat` (negative or non-integer counts, a count tensor of the wrong length,
        an `output_size` that differs, ...).

    See Also
    --------
    torch.repeat_interleave, tessera.repeat, tessera.repeat_backward

    Examples
    --------
    >>> import torch, tessera.torch
    >>> x = torch.tensor([1., 2., 3.], requires_grad=True)
    >>> y = tessera.torch.repeat_interleave(x, torch.tensor([1, 0, 3]))
    >>> y
    tensor([1., 3., 3., 3.], grad_fn=<_RepeatInterleaveBackward>)
    >>> (y * torch.arange(4.)).sum().backward()
    >>> x.grad
    tensor([0., 0., 6.])
    """
    _check_tensor(x, "repeat_interleave")
    if isinstance(repeats, _torch.Tensor):
        repeats = repeats.detach().cpu().numpy()
    counts, dim, output_size = _ext.canonical_args(_OP["repeat"], repeats, dim, output_size, None, None)
    return _RepeatInterleave.apply(x, counts, dim, output_size)
