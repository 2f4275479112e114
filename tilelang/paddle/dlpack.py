"""Zero-copy exchange between Paddle tensors and tvm-ffi tensors.

Kernel calls need none of this: the tvm_ffi backend hands ``paddle.Tensor``
arguments to tvm-ffi, which converts them in C through Paddle's
``__dlpack_c_exchange_api__`` (and reads Paddle's current stream from it).
These helpers are for user code that holds TVM tensors (e.g. from
``tvm_ffi`` functions) and wants Paddle ones, or the reverse. Views keep
their strides and offset; nothing is copied.
"""

from __future__ import annotations

import paddle
import tvm_ffi

from tilelang.paddle_runtime.driver import paddle_driver


def to_tvm(tensor: paddle.Tensor) -> tvm_ffi.Tensor:
    """A ``tvm_ffi.Tensor`` viewing ``tensor``'s memory (shape, strides and offset kept)."""
    if not isinstance(tensor, paddle.Tensor):
        raise TypeError(f"to_tvm(tensor): expected a paddle.Tensor, got {type(tensor).__name__}")
    if not tensor.stop_gradient:
        tensor = tensor.detach()  # Paddle refuses to export tensors that require grad
    return tvm_ffi.from_dlpack(tensor)


def from_tvm(tensor) -> paddle.Tensor:
    """A ``paddle.Tensor`` viewing a tvm-ffi tensor's (or any ``__dlpack__`` object's) memory."""
    if not hasattr(tensor, "__dlpack__"):
        raise TypeError(f"from_tvm(tensor): expected an object with __dlpack__, got {type(tensor).__name__}")
    return paddle_driver().from_dlpack(tensor)
