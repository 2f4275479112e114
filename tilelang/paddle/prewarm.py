"""Compile a job's kernels once per node, split across that node's ranks and their cores: :func:`prewarm`."""

from __future__ import annotations

import concurrent.futures
import contextlib
import contextvars
import os
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from tilelang.paddle_runtime import settings as _settings
from tilelang.paddle_runtime.kernel_names import kernel_label

#: Which ranks share the work: those of this node (each node compiles every kernel into its own cache), or
#: those of the whole job (every node's ranks on one kernel cache that all nodes share).
SCOPES = ("node", "job")


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip()
    try:
        return int(raw) if raw else default
    except ValueError:
        raise ValueError(f"prewarm: {name}={raw!r} is not an integer (paddle.distributed.launch sets it)") from None


def _split(scope: str, rank, world_size) -> tuple[int, int, int]:
    """``(rank, world_size, ranks on this node)`` of the split ``scope`` names; explicit values win.

    ``paddle.distributed.launch`` sets, in every rank (Paddle 3.3
    python/paddle/distributed/launch/controllers/collective.py, ``CollectiveController.build_pod``):
    ``PADDLE_LOCAL_RANK``/``PADDLE_LOCAL_SIZE`` (this node) and ``PADDLE_TRAINER_ID``/``PADDLE_TRAINERS_NUM``
    (the job). A launcher that sets only the job's pair is taken as one node.
    """
    if scope not in SCOPES:
        raise ValueError(f"prewarm: scope must be one of {', '.join(map(repr, SCOPES))}, got {scope!r}")
    job_rank, job_size = _env_int("PADDLE_TRAINER_ID", 0), _env_int("PADDLE_TRAINERS_NUM", 1)
    local_size = _env_int("PADDLE_LOCAL_SIZE", 0)
    if local_size:
        local_rank = _env_int("PADDLE_LOCAL_RANK", 0)
    else:
        local_rank, local_size = job_rank, job_size
    default_rank, default_size = (local_rank, local_size) if scope == "node" else (job_rank, job_size)
    rank = default_rank if rank is None else rank
    world_size = default_size if world_size is None else world_size
    if not isinstance(world_size, int) or world_size < 1:
        raise ValueError(f"prewarm: world_size must be an int >= 1, got {world_size!r}")
    if not isinstance(rank, int) or not 0 <= rank < world_size:
        raise ValueError(f"prewarm: rank must be an int in [0, {world_size}), got {rank!r}")
    return rank, world_size, min(local_size, world_size) if scope == "job" else world_size


def _workers(workers, ranks_on_node: int) -> int:
    if workers is not None:
        if not isinstance(workers, int) or isinstance(workers, bool) or workers < 1:
            raise ValueError(f"prewarm: workers must be an int >= 1, got {workers!r}")
        return workers
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, cores // max(1, ranks_on_node))


def _name(build, index: int, kernel=None) -> str:
    """``builds[i] (what)``: the kernel's name and arguments once built (:mod:`..paddle_runtime.kernel_names`),
    else the build function's own name (``<lambda>`` for most)."""
    func = getattr(kernel, "prim_func", None)
    if func is not None:
        name = kernel_label(func)
    else:
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


