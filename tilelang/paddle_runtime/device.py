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
  current CUDA device for the launch, only when it is not already (compiled
  kernels launch on the current device and Paddle allocates on it), and the
  previous device is made current again after the launch (Paddle and other
  libraries in the process read the current device, see :func:`_bind_select_gpu`).
- On a CPU-only Paddle build nothing CUDA is ever called (one of the stream
  accessors segfaults there); the stream is 0.
"""

from __future__ import annotations

import ctypes
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


def current_device() -> DeviceSpec:
    """Paddle's expected place (``paddle.set_device``), for calls with no tensor argument."""
    place = paddle.base.framework._current_expected_place_()
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


def _bind_select_gpu() -> Callable[[int], int]:
    """``select_gpu(index) -> previous``: make GPU ``index`` the calling thread's current CUDA device.

    Returns the index that was current before, or -1 when ``index`` already was
    (nothing to restore); :func:`restore_gpu` takes that value after the launch.

    Why switch: compiled kernels launch on the current device, and Paddle's own
    allocator follows it too (``paddle::experimental::empty`` takes its device
    context from ``GetDeviceContextByBackend`` -> ``TransToPhiPlace(backend)``
    -> ``phi::backends::gpu::GetCurrentDeviceId()``, paddle/phi/api/lib/
    kernel_dispatch.cc). Paddle sets the device before each of *its* ops from
    the expected place (``paddle.set_device``), so after a Paddle op on gpu:0
    the current device is 0 even when a kernel's tensors live on gpu:1.

    Why restore: Paddle reads the current device where no place is given:
    ``paddle.device.cuda.current_stream(None)`` -> ``core._get_current_stream(-1)``
    and ``extract_cuda_device_id(None)`` -> ``core.get_cuda_current_device_id()``
    (python/paddle/device/cuda/__init__.py; used by ``memory_allocated``,
    ``max_memory_allocated``, ``memory_reserved``), and the DLPack exchange-API
    allocator that other tvm-ffi libraries of the process use allocates on the
    current device. Paddle's own use of this pair restores the previous device
    in ``finally`` (python/paddle/incubate/multiprocessing/reductions.py,
    ``_reduce_lodtensor``), and so do we.

    How: Paddle's own ``core.get_cuda_current_device_id`` /
    ``core.set_cuda_current_device_id`` (pybind.cc, CUDA builds): cudaGetDevice/
    cudaSetDevice of the runtime Paddle is linked with. Kernel libraries built
    by nvcc link their own static copy of the CUDA runtime (nvcc's default
    ``-cudart static``: no libcudart in their DT_NEEDED, checked with readelf
    here); the switch still reaches them because cudaSetDevice makes the
    device's primary context current on the calling thread in the driver, and
    every runtime copy in the process uses the thread's current driver context
    (CUDA Runtime API, "Interactions with the CUDA Driver API"). Only where
    those names are missing do we call the preloaded libcudart instead (same
    effect, same reason). (Read from the sources named here; not run: no GPU
    with Paddle in this workplace.)
    """
    from paddle.base import core

    get_id = getattr(core, "get_cuda_current_device_id", None)
    set_id = getattr(core, "set_cuda_current_device_id", None)
    if get_id is not None and set_id is not None:
        return switcher(get_id, set_id)

    from .preload import last_result

    result = last_result()
    lib = result.handle if result is not None else None
    if lib is None:
        return lambda index: -1
    get_device, set_device = lib.cudaGetDevice, lib.cudaSetDevice
    current = ctypes.c_int(-1)
    current_ref = ctypes.byref(current)

    def cudart_get() -> int:
        return current.value if get_device(current_ref) == 0 else -1

    return switcher(cudart_get, set_device)


def switcher(get_index: Callable[[], int], set_index: Callable[[int], object]) -> Callable[[int], int]:
    """``select(index) -> previous``: ``set_index`` only when ``get_index()`` differs (one C call when it does not).

    ``previous`` is the index current before the switch, or -1 when there was no switch.
    """

    def select(index: int) -> int:
        previous = get_index()
        if previous == index:
            return -1
        set_index(index)
        return previous

    return select


_select_gpu: Callable[[int], int] | None = None


def select_gpu(index: int) -> int:
    """Make GPU ``index`` current on this thread if it is not already; return the previous index, or -1."""
    global _select_gpu
    if _select_gpu is None:
        _select_gpu = _bind_select_gpu()
    return _select_gpu(index)


def restore_gpu(previous: int) -> None:
    """After a launch: make ``previous`` (from :func:`select_gpu`) current again; -1 means nothing switched."""
    if previous >= 0:
        select_gpu(previous)


def select_device_of(spec: DeviceSpec) -> int:
    """Before a launch: make ``spec``'s GPU current; the previous index for :func:`restore_gpu`, or -1.

    A no-op (-1) for the CPU and on CPU-only builds.
    """
    if CUDA_BUILD and spec.type == "cuda":
        return select_gpu(spec.index if spec.index is not None else current_device_index())
    return -1


def kernel_initializer(lib) -> Callable[[int], None]:
    """``ensure(index)``: run the kernel library's ``init()`` once per GPU, with that GPU current.

    The Cython backend's ``init()`` calls ``cudaFuncSetAttribute(kernel,
    cudaFuncAttributeMaxDynamicSharedMemorySize, N)``, and upstream calls it once,
    when the library loads, on whatever device is current then. CUDA keeps that
    attribute per device (the runtime's per-device primary context), so a kernel
    using more than 48 KiB of dynamic shared memory fails to launch on any other
    GPU ("invalid argument"); bitsandbytes hit and fixed the same thing with a
    per-device cache (bitsandbytes PR #1952). ``init()`` only sets attributes, so
    running it again on the load device is harmless. Source-checked (the generated
    host code's ``init``), not run on two GPUs here.
    """
    done: set[int] = set()

    def ensure(index: int) -> None:
        if index not in done:
            if lib.init() != 0:
                raise RuntimeError(f"Kernel initialisation on GPU {index} failed: "
                                   f"{lib.get_last_error().decode('utf-8', 'replace')}")
            done.add(index)

    return ensure


def stream_functor(device=None) -> Callable[[], int]:
    """Thunk returning the current stream of ``device``, evaluated at call time.

    Replaces ``BaseKernelAdapter.get_current_stream_functor``: capture once per
    kernel, evaluate per call, so ``stream_guard`` is honored. It reads the
    stream only; the launch sites switch (and restore) the device themselves:
    the Cython launchers (patch 0006, ``_launcher.pyx``), nvrtc (patch 0012)
    and tvm_ffi (:mod:`.tvm_ffi_call`, which takes its stream from tvm-ffi).
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
