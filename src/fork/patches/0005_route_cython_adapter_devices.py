"""Build the Cython adapter's expected buffer devices without ``torch.device``.

File: tilelang/jit/adapter/cython/adapter.py. ``_process_buffer_device`` calls
``torch.device("cuda"/"npu"/"cpu"/"mps")``, which is not callable under Paddle's
proxy. ``tilelang.paddle_runtime.device.expected_device`` returns a DeviceSpec
with the same ``.type``/``.index`` (index None = any GPU).
"""

from ..patching import Edit, Patch

PATCH = Patch(
    name="0005_route_cython_adapter_devices",
    file="tilelang/jit/adapter/cython/adapter.py",
    reason="torch.device() is not callable under Paddle's proxy",
    edits=(
        Edit("from tilelang.engine.param import KernelParam\n",
             "from tilelang.engine.param import KernelParam\nfrom tilelang.paddle_runtime.device import expected_device\n"),
        Edit('device = torch.device("', 'device = expected_device("', count=4),
    ),
    forwarded="not-needed",
    checked_against=("0.1.15",),
    drop_when="never",
)
