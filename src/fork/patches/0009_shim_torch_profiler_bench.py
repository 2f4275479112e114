"""``do_bench`` on Paddle: torch names through the shim, and wall-clock timing on CPU-only Paddle.

File: tilelang/profiler/bench.py. Upstream calls ``torch.device(...)`` (not
callable under Paddle's proxy) and uses it in ``isinstance`` checks; its
default ``backend="event"`` needs a GPU, so on a CPU-only Paddle every
``do_bench``/``profiler.do_bench()`` call failed. We rebind ``torch`` to
``tilelang.paddle_runtime.torch_shim.wrap(torch)`` and, when no GPU/NPU/MPS is
available, turn the default event backend into upstream's own wall-clock one.
``backend="cupti"`` (no ``torch.profiler`` on Paddle) and ``"cudagraph"``
without a GPU fail at once with an error naming the backends that work,
instead of after warm-up or with upstream's message about MPS
(``tilelang.paddle_runtime.timing.check_backend``; patch 0013 has the rest).
Without ``device=``, the L2-flush buffer goes on the current GPU (Paddle's
expected place), as an index-less ``"cuda"`` does, instead of upstream's fixed
``"cuda:0"``.
"""

from ..patching import Edit, rebind_torch

WALL = '    if backend == "wall":\n        if return_mode not in ("min", "max", "mean", "median"):\n'

PATCH = rebind_torch(
    name="0009_shim_torch_profiler_bench",
    file="tilelang/profiler/bench.py",
    reason="torch.device is not callable under the proxy; CPU-only Paddle times with the wall clock; clear backend errors; L2 flush on the current GPU",
    extra_edits=(
        Edit(
            "from .wall import bench_with_wall\n",
            "from .wall import bench_with_wall\nfrom tilelang.paddle_runtime.timing import check_backend as _check_backend\n"
            "from tilelang.paddle_runtime import device as _paddle_device\n",
        ),
        # Without device=, upstream puts the L2-flush buffer on "cuda:0" whatever GPU is current.
        Edit(
            "    if device_idx is None:\n        return device\n",
            "    if device_idx is None:  # tilelang-paddle: the current GPU (paddle.set_device), not always GPU 0\n"
            "        return f\"cuda:{_paddle_device.current_device_index()}\" if IS_CUDA else device\n",
        ),
        Edit(
            WALL,
            "    if backend == \"event\" and not (IS_CUDA or IS_NPU) and Event is None:\n"
            "        backend = \"wall\"  # tilelang-paddle: no device events without a GPU\n"
            "    _check_backend(backend)  # tilelang-paddle: clear errors for backends Paddle cannot run\n" + WALL,
        ),
    ),
    checked_against=("0.1.15",),
    drop_when="upstream picks wall timing when no device is available",
)
