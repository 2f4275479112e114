"""Writable cache entries, kernels and tuned kernels alike: their directories, re-checks and writes.

An entry of the writable cache (``TILELANG_CACHE_DIR``) is the directory
``<key>.<tools digest>`` (:func:`entry_dir`): the key says what the entry
computes and loads with (:mod:`.key`), the digest which build tools made it
(:mod:`.toolchain`). A new compiler or nvcc therefore makes a new entry, for
a tuned kernel as for any other: it is tuned again, since its configs' code
and timings came from the old tools. Where a tool the entry needs is
missing, nothing here can build it, so the newest entry of that key (entries appear whole, by rename),
from any toolchain, loads (a slim image reusing a cache volume), as bundles do.

Within a process, an entry held in memory is used again only while its build
tools' files are unchanged (:func:`fresh`: path, size and modification time,
no process started); one replaced in place is asked again, and the entry
rebuilt under its new name. Entries from bundles do not depend on local tools.

Writes go through :func:`write`: under the key's node lock, atomic (upstream's
staging directory and rename), and a full disk, a quota or a read-only mount
costs the cache, not the call: one warning per cache root names the directory
and the reason, and the kernel runs uncached. Where the cache's directories
cannot even be created when ``tilelang`` is imported,
:func:`create_dirs_or_fall_back` gives the process a private temporary cache
with one warning.
"""

from __future__ import annotations

import atexit
import glob
import logging
import os
import shutil
import tempfile
from collections.abc import Callable

from ..file_lock import UNWRITABLE, node_lock
from . import key as _key
from . import toolchain as _toolchain

logger = logging.getLogger("tilelang.paddle_runtime")
_WARNED: set = set()
_STAMPS: dict = {}   # key -> its build tools' file stamps when its writable entry was last named here


def entry_dir(root: str, key: str) -> str:
    """The writable entry of ``key`` under ``root``: ``<key>.<digest of the tools that build it>``.

    Where a tool the entry needs is missing, the newest existing entry of ``key`` from any toolchain.
    """
    kind, backend = _key.built_by(key)
    _STAMPS[key] = _toolchain.stamps(kind, backend)
    tools = _toolchain.build_tools(kind, backend)
    exact = os.path.join(root, f"{key}.{_toolchain.digest(tools)}")
    if _toolchain.NONE not in tools.values() or os.path.isdir(exact):
        return exact
    newest, newest_mtime = exact, None
    for path in glob.glob(os.path.join(glob.escape(root), glob.escape(key) + ".*")):
        try:
            mtime = os.stat(path).st_mtime
        except OSError:  # removed meanwhile
            continue
        if newest_mtime is None or mtime > newest_mtime:
            newest, newest_mtime = path, mtime
    return newest


def fresh(key: str) -> bool:
    """False where the build tools of ``key``'s writable entry changed on disk since it was named here."""
    then = _STAMPS.get(key)
    return then is None or then == _toolchain.stamps(*_key.built_by(key))


def write(root: str, key: str, entry: str, save: Callable[[], object]) -> bool:
    """Run ``save()`` (an atomic write of ``entry``) under ``key``'s node lock; :func:`save_or_warn`'s result."""
    with node_lock(os.path.join(root, ".locks", key + ".lock"), "writing a cache entry"):
        return save_or_warn(save, entry, root)


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
