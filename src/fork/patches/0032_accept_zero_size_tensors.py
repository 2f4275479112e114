"""Zero-size tensors (an empty batch) pass upstream's stride and contiguity checks.

File: tilelang/jit/adapter/cython/cython_wrapper.pyx. Paddle reports a
zero-size tensor's strides as 0 (shape ``[0, 4]``: strides ``[0, 4]``) where
torch reports row-major ones, so upstream's checks refused it; no element is
addressed either way.
"""

from ..patching import Edit, Patch

PATCH = Patch(
    name="0032_accept_zero_size_tensors",
    file="tilelang/jit/adapter/cython/cython_wrapper.pyx",
    reason="Paddle's zero-size tensors report strides of 0, which upstream's checks refuse",
    edits=(
        Edit("                if tensor.shape[stride_idx] == 1:\n",
             "                if tensor.shape[stride_idx] == 1 or 0 in tensor.shape:\n"),
        Edit("            if not tensor.is_contiguous():\n",
             "            if not tensor.is_contiguous() and 0 not in tensor.shape:\n"),
    ),
    forwarded="not-needed",
    checked_against=("0.1.15",),
    drop_when="Paddle reports row-major strides for zero-size tensors",
)
