"""The thread's current GPU around a kernel launch: the inputs' GPU before anything can switch it, the caller's after.

Every launcher (the fast path ``_launcher.pyx``, the patched Cython launcher
(patch 0006), tvm_ffi (:mod:`.tvm_ffi_call`) and nvrtc (patch 0012)) does, in
this order: ``previous = select_gpu(i)``, allocate the outputs, launch,
``restore_gpu(previous)`` in a ``finally`` (:func:`on_gpu` is the same as a
``with`` block).

Why the switch comes *before* the allocation: Paddle's generated eager
Python-C functions set the device of their place and never restore it
(``FUNCTION_SET_DEVICE_TEMPLATE`` in
``paddle/fluid/eager/auto_code_generator/generator/python_c_gen.py``:
``phi::backends::gpu::SetDeviceId(place.device)`` before the op, for an
explicit ``place`` argument or the expected place). ``_C_ops.empty(shape,
dtype, CUDAPlace(1))`` therefore leaves gpu:1 current; a switch after it saw no
difference to undo, and the caller was left on gpu:1.

Why switch at all: compiled kernels launch on the current device, and
Paddle's allocator behind ``paddle::experimental::empty`` (the tvm_ffi
exchange-API allocator, the custom op's outputs) takes its device context
from the current device (``GetDeviceContextByBackend`` ->
``phi::backends::gpu::GetCurrentDeviceId()``, paddle/phi/api/lib/kernel_dispatch.cc).
Why restore: Paddle reads the current device where no place is given
(``paddle.device.cuda.current_stream(None)`` -> ``core._get_current_stream(-1)``;
``extract_cuda_device_id(None)`` -> ``core.get_cuda_current_device_id()`` in
python/paddle/device/cuda/__init__.py), and so do other libraries in the
process; Paddle's own use of this pair restores in ``finally``
(``_reduce_lodtensor`` in python/paddle/incubate/multiprocessing/reductions.py).

How: Paddle's ``core.get_cuda_current_device_id`` /
``core.set_cuda_current_device_id`` (paddle/fluid/pybind/pybind.cc, CUDA
builds: cudaGetDevice/cudaSetDevice of Paddle's runtime). Kernel libraries
built by nvcc carry their own static CUDA runtime; the switch reaches them
because cudaSetDevice makes the device's primary context current on the
calling thread in the driver, which every runtime copy in the process uses
(CUDA Runtime API, "Interactions with the CUDA Driver API"). Only where
Paddle lacks those names is the preloaded libcudart called instead, with a
per-call ``c_int`` (the ctypes call releases the GIL); where neither exists, a
switch to another GPU raises instead of launching on the wrong one. Read from
the sources named here; not run: no GPU with Paddle in this workplace.
"""

from __future__ import annotations

import contextlib
import ctypes
from collections.abc import Callable

from .device import CUDA_BUILD, DeviceSpec, current_device_index


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


def _cudart_switcher(lib) -> Callable[[int], int]:
    """The switch through libcudart's own cudaGetDevice/cudaSetDevice (no state shared between threads)."""
    get_device, set_device = lib.cudaGetDevice, lib.cudaSetDevice

    def cudart_get() -> int:
        current = ctypes.c_int(-1)  # per call: the ctypes call releases the GIL
        return current.value if get_device(ctypes.byref(current)) == 0 else -1

    def cudart_set(index: int) -> None:
        rc = set_device(index)
        if rc != 0:
            raise RuntimeError(f"cudaSetDevice({index}) failed with CUDA error {rc}; the kernel was not launched")

    return switcher(cudart_get, cudart_set)


def _no_switcher(visible: int) -> Callable[[int], int]:
    """No way to switch: fine with one GPU; with several, a launch elsewhere would run on the wrong one."""

    def select(index: int) -> int:
        if visible > 1:
            raise RuntimeError(
                f"cannot make gpu:{index} current for this kernel: this Paddle build has no "
                "core.set_cuda_current_device_id and no libcudart was preloaded, and "
                f"{visible} GPUs are visible; set CUDA_VISIBLE_DEVICES to one GPU or install a CUDA build of "
                "Paddle >= 3.3")
        return -1

    return select


def bind_select_gpu(core=None, cudart=None, visible: int | None = None) -> Callable[[int], int]:
    """The switch from what this Paddle offers.

    The arguments let tests pass each shape: ``core`` (Paddle's ``base.core``), ``cudart`` (a loaded
    libcudart; None: the preloaded one; False: none) and ``visible`` (GPUs Paddle sees).
    """
    if core is None:
        from paddle.base import core
    get_id = getattr(core, "get_cuda_current_device_id", None)
    set_id = getattr(core, "set_cuda_current_device_id", None)
    if get_id is not None and set_id is not None:
        return switcher(get_id, set_id)
    if cudart is None:
        from .preload import last_result

        result = last_result()
        cudart = result.handle if result is not None else None
    if cudart:
        return _cudart_switcher(cudart)
    if visible is None:
        import paddle

        visible = paddle.device.cuda.device_count() if CUDA_BUILD else 0
    return _no_switcher(visible)


_select_gpu: Callable[[int], int] | None = None


def select_gpu(index: int) -> int:
    """Make GPU ``index`` current on this thread if it is not already; return the previous index, or -1."""
    global _select_gpu
    if _select_gpu is None:
        _select_gpu = bind_select_gpu()
    return _select_gpu(index)


def restore_gpu(previous: int) -> None:
    """After a launch: make ``previous`` (from :func:`select_gpu`) current again; -1 means nothing switched."""
    if previous >= 0:
        select_gpu(previous)


def select_device_of(spec: DeviceSpec) -> int:
    """Before allocating and launching: make ``spec``'s GPU current; the previous index, or -1.

    A no-op (-1) for the CPU and on CPU-only builds (Paddle's CUDA calls crash there).
    """
    if CUDA_BUILD and spec.type == "cuda":
        return select_gpu(spec.index if spec.index is not None else current_device_index())
    return -1


@contextlib.contextmanager
def on_gpu(spec: DeviceSpec):
    """``with on_gpu(spec):`` allocate and launch with ``spec``'s GPU current; the caller's GPU comes back after."""
    previous = select_device_of(spec)
    try:
        yield
    finally:
        restore_gpu(previous)


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
