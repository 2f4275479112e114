"""``do_bench`` on Paddle: torch names through the shim, and wall-clock timing on CPU-only Paddle.

File: tilelang/profiler/bench.py. Upstream calls ``torch.device(...)`` (not
callable under Paddle's proxy) and uses it in ``isinstance`` checks; its
default ``backend="event"`` needs a GPU, so on a CPU-only Paddle every
``do_bench``/``profiler.do_bench()`` call failed. We rebind ``torch`` to
``tilelang.paddle_runtime.torch_shim.wrap(torch)`` and, when no GPU/NPU/MPS is
available, turn the default event backend into upstream's own wall-clock one.
Forwarded: no. Checked against: 0.1.15. Drop when: upstream picks wall timing without a device.
"""

from ..patching import Edit, rebind_torch

WALL = '    if backend == "wall":\n        if return_mode not in ("min", "max", "mean", "median"):\n'

PATCH = rebind_torch(
    name="0009_shim_torch_profiler_bench",
    file="tilelang/profiler/bench.py",
    reason="torch.device is not callable under the proxy; CPU-only Paddle must time with the wall clock",
    extra_edits=(
        Edit(
            WALL,
            "    if backend == \"event\" and not (IS_CUDA or IS_NPU) and Event is None:\n"
            "        backend = \"wall\"  # tilelang-paddle: no device events without a GPU\n" + WALL,
        ),
    ),
    checked_against=("0.1.15",),
    drop_when="upstream picks wall timing when no device is available",
)
