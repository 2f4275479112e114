"""Compile a kernel once per node: processes missing the same cache key wait for the first and load its result.

File: tilelang/cache/kernel_cache.py. Upstream 0.1.15 writes cache entries
atomically (a staging directory renamed into place, upstream #1982), so
concurrent writers never corrupt the cache, but it takes no cross-process
lock: the 8 ranks of a ``paddle.distributed.launch`` job that miss the same
kernel all compile it, 8 times the work at start-up. We wrap the miss path
(compile, then save) in a file lock keyed by the cache key
(``<cache root>/.locks/<key>.lock``, ``tilelang.paddle_runtime.file_lock``)
and check the disk again once the lock is held, so one process compiles and
the others load what it saved. Where the lock file cannot be created (a
read-only cache), the process compiles as upstream does.
"""

import textwrap

from ..patching import Edit, Patch

MISS_PATH = (
    "        # Compile kernel if cache miss; leave critical section\n"
    "        with jit_phase(\n"
    '            "cache.compile",\n'
    "            verbose=verbose,\n"
    '            kernel=get_prim_func_name(func, "<unknown>"),\n'
    "            target=str(target),\n"
    "            target_host=str(target_host) if target_host is not None else None,\n"
    "            backend=execution_backend,\n"
    "            cache_key=key,\n"
    "            cache_path=self._get_cache_path(key),\n"
    "        ):\n"
    "            kernel = JITKernel(\n"
    "                func,\n"
    "                out_idx=out_idx,\n"
    "                execution_backend=execution_backend,\n"
    "                target=target,\n"
    "                target_host=target_host,\n"
    "                verbose=verbose,\n"
    "                pass_configs=pass_configs,\n"
    "                compile_flags=compile_flags,\n"
    "                backend_context=backend_context,\n"
    "            )\n"
    "        # Save outside the lock: staging+rename is atomic and idempotent (like the\n"
    "        # disk load above). Holding the lock here serialized every worker's save.\n"
    "        if env.is_cache_enabled():\n"
    "            cache_path = self._get_cache_path(key)\n"
    "            self._save_kernel_to_disk(key, kernel, func, verbose)\n"
    "            # Set cache path on adapter so it can save cubin after first execution\n"
    "            self._set_adapter_cache_path(kernel, cache_path)\n"
)

LOCKED = (
    "        # tilelang-paddle patch 0024: one process per node compiles a missing key; the others load it\n"
    "        from tilelang.paddle_runtime.file_lock import node_lock as _tlp_node_lock\n\n"
    '        with _tlp_node_lock(os.path.join(self._get_cache_root(), ".locks", key + ".lock"), "compiling a kernel"):\n'
    "            kernel = self._load_kernel_from_disk(key, backend_context, out_idx, pass_configs, compile_flags, func,\n"
    "                                                 verbose)\n"
    "            if kernel is not None:\n"
    "                with self._lock:\n"
    "                    return self._memory_cache.setdefault(key, kernel)\n"
    + textwrap.indent(MISS_PATH, "    ")
)

PATCH = Patch(
    name="0024_compile_once_per_cache_key",
    file="tilelang/cache/kernel_cache.py",
    reason="N ranks missing the same kernel compile it N times; one should, the rest load its result",
    edits=(Edit(MISS_PATH, LOCKED),),
    checked_against=("0.1.15",),
    drop_when="upstream's cache locks across processes",
)
