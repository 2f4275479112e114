"""Device timing in ``do_bench`` on Paddle: reductions, CUDA graphs, and no CUPTI.

File: tilelang/profiler/torch_bench.py. Three places do not survive Paddle's
torch proxy (found by reading Paddle 3.3.1's Python; nothing here ran on a GPU):

- event timing reduces with ``torch.quantile(times, torch.tensor([q])).tolist()``:
  Paddle returns a 0-d tensor for one quantile, ``.tolist()`` is then a float
  and ``len()`` raises TypeError; ``getattr(torch, "median")`` is
  ``paddle.median``, which averages the middle pair where torch takes the lower;
- ``bench_with_cudagraph`` needs ``torch.cuda.CUDAGraph``/``torch.cuda.graph``,
  absent from the proxy (AttributeError on a GPU);
- ``bench_with_cupti`` needs ``torch.profiler``, also absent.

The reduction and both backends come from ``tilelang.paddle_runtime.timing``:
the same reduction rules in Python, CUDA-graph timing on
``paddle.device.cuda.graphs.CUDAGraph``, and a NotImplementedError for CUPTI
naming the backends that work. Upstream's two functions stay, renamed.
"""

from ..patching import Edit, Patch

REDUCE = '''    times = torch.tensor(
        [s.elapsed_time(e) for s, e in zip(start_events, end_events)],
        dtype=torch.float,
    )

    # Return quantiles if requested
    if quantiles is not None:
        quantile_values = torch.quantile(times, torch.tensor(quantiles, dtype=torch.float)).tolist()
        return quantile_values[0] if len(quantile_values) == 1 else quantile_values

    # Return aggregated result
    return getattr(torch, return_mode)(times).item()
'''

IMPORTS = "from tilelang.utils.device import Event, device_synchronize as _cuda_synchronize\n"

PATCH = Patch(
    name="0013_route_profiler_timing",
    file="tilelang/profiler/torch_bench.py",
    reason="torch.quantile/CUDAGraph/profiler do not survive Paddle's proxy; time with Paddle's own APIs",
    edits=(
        Edit(
            IMPORTS,
            IMPORTS + "from tilelang.paddle_runtime import timing as _paddle_timing\n"
            "from tilelang.paddle_runtime.timing import bench_with_cudagraph, bench_with_cupti  # noqa: F401\n",
        ),
        Edit(
            REDUCE,
            "    return _paddle_timing.aggregate([s.elapsed_time(e) for s, e in zip(start_events, end_events)], quantiles, return_mode)\n",
        ),
        # Renamed so the imports above are what `from .torch_bench import ...` finds.
        Edit("def bench_with_cupti(\n", "def _upstream_bench_with_cupti(\n"),
        Edit("def bench_with_cudagraph(\n", "def _upstream_bench_with_cudagraph(\n"),
    ),
    forwarded="not-needed",
    checked_against=("0.1.15",),
    drop_when="never",
)
