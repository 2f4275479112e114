"""The tvm_ffi adapter on Paddle: outputs via our allocator, devices via the shim, the inputs' GPU current.

File: tilelang/jit/adapter/tvm_ffi.py (the default backend for CUDA targets).
Tensors cross into tvm-ffi zero-copy through ``paddle.Tensor.__dlpack_c_exchange_api__``,
which tvm-ffi also uses for the call's stream (``current_work_stream`` of the
first GPU tensor, so ``stream_guard`` is honored) and for its environment
tensor allocator (``managed_tensor_allocator``; tvm_ffi/cython/
tvm_ffi_python_helpers.h). Our stream/device providers are never called on
this backend.

1. Caller-allocated outputs and the allocator anchor come from
   ``torch.empty(*shape, dtype=, device=)``; through the shim these are Paddle
   tensors on the inputs' device, for every dtype.
2. CUDA kernels here use callee-allocated outputs: the generated host code
   reads ``dev_id`` from the anchor (the first tensor input), allocates each
   output with ``TVMFFIEnvTensorAlloc`` -> Paddle's allocator -> 
   ``paddle::experimental::empty``, whose device context follows the thread's
   *current CUDA device* (paddle/phi/api/lib/kernel_dispatch.cc
   ``GetDeviceContextByBackend``), and only then calls ``__tvm_set_device``.
   With inputs on gpu:1 and the current device 0 the output landed on gpu:0 and
   the host code's packed-ABI check refused it. We make the inputs' GPU
   current first (:func:`tilelang.paddle_runtime.device.select_device_of`,
   one Paddle C call when it already is), and read the anchor's device from
   its place instead of ``Tensor.device`` (which builds a Device from a string).
Forwarded: not-needed (the allocator's device rule is Paddle's). Checked against:
0.1.15 (0.1.14 has no callee-allocated outputs). Drop when: never.
"""

from ..patching import Edit, rebind_torch

ANCHOR_DEVICE = "                device = allocator_anchor.device\n\n            self._prepare_torch_device(device)\n"

PATCH = rebind_torch(
    name="0011_shim_torch_tvm_ffi_adapter",
    file="tilelang/jit/adapter/tvm_ffi.py",
    reason="Paddle outputs on the inputs' device; TVMFFIEnvTensorAlloc allocates on the current GPU",
    extra_edits=(
        Edit(
            "from tilelang.engine.param import KernelParam\n",
            "from tilelang.engine.param import KernelParam\nfrom tilelang.paddle_runtime import device as _paddle_device\n",
        ),
        Edit(
            ANCHOR_DEVICE,
            "                device = _paddle_device.device_of(allocator_anchor)\n\n"
            "            self._prepare_torch_device(device)\n"
            "            # tilelang-paddle: Paddle's allocator (behind TVMFFIEnvTensorAlloc) allocates on the\n"
            "            # current CUDA device; make it the inputs' GPU (see patch 0011).\n"
            "            _paddle_device.select_device_of(device)\n",
        ),
    ),
    forwarded="not-needed",
    checked_against=("0.1.15",),
    drop_when="never",
)
