"""Paddle helpers for TileLang users (public API of tilelang-paddle).

- :func:`custom_op`: a compiled kernel as a real Paddle operator (to_static, jit.save, Paddle Inference);
  :func:`save_ops` puts its libraries beside a saved model
- :func:`autograd_function`: a differentiable Paddle op from forward/backward
  functions that run TileLang kernels (``paddle.autograd.PyLayer`` underneath).
- :func:`prewarm`: compile a job's kernels once per node, the work split across its ranks.
- :func:`to_tvm` / :func:`from_tvm`: zero-copy views between Paddle tensors and tvm-ffi tensors, for
  code that calls ``tvm_ffi`` functions itself (kernel calls need neither).

The runtime glue that makes kernels take Paddle tensors lives in
``tilelang.paddle_runtime`` (internal).
"""

from .autograd import autograd_function
from .custom_op import CustomOp, custom_op, save_ops
from .dlpack import from_tvm, to_tvm
from .prewarm import prewarm

__all__ = ["CustomOp", "autograd_function", "custom_op", "from_tvm", "prewarm", "save_ops", "to_tvm"]
