"""The NVRTC adapter on Paddle: torch names through the shim; stream and device from our seam.

File: tilelang/jit/adapter/nvrtc/adapter.py. Same reasons as 0011 (output
allocation, devices). Upstream reads the stream as
``torch.cuda.current_stream().cuda_stream``; Paddle's ``paddle.device.Stream``
has no ``cuda_stream`` (it has ``stream_base``, ``_as_parameter_`` and
``__cuda_stream__``), so every call without ``stream=`` raised AttributeError.
The stream is now Paddle's current stream of the first tensor's GPU (the
current GPU without one), read through ``tilelang.paddle_runtime.device``, and
that GPU is current from before the outputs are allocated until after the
launch, the caller's restored then (``tilelang.paddle_runtime.gpu_guard``).
NVRTC needs the ``cuda-python`` package, which this fork does not install, and
a GPU: this path is import-checked and source-checked here, not run.
Forwarded: not-needed. Checked against: 0.1.15. Drop when: never.
"""

from ..patching import Edit, rebind_torch

STREAM = """        if stream is None:
            if str(self.target).startswith("cuda") and torch.cuda.is_available():
                stream = torch.cuda.current_stream().cuda_stream
            else:
                stream = 0

        self._forward_from_prebuild_lib(*args, stream=stream)
"""

PATCH = rebind_torch(
    name="0012_shim_torch_nvrtc_adapter",
    file="tilelang/jit/adapter/nvrtc/adapter.py",
    reason="output allocation, the stream and the device must come from Paddle",
    extra_edits=(
        Edit(
            STREAM,
            "        from tilelang.paddle_runtime import device as _paddle_device\n\n"
            "        spec = _paddle_device.device_of(first_tensor)  # None: the current device\n"
            "        if stream is None:\n"
            "            stream = _paddle_device.stream_of(spec) if str(self.target).startswith(\"cuda\") else 0\n"
            "        self._forward_from_prebuild_lib(*args, stream=stream)\n",
        ),
        # The inputs' GPU is current from before the outputs are allocated until after the launch
        # (tilelang.paddle_runtime.gpu_guard: an allocation on a place switches the device for good).
        Edit(
            "    def _wrap_forward_from_prebuild_lib(self, *ins: Any, stream: int | None = None):\n",
            "    def _wrap_forward_from_prebuild_lib(self, *ins: Any, stream: int | None = None):\n"
            "        from tilelang.paddle_runtime import device as _paddle_device, gpu_guard as _gpu_guard\n\n"
            "        first = next((value for value in ins if isinstance(value, torch.Tensor)), None)\n"
            "        with _gpu_guard.on_gpu(_paddle_device.device_of(first)):  # None: the current device\n"
            "            return self._tlp_wrap_forward(*ins, stream=stream)\n\n"
            "    def _tlp_wrap_forward(self, *ins: Any, stream: int | None = None):\n",
        ),
    ),
    forwarded="not-needed",
    checked_against=("0.1.15",),
    drop_when="never",
)
