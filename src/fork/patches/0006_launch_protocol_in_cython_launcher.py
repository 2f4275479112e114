"""Upstream's Cython launcher follows the kernel's launch protocol (tilelang.paddle_runtime.launch).

File: tilelang/jit/adapter/cython/cython_wrapper.pyx (compiled by our CMake
into tilelang/lib/tilelang_cython_wrapper.abi3.so). Upstream allocates outputs
with ``torch.empty(*shape, dtype=, device=)`` (a signature Paddle's proxy does
not take with torch devices), takes the stream of the device current when the
adapter asks, never switches GPUs, runs the library's ``init()`` once at load,
on whatever GPU is current then, and fails a zero-size launch with CUDA's bare
text. ``forward`` now asks the kernel's runtime (``tlp_runtime``, set by
``fast_launch.prepare``) for the inputs' GPU, makes it current before anything
is allocated, passes that GPU's current stream, allocates the outputs there,
runs ``init()`` once per GPU, restores the caller's GPU in ``finally`` and
explains a failed zero-size launch: the same steps as every other launcher.
"""

from ..patching import Edit, Patch

PATCH = Patch(
    name="0006_launch_protocol_in_cython_launcher",
    file="tilelang/jit/adapter/cython/cython_wrapper.pyx",
    reason="outputs on the inputs' GPU with it current, that GPU's stream, init() per GPU, the caller's GPU restored",
    edits=(
        Edit("        object get_current_stream      # Raw-stream provider injected by the adapter (None = CUDA default)\n",
             "        object get_current_stream      # Raw-stream provider injected by the adapter (None = CUDA default)\n"
             "    # tilelang-paddle: the kernel's launch.KernelRuntime, set by fast_launch.prepare\n"
             "    cdef public object tlp_runtime\n"),
        Edit("    cpdef forward(self, list inputs, int64_t stream = -1, bint skip_tensor_validation = False):\n",
             "    cpdef forward(self, list inputs, int64_t stream = -1, bint skip_tensor_validation = False):\n"
             "        # tilelang-paddle: the launch protocol (tilelang.paddle_runtime.launch), steps 1, 2, 5 and 7 here.\n"
             "        _rt = self.tlp_runtime\n"
             "        if _rt is None:\n"
             "            raise RuntimeError('tilelang-paddle: this kernel has no launch runtime (its adapter was not "
             "prepared by tilelang.paddle_runtime.fast_launch.prepare)')\n"
             "        _gpu = _rt.gpu_of(inputs)\n"
             "        _previous = _rt.select(_gpu)\n"
             "        try:\n"
             "            if stream == -1:\n"
             "                stream = _rt.stream(_gpu)\n"
             "            return self._tlp_forward(inputs, stream, skip_tensor_validation, _gpu)\n"
             "        finally:\n"
             "            _rt.restore(_previous)\n\n"
             "    cpdef _tlp_forward(self, list inputs, int64_t stream, bint skip_tensor_validation, int tlp_gpu):\n"),
        # Step 3: the outputs on the call's GPU (the CPU for a CPU kernel), every Paddle dtype; the device
        # is the runtime's, not worked out again.
        Edit("                if device is None:\n                    device = self._infer_output_device(inputs)\n\n", ""),
        Edit("                tensor_list[i] = torch.empty(*shape, dtype=dtype, device=device)",
             "                tensor_list[i] = self.tlp_runtime.allocate(shape, dtype, tlp_gpu)"),
        # Step 4: the library's init() once per GPU, with that GPU current.
        Edit("        result = self.lib.call(*call_args)\n",
             "        self.tlp_runtime.ensure_init(tlp_gpu)\n"
             "        result = self.lib.call(*call_args)\n"),
        # Step 8: the library's error, and why a zero-size launch fails.
        Edit("            error_msg = self.lib.get_last_error().decode('utf-8')\n"
             '            raise RuntimeError(f"Kernel call failed: {error_msg}")\n',
             "            raise self.tlp_runtime.launch_failed_for(tensor_list)\n"),
    ),
    forwarded="not-needed",
    checked_against=("0.1.15",),
    drop_when="never: the protocol is Paddle's (its allocation switches devices; its streams and devices)",
)
