"""Key TileLang's kernel cache by the toolchain that builds the kernel.

File: tilelang/cache/kernel_cache.py. Upstream's key (``_generate_key``) holds
the program, arguments, target, backend, pass configs, flags, TileLang's
version and the platform (plus our build id, patch 0023), but none of the
tools that compile it: after a CUDA toolkit or compiler upgrade, kernels the
old one built are loaded as they are. The key now also holds
``tilelang.paddle_runtime.toolchain.key_fields(target, execution_backend)``:
tvm-ffi's version, the host C++ compiler's, and nvcc's (or NVRTC's) for CUDA
targets. It also leaves the fields in a context variable for the bundle
lookup (patch 0037), which matches kernels without the build tools. Upstream's next release adds toolchain versions to its key too;
drop this patch then, if its fields cover these.
"""

from ..patching import Edit, Patch

PATCH = Patch(
    name="0036_key_kernel_cache_by_toolchain",
    file="tilelang/cache/kernel_cache.py",
    reason="a kernel built by another nvcc, NVRTC, host compiler or tvm-ffi was reused from the cache",
    edits=(
        Edit('            "compile_flags": compile_flags,\n'
             '            **self._get_base_key(),\n'
             '        }\n',
             '            "compile_flags": compile_flags,\n'
             '            **self._get_base_key(),\n'
             '        }\n'
             '        from tilelang.paddle_runtime import toolchain as _tlp_toolchain  # tilelang-paddle patch 0036\n\n'
             '        _tlp_toolchain.complete_key(key_data, target, execution_backend)\n'),
    ),
    forwarded="no",
    checked_against=("0.1.15",),
    drop_when="upstream's cache key names the CUDA compiler, the host compiler and tvm-ffi",
)
