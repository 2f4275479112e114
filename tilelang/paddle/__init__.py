"""Paddle helpers for TileLang users (public API of tilelang-paddle).

- :func:`custom_op`: a compiled kernel as a real Paddle operator (to_static, jit.save, Paddle Inference);
  :func:`save_ops` puts its libraries beside a saved model
- :func:`autograd_function`: a differentiable Paddle op from forward/backward
  functions that run TileLang kernels (``paddle.autograd.PyLayer`` underneath).

The runtime glue that makes kernels take Paddle tensors lives in
``tilelang.paddle_runtime`` (internal).
"""

from .autograd import autograd_function
from .custom_op import CustomOp, custom_op, save_ops

__all__ = ["CustomOp", "autograd_function", "custom_op", "save_ops"]
