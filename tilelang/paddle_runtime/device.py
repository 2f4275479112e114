"""Current device and current stream: the one module that asks Paddle about them.

Every patched upstream site (adapters, the Cython launcher, utils/device.py)
calls this module, never Paddle directly. Paddle's accessors are bound once,
on first use, so a kernel call pays one C call for its stream.

Device rules:

- The device of a call is the device of its tensor arguments
  (``Tensor.place``), never a hard-coded 0: Paddle's "expected place"
  (``paddle.set_device``) is only used when the call has no tensor at all.
- The stream is Paddle's current stream *on that device*, which honors
  ``paddle.device.stream_guard``; that device is also made the thread's
  current CUDA device for the allocation and the launch, and the caller's
  device made current again after them (:mod:`.gpu_guard`, which holds the
  switch and the per-GPU ``init`` bookkeeping).
- On a CPU-only Paddle build nothing CUDA is ever called (one of the stream
  accessors segfaults there); the stream is 0.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import paddle

CUDA_BUILD: bool = bool(paddle.is_compiled_with_cuda())


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
_Tensor = paddle.Tensor
_Place = paddle.base.libpaddle.Place


def _gpu(index: int) -> DeviceSpec:
    spec = _GPUS.get(index)
    if spec is None:
        spec = _GPUS[index] = DeviceSpec("cuda", index)
    return spec


def device_of(obj) -> DeviceSpec:
    """The device of a Paddle tensor, a ``paddle.device.Device``/str, an int or a DeviceSpec.

    On the call path (once per tensor argument): tensors are tested first and
    the result is a shared DeviceSpec, so no object is built per call.
    """
    if isinstance(obj, _Tensor):
        place = obj.place
        # Place.gpu_device_id() is 0 for CPU tensors: ask is_gpu_place() first.
        return _gpu(place.gpu_device_id()) if place.is_gpu_place() else _CPU
    if isinstance(obj, DeviceSpec):
        return obj
    if isinstance(obj, int):
        return _gpu(obj)
    if isinstance(obj, _Place):  # CUDAPlace/CPUPlace subclass Place
        return _gpu(obj.gpu_device_id()) if obj.is_gpu_place() else _CPU
    place = getattr(obj, "place", None)
    if place is not None:
        return _gpu(place.gpu_device_id()) if place.is_gpu_place() else _CPU
    if obj is None:
        return current_device()
    return expected_device(str(obj))


_expected_place = None


def current_device() -> DeviceSpec:
    """Paddle's expected place (``paddle.set_device``), for calls with no tensor argument."""
    global _expected_place
    if _expected_place is None:
        from .seams import expected_place

        _expected_place = expected_place(paddle)
    place = _expected_place()
    if CUDA_BUILD and place.is_gpu_place():
        return _gpu(place.gpu_device_id())
    return _CPU


def current_device_index() -> int:
    """Index of the current GPU (0 when the expected place is the CPU)."""
    return current_device().index or 0


def _bind_raw_stream() -> Callable[[int], int]:
    if not CUDA_BUILD:
        return lambda index: 0
    try:
        # Paddle >= 3.3 (PR #75153): returns the cudaStream_t of the current stream
        # of GPU `index` as an int, one pybind call. Segfaults on CPU builds.
        from paddle.base.libpaddle import _get_current_raw_stream

        return _get_current_raw_stream
    except ImportError:
        from paddle.base import core

        # Older builds: core._get_current_stream(idx) -> CUDAStream with .cuda_stream.
        return lambda index: core._get_current_stream(index).cuda_stream


_raw_stream: Callable[[int], int] | None = None


def raw_stream(index: int) -> int:
    """cudaStream_t (as int) of Paddle's current stream on GPU ``index``; 0 on CPU builds."""
    global _raw_stream
    if _raw_stream is None:
        _raw_stream = _bind_raw_stream()
    return _raw_stream(index)


def stream_of(device) -> int:
    """Current raw stream for ``device`` (tensor, Device, DeviceSpec, int); 0 for the CPU."""
    spec = device_of(device)
    if spec.type != "cuda" or not CUDA_BUILD:
        return 0
    return raw_stream(spec.index if spec.index is not None else current_device_index())


def stream_functor(device=None) -> Callable[[], int]:
    """Thunk returning the current stream of ``device``, evaluated at call time.

    Replaces ``BaseKernelAdapter.get_current_stream_functor``: capture once per
    kernel, evaluate per call, so ``stream_guard`` is honored. It reads the
    stream only; the launch sites switch (and restore) the device themselves
    through :mod:`.gpu_guard`.
    """
    if not CUDA_BUILD:
        return lambda: 0
    if device is None:
        return lambda: raw_stream(current_device_index())
    spec = device_of(device)
    if spec.type != "cuda":
        return lambda: 0
    if spec.index is None:
        return lambda: raw_stream(current_device_index())
    index = spec.index
    return lambda: raw_stream(index)


def device_functor() -> Callable[[], DeviceSpec]:
    """Replaces ``BaseKernelAdapter.get_current_device_functor``."""
    return current_device


def synchronize(device=None) -> None:
    """Wait for all work on ``device`` (default: the current GPU). Errors on a CPU-only build."""
    if not CUDA_BUILD or paddle.device.cuda.device_count() == 0:
        raise RuntimeError("device_synchronize: Paddle sees no CUDA device (CPU-only build or no GPU)")
    spec = device_of(device) if device is not None else current_device()
    if spec.type != "cuda":
        raise ValueError(f"device_synchronize only supports CUDA devices, got {device!r}")
    paddle.device.synchronize(f"gpu:{spec.index if spec.index is not None else current_device_index()}")
