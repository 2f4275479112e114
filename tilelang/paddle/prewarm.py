"""Compile a job's kernels once per node, shared across its ranks: :func:`prewarm`."""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from tilelang.paddle_runtime import settings as _settings


def _rank_and_size(rank, world_size) -> tuple[int, int]:
    # paddle.distributed.launch sets PADDLE_TRAINER_ID / PADDLE_TRAINERS_NUM in every rank's environment.
    if rank is None:
        rank = int(os.environ.get("PADDLE_TRAINER_ID", "0") or 0)
    if world_size is None:
        world_size = int(os.environ.get("PADDLE_TRAINERS_NUM", "1") or 1)
    if not isinstance(world_size, int) or world_size < 1:
        raise ValueError(f"prewarm: world_size must be an int >= 1, got {world_size!r}")
    if not isinstance(rank, int) or not 0 <= rank < world_size:
        raise ValueError(f"prewarm: rank must be an int in [0, {world_size}), got {rank!r}")
    return rank, world_size


def _name(build, index: int) -> str:
    name = getattr(build, "__qualname__", None) or getattr(build, "__name__", None) or type(build).__name__
    return f"builds[{index}] ({name})"


@contextlib.contextmanager
def _lock_timeout(timeout):
    if timeout is not None and not (isinstance(timeout, (int, float)) and timeout > 0):
        raise ValueError(f"prewarm: timeout must be a number of seconds > 0, got {timeout!r}")
    token = _settings.LOCK_TIMEOUT_OVERRIDE.set(None if timeout is None else float(timeout))
    try:
        yield
    finally:
        _settings.LOCK_TIMEOUT_OVERRIDE.reset(token)


def prewarm(builds: Sequence[Callable[[], Any]], *, rank: int | None = None, world_size: int | None = None,
            timeout: float | None = None, progress: bool | None = None) -> list:
    """Compile the kernels of ``builds`` with the work split across the ranks of a job.

    Parameters
    ----------
    builds : sequence of callables
        Each takes no argument and compiles one kernel (``lambda: tilelang.compile(...)``,
        ``lambda: my_jit_factory(4096)``) and returns it.
    rank, world_size : int, optional
        This process's rank and the number of ranks; by default ``PADDLE_TRAINER_ID`` and
        ``PADDLE_TRAINERS_NUM``, which ``paddle.distributed.launch`` sets (one process: 0 and 1).
    timeout : float, optional
        Seconds to wait for a kernel another rank is compiling (default ``TILELANG_PADDLE_LOCK_TIMEOUT``).
    progress : bool, optional
        One line per kernel on standard error; by default on rank 0 only.

    Returns
    -------
    list
        The kernels, in the order of ``builds``.

    Rank ``r`` first compiles its share, ``builds[r::world_size]``, then takes the
    others from the shared kernel cache (``TILELANG_CACHE_DIR``, on a disk the
    ranks share) as their owners finish: a kernel being compiled by another rank
    is waited for on its cache lock, not compiled twice. So ``R`` ranks compile
    ``K`` kernels in about ``K / R`` compile times instead of ``K``. A rank that
    waits longer than ``timeout`` raises a ``TimeoutError`` naming the kernel and
    the rank that owned it. Every kernel is built once per node and cache; later
    runs load all of them from the cache.

    Examples
    --------
    >>> kernels = prewarm([lambda: gemm(m, 4096, 4096) for m in (1, 2, 4, 8)])   # doctest: +SKIP
    """
    builds = list(builds)
    for i, build in enumerate(builds):
        if not callable(build):
            raise TypeError(f"prewarm: builds[{i}] must be a callable that compiles one kernel, "
                            f"got {type(build).__name__}")
    rank, world_size = _rank_and_size(rank, world_size)
    show = (rank == 0) if progress is None else bool(progress)
    mine = list(range(rank, len(builds), world_size))
    others = [i for i in range(len(builds)) if i % world_size != rank]
    kernels: list = [None] * len(builds)
    done = 0
    with _lock_timeout(timeout):
        for i in mine + others:
            owner = i % world_size
            start = time.perf_counter()
            try:
                kernels[i] = builds[i]()
            except TimeoutError as exc:
                raise TimeoutError(f"prewarm: rank {rank} waited too long for {_name(builds[i], i)}, which rank "
                                   f"{owner} of {world_size} compiles: {exc}") from exc
            except Exception as exc:
                raise RuntimeError(f"prewarm: {_name(builds[i], i)} failed on rank {rank} "
                                   f"({'its own share' if owner == rank else f'owned by rank {owner}'}): "
                                   f"{type(exc).__name__}: {exc}") from exc
            done += 1
            if show:
                how = "this rank's share" if owner == rank else f"rank {owner}'s share"
                print(f"prewarm [{done}/{len(builds)}] {_name(builds[i], i)}: {time.perf_counter() - start:.1f} s "
                      f"({how})", file=sys.stderr, flush=True)
    return kernels
