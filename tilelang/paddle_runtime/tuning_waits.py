"""The autotuner's compiles wait on other processes like every compile, within the same bounds (patch 0042).

A config's compile takes the kernel cache's lock for its key (patch 0024); a
rank that hangs while holding it makes every other rank wait. Two things kept
those waits unbounded or silent in upstream's tuner:

- its compile threads start with an empty context, so the timeout that
  ``tilelang.paddle.prewarm(timeout=...)`` sets (a context variable,
  :data:`.settings.LOCK_TIMEOUT_OVERRIDE`) never reached them:
  :func:`in_caller_context` runs each in a copy of the caller's context;
- a config whose compile failed is skipped, so a timed-out wait made the tuner
  pick among the remaining configs, a choice that differs between ranks:
  :func:`stop_on_timeout` raises instead, naming the kernel and the config.
"""

from __future__ import annotations

import contextvars


def in_caller_context(fn):
    """``fn`` to run in a copy of the current context (call this in the submitting thread)."""
    return contextvars.copy_context().run, fn


def stop_on_timeout(error: BaseException | None, fn, config) -> None:
    """Raise where ``error`` is a timed-out wait for a compile another process holds."""
    if isinstance(error, TimeoutError):
        name = getattr(fn, "__name__", None) or type(fn).__name__
        raise TimeoutError(f"autotuning {name}: the compile of config {config} {error}; tuning stopped instead of "
                           "picking among the other configs") from error
