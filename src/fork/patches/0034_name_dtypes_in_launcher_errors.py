"""Upstream's launcher errors name Paddle dtypes as Paddle users know them, and say the next step.

File: tilelang/jit/adapter/cython/cython_wrapper.pyx. ``str(paddle.uint16)``
prints ``paddle.bfloat16``, so a uint16 buffer given a bfloat16 tensor read
"expected paddle.bfloat16, got paddle.bfloat16"; dtypes are named by identity.
A dtype mismatch ends with the conversion (``x.astype("float32")``); a static
size mismatch with ``T.dynamic``, for a size that varies between calls.
"""

from ..patching import Edit, Patch

PATCH = Patch(
    name="0034_name_dtypes_in_launcher_errors",
    file="tilelang/jit/adapter/cython/cython_wrapper.pyx",
    reason="str(paddle.uint16) prints paddle.bfloat16, which made dtype errors contradict themselves; "
           "dtype and size errors stopped a step short of the fix",
    edits=(
        Edit("from tvm import tirx\n",
             "from tvm import tirx\nfrom tilelang.paddle_runtime import dtypes as _dtypes\n"),
        Edit('f"expected {torch_dtype}, got {tensor.dtype}"',
             'f"expected {_dtypes.name(torch_dtype)}, got {_dtypes.name(tensor.dtype)}; convert it with '
             'x.astype(\\"{_dtypes.name(torch_dtype)}\\")"'),
        Edit('                        f"got {actual_shape}"\n',
             '                        f"got {actual_shape}; if this size varies between calls, declare it '
             'T.dynamic(\\"name\\") in the kernel (README, \\"A first kernel\\")"\n'),
    ),
    forwarded="not-needed",
    checked_against=("0.1.15",),
    drop_when="Paddle prints uint16 as uint16",
)
