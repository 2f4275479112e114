"""Errors for bad kernel arguments, raised at the call boundary in the user's words.

Entry points:

- :func:`check_sizes` is run by the patched Cython launcher (patch 0022): a
  symbolic size two tensors disagree on, or one beyond the C type of
  ``call``'s parameter, is a ValueError naming the arguments
  (:func:`symbol_mismatch`, :func:`size_too_large`, which the fast launcher
  raises too).
- :func:`not_a_tensor` is raised by the patched Cython launcher (patch 0006)
  where upstream would turn an int into a pointer and crash.
- :func:`diagnosed` wraps a kernel's regular launcher once per kernel. A call
  that succeeds costs one ``try``; a call that fails is examined *after* the
  failure and, where the cause is a bad call (a keyword, the wrong number of
  tensors, a non-tensor, the wrong rank, a non-contiguous view), re-raised as
  an error naming the argument, what was expected and what was given.
  Upstream's own messages (dtype, static extent, device) already do that; they
  pass through with the kernel named first, as any TypeError or ValueError
  this module cannot explain does. Every message names the kernel.
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
        f"argument {index} ({param_name(buffer_index_map, index)}): expected {expected}, "
        f"got {describe_value(value)}{_conversion_hint(value)}"
    )


def _arg(signature, pos: int, name: str) -> str:
    """``kernel scale_rows, argument 0 (A)``: where a message about one argument starts."""
    return f"kernel {signature.kernel}, argument {pos} ({name})"


def named(signature, exc: Exception) -> Exception:
    """``exc`` (upstream's own message: a dtype, a static extent) with the kernel named first, as ours are."""
    text = str(exc)
    if text.startswith(f"kernel {signature.kernel}") or type(exc) not in (TypeError, ValueError):
        return exc
    return type(exc)(f"kernel {signature.kernel}: {text}")


def takes(signature) -> str:
    """``kernel main takes 2 argument(s) (A, B); C is an output (out_idx), ...``."""
    names = ", ".join(p.name for p in signature.inputs) or "nothing"
    text = f"kernel {signature.kernel} takes {len(signature.inputs)} argument(s) ({names})"
    outputs = signature.outputs
    if outputs:
        outs = ", ".join(p.name for p in outputs)
        text += f"; {outs} {'is an output' if len(outputs) == 1 else 'are outputs'} (out_idx), " \
                "allocated and returned by the call, not passed"
    return text


def _carried(signature, args, name: str):
    """``[(user position, parameter, axis, value)]`` of every input argument whose shape carries ``name``."""
    out = []
    for p in signature.inputs:
        pos = signature.input_position(p.index)
        if pos >= len(args) or not hasattr(args[pos], "shape"):
            continue
        shape = list(args[pos].shape)
        for axis, d in enumerate(p.dims):
            if d == name and axis < len(shape):
                out.append((pos, p, axis, int(shape[axis])))
    return out


def symbol_mismatch(signature, args) -> ValueError:
    """Two inputs disagree on a symbolic size: name both (the error path only)."""
    for sym in signature.symbols:
        carried = _carried(signature, args, sym.name)
        for pos, p, axis, value in carried[1:]:
            first_pos, first, first_axis, first_value = carried[0]
            if value != first_value:
                return ValueError(
                    f"{_arg(signature, pos, p.name)}: dimension {axis} is the symbolic {sym.name}={value}, "
                    f"but argument {first_pos} ({first.name}) gave {sym.name}={first_value} (dimension {first_axis}); "
                    "every tensor carrying a symbolic dimension must agree on its value")
    return ValueError(f"kernel {signature.kernel}: the arguments disagree on a symbolic dimension")


def size_too_large(signature, args, k: int) -> ValueError:
    """Symbolic size ``k`` does not fit the C type ``call`` declares it with (the error path only)."""
    sym = signature.symbols[k]
    carried = _carried(signature, args, sym.name)
    where = (f"{_arg(signature, carried[0][0], carried[0][1].name)}, dimension {carried[0][2]}: " if carried
             else f"kernel {signature.kernel}: ")
    value = carried[0][3] if carried else "?"
    return ValueError(
        f"{where}the symbolic {sym.name}={value} does not fit the kernel's {sym.ctype} parameter (at most "
        f"{sym.max_value}); declare it T.dynamic(\"{sym.name}\", \"int64\") for sizes beyond that")


def _place_text(tensor, gpu_of=None) -> str:
    if gpu_of is None:
        from .driver import paddle_driver

        gpu_of = paddle_driver().gpu_of
    index = gpu_of(tensor)
    return f"gpu:{index}" if index >= 0 else "cpu"


def not_on_gpu(signature, args, tensor_type, gpu_of=None) -> ValueError:
    """A CUDA kernel's first tensor argument (or, with none, Paddle's current device) is not on a GPU."""
    for param in signature.inputs:
        pos = signature.input_position(param.index)
        if pos < len(args) and isinstance(args[pos], tensor_type):
            return ValueError(
                f"{_arg(signature, pos, param.name)} is on {_place_text(args[pos], gpu_of)}, but the kernel "
                f"was compiled for CUDA: pass GPU tensors (tensor.cuda(), or "
                "paddle.to_tensor(..., place=paddle.CUDAPlace(0))), or compile for the CPU with target=\"c\"")
    return ValueError(f"kernel {signature.kernel} was compiled for CUDA and has no tensor argument, and Paddle's "
                      "current device is the CPU: call paddle.set_device(\"gpu:0\") first")


def devices_disagree(signature, args, tensor_type, gpu_of=None) -> ValueError | None:
    """Two tensor arguments on different devices: name both (the error path only); None when they agree."""
    first = None
    for param in signature.inputs:
        pos = signature.input_position(param.index)
        if pos >= len(args) or not isinstance(args[pos], tensor_type):
            continue
        where = _place_text(args[pos], gpu_of)
        if first is None:
            first = (pos, param.name, where)
        elif where != first[2]:
            return ValueError(f"{_arg(signature, pos, param.name)} is on {where}, but argument {first[0]} "
                              f"({first[1]}) is on {first[2]}: put every tensor argument on one device")
    return None


def check_sizes(signature, tensors) -> None:
    """Upstream's launcher's guard (patch 0021): every carrier of a symbolic size agrees and the value fits ``call``.

    ``tensors`` is the launcher's full parameter list (inputs and outputs in
    parameter order). Upstream passes the first carrier's value and lets the
    kernel read out of bounds; a value beyond the C type would be truncated.
    """
    for k, sym in enumerate(signature.symbols):
        value = None
        for index, axis in sym.carriers:
            t = tensors[index]
            if t is None or not hasattr(t, "shape"):
                continue
            v = int(t.shape[axis])
            if value is None:
                value = v
            elif v != value:
                raise symbol_mismatch(signature, [tensors[p.index] for p in signature.inputs])
        if value is not None and value > sym.max_value:
            raise size_too_large(signature, [tensors[p.index] for p in signature.inputs], k)


def _conversion_hint(value) -> str:
    """What to pass instead of ``value``, where that is known: a numpy array, a static-graph value."""
    kind = type(value)
    if kind.__name__ == "ndarray" and kind.__module__ == "numpy":
        return "; convert it with paddle.to_tensor(x)"
    # pir.Value (PIR programs) and framework.Variable (legacy programs): what to_static hands a kernel call.
    if kind.__name__ in ("Value", "Variable") and kind.__module__.startswith("paddle"):
        return ("; this is a static-graph value (paddle.jit.to_static(full_graph=True)): kernel calls run on eager "
                "tensors, so make the kernel a Paddle operator with tilelang.paddle.custom_op for static graphs "
                "(README, \"Static graphs and serving: custom_op\")")
    return ""


def diagnose(signature, args: tuple, kwargs: dict, tensor_type) -> Exception | None:
    """The user's mistake in this call, or None when the call looks right (then upstream's error stands)."""
    unknown = sorted(set(kwargs) - LAUNCH_KEYWORDS)
    if unknown:
        return TypeError(
            f"{takes(signature)}: pass tensors by position, got keyword argument(s) {', '.join(map(repr, unknown))}"
        )
    if len(args) != len(signature.inputs):
        given = ", ".join(describe_value(a) if not isinstance(a, tensor_type) else f"tensor {list(a.shape)}"
                          for a in args) or "none"
        hint = ""
        missing = len(signature.inputs) - len(args)
        if not signature.outputs and 0 < missing < len(signature.inputs):
            # No out_idx and too few tensors: most likely the outputs were left for the kernel to allocate.
            last = [p.name for p in signature.inputs[-missing:]]
            idx = [p.index for p in signature.inputs[-missing:]]
            hint = (f". If {', '.join(last)} {'is an output' if missing == 1 else 'are outputs'} the call should "
                    f"allocate and return, compile the kernel with out_idx={idx} (tilelang.compile(..., out_idx=...) "
                    "or @tilelang.jit(out_idx=...))")
        return TypeError(f"{takes(signature)}; got {len(args)}: {given}{hint}")
    for pos, (value, param) in enumerate(zip(args, signature.inputs)):
        name = param.name
        if not param.is_buffer:
            continue  # a scalar or T.ptr parameter: upstream checks it
        if not isinstance(value, tensor_type):
            if value is None and ALLOW_NULL_BUFFERS:
                continue
            return TypeError(
                f"{_arg(signature, pos, name)}: expected a paddle.Tensor of dtype {param.dtype} and shape "
                f"{param.dims_text()}, got {describe_value(value)}{_conversion_hint(value)}"
            )
        if len(value.shape) != len(param.dims):
            return ValueError(
                f"{_arg(signature, pos, name)}: expected a {len(param.dims)}-d tensor of shape {param.dims_text()}, "
                f"got a {len(value.shape)}-d tensor of shape {list(value.shape)}"
            )
        if value.size and not value.is_contiguous():
            return ValueError(
                f"{_arg(signature, pos, name)} is not contiguous (shape {list(value.shape)}, strides "
                f"{list(value.strides)}): kernels read row-major memory; pass a contiguous copy, tensor.contiguous()"
            )
    return None


def diagnosed(signature_of, forward, tensor_type):
    """``forward`` with its bad-call failures re-raised in the user's words (see module docstring).

    ``signature_of()`` gives the kernel's :class:`.signature.KernelSignature`; it is
    asked for on the first failed call only.
    """

    @functools.wraps(forward)  # keeps upstream's name; __wrapped__ is upstream's launcher
    def call(*args, **kwargs):
        try:
            return forward(*args, **kwargs)
        except (TypeError, ValueError, AttributeError, IndexError) as exc:
            signature = signature_of()
            problem = diagnose(signature, args, kwargs, tensor_type)
            if problem is None:
                problem = named(signature, exc)
                if problem is exc:
                    raise
            raise problem from None  # upstream's error would only confuse: ours says what it meant

    return call
