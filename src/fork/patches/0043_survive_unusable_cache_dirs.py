"""A kernel cache directory that cannot be created costs the cache, not ``import tilelang``.

File: tilelang/cache/kernel_cache.py. The kernel caches are made at import
(``tilelang/cache/__init__.py`` instantiates them), and ``KernelCache.__new__``
creates the cache's directories with ``os.makedirs``: a ``TILELANG_CACHE_DIR``
on a fresh read-only mount (``OSError: [Errno 30] Read-only file system``),
under ``/proc`` (``FileNotFoundError``) or without permission failed the
import itself. ``tilelang.paddle_runtime.cache.entries.create_dirs_or_fall_back``
runs the same creation and, where the disk refuses, gives the process a
temporary cache with one warning naming the directory and the reason.
"""

from ..patching import Edit, Patch

PATCH = Patch(
    name="0043_survive_unusable_cache_dirs",
    file="tilelang/cache/kernel_cache.py",
    reason="an unwritable or uncreatable TILELANG_CACHE_DIR made `import tilelang` fail",
    edits=(
        Edit('                    instance = super().__new__(cls)\n'
             '                    KernelCache._create_dirs()\n',
             '                    instance = super().__new__(cls)\n'
             '                    from tilelang.paddle_runtime.cache.entries import create_dirs_or_fall_back\n\n'
             '                    create_dirs_or_fall_back(KernelCache._create_dirs)  # tilelang-paddle patch 0043\n'),
    ),
    forwarded="no",
    checked_against=("0.1.15",),
    drop_when="upstream's kernel cache survives a cache directory it cannot create",
)
