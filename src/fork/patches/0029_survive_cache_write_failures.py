"""A kernel cache that cannot be written costs the cache, not the call.

File: tilelang/cache/kernel_cache.py. Upstream's ``_save_kernel_to_disk``
logs a failed write inside its ``try``, but creates the cache directories and
the staging directory before it (``_create_dirs``, ``os.makedirs(staging_path)``):
on a full disk (ENOSPC), over quota (EDQUOT) or read-only (EROFS) they raise a
bare ``OSError`` naming no path, and a kernel that compiled fine is lost; a
write that fails inside the ``try`` logs a traceback naming no path either. The
save now goes through ``tilelang.paddle_runtime.cache.entries.save_or_warn``,
which warns once per cache directory, naming it and the reason, and the
kernel is returned uncached; the adapter is not pointed at a cache entry that
does not exist. Applies after 0024 (its indentation).
"""

from ..patching import Edit, Patch

SAVE = (
    "                cache_path = self._get_cache_path(key)\n"
    "                self._save_kernel_to_disk(key, kernel, func, verbose)\n"
    "                # Set cache path on adapter so it can save cubin after first execution\n"
    "                self._set_adapter_cache_path(kernel, cache_path)\n"
)

FAILED = (
    "        except Exception:\n"
    "            shutil.rmtree(staging_path, ignore_errors=True)\n"
    '            self.logger.exception("Error during atomic cache save")\n'
)

PATCH = Patch(
    name="0029_survive_cache_write_failures",
    file="tilelang/cache/kernel_cache.py",
    reason="a full, over-quota or read-only kernel cache made a compiled kernel fail with a bare OSError",
    edits=(
        # Inside the save: a write the disk refused goes to save_or_warn, which names the path once.
        Edit(FAILED,
             "        except Exception as _tlp_exc:\n"
             "            shutil.rmtree(staging_path, ignore_errors=True)\n"
             "            from tilelang.paddle_runtime.cache.entries import unwritable as _tlp_unwritable\n\n"
             "            if _tlp_unwritable(_tlp_exc):\n"
             "                raise\n"
             '            self.logger.exception("Error during atomic cache save")\n'),
        Edit(SAVE,
             "                cache_path = self._get_cache_path(key)\n"
             "                from tilelang.paddle_runtime.cache.entries import save_or_warn as _tlp_save_or_warn\n\n"
             "                if _tlp_save_or_warn(lambda: self._save_kernel_to_disk(key, kernel, func, verbose),\n"
             "                                     cache_path, self._get_cache_root()):\n"
             "                    # Set cache path on adapter so it can save cubin after first execution\n"
             "                    self._set_adapter_cache_path(kernel, cache_path)\n"),
    ),
    forwarded="no",
    checked_against=("0.1.15",),
    drop_when="upstream's save creates its directories inside the try that logs a failed save",
)
