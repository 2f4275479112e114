"""A PrimFunc rewritten for the tvm_ffi calling convention keeps its kernel's name.

File: tilelang/jit/abi.py. ``prepare_tvm_ffi_callee_allocated_outputs``
derives a new PrimFunc (``with_attr``: another object, without the Python
function it was built from) that the tvm_ffi adapter holds; the launch runtime,
built with the adapter, then named the kernel by its ``global_symbol``, ``main``.
The function now passes its result through
``tilelang.paddle_runtime.kernel_names.same_kernel``, which gives the derived
PrimFunc the original's name (patch 0045 keeps names by handle).
"""

from ..patching import Edit, Patch

PATCH = Patch(
    name="0046_name_rewritten_prim_funcs",
    file="tilelang/jit/abi.py",
    reason="tvm_ffi kernels' argument errors said `kernel main`",
    edits=(
        Edit('def prepare_tvm_ffi_callee_allocated_outputs(\n',
             'def prepare_tvm_ffi_callee_allocated_outputs(func, out_idx, **kwargs):  # tilelang-paddle patch 0046\n'
             '    from tilelang.paddle_runtime.kernel_names import same_kernel as _tlp_same_kernel\n\n'
             '    derived, indices = _tlp_upstream_prepare_outputs(func, out_idx, **kwargs)\n'
             '    return _tlp_same_kernel(derived, func), indices\n\n\n'
             'def _tlp_upstream_prepare_outputs(\n'),
    ),
    forwarded="not-needed",
    checked_against=("0.1.15",),
    drop_when="never: the name is ours (tilelang/paddle_runtime/kernel_names.py)",
)
