"""Errors for bad kernel arguments, raised at the call boundary in the user's words.

Two entry points:

- :func:`not_a_tensor` is raised by the patched Cython launcher (patch 0006)
  where upstream would turn an int into a pointer and crash.
- :func:`diagnosed` wraps a kernel's regular launcher once per kernel. A call
  that succeeds costs one ``try``; a call that fails is examined *after* the
  failure and, where the cause is a bad call (a keyword, the wrong number of
  tensors, a non-tensor, the wrong rank, a non-contiguous view), re-raised as
  an error naming the argument, what was expected and what was given.
  Upstream's own messages (dtype, static extent, device) already do that and
  pass through unchanged, as does any failure this module cannot explain.
"""

from __future__ import annotations

import functools

from . import settings

# Upstream passes None for a buffer as a NULL pointer, which crashes any kernel
# that reads it. We refuse it unless TILELANG_PADDLE_ALLOW_NULL_BUFFERS=1 (for
# kernels written to check their pointers). Read once: this is the call path.
ALLOW_NULL_BUFFERS = settings.allow_null_buffers()

# Keywords upstream's Cython launcher takes (lambda_forward in cython/adapter.py).
LAUNCH_KEYWORDS = frozenset({"stream", "skip_tensor_validation"})


def param_name(buffer_index_map: dict | None, index: int) -> str:
    """Name of parameter ``index`` from upstream's ``{name: (index, ...)}`` maps."""
    for name, entry in (buffer_index_map or {}).items():
        if entry[0] == index:
            return str(name)
    return f"#{index}"


def is_buffer(buffer_index_map: dict | None, index: int) -> bool:
    """Whether parameter ``index`` is a buffer (T.Tensor), as opposed to a T.ptr handle or a scalar."""
    return any(entry[0] == index for entry in (buffer_index_map or {}).values())


def describe_value(value) -> str:
    """``type value`` for a message: arrays by shape and dtype, other values by a repr cut at a whole line."""
    shape = getattr(value, "shape", None)
    if shape is not None and hasattr(value, "dtype"):
        return f"{type(value).__name__} of shape {list(shape)} and dtype {value.dtype}"
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{type(value).__name__} {text}"


def not_a_tensor(buffer_index_map: dict | None, params, index: int, value) -> TypeError:
    """A buffer parameter got something that is not a Paddle tensor (an int would be read as a pointer)."""
    param = params[index]
    expected = f"a paddle.Tensor of dtype {param.dtype} and shape {list(param.shape)}"
    return TypeError(
        f"kernel argument {index} ({param_name(buffer_index_map, index)}): expected {expected}, "
        f"got {describe_value(value)}"
    )


class Signature:
    """What a kernel takes, read once from its PrimFunc on the first failed call."""

    def __init__(self, prim_func, result_idx):
        self.kernel = str(prim_func.attrs["global_symbol"]) if prim_func.attrs and "global_symbol" in prim_func.attrs \
            else "kernel"
        outputs = set(result_idx or [])
        buffer_map = prim_func.buffer_map
        self.inputs = []  # (name, buffer or None for a scalar/handle parameter)
        self.outputs = []
        for i, param in enumerate(prim_func.params):
            buf = buffer_map[param] if param in buffer_map else None
            name = buf.name if buf is not None else str(param.name)
            (self.outputs if i in outputs else self.inputs).append((name, buf))

    def takes(self) -> str:
        names = ", ".join(name for name, _ in self.inputs) or "nothing"
        text = f"kernel {self.kernel} takes {len(self.inputs)} argument(s) ({names})"
        if self.outputs:
            outs = ", ".join(name for name, _ in self.outputs)
            text += f"; {outs} {'is an output' if len(self.outputs) == 1 else 'are outputs'} (out_idx), " \
                    "allocated and returned by the call, not passed"
        return text


def _dims(buf) -> str:
    """``[rows, 1024]``: symbolic dimensions by name."""
    return "[" + ", ".join(str(d) for d in buf.shape) + "]"


def diagnose(signature: Signature, args: tuple, kwargs: dict, tensor_type) -> Exception | None:
    """The user's mistake in this call, or None when the call looks right (then upstream's error stands)."""
    unknown = sorted(set(kwargs) - LAUNCH_KEYWORDS)
    if unknown:
        return TypeError(
            f"{signature.takes()}: pass tensors by position, got keyword argument(s) {', '.join(map(repr, unknown))}"
        )
    if len(args) != len(signature.inputs):
        given = ", ".join(describe_value(a) if not isinstance(a, tensor_type) else f"tensor {list(a.shape)}"
                          for a in args) or "none"
        return TypeError(f"{signature.takes()}; got {len(args)}: {given}")
    for pos, (value, (name, buf)) in enumerate(zip(args, signature.inputs)):
        if buf is None:
            continue  # a scalar or T.ptr parameter: upstream checks it
        if not isinstance(value, tensor_type):
            if value is None and ALLOW_NULL_BUFFERS:
                continue
            return TypeError(
                f"kernel argument {pos} ({name}): expected a paddle.Tensor of dtype {buf.dtype} and shape "
                f"{_dims(buf)}, got {describe_value(value)}"
            )
        if len(value.shape) != len(buf.shape):
            return ValueError(
                f"kernel argument {pos} ({name}): expected a {len(buf.shape)}-d tensor of shape {_dims(buf)}, "
                f"got a {len(value.shape)}-d tensor of shape {list(value.shape)}"
            )
        if value.size and not value.is_contiguous():
            return ValueError(
                f"kernel argument {pos} ({name}) is not contiguous (shape {list(value.shape)}, strides "
                f"{list(value.strides)}): kernels read row-major memory; pass a contiguous copy, tensor.contiguous()"
            )
    return None


def diagnosed(prim_func, result_idx, forward, tensor_type):
    """``forward`` with its bad-call failures re-raised in the user's words (see module docstring)."""
    signature = None

    @functools.wraps(forward)  # keeps upstream's name; __wrapped__ is upstream's launcher
    def call(*args, **kwargs):
        nonlocal signature
        try:
            return forward(*args, **kwargs)
        except (TypeError, ValueError, AttributeError, IndexError):
            if signature is None:
                signature = Signature(prim_func, result_idx)
            problem = diagnose(signature, args, kwargs, tensor_type)
            if problem is None:
                raise
            raise problem from None  # upstream's error would only confuse: ours says what it meant

    return call
