"""Key TileLang's CUDA binary cache by the nvcc that compiles the binaries.

File: tilelang/cache/cuda_binary_cache.py. Below the kernel cache, upstream
keeps each nvcc output (cubin/fatbin) under a key of the CUDA source, arch,
format, options and TileLang's version (``CUDABinaryCache.make_key``). A kernel
the kernel cache compiles anew after a toolkit change (patch 0036) still got
the old toolkit's binary from here. The key now also holds
``tilelang.paddle_runtime.cache.toolchain.nvcc_identity()``.
"""

from ..patching import Edit, Patch

PATCH = Patch(
    name="0038_key_cuda_binaries_by_nvcc",
    file="tilelang/cache/cuda_binary_cache.py",
    reason="a cubin built by another nvcc was reused from the CUDA binary cache",
    edits=(
        Edit('            "options": tuple(options or []),\n'
             '        }\n'
             '        return cls._finalize_key(key_data)\n',
             '            "options": tuple(options or []),\n'
             '        }\n'
             '        from tilelang.paddle_runtime.cache import toolchain as _tlp_toolchain'
             '  # tilelang-paddle patch 0038\n\n'
             '        key_data["nvcc"] = _tlp_toolchain.nvcc_identity()\n'
             '        return cls._finalize_key(key_data)\n'),
    ),
    forwarded="no",
    checked_against=("0.1.15",),
    drop_when="upstream's CUDA binary cache key names the compiler",
)
