"""Make the Cython launcher allocate Paddle outputs and reject non-tensor buffers.

File: tilelang/jit/adapter/cython/cython_wrapper.pyx (compiled by our CMake
into tilelang/lib/tilelang_cython_wrapper.abi3.so). Upstream allocates outputs
with ``torch.empty(*shape, dtype=, device=)``, a signature Paddle's proxy does
not take with torch devices; and a Python int passed for a buffer parameter is
turned into a raw pointer (None into NULL), so the kernel dereferences it and
the process dies with SIGSEGV. We allocate through ``tilelang.paddle_runtime.tensors.empty`` on
the inputs' device and raise a TypeError naming the parameter instead
(``TILELANG_PADDLE_ALLOW_NULL_BUFFERS=1`` keeps upstream's None-as-NULL for
kernels that check their pointers). Zero-size tensors (an empty batch) pass the
stride and contiguity checks: Paddle reports their strides as 0, torch as
row-major, and no element is addressed either way. ``forward`` makes the
inputs' GPU current before the outputs are allocated and restores the
caller's device after the launch (``tilelang.paddle_runtime.gpu_guard``; an
allocation on a place switches the device and never switches back), and the
library's ``init()`` (the per-device dynamic shared memory limit) runs once on
each GPU before its first launch there (``gpu_guard.kernel_initializer``).
Per-call costs Paddle makes visible are removed on the way: torch names are
read through the caching shim (Paddle's proxy resolves each in Python), the
dtype->ctypes table is built once instead of per call, dtypes compare by
identity first, and devices come from ``Tensor.place`` rather than
``Tensor.device`` (which builds a Device from a string). See bench/.
Forwarded: no (the SIGSEGV is an upstream bug worth reporting). Checked against:
0.1.15 (0.1.14 differs). Drop when: never for the allocation; the TypeError when upstream
validates argument kinds itself.
"""

from ..patching import Edit, Patch

SCALAR = "            elif isinstance(tensor, (int, float, bool)):\n"
NONE = "            elif tensor is None:\n"

PATCH = Patch(
    name="0006_route_cython_launcher",
    file="tilelang/jit/adapter/cython/cython_wrapper.pyx",
    reason="Paddle outputs on the inputs' device; TypeError instead of SIGSEGV; readable dtype errors; zero-size tensors; no per-call rebuilds",
    edits=(
        Edit(
            "import torch\n",
            "import torch\nfrom tilelang.paddle_runtime import arguments as _arguments, dtypes as _dtypes, tensors as _tensors\n"
            "from tilelang.paddle_runtime import device as _device, gpu_guard as _gpu_guard\n"
            "from tilelang.paddle_runtime.torch_shim import wrap as _wrap_torch\n\n"
            "# Paddle's proxy resolves torch.X in Python on every access; the shim caches each name.\n"
            "torch = _wrap_torch(torch)\n"
            "_DTYPE_TO_CTYPE = None  # filled by the first forward()\n",
        ),
        # Paddle dtype equality costs ~0.9 us; identity first (dtypes are singletons), equality only on mismatch.
        Edit("tensor.dtype != torch_dtype:", "tensor.dtype is not torch_dtype and tensor.dtype != torch_dtype:"),
        # Upstream rebuilds this table on every call (~4 us: hashing Paddle dtypes); build it once.
        Edit(
            "        cdef dict dtype_to_ctype = {\n",
            "        global _DTYPE_TO_CTYPE\n"
            "        cdef dict dtype_to_ctype = _DTYPE_TO_CTYPE\n"
            "        if dtype_to_ctype is None:\n"
            "            dtype_to_ctype = _DTYPE_TO_CTYPE = {\n",
        ),
        # Tensor.device builds a paddle.device.Device from a string (~1.7 us); the place is enough.
        Edit("tensor_device = tensor.device\n", "tensor_device = _device.device_of(tensor)\n"),
        Edit("                return tensor.device\n", "                return _device.device_of(tensor)\n"),
        # str(paddle.uint16) prints "paddle.bfloat16": name dtypes by identity in the message.
        Edit('f"expected {torch_dtype}, got {tensor.dtype}"',
             'f"expected {_dtypes.name(torch_dtype)}, got {_dtypes.name(tensor.dtype)}"'),
        Edit("tensor_list[i] = torch.empty(*shape, dtype=dtype, device=device)",
             "tensor_list[i] = _tensors.empty(shape, dtype, device)"),
        Edit(
            SCALAR,
            SCALAR + "                if i in self.ptr_map and _arguments.is_buffer(self.buffer_dtype_map, i):\n"
            "                    raise _arguments.not_a_tensor(self.buffer_dtype_map, self.params, i, tensor)\n",
        ),
        Edit(
            NONE,
            NONE + "                if not _arguments.ALLOW_NULL_BUFFERS and _arguments.is_buffer(self.buffer_dtype_map, i):\n"
            "                    raise _arguments.not_a_tensor(self.buffer_dtype_map, self.params, i, tensor)\n",
        ),
        # A zero-size tensor addresses no element; Paddle reports its strides as 0 (shape [0, 4]: [0, 4]).
        Edit("                if tensor.shape[stride_idx] == 1:\n",
             "                if tensor.shape[stride_idx] == 1 or 0 in tensor.shape:\n"),
        Edit("            if not tensor.is_contiguous():\n",
             "            if not tensor.is_contiguous() and 0 not in tensor.shape:\n"),
        Edit("        object get_current_stream      # Raw-stream provider injected by the adapter (None = CUDA default)\n",
             "        object get_current_stream      # Raw-stream provider injected by the adapter (None = CUDA default)\n"
             "        object _tlp_init               # tilelang-paddle: init() once per GPU (gpu_guard.kernel_initializer)\n"),
        # The inputs' GPU is current for the output allocation and the launch; the caller's comes back after
        # (tilelang.paddle_runtime.gpu_guard: Paddle's allocation on a place switches the device for good).
        Edit("    cpdef forward(self, list inputs, int64_t stream = -1, bint skip_tensor_validation = False):\n",
             "    cpdef forward(self, list inputs, int64_t stream = -1, bint skip_tensor_validation = False):\n"
             "        _previous = _gpu_guard.select_device_of(_device.device_of(self._infer_output_device(inputs)))\n"
             "        try:\n"
             "            return self._tlp_forward(inputs, stream, skip_tensor_validation)\n"
             "        finally:\n"
             "            _gpu_guard.restore_gpu(_previous)\n\n"
             "    cpdef _tlp_forward(self, list inputs, int64_t stream = -1, bint skip_tensor_validation = False):\n"),
        Edit("        result = self.lib.call(*call_args)\n",
             "        _spec = _device.device_of(device if device is not None else self._infer_output_device(inputs))\n"
             "        if _spec.type == 'cuda' and _device.CUDA_BUILD:  # init() per GPU: see gpu_guard.kernel_initializer\n"
             "            if self._tlp_init is None:\n"
             "                self._tlp_init = _gpu_guard.kernel_initializer(self.lib)\n"
             "            self._tlp_init(_spec.index if _spec.index is not None else _device.current_device_index())\n"
             "        result = self.lib.call(*call_args)\n"),
        Edit('raise ValueError(f"Unsupported tensor type: {type(tensor)}")',
             "raise _arguments.not_a_tensor(self.buffer_dtype_map, self.params, i, tensor)"),
    ),
    checked_against=("0.1.15",),
    drop_when="see docstring",
)
