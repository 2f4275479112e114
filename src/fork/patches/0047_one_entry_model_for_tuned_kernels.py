"""Tuned kernels are cache entries like kernels: named by their build tools, re-checked, written under a lock.

File: tilelang/autotuner/tuner.py. Upstream writes a finished tuning to
``<cache>/autotuner/<key>``, a name that holds no build tool: after a compiler
or nvcc upgrade, the pick and the kernel the old tools built were loaded as
they were, while every other kernel was rebuilt. Within a process, its memory
cache returned a result whose tools had since been replaced on disk, and every
memory hit logged a warning naming the PrimFunc (``main``). Now
(``tilelang.paddle_runtime.cache``, the kernel cache's entry model):

- ``_save_result_to_disk`` writes to ``<key>.<tools digest>``
  (``tuned.save``: under the key's node lock, atomic, a full or read-only disk
  warned about once, not raised); patch 0039 reads the same name;
- a memory hit whose build tools changed on disk (``entries.fresh``) is
  dropped and looked up again; a hit logs at DEBUG, naming the decorated
  function.
"""

from ..patching import Edit, Patch

PATCH = Patch(
    name="0047_one_entry_model_for_tuned_kernels",
    file="tilelang/autotuner/tuner.py",
    reason="a compiler upgrade kept tuned kernels the old compiler built; memory hits warned, naming `main`",
    edits=(
        Edit('    def _save_result_to_disk(self, key, result: AutotuneResult):\n'
             '        result.save_to_disk(self.cache_dir / key, self.compile_args.verbose)\n',
             '    def _save_result_to_disk(self, key, result: AutotuneResult):\n'
             '        from tilelang.paddle_runtime.cache import tuned as _tlp_tuned  # tilelang-paddle patch 0047\n\n'
             '        _tlp_tuned.save(key, self.cache_dir,\n'
             '                        lambda path: result.save_to_disk(Path(path), self.compile_args.verbose))\n'),
        Edit('                if key in self._memory_cache:\n'
             '                    # Include PrimFunc name when hitting autotuner memory cache\n'
             '                    cached_result = self._memory_cache[key]\n'
             '                    prim = getattr(cached_result, "func", None)\n'
             '                    kernel_name = get_prim_func_name(prim, "<unknown>")\n'
             '                    logger.warning(\n',
             '                from tilelang.paddle_runtime.cache import entries as _tlp_entries'
             '  # tilelang-paddle patch 0047\n'
             '                from tilelang.paddle_runtime.kernel_names import kernel_name as _tlp_kernel_name\n\n'
             '                if key in self._memory_cache and not _tlp_entries.fresh(key):\n'
             '                    del self._memory_cache[key]  # its build tools changed on disk since\n'
             '                if key in self._memory_cache:\n'
             '                    # Include PrimFunc name when hitting autotuner memory cache\n'
             '                    cached_result = self._memory_cache[key]\n'
             '                    prim = getattr(cached_result, "func", None)\n'
             '                    kernel_name = _tlp_kernel_name(prim) if prim is not None else "<unknown>"\n'
             '                    logger.debug(\n'),
    ),
    forwarded="no",
    checked_against=("0.1.15",),
    drop_when="upstream's autotune cache names entries by their build tools",
)
