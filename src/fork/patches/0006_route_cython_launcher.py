"""Make the Cython launcher allocate Paddle outputs and reject non-tensor buffers.

File: tilelang/jit/adapter/cython/cython_wrapper.pyx (compiled by our CMake
into tilelang/lib/tilelang_cython_wrapper.abi3.so). Upstream allocates outputs
with ``torch.empty(*shape, dtype=, device=)``, a signature Paddle's proxy does
not take with torch devices; and a Python int passed for a buffer parameter is
turned into a raw pointer (None into NULL), so the kernel dereferences it and
the process dies with SIGSEGV. We allocate through ``tilelang.paddle_runtime.tensors.empty`` on
the inputs' device and raise a TypeError naming the parameter instead
(``TILELANG_PADDLE_ALLOW_NULL_BUFFERS=1`` keeps upstream's None-as-NULL for
kernels that check their pointers).
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
    reason="allocate outputs with Paddle on the inputs' device; TypeError instead of SIGSEGV; readable dtype errors",
    edits=(
        Edit("import torch\n",
             "import torch\nfrom tilelang.paddle_runtime import arguments as _arguments, dtypes as _dtypes, tensors as _tensors\n"),
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
        Edit('raise ValueError(f"Unsupported tensor type: {type(tensor)}")',
             "raise _arguments.not_a_tensor(self.buffer_dtype_map, self.params, i, tensor)"),
    ),
    checked_against=("0.1.15",),
    drop_when="see docstring",
)
