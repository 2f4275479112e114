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
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import logging
import os
import time

from . import settings

logger = logging.getLogger("tilelang.paddle_runtime")


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
        except BaseException:
            os.close(fd)
            raise
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd
        return self

    @staticmethod
    def _holder(fd) -> str:
        try:
            pid = os.pread(fd, 32, 0).decode().strip()
        except OSError:
            pid = ""
        return f"process {pid}" if pid.isdigit() else "another process"

    def __exit__(self, *exc) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)  # closing the descriptor releases the flock


@contextlib.contextmanager
def node_lock(path: str | os.PathLike, what: str):
    """``FileLock(path)``, or no lock where the lock file cannot be created (a read-only cache directory)."""
    lock = FileLock(path, what=what)
    try:
        lock.__enter__()
    except OSError as exc:  # TimeoutError is not an OSError subclass we swallow: re-raised below
        if isinstance(exc, TimeoutError) or exc.errno not in (errno.EACCES, errno.EPERM, errno.EROFS):
            raise
        logger.debug("no lock for %s (%s): %s", what, path, exc)
        yield None
        return
    try:
        yield lock
    finally:
        lock.__exit__(None, None, None)
