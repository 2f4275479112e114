"""Take every adapter's device and stream providers from the Paddle control plane.

File: tilelang/jit/adapter/base.py. ``BaseKernelAdapter.get_current_stream_functor``
and ``get_current_device_functor`` call ``torch.cuda._lazy_init``,
``torch._C._cuda_getDevice`` and ``torch.device(...)``, none of which exist under
Paddle's proxy, and fall back to GPU 0. The cython and nvrtc backends take
their stream (and the launch device) from these two methods, every backend
its device for tensor-less calls; we rebind both to
``tilelang.paddle_runtime.device`` (later class attributes win). The tvm_ffi
backend gets its stream from tvm-ffi itself (patch 0011).
"""

from ..patching import Edit, Patch

CALL = "    def __call__(self, *args: Any, **kwds: Any) -> Any:\n"

PATCH = Patch(
    name="0004_route_adapter_providers",
    file="tilelang/jit/adapter/base.py",
    reason="device/stream providers must come from Paddle, per tensor device, not torch's GPU 0",
    edits=(
        Edit(
            "from tilelang.engine.param import KernelParam\n",
            "from tilelang.engine.param import KernelParam\nfrom tilelang.paddle_runtime import device as _paddle_device\n",
        ),
        Edit(
            CALL,
            "    # tilelang-paddle: the Paddle control plane replaces the torch providers above.\n"
            "    get_current_stream_functor = staticmethod(_paddle_device.stream_functor)\n"
            "    get_current_device_functor = staticmethod(_paddle_device.device_functor)\n\n" + CALL,
        ),
    ),
    forwarded="not-needed",
    checked_against=("0.1.14", "0.1.15"),
    drop_when="never",
)
