"""A Python int or None passed for a tensor parameter is a TypeError naming it, not a SIGSEGV.

File: tilelang/jit/adapter/cython/cython_wrapper.pyx. Upstream turns an int
given for a buffer parameter into a raw pointer (None into NULL), so the
kernel dereferences it and the process dies. We raise a TypeError naming the
parameter instead; ``TILELANG_PADDLE_ALLOW_NULL_BUFFERS=1`` keeps upstream's
None-as-NULL for kernels that check their pointers.
"""

from ..patching import Edit, Patch

SCALAR = "            elif isinstance(tensor, (int, float, bool)):\n"
NONE = "            elif tensor is None:\n"

PATCH = Patch(
    name="0031_refuse_non_tensor_buffers",
    file="tilelang/jit/adapter/cython/cython_wrapper.pyx",
    reason="an int or None given for a tensor parameter crashed the process (SIGSEGV)",
    edits=(
        Edit("from tvm import tirx\n",
             "from tvm import tirx\nfrom tilelang.paddle_runtime import arguments as _arguments\n"),
        Edit(SCALAR,
             SCALAR + "                if i in self.ptr_map and _arguments.is_buffer(self.buffer_dtype_map, i):\n"
             "                    raise _arguments.not_a_tensor(self.buffer_dtype_map, self.params, i, tensor)\n"),
        Edit(NONE,
             NONE + "                if not _arguments.ALLOW_NULL_BUFFERS and _arguments.is_buffer(self.buffer_dtype_map, i):\n"
             "                    raise _arguments.not_a_tensor(self.buffer_dtype_map, self.params, i, tensor)\n"),
        Edit('raise ValueError(f"Unsupported tensor type: {type(tensor)}")',
             "raise _arguments.not_a_tensor(self.buffer_dtype_map, self.params, i, tensor)"),
    ),
    forwarded="no",
    checked_against=("0.1.15",),
    drop_when="upstream validates argument kinds before building pointers",
)
