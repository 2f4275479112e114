"""Every ``TILELANG_PADDLE_*`` variable read at run time, with its default and meaning.

(Build-time variables, ``TILELANG_PADDLE_UPSTREAM_WHEEL`` and
``TILELANG_PADDLE_CACHE``, live with the build in ``src/fork/pin.py``.)
"""

from __future__ import annotations

import contextvars
import os

#: Path of the libcudart to preload ahead of every other candidate (see :mod:`.preload`).
CUDART = "TILELANG_PADDLE_CUDART"

#: "1" restores upstream's None-as-NULL-pointer for tensor parameters, for kernels
#: that check their pointers; by default None for a tensor parameter is a TypeError.
ALLOW_NULL_BUFFERS = "TILELANG_PADDLE_ALLOW_NULL_BUFFERS"


def allow_null_buffers(environ=os.environ) -> bool:
    return environ.get(ALLOW_NULL_BUFFERS, "0") == "1"

#: "0" sends every Cython-backend kernel call through upstream's launcher instead of
#: the fast path (:mod:`.fast_launch`), for diagnosis. Read once per compiled kernel.
FAST_LAUNCH = "TILELANG_PADDLE_FAST_LAUNCH"


def fast_launch(environ=os.environ) -> bool:
    return environ.get(FAST_LAUNCH, "1") != "0"

#: Level of the ``tilelang`` logger at import (a name such as ``INFO`` or ``DEBUG``).
#: Upstream starts at INFO, which prints compile and cache logs on every run of an
#: installed package; we start at WARNING. ``tilelang.set_log_level`` still works after import.
LOG_LEVEL = "TILELANG_PADDLE_LOG_LEVEL"


def log_level(environ=os.environ) -> str:
    return environ.get(LOG_LEVEL, "WARNING").upper() or "WARNING"

#: Where ``tilelang.paddle.custom_op`` builds and caches operator libraries (one directory per
#: operator and content hash). Default: ``~/.cache/tilelang-paddle/ops``.
OP_CACHE = "TILELANG_PADDLE_OP_CACHE"


def op_cache(environ=os.environ) -> str:
    """The absolute op cache directory (``~``/``$VARS`` expanded; see :mod:`.cache_paths`)."""
    from .cache_paths import resolve

    return resolve(OP_CACHE, environ)

#: Read-only kernel bundles, ``DIR[:DIR...]`` (:mod:`.bundle`); made absolute at import (:mod:`.cache_paths`).
BUNDLE = "TILELANG_PADDLE_BUNDLE"

#: Seconds a process waits for another one's operator build or kernel compile (a cross-process
#: file lock, :mod:`.file_lock`) before a TimeoutError naming the lock file. Default 900.
LOCK_TIMEOUT = "TILELANG_PADDLE_LOCK_TIMEOUT"


#: A timeout set for the current thread/context by :func:`tilelang.paddle.prewarm`, ahead of the variable.
LOCK_TIMEOUT_OVERRIDE: contextvars.ContextVar[float | None] = contextvars.ContextVar("tlp_lock_timeout", default=None)


def lock_timeout(environ=os.environ) -> float:
    override = LOCK_TIMEOUT_OVERRIDE.get()
    return override if override is not None else float(environ.get(LOCK_TIMEOUT) or 900)