def prewarm(builds: Sequence[Callable[[], Any]], *, scope: str = "node", rank: int | None = None,
            world_size: int | None = None, workers: int | None = None, timeout: float | None = None,
            progress: bool | None = None) -> list:
    """Compile the kernels of ``builds``, the work split across ranks and each rank's share across threads.

    Parameters
    ----------
    builds : sequence of callables
        Each takes no argument and compiles one kernel (``lambda: tilelang.compile(...)``,
        ``lambda: my_jit_factory(4096)``) and returns it.
    scope : {"node", "job"}
        Which ranks split the work. ``"node"`` (default): the ranks of this node
        (``PADDLE_LOCAL_RANK``/``PADDLE_LOCAL_SIZE``), each node compiling every kernel once into its own kernel
        cache (``TILELANG_CACHE_DIR``, default ``~/.tilelang/cache``, one per node). ``"job"``: all ranks of the
        job (``PADDLE_TRAINER_ID``/``PADDLE_TRAINERS_NUM``), only where every node uses *one shared* kernel cache
        (a network file system): then each kernel is compiled once in the job, but each rank waits on locks
        over that file system, whose ``flock`` must work across hosts (NFSv4 does, some FUSE mounts do not:
        two nodes may then compile a kernel twice, harmlessly), and a slow or hung node stalls the others up
        to ``timeout``.
    rank, world_size : int, optional
        This process's place in the split and the number of ranks splitting; by default from the
        variables ``scope`` names (``paddle.distributed.launch`` sets them; one process: 0 and 1).
    workers : int, optional
        Threads compiling this rank's share at once (lowering releases the GIL; nvcc and the host compiler are
        processes). Default: the cores this process may use divided by the ranks on this node, at least 1.
    timeout : float, optional
        Seconds to wait for a kernel another rank is compiling (default ``TILELANG_PADDLE_LOCK_TIMEOUT``);
        it bounds every wait of the builds, the autotuner's compile threads included.
    progress : bool, optional
        One line per kernel on standard error; by default on rank 0 only.

    Returns
    -------
    list
        The kernels, in the order of ``builds``.

    Rank ``r`` first compiles its share, ``builds[r::world_size]``, ``workers`` at a time,
    then takes the others from the kernel cache as their owners finish: a kernel being
    compiled by another rank is waited for on its cache lock, not compiled twice. So
    ``R`` ranks of ``W`` workers compile ``K`` kernels in about ``K / (R W)`` compile
    times while cores last. A rank that waits longer than ``timeout`` raises a
    ``TimeoutError`` naming the kernel and the rank that owned it. Later runs load
    every kernel from the cache.

    Examples
    --------
    >>> kernels = prewarm([lambda: gemm(m, 4096, 4096) for m in (1, 2, 4, 8)])   # doctest: +SKIP
    """
    builds = list(builds)
    for i, build in enumerate(builds):
        if not callable(build):
            raise TypeError(f"prewarm: builds[{i}] must be a callable that compiles one kernel, "
                            f"got {type(build).__name__}")
    rank, world_size, ranks_on_node = _split(scope, rank, world_size)
    threads = _workers(workers, ranks_on_node)
    show = (rank == 0) if progress is None else bool(progress)
    order = list(range(rank, len(builds), world_size)) + [i for i in range(len(builds)) if i % world_size != rank]
    kernels: list = [None] * len(builds)
    # Threads run in a copy of this context, so the timeout (a context variable) reaches them.
    with _lock_timeout(timeout):
        context = contextvars.copy_context()
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=threads, thread_name_prefix="tilelang-prewarm")

    def run(i):
        start = time.perf_counter()
        return builds[i](), time.perf_counter() - start

    futures = {pool.submit(context.copy().run, run, i): i for i in order}
    failed = True
    try:
        for done, future in enumerate(concurrent.futures.as_completed(futures), 1):
            i = futures[future]
            owner = i % world_size
            try:
                kernels[i], seconds = future.result()
            except TimeoutError as exc:
                raise TimeoutError(f"prewarm: rank {rank} waited too long for {_name(builds[i], i)}, which "
                                   f"rank {owner} of {world_size} compiles: {exc}") from exc
            except Exception as exc:
                raise RuntimeError(f"prewarm: {_name(builds[i], i)} failed on rank {rank} "
                                   f"({'its own share' if owner == rank else f'owned by rank {owner}'}): "
                                   f"{type(exc).__name__}: {exc}") from exc
            if show:
                how = "this rank's share" if owner == rank else f"rank {owner}'s share"
                print(f"prewarm [{done}/{len(builds)}] {_name(builds[i], i, kernels[i])}: {seconds:.1f} s ({how})",
                      file=sys.stderr, flush=True)
        failed = False
    finally:
        # On a failure, the builds not started are dropped and the error is raised now, not after the others.
        pool.shutdown(wait=not failed, cancel_futures=True)
    return kernels
