"""A cross-process lock on a file, for builds that several ranks of one job start at once.

``with FileLock(path):`` holds an exclusive ``fcntl.flock`` on ``path``
(created if missing). The kernel drops the lock when its holder exits, killed
or not, so a crashed rank never leaves the others waiting on a dead lock; a
rank that hangs while holding it does, so waiting is bounded: after
``timeout`` seconds (``TILELANG_PADDLE_LOCK_TIMEOUT``, default 900) a
``TimeoutError`` names the lock file and the process that holds it. The holder
writes its pid into the file for that message only; the lock is the flock.

Used by ``tilelang.paddle.custom_op`` (one op build per directory) and by
TileLang's kernel cache (patch 0024: one compile per cache key on a node).

A forked child does not hold its parent's locks. A ``flock`` belongs to the
open file description, which ``fork`` shares: a child that inherited the
descriptor (a ``paddle.io.DataLoader`` worker forked while a thread compiled)
kept the lock alive after the parent released it, and waited on itself when
it compiled the same kernel. Every held lock is registered, and
``os.register_at_fork(after_in_child=...)`` closes the child's copies (closing
one copy leaves the parent's lock in place; ``LOCK_UN`` would release it for
both). A child that forked *inside* a ``with FileLock`` block no longer holds
the lock there; its ``__exit__`` does nothing.

Errors while taking a lock close its descriptor, so nothing stays held after a
failure; writing the pid (a full disk) is best effort.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import logging
import os
import threading
import time

from . import settings

logger = logging.getLogger("tilelang.paddle_runtime")

#: errno values meaning "this directory cannot be written": read-only, no permission, full, over quota.
UNWRITABLE = (errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC, errno.EDQUOT)


# Descriptors of the locks this process holds, closed in a forked child (see module docstring).
_HELD: set = set()
_HELD_GUARD = threading.Lock()


def _forget_in_child() -> None:
    global _HELD_GUARD
    _HELD_GUARD = threading.Lock()  # another thread may have held it at the fork
    for lock in list(_HELD):
        fd, lock._fd = lock._fd, None
        if fd is not None:
            try:
                os.close(fd)
            except OSError:
                pass
    _HELD.clear()


os.register_at_fork(after_in_child=_forget_in_child)


class FileLock:
    def __init__(self, path: str | os.PathLike, timeout: float | None = None, what: str = "a build"):
        self.path = os.fspath(path)
        self.timeout = settings.lock_timeout() if timeout is None else timeout
        self.what = what
        self._fd = None

    def __enter__(self) -> "FileLock":
        os.makedirs(os.path.dirname(self.path) or ".", exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
        deadline = time.monotonic() + self.timeout
        delay = 0.01
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except OSError as exc:
                    if exc.errno not in (errno.EAGAIN, errno.EACCES):
                        raise
                if time.monotonic() >= deadline:
                    raise TimeoutError(
                        f"waited {self.timeout:g} s for the lock {self.path} ({self.what}), held by "
                        f"{self._holder(fd)}; if that process hangs, stop it (a killed holder releases the lock), "
                        f"or raise {settings.LOCK_TIMEOUT}")
                time.sleep(delay)
                delay = min(delay * 2, 0.25)
            try:  # the pid is for the timeout message only: a full disk must not fail the lock
                os.ftruncate(fd, 0)
                os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
            except OSError as exc:
                logger.debug("could not write the pid into %s: %s", self.path, exc)
            with _HELD_GUARD:
                self._fd = fd
                _HELD.add(self)
        except BaseException:
            os.close(fd)
            raise
        return self

    @staticmethod
    def _holder(fd) -> str:
        try:
            pid = os.pread(fd, 32, 0).decode().strip()
        except OSError:
            pid = ""
        return f"process {pid}" if pid.isdigit() else "another process"

    def __exit__(self, *exc) -> None:
        with _HELD_GUARD:
            fd, self._fd = self._fd, None
            _HELD.discard(self)
        if fd is not None:
            os.close(fd)  # closing the descriptor releases the flock


@contextlib.contextmanager
def node_lock(path: str | os.PathLike, what: str):
    """``FileLock(path)``, or no lock where the lock file cannot be created.

    A read-only cache directory is silent (the cache is then only read); a full disk or quota warns
    once per path: the work goes on unlocked, as upstream does without our lock.
    """
    lock = FileLock(path, what=what)
    try:
        lock.__enter__()
    except OSError as exc:  # TimeoutError is not an OSError subclass we swallow: re-raised below
        if isinstance(exc, TimeoutError) or exc.errno not in UNWRITABLE:
            raise
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            logger.warning("cannot create the lock file %s for %s (%s); going on without it", path, what,
                           exc.strerror)
        else:
            logger.debug("no lock for %s (%s): %s", what, path, exc)
        yield None
        return
    try:
        yield lock
    finally:
        lock.__exit__(None, None, None)
