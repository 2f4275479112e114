"""Device timing on Paddle for ``tilelang.profiler``'s ``do_bench`` backends.

Upstream's ``tilelang/profiler/torch_bench.py`` reduces its timings with
``torch.quantile(...).tolist()`` and ``torch.<mode>(times)``, captures CUDA
graphs with ``torch.cuda.CUDAGraph``/``torch.cuda.graph`` and profiles with
``torch.profiler``. Under Paddle's proxy the first returns a float for one
quantile (``len()`` then fails), ``paddle.median`` averages the two middle
values where torch takes the lower one, and the graph and profiler names do
not exist. Patch 0013 routes those three places here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from statistics import fmean, median_low


RETURN_MODES = ("min", "max", "mean", "median")
_NO_CUPTI = (
    'do_bench(backend="cupti") needs torch.profiler, which Paddle does not provide; '
    'on Paddle use backend="event" (device events), "cudagraph" (CUDA graph replay) or "wall" (host clock)'
)


def aggregate(times: Sequence[float], quantiles: Sequence[float] | None, return_mode: str) -> float | list[float]:
    """Reduce per-run times (ms) as upstream's torch backends do.

    Quantiles interpolate linearly (``torch.quantile``'s default); one quantile
    gives a float, several a list. Without quantiles, ``return_mode`` picks
    min/max/mean or the *lower* median (``torch.median``).
    """
    if not times:
        raise ValueError("no timings to aggregate (n_repeat must be at least 1)")
    if quantiles is not None:
        ordered = sorted(times)
        values = []
        for q in quantiles:
            if not 0.0 <= q <= 1.0:
                raise ValueError(f"quantiles must be between 0 and 1, got {q}")
            position = q * (len(ordered) - 1)
            lower = int(position)
            upper = min(lower + 1, len(ordered) - 1)
            values.append(ordered[lower] + (ordered[upper] - ordered[lower]) * (position - lower))
        return values[0] if len(values) == 1 else values
    if return_mode == "min":
        return min(times)
    if return_mode == "max":
        return max(times)
    if return_mode == "median":
        return median_low(times)
    if return_mode == "mean":
        return fmean(times)
    raise ValueError(f"return_mode must be one of {RETURN_MODES}, got {return_mode!r}")


def _require_cuda_graphs(backend: str, driver=None):
    """The driver (Paddle's unless given), when it can capture CUDA graphs; else a clear error naming what works."""
    if driver is None:
        from .driver import paddle_driver

        driver = paddle_driver()
    if not driver.cuda_graphs_supported():
        raise RuntimeError(
            f'do_bench(backend="{backend}") needs a GPU build of Paddle and a visible GPU '
            '(Paddle sees none); use backend="wall" on the CPU'
        )
    return driver


def bench_with_cudagraph(
    fn: Callable,
    cache,
    n_repeat: int,
    quantiles: Sequence[float] | None,
    return_mode: str,
    device_idx: int | None,
    driver=None,
) -> float | list[float]:
    """Time ``n_repeat`` calls captured once in a CUDA graph and replayed (upstream's method, Paddle's graphs).

    Paddle captures on the device context's stream of the graph's place
    (paddle/fluid/platform/cuda_graph_with_memory_pool.cc
    ``BeginCUDAGraphCapture`` -> ``DeviceContextPool::Get(place)->stream()``),
    the same stream ``_get_current_raw_stream`` hands our launchers, so TileLang
    kernels are captured; allocations during capture come from the graph's pool.
    ``driver``: Paddle's unless given (the selftest's stand-in runs pass theirs).
    ``Event.record()`` records on the expected place's current stream
    (python/paddle/device/__init__.py ``Event.record``), which ``do_bench``'s
    device context has made this GPU's.
    """
    driver = _require_cuda_graphs("cudagraph", driver)
    if isinstance(device_idx, int):
        index = device_idx
    else:
        from .device import current_device_index

        index = current_device_index()
    n_retries = 10
    graph = driver.cuda_graph(index)
    graph.capture_begin()
    try:
        for _ in range(n_repeat):
            fn()
    finally:
        graph.capture_end()
    driver.synchronize(index)
    starts = [driver.event() for _ in range(n_retries)]
    ends = [driver.event() for _ in range(n_retries)]
    for start, end in zip(starts, ends):
        cache.zero_()  # flush L2 before each replay, ahead of the start event (untimed)
        start.record()
        graph.replay()
        end.record()
    driver.synchronize(index)
    graph.reset()
    return aggregate([s.elapsed_time(e) / n_repeat for s, e in zip(starts, ends)], quantiles, return_mode)


def bench_with_cupti(fn: Callable, cache, n_repeat: int) -> float:
    """Not available on Paddle: upstream reads per-kernel device times from ``torch.profiler``."""
    raise NotImplementedError(_NO_CUPTI)


def check_backend(backend: str) -> None:
    """At ``do_bench`` entry: refuse, in the user's words, the backends this Paddle cannot run."""
    if backend == "cupti":
        raise NotImplementedError(_NO_CUPTI)
    if backend == "cudagraph":
        _require_cuda_graphs(backend)
