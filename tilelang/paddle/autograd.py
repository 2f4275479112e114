"""Differentiable Paddle ops from TileLang kernels: :func:`autograd_function`.

Hand-written ``paddle.autograd.PyLayer`` wrappers around kernels tend to get
the same things wrong; the helper does them once:

- Paddle refuses a backward that returns a gradient for an input with
  ``stop_gradient=True``; the helper returns None there, whatever ``backward``
  computed (and ``ctx.needs_input_grad`` lets it skip the work).
- Incoming gradients can be strided views (a loss on ``y.T``), which kernels
  refuse; the helper hands ``backward`` contiguous copies.
- An output that did not reach the loss gets a None gradient from Paddle; the
  helper passes zeros of the output's shape and dtype instead.
- Integer and bool outputs are marked non-differentiable.
- A gradient of the wrong count, shape or dtype is reported naming the input.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from typing import Any

import paddle

from tilelang.paddle_runtime import driver as _driver, torch_scope as _torch_scope

__all__ = ["autograd_function"]

_FLOAT_DTYPES = frozenset(
    {paddle.float16, paddle.bfloat16, paddle.float32, paddle.float64, paddle.complex64, paddle.complex128}
)


def _tensor_arguments(forward: Callable, args: tuple, kwargs: dict) -> tuple[list, list[str]]:
    """The tensor arguments as Paddle's ``PyLayer`` counts them, with a name each.

    Positional tensors first, then keyword tensors in the order the call passed them: the order in
    which ``PyLayer.apply`` gives the gradients ``backward`` returns to its inputs (checked on Paddle
    3.3.1: ``apply(x, a=a, z=z)`` gives the second gradient to ``a``). A name is the forward's
    parameter name, the keyword, or the position.
    """
    try:
        params = [p.name for p in inspect.signature(forward).parameters.values()][1:]  # drop ctx
    except (TypeError, ValueError):
        params = []
    tensors, names = [], []
    for i, arg in enumerate(args):
        if isinstance(arg, paddle.Tensor):
            tensors.append(arg)
            names.append(params[i] if i < len(params) else f"argument {i}")
    for key, arg in kwargs.items():
        if isinstance(arg, paddle.Tensor):
            tensors.append(arg)
            names.append(key)
    return tensors, names


def _contiguous(grad: paddle.Tensor) -> paddle.Tensor:
    # Tensor.contiguous() in Paddle 3.3 re-materialises the tensor in place (returns
    # the same object); a copy leaves the caller's gradient untouched.
    return grad if grad.is_contiguous() else _driver.paddle_driver().copy(grad)


def autograd_function(forward: Callable, backward: Callable | None = None, *, name: str | None = None) -> Callable:
    """Make a differentiable Paddle op out of ``forward``/``backward`` functions that run TileLang kernels.

    Parameters
    ----------
    forward : callable
        ``forward(ctx, *args, **kwargs)`` runs the kernels and returns a tensor
        or a tuple of tensors. ``ctx.save_for_backward(*tensors)``,
        ``ctx.saved_tensor()`` and ``ctx.needs_input_grad`` (one bool per
        tensor argument: ``not stop_gradient``) are available. Tensor
        arguments are the positional ones, then the keyword ones in the order
        the call passes them, as ``paddle.autograd.PyLayer`` counts them.
    backward : callable, optional
        ``backward(ctx, *grads)`` gets one contiguous gradient per output
        (zeros for outputs that did not reach the loss) and returns one
        gradient or None per tensor argument of ``forward``, in that order. Without it the op
        is not differentiable and says so when a gradient is requested.
    name : str, optional
        Shown in error messages (default: ``forward.__name__``).

    Returns
    -------
    callable
        ``op(*args, **kwargs)`` -> what ``forward`` returns, recorded on
        Paddle's autograd tape.

    Raises
    ------
    ValueError
        At backward time, when ``backward`` returns the wrong number of
        gradients, or a gradient whose shape or dtype differs from its input's.
    RuntimeError
        At backward time, when the op has no ``backward``.

    Paddle runs backward in C++ and re-raises errors from it as ``OSError``
    ("(External) ... Error message in backward of GradNode<name>_PyLayer"),
    whose text holds the ValueError/RuntimeError above.

    Examples
    --------
    >>> import paddle
    >>> from tilelang.paddle import autograd_function
    >>> def fwd(ctx, x, w):
    ...     ctx.save_for_backward(x, w)
    ...     return paddle.matmul(x, w)          # a TileLang kernel call in real use
    >>> def bwd(ctx, gy):
    ...     x, w = ctx.saved_tensor()
    ...     return paddle.matmul(gy, w.T), paddle.matmul(x.T, gy)
    >>> matmul = autograd_function(fwd, bwd, name="matmul")
    >>> x = paddle.randn([4, 3]); x.stop_gradient = False
    >>> matmul(x, paddle.randn([3, 2])).sum().backward()
    >>> x.grad.shape
    [4, 3]
    """
    op_name = name or getattr(forward, "__name__", "autograd_function")

    def layer_forward(ctx, *args: Any, **kwargs: Any):
        tensors, ctx._tl_names = _tensor_arguments(forward, args, kwargs)
        ctx.needs_input_grad = tuple(not t.stop_gradient for t in tensors)
        ctx._tl_inputs = [(list(t.shape), t.dtype) for t in tensors]
        with _torch_scope.user_code():
            out = forward(ctx, *args, **kwargs)
        outs = out if isinstance(out, (tuple, list)) else (out,)
        place_of = _driver.paddle_driver().place_of
        ctx._tl_outputs = [(list(o.shape), o.dtype, place_of(o)) if isinstance(o, paddle.Tensor) else None
                            for o in outs]
        frozen = [o for o in outs if isinstance(o, paddle.Tensor) and o.dtype not in _FLOAT_DTYPES]
        if frozen:
            ctx.mark_non_differentiable(*frozen)
        return out

    def layer_backward(ctx, *grads: paddle.Tensor):
        if backward is None:
            raise RuntimeError(
                f"tilelang.paddle op '{op_name}' is not differentiable: it was made by autograd_function "
                "without a backward. Pass backward= to autograd_function, or set stop_gradient=True on its inputs."
            )
        ready = []
        for grad, meta in zip(grads, ctx._tl_outputs):
            if grad is None and meta is not None:
                shape, dtype, place = meta
                grad = _driver.paddle_driver().zeros(shape, dtype, place)
            ready.append(_contiguous(grad) if isinstance(grad, paddle.Tensor) else grad)
        with _torch_scope.user_code():
            result = backward(ctx, *ready)
        result = tuple(result) if isinstance(result, (tuple, list)) else (result,)
        expected = len(ctx._tl_inputs)
        if len(result) != expected:
            raise ValueError(
                f"backward of '{op_name}' returned {len(result)} gradient(s); expected {expected}, "
                f"one per tensor argument ({', '.join(ctx._tl_names)})"
            )
        checked = []
        for grad, needed, (shape, dtype), arg in zip(result, ctx.needs_input_grad, ctx._tl_inputs, ctx._tl_names):
            if not needed or grad is None:
                checked.append(None)  # Paddle refuses a gradient for an input with stop_gradient=True
                continue
            if list(grad.shape) != shape:
                raise ValueError(
                    f"backward of '{op_name}': gradient for {arg} has shape {list(grad.shape)}, expected {shape}"
                )
            if grad.dtype != dtype:
                raise ValueError(
                    f"backward of '{op_name}': gradient for {arg} has dtype {grad.dtype}, expected {dtype}"
                )
            checked.append(grad)
        return tuple(checked) if len(checked) != 1 else checked[0]

    # A class per op, named after it: Paddle names the grad node (and its error reports) after the class.
    layer_name = re.sub(r"\W", "_", op_name) + "_PyLayer"
    _Op = type(layer_name, (paddle.autograd.PyLayer,),
               {"forward": staticmethod(layer_forward), "backward": staticmethod(layer_backward)})

    def op(*args: Any, **kwargs: Any):
        return _Op.apply(*args, **kwargs)

    op.__name__ = op.__qualname__ = op_name
    op.__doc__ = forward.__doc__
    return op
