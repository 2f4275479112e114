"""The NVRTC adapter on Paddle: torch names through the shim; device, stream and restore from the launch runtime.

File: tilelang/jit/adapter/nvrtc/adapter.py. Upstream reads the stream as
``torch.cuda.current_stream().cuda_stream``; Paddle's ``paddle.device.Stream``
has no ``cuda_stream`` (it has ``stream_base``, ``_as_parameter_`` and
``__cuda_stream__``), so every call without ``stream=`` raised AttributeError.
``_wrap_forward_from_prebuild_lib`` now follows the kernel's launch protocol
(``tilelang.paddle_runtime.launch``): the first tensor's GPU (the default GPU
without one) current from before the outputs are allocated until after the
launch, that GPU's current stream, the caller's GPU restored. NVRTC needs the
``cuda-python`` package, which this fork does not install, and a GPU: this
path is import-checked and source-checked here, not run.
"""

from ..patching import Edit, rebind_torch

PATCH = rebind_torch(
    name="0012_shim_torch_nvrtc_adapter",
    file="tilelang/jit/adapter/nvrtc/adapter.py",
    reason="output allocation, the stream and the device must come from Paddle",
    extra_edits=(
        Edit(
            "    def _wrap_forward_from_prebuild_lib(self, *ins: Any, stream: int | None = None):\n",
            "    def _wrap_forward_from_prebuild_lib(self, *ins: Any, stream: int | None = None):\n"
            "        from tilelang.paddle_runtime import launch as _launch\n\n"
            "        runtime = _launch.runtime_of(self, host_call=False)\n"
            "        gpu = runtime.gpu_of(ins)\n"
            "        with runtime.on(gpu):\n"
            "            return self._tlp_wrap_forward(*ins, stream=runtime.stream(gpu) if stream is None else stream)\n\n"
            "    def _tlp_wrap_forward(self, *ins: Any, stream: int | None = None):\n",
        ),
    ),
    forwarded="not-needed",
    checked_against=("0.1.15",),
    drop_when="never",
)
