"""Upstream's Cython launcher refuses symbolic sizes that disagree or do not fit ``call``'s C type.

File: tilelang/jit/adapter/cython/cython_wrapper.pyx. Upstream 0.1.15 (cython
backend) passes each symbolic size from the first tensor that carries it, so
two inputs that disagree on ``K`` make the kernel read out of bounds, and
passes it as a 64-bit integer where ``call`` declares ``int``, so a size above
2**31-1 is silently truncated. Our fast launcher refuses both; this makes the
path it falls back to (and ``TILELANG_PADDLE_FAST_LAUNCH=0``) do the same,
through ``tilelang.paddle_runtime.arguments.check_sizes`` on the kernel's
signature, which ``fast_launch.prepare`` hands to the wrapper
(``tlp_signature``; None keeps upstream's behaviour).
"""

from ..patching import Edit, Patch

PATCH = Patch(
    name="0022_check_symbolic_sizes",
    file="tilelang/jit/adapter/cython/cython_wrapper.pyx",
    reason="a size two inputs disagree on, or one beyond call()'s int, must be an error, not an out-of-bounds call",
    edits=(
        Edit("from tvm import tirx\n",
             "from tvm import tirx\nfrom tilelang.paddle_runtime.arguments import check_sizes as _tlp_check_sizes\n"),
        Edit("    def __cinit__(self, result_idx, params, lib, get_current_device=None, get_current_stream=None):\n",
             "    # tilelang-paddle: the kernel's signature.KernelSignature, set by fast_launch.prepare\n"
             "    cdef public object tlp_signature\n\n"
             "    def __cinit__(self, result_idx, params, lib, get_current_device=None, get_current_stream=None):\n"),
        Edit("        # Add CUDA stream to kernel arguments\n",
             "        if self.tlp_signature is not None:\n"
             "            _tlp_check_sizes(self.tlp_signature, tensor_list)\n\n"
             "        # Add CUDA stream to kernel arguments\n"),
    ),
    checked_against=("0.1.15",),
    drop_when="upstream checks sizes before the call",
)
