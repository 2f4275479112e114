"""Writes to TileLang's kernel cache that may fail without failing the kernel (patches 0029 and 0043).

A full disk, a quota or a read-only mount under ``TILELANG_CACHE_DIR`` means
the kernel cannot be cached, not that it cannot run: :func:`save_or_warn`
runs the save, and on such an ``OSError`` warns once per cache root (naming
the directory and the reason) and returns False, so the caller goes on with
the compiled kernel uncached. Where the cache's directories cannot even be
created when ``tilelang`` is imported (a fresh read-only mount, a path under
``/proc``, no permission), :func:`create_dirs_or_fall_back` gives the process
a private temporary cache instead, with one warning naming the directory.
"""

from __future__ import annotations

import atexit
import logging
import os
import shutil
import tempfile
from collections.abc import Callable

from .file_lock import UNWRITABLE

logger = logging.getLogger("tilelang.paddle_runtime")
_WARNED: set = set()


def unwritable(exc: BaseException) -> bool:
    """The disk refused a write: full, over quota, read-only or not permitted."""
    return isinstance(exc, OSError) and exc.errno in UNWRITABLE


def save_or_warn(save: Callable[[], object], entry: str, root: str) -> bool:
    """Run ``save()``; True when it wrote ``entry``, False (with one warning per ``root``) when the disk refused."""
    try:
        save()
    except OSError as exc:
        if not unwritable(exc):
            raise
        if root not in _WARNED:
            _WARNED.add(root)
            logger.warning("tilelang: cannot write the kernel cache at %s (%s: %s); the kernel runs uncached and "
                           "will be compiled again by the next process. Free space there or set TILELANG_CACHE_DIR "
                           "to a writable directory.", entry, exc.strerror, exc.filename or root)
        return False
    return os.path.isdir(entry)


def create_dirs_or_fall_back(create: Callable[[], object]) -> None:
    """Run upstream's ``KernelCache._create_dirs`` (at ``import tilelang``); where the disk refuses, point
    ``TILELANG_CACHE_DIR`` (read live by ``tilelang.env``) at a temporary directory removed at exit, warn once,
    and create the directories there (patch 0043)."""
    try:
        create()
        return
    except OSError as exc:
        wanted, why = os.environ.get("TILELANG_CACHE_DIR", "~/.tilelang/cache"), exc.strerror or str(exc)
        where = exc.filename or wanted
    fallback = tempfile.mkdtemp(prefix="tilelang-cache-")
    atexit.register(shutil.rmtree, fallback, True)
    os.environ["TILELANG_CACHE_DIR"] = fallback
    logger.warning("tilelang: the kernel cache TILELANG_CACHE_DIR=%s cannot be used (%s: %s); this process keeps "
                   "its kernels in %s, removed at exit, so each process compiles them again (bundles still "
                   "serve). Set TILELANG_CACHE_DIR to a writable directory to cache them.", wanted, where, why,
                   fallback)
    create()
