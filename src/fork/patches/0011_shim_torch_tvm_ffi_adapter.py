"""The tvm_ffi adapter on Paddle: outputs via our allocator, devices via the shim, a lean callee-allocated call.

File: tilelang/jit/adapter/tvm_ffi.py (the default backend for CUDA targets).
Tensors cross into tvm-ffi zero-copy through ``paddle.Tensor.__dlpack_c_exchange_api__``,
which tvm-ffi also uses for the call's stream (``current_work_stream`` of the
first GPU tensor, so ``stream_guard`` is honored) and for its environment
tensor allocator (``managed_tensor_allocator``; tvm_ffi/cython/
tvm_ffi_python_helpers.h). Our stream providers are never called on this backend.

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
   the host code's packed-ABI check refused it. The adapter now returns
   ``tilelang.paddle_runtime.tvm_ffi_call.callee_allocated_call(self)``, which
   makes the inputs' GPU current first (one Paddle C call when it already is)
   and does no other per-call work beyond what tvm-ffi needs. An adapter whose
   ``prim_func`` is not a TIR PrimFunc (upstream's own tests build adapters
   holding only what upstream's dispatch reads) keeps upstream's dispatch.
3. ``get_current_device_functor`` is called through the class, so a guard
   that restores it without its ``staticmethod`` cannot break the call.
"""

from ..patching import Edit, rebind_torch

CALLEE = "            return self._convert_ffi_callee_allocated_output_func()\n"

PATCH = rebind_torch(
    name="0011_shim_torch_tvm_ffi_adapter",
    file="tilelang/jit/adapter/tvm_ffi.py",
    reason="Paddle outputs on the inputs' device; TVMFFIEnvTensorAlloc allocates on the current GPU",
    extra_edits=(
        Edit(
            "from tilelang.engine.param import KernelParam\n",
            "from tilelang.engine.param import KernelParam\n"
            "from tilelang.paddle_runtime import tvm_ffi_call as _paddle_tvm_ffi_call\n",
        ),
        Edit(CALLEE, "            if _paddle_tvm_ffi_call.describable(self):  # tilelang-paddle patch 0011\n"
                     "                return _paddle_tvm_ffi_call.callee_allocated_call(self)\n"
                     "            return self._convert_ffi_callee_allocated_output_func()\n"),
        # Through the class: a user's guard that saves the functor through the class and restores it by plain
        # assignment (PaddleFleet's ops/tilelang_dsv4/compat.py) drops the staticmethod, and self.f() then
        # passes self to a function taking no arguments (TypeError).
        Edit("self.get_current_device_functor()", "type(self).get_current_device_functor()", count=2),
    ),
    forwarded="not-needed",
    checked_against=("0.1.14", "0.1.15"),
    drop_when="never",
)
