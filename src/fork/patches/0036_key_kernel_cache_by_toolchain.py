"""Key TileLang's kernel cache by the toolchain that builds the kernel.

File: tilelang/cache/kernel_cache.py. Upstream's key (``_generate_key``) holds
the program, arguments, target, backend, pass configs, flags, TileLang's
version and the platform (plus our build id, patch 0023), but none of the
tools that compile it: after a CUDA toolkit or compiler upgrade, kernels the
old one built are loaded as they are. Two edits
(``tilelang.paddle_runtime.cache``, the entry model tuned kernels share):

- the key also holds the fields every entry's key holds for what it loads
  with, our build id and tvm-ffi's version (``key.kernel_key``), and the
  fields are left in a context variable for the bundle lookup (patch 0037),
  which is indexed by this key; ``key.remember`` notes the target kind and
  backend whose tools build the entry;
- the writable cache's directory for a key (``_get_cache_path``) is named by
  the key and a digest of the build tools, the host C++ compiler's and nvcc's
  (or NVRTC's) versions (``entries.entry_dir``), so the tools are asked only
  when the writable cache or a compile needs them, never for a bundle hit;
  where a tool is missing (nothing can compile), another toolchain's entry of
  the key loads.

Upstream's next release adds toolchain versions to its key too; drop this
patch then, if its fields cover these.
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
             '        from tilelang.paddle_runtime.cache import key as _tlp_key  # tilelang-paddle patch 0036\n\n'
             '        _tlp_key.kernel_key(key_data)\n'),
        Edit('        return sha256(key_string.encode()).hexdigest()\n',
             '        return _tlp_key.remember(sha256(key_string.encode()).hexdigest(), target, execution_backend)\n'),
        Edit('        return os.path.join(self._get_cache_root(), key)\n',
             '        from tilelang.paddle_runtime.cache import entries as _tlp_entries'
             '  # tilelang-paddle patch 0036\n\n'
             '        return _tlp_entries.entry_dir(self._get_cache_root(), key)\n'),
    ),
    forwarded="no",
    checked_against=("0.1.15",),
    drop_when="upstream's cache key names the CUDA compiler, the host compiler and tvm-ffi",
)
