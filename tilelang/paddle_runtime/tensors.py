"""Tensor creation for kernel outputs and test inputs."""

from __future__ import annotations

import functools

import paddle

from .device import device_of


@functools.lru_cache(maxsize=64)
def _place(kind: str, index: int | None):
    if kind == "cuda":
        return paddle.CUDAPlace(index or 0)
    if kind == "cpu":
        return paddle.CPUPlace()
    raise ValueError(f"tilelang-paddle cannot allocate tensors on device {kind!r} (supported: cpu, cuda)")


def place_of(device):
    """A Paddle Place for a tensor/Device/DeviceSpec/str/int (cached per device)."""
    spec = device_of(device)
    return _place(spec.type, spec.index)


def empty(shape, dtype, device):
    """Uninitialised Paddle tensor of ``shape``/``dtype`` on ``device`` (kernel outputs)."""
    return paddle.empty(list(shape), dtype=dtype, device=place_of(device))
