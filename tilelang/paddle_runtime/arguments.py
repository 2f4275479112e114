"""Errors for bad kernel arguments, raised at the call boundary with the parameter's name."""

from __future__ import annotations

from . import settings

# Upstream passes None for a buffer as a NULL pointer, which crashes any kernel
# that reads it. We refuse it unless TILELANG_PADDLE_ALLOW_NULL_BUFFERS=1 (for
# kernels written to check their pointers). Read once: this is the call path.
ALLOW_NULL_BUFFERS = settings.allow_null_buffers()


def param_name(buffer_index_map: dict | None, index: int) -> str:
    """Name of parameter ``index`` from upstream's ``{name: (index, ...)}`` maps."""
    for name, entry in (buffer_index_map or {}).items():
        if entry[0] == index:
            return str(name)
    return f"#{index}"


def is_buffer(buffer_index_map: dict | None, index: int) -> bool:
    """Whether parameter ``index`` is a buffer (T.Tensor), as opposed to a T.ptr handle or a scalar."""
    return any(entry[0] == index for entry in (buffer_index_map or {}).values())


def not_a_tensor(buffer_index_map: dict | None, params, index: int, value) -> TypeError:
    """A buffer parameter got something that is not a Paddle tensor (an int would be read as a pointer)."""
    param = params[index]
    expected = f"a paddle.Tensor of dtype {param.dtype} and shape {list(param.shape)}"
    return TypeError(
        f"kernel argument {index} ({param_name(buffer_index_map, index)}): expected {expected}, "
        f"got {type(value).__name__} {value!r:.60}"
    )
