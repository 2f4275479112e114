"""Devices and streams as upstream's patched code asks for them, answered from the driver (:mod:`.driver`).

Every patched upstream site (adapters, utils/device.py, the profiler) calls
this module; it asks Paddle nothing itself. Device rules:

- The device of a call is the device of its tensor arguments, never a
  hard-coded 0: Paddle's "expected place" (``paddle.set_device``) is only used
  when the call has no tensor at all.
- The stream is Paddle's current stream *on that device*, which honors
  ``paddle.device.stream_guard``. Launchers switch to the device and restore
  the caller's through the kernel's runtime (:mod:`.launch`).
- On a CPU-only Paddle build nothing CUDA is ever called; the stream is 0.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from .driver import paddle_driver

_DRIVER = paddle_driver()
CUDA_BUILD: bool = _DRIVER.cuda


class DeviceSpec(NamedTuple):
    """A device kind with an optional index; ``index=None`` matches any index.

    Stands in for ``torch.device`` in upstream code: it has ``.type`` and
    ``.index`` and prints like one (``cuda``, ``cuda:1``, ``cpu``).
    """

    type: str
    index: int | None = None

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"


def expected_device(spec: str, index: int | None = None) -> DeviceSpec:
    """``torch.device(spec)`` for upstream's per-target expectations ("cuda", "cpu", ...)."""
    kind, _, idx = str(spec).partition(":")
    kind = "cuda" if kind == "gpu" else kind
    return DeviceSpec(kind, int(idx) if idx else index)


_CPU = DeviceSpec("cpu")
_GPUS: dict[int, DeviceSpec] = {}


def _spec(index: int) -> DeviceSpec:
    if index < 0:
        return _CPU
    spec = _GPUS.get(index)
    if spec is None:
        spec = _GPUS[index] = DeviceSpec("cuda", index)
    return spec


def device_of(obj) -> DeviceSpec:
    """The device of a tensor, a place, a ``paddle.device.Device``/str, an int or a DeviceSpec.

    On the call path (once per tensor argument): tensors are tested first and
    the result is a shared DeviceSpec, so no object is built per call.
    """
    driver = _DRIVER
    if isinstance(obj, driver.tensor_type):
        return _spec(driver.gpu_of(obj))
    if isinstance(obj, DeviceSpec):
        return obj
    if isinstance(obj, int):
        return _spec(obj)
    if isinstance(obj, driver.place_type):
        return _spec(driver.gpu_of_place(obj))
    if hasattr(obj, "place"):  # any other object that carries a place; the driver reads it
        return _spec(driver.gpu_of(obj))
    if obj is None:
        return current_device()
    return expected_device(str(obj))


def current_device() -> DeviceSpec:
    """Paddle's expected place (``paddle.set_device``), for calls with no tensor argument."""
    return _spec(_DRIVER.default_gpu())


def current_device_index() -> int:
    """Index of the current GPU (0 when the expected place is the CPU)."""
    return max(_DRIVER.default_gpu(), 0)


def raw_stream(index: int) -> int:
    """cudaStream_t (as int) of Paddle's current stream on GPU ``index``; 0 on CPU builds."""
    return _DRIVER.stream(index)


def stream_of(device) -> int:
    """Current raw stream for ``device`` (tensor, Device, DeviceSpec, int); 0 for the CPU."""
    spec = device_of(device)
    if spec.type != "cuda" or not CUDA_BUILD:
        return 0
    return _DRIVER.stream(spec.index if spec.index is not None else current_device_index())


def stream_functor(device=None) -> Callable[[], int]:
    """Thunk returning the current stream of ``device``, evaluated at call time.

    Replaces ``BaseKernelAdapter.get_current_stream_functor``: capture once per
    kernel, evaluate per call, so ``stream_guard`` is honored.
    """
    if not CUDA_BUILD:
        return lambda: 0
    spec = device_of(device) if device is not None else None
    if spec is not None and spec.type != "cuda":
        return lambda: 0
    if spec is None or spec.index is None:
        return lambda: _DRIVER.stream(current_device_index())
    index = spec.index
    return lambda: _DRIVER.stream(index)


def device_functor() -> Callable[[], DeviceSpec]:
    """Replaces ``BaseKernelAdapter.get_current_device_functor``."""
    return current_device


def synchronize(device=None) -> None:
    """Wait for all work on ``device`` (default: the current GPU). Errors on a CPU-only build."""
    if not CUDA_BUILD or _DRIVER.device_count() == 0:
        raise RuntimeError("device_synchronize: Paddle sees no CUDA device (CPU-only build or no GPU)")
    spec = device_of(device) if device is not None else current_device()
    if spec.type != "cuda":
        raise ValueError(f"device_synchronize only supports CUDA devices, got {device!r}")
    _DRIVER.synchronize(spec.index if spec.index is not None else current_device_index())
