"""The tvm_ffi adapter on Paddle: outputs via our allocator, devices via the shim.

File: tilelang/jit/adapter/tvm_ffi.py (the default backend for CUDA targets).
Upstream allocates outputs and its allocator anchor with
``torch.empty(*shape, dtype=, device=)``; through the shim these become Paddle
tensors on the inputs' device, for every dtype. Tensors themselves cross into
tvm-ffi zero-copy through ``paddle.Tensor.__dlpack_c_exchange_api__``, which
tvm-ffi also uses to read Paddle's current stream for the call.
Forwarded: not-needed. Checked against: 0.1.14, 0.1.15. Drop when: never.
"""

from ..patching import rebind_torch

PATCH = rebind_torch(
    name="0011_shim_torch_tvm_ffi_adapter",
    file="tilelang/jit/adapter/tvm_ffi.py",
    reason="output allocation must create Paddle tensors on the inputs' device",
    forwarded="not-needed",
    checked_against=("0.1.14", "0.1.15"),
    drop_when="never",
)
