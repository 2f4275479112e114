"""Route ``tilelang.utils.device`` through the Paddle control plane.

File: tilelang/utils/device.py. Under Paddle's torch proxy ``torch.device`` is a
module, not a type: the annotation ``int | torch.device`` raises TypeError at
import, and ``torch.device(x).type`` fails at call time. Upstream also prints a
notice on every import when the framework has no MPS backend (Paddle never has).
We take ``device_synchronize`` from ``tilelang.paddle_runtime.device`` and keep
upstream's version under another name, without the failing annotation.
"""

from ..patching import Edit, Patch

PATCH = Patch(
    name="0003_route_device_utils",
    file="tilelang/utils/device.py",
    reason="torch.device is not a type under Paddle's proxy; synchronize through the control plane",
    edits=(
        Edit(
            "def device_synchronize(device: int | torch.device | None = None) -> None:\n",
            "from tilelang.paddle_runtime.device import synchronize as device_synchronize  # noqa: E402,F401\n\n\n"
            "def _upstream_device_synchronize(device=None) -> None:\n",
        ),
        Edit(
            '    print("MPS backend is not available in this PyTorch build.")\n',
            "    pass  # Paddle has no MPS backend; nothing to report on every import.\n",
        ),
    ),
    checked_against=("0.1.15",),
    drop_when="upstream no longer evaluates torch types at import time",
)
