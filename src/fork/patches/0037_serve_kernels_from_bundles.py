"""TileLang's kernel cache asks the read-only bundles of TILELANG_PADDLE_BUNDLE first.

File: tilelang/cache/kernel_cache.py. Upstream's ``cached`` looks in memory,
then in its one writable disk cache, then compiles; a serving image with no
compiler and an empty cache can only compile. Between the memory and the disk
lookup, ``tilelang.paddle_runtime.cache.bundle.load`` now returns the kernel from the
first bundle holding it intact (its files match the manifest's sha256), loaded
in place and never written; otherwise the lookup goes on as upstream's. It also
records lookups for ``tilelang-paddle bundle``. Needs patch 0036 (the key's
fields) before it.
"""

from ..patching import Edit, Patch

ANCHOR = (
    "        if verbose:\n"
    "            self.logger.debug(f\"Checking disk cache for kernel {get_prim_func_name(func, '<unknown>')}\")\n"
)

PATCH = Patch(
    name="0037_serve_kernels_from_bundles",
    file="tilelang/cache/kernel_cache.py",
    reason="kernels could only come from a compile or the writable cache, so hosts without a compiler could not "
           "serve them",
    edits=(
        Edit(ANCHOR,
             "        from tilelang.paddle_runtime.cache import bundle as _tlp_bundle  # tilelang-paddle patch 0037\n\n"
             "        kernel = _tlp_bundle.load(self, key, func, backend_context, out_idx, pass_configs, compile_flags)\n"
             "        if kernel is not None:\n"
             "            with self._lock:\n"
             "                return self._memory_cache.setdefault(key, kernel)\n"
             + ANCHOR),
    ),
    forwarded="no",
    checked_against=("0.1.15",),
    drop_when="upstream's kernel cache reads read-only layers",
)
