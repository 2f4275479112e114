"""``Profiler`` on Paddle tensors: torch names through the shim.

File: tilelang/profiler/__init__.py. ``assert_allclose`` calls
``torch.cuda.synchronize()`` unconditionally (fails on CPU-only Paddle) and
``do_bench`` calls ``torch.device(...)``. Rebinding ``torch`` to the shim makes
synchronize a no-op without a GPU and ``torch.device`` a real constructor.
"""

from ..patching import rebind_torch

PATCH = rebind_torch(
    name="0010_shim_torch_profiler",
    file="tilelang/profiler/__init__.py",
    reason="assert_allclose/do_bench call torch.cuda.synchronize and torch.device, absent on CPU Paddle",
    forwarded="not-needed",
    checked_against=("0.1.14", "0.1.15"),
    drop_when="never",
)
