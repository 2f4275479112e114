"""The NVRTC adapter on Paddle: torch names through the shim; stream and device from our seam.

File: tilelang/jit/adapter/nvrtc/adapter.py. Same reasons as 0011 (output
allocation, devices). Upstream reads the stream as
``torch.cuda.current_stream().cuda_stream``; Paddle's ``paddle.device.Stream``
has no ``cuda_stream`` (it has ``stream_base``, ``_as_parameter_`` and
``__cuda_stream__``), so every call without ``stream=`` raised AttributeError.
The stream is now Paddle's current stream of the first tensor's GPU (the
current GPU without one), read through ``tilelang.paddle_runtime.device``, and
that GPU is current for the launch and the previous one restored after it.
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
            "        previous = _paddle_device.select_device_of(spec)\n"
            "        try:\n"
            "            self._forward_from_prebuild_lib(*args, stream=stream)\n"
            "        finally:\n"
            "            _paddle_device.restore_gpu(previous)\n",
        ),
    ),
    forwarded="not-needed",
    checked_against=("0.1.15",),
    drop_when="never",
)
