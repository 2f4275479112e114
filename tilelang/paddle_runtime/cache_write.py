"""Writes to TileLang's kernel cache that may fail without failing the kernel (patch 0029).

A full disk, a quota or a read-only mount under ``TILELANG_CACHE_DIR`` means
the kernel cannot be cached, not that it cannot run: :func:`save_or_warn`
runs the save, and on such an ``OSError`` warns once per cache root (naming
the directory and the reason) and returns False, so the caller goes on with
the compiled kernel uncached.
"""

from __future__ import annotations

import logging
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
    import os

    return os.path.isdir(entry)
