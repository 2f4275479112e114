"""Paddle helpers for TileLang users (public API of tilelang-paddle).

- :func:`autograd_function`: a differentiable Paddle op from forward/backward
  functions that run TileLang kernels (``paddle.autograd.PyLayer`` underneath).

The runtime glue that makes kernels take Paddle tensors lives in
``tilelang.paddle_runtime`` (internal).
"""

from .autograd import autograd_function

__all__ = ["autograd_function"]
