"""The NVRTC adapter on Paddle: torch names through the shim.

File: tilelang/jit/adapter/nvrtc/adapter.py. Same reasons as 0011 (output
allocation, devices); NVRTC additionally needs the ``cuda-python`` package,
which this fork does not install, so this path is only import-checked here.
Forwarded: not-needed. Checked against: 0.1.14, 0.1.15. Drop when: never.
"""

from ..patching import rebind_torch

PATCH = rebind_torch(
    name="0012_shim_torch_nvrtc_adapter",
    file="tilelang/jit/adapter/nvrtc/adapter.py",
    reason="output allocation and devices must come from Paddle",
    forwarded="not-needed",
    checked_against=("0.1.14", "0.1.15"),
    drop_when="never",
)
