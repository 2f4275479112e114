"""A kernel held in memory is used again only while its build tools are unchanged; a hit logs at DEBUG.

File: tilelang/cache/kernel_cache.py. Upstream's memory cache answers a key for
the life of the process. The key holds no build tool (patch 0036 names writable
entries by them), so a compiler replaced in place between two compiles of one
kernel got the first build back. A memory hit whose entry's tool files changed
on disk since (``tilelang.paddle_runtime.cache.entries.fresh``: path, size,
modification time; no process started) is dropped and looked up again, under
the new tools' entry name. The hit itself logged a warning naming the
PrimFunc (``main``); it logs at DEBUG, naming the kernel as errors do.
"""

from ..patching import Edit, Patch

PATCH = Patch(
    name="0048_recheck_tools_on_memory_hits",
    file="tilelang/cache/kernel_cache.py",
    reason="a compiler replaced within a process got the old compiler's kernel back from memory",
    edits=(
        Edit('            if key in self._memory_cache:\n'
             '                # Include kernel name for easier debugging when hitting memory cache\n'
             '                kernel_name = get_prim_func_name(func, "<unknown>")\n'
             '                self.logger.warning(\n',
             '            from tilelang.paddle_runtime.cache import entries as _tlp_entries'
             '  # tilelang-paddle patch 0048\n'
             '            from tilelang.paddle_runtime.kernel_names import kernel_name as _tlp_kernel_name\n\n'
             '            if key in self._memory_cache and not _tlp_entries.fresh(key):\n'
             '                del self._memory_cache[key]  # its build tools changed on disk since\n'
             '            if key in self._memory_cache:\n'
             '                # Include kernel name for easier debugging when hitting memory cache\n'
             '                kernel_name = _tlp_kernel_name(func)\n'
             '                self.logger.debug(\n'),
    ),
    forwarded="no",
    checked_against=("0.1.15",),
    drop_when="upstream's kernel cache names entries by their build tools",
)
