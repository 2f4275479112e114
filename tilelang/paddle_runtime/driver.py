"""The Paddle driver: the one place the runtime asks Paddle about devices, streams, places and memory.

Everything the launch runtime (:mod:`.launch`) needs from a framework is a
method of a driver object; :class:`PaddleDriver` is Paddle's, bound once, and
:func:`paddle_driver` returns the process's instance. The runtime takes a
driver as a parameter, so a GPU run without Paddle (this workplace has no
Paddle GPU build) can pass a torch-backed one from outside the package and run
the whole launch protocol; only the calls in this module stay verified by
reading Paddle's source. :mod:`.seams` detects the shapes of the Paddle APIs
read here; :mod:`.bootstrap` imports Paddle and sets up its torch proxy.

The interface (a driver is any object with these; ``index`` is a GPU ordinal):

``tensor_type``
    The framework's tensor class (the launcher's ``isinstance`` check).
``cuda``
    Whether the framework can run CUDA work at all (False: nothing CUDA is called).
``exchange_api()``
    Address of the framework's DLPack ``DLPackExchangeAPI`` struct, or 0.
``device_count()``
    GPUs the framework sees.
``gpu_of(tensor)``, ``gpu_of_place(place)``, ``place_type``, ``device_type``
    The tensor's (the place's) GPU index, or -1 for the CPU; the framework's place and device classes.
``default_gpu()``
    The GPU a call without tensor arguments runs on, or -1 when that is the CPU.
``current_gpu()`` / ``set_gpu(index)``
    The calling thread's current CUDA device, and switching it.
``stream(index)``
    The raw ``cudaStream_t`` (an int) of the framework's current stream on GPU ``index``.
``stream_from_exchange_api`` (optional, default False)
    True where the exchange API's ``current_work_stream`` returns that same stream; the fast
    launcher then reads it in C instead of calling ``stream``.
``place(index)``, ``place_of(tensor)``
    What ``empty`` allocates on: GPU ``index``, or the CPU for -1; a tensor's place.
``empty(shape, dtype, place)``
    An uninitialised tensor; ``allocate(shape, dtype, place)`` the same for
    every framework dtype (through a same-width view where ``empty`` lacks one).
``randint(low, high, shape, place)``, ``uniform(shape, low, high, place)``, ``normal(shape, mean, std, place)``
    Random draws on ``place`` (int64; float32) from the framework's seeded generator (test-input supply).
``zeros(shape, dtype, place)``, ``copy(tensor)``
    For autograd: a zero gradient; a contiguous copy of a strided gradient on its own place.
``dtype(name)``
    ``(allocation dtype, view dtype or None)`` for a TileLang dtype name: the
    framework's dtype, or a same-width one to allocate and view when the
    framework cannot allocate that dtype directly. Raises TypeError for a dtype
    it lacks.
``synchronize(index)``, ``event()``, ``cuda_graph(index)``
    For the profiler: wait for GPU ``index``; a timing event (``record()``,
    ``elapsed_time(other)``); a CUDA graph capturing on GPU ``index``.

Beyond that interface, Paddle's driver also answers what the public helpers in
``tilelang.paddle`` ask (no launch needs them, so a stand-in driver has none):
``from_dlpack(obj)`` (a Paddle tensor viewing a ``__dlpack__`` object),
``has_operator(name)`` (whether Paddle already has an operator of that name) and
``cuda_version`` (the CUDA release the build was made with, None on CPU builds; for ``tilelang-paddle doctor``).

And what ``tilelang-paddle selftest``'s checks (:mod:`.selftest`) ask, which a
stand-in driver answers too: ``from_numpy(array, index)``, ``to_numpy(tensor)``,
``data_ptr(tensor)``, ``new_stream(index)``, ``raw_stream(stream)``,
``stream_guard(stream)`` (a context making ``stream`` current on its GPU),
``gpu_facts(index)`` and ``RELIES_ON``: per topic, the framework API the
launch runtime relies on, which a failing check prints.
"""

from __future__ import annotations

import ctypes
import functools

import paddle
from paddle import _C_ops
from paddle.base import core

from . import seams as _seams


def build_cuda() -> str | None:
    """The CUDA release this Paddle was built with (``"13.0"``), None for a CPU-only build.

    A function of the module, not of the driver: :mod:`.bootstrap` needs it to preload
    libcudart, before a driver can be bound (:func:`bind_switch` may use the preloaded library).
    """
    # paddle.is_compiled_with_cuda (python/paddle/device/__init__.py); paddle.version.cuda()
    # (python/paddle/version/__init__.py, written at build time) is the string "False" on CPU builds.
    return str(paddle.version.cuda()) if paddle.is_compiled_with_cuda() else None


class PaddleDriver:
    """Paddle's answers to the driver interface (see module docstring), each citing the Paddle API it uses."""

    name = "paddle"

    def __init__(self):
        self.tensor_type = paddle.Tensor
        # False on CPU builds, where several CUDA accessors below segfault instead of raising, so none is bound.
        self.cuda_version = build_cuda()
        self.cuda = self.cuda_version is not None
        self._cpu = paddle.CPUPlace()
        self._expected_place = _seams.expected_place(paddle)
        self.empty = _C_ops.empty  # paddle.empty ends in _C_ops.empty(shape, dtype, place) after ~7 us of checks
        self.stream = self._bind_stream() if self.cuda else (lambda index: 0)
        # The exchange API's current_work_stream is the same stream, read in C by the fast launcher: Paddle's
        # paddle::pybind::DLPackCurrentWorkStream returns platform::get_current_stream(device_id)->raw_stream(),
        # the call _get_current_raw_stream makes (paddle/fluid/pybind/cuda_streams_py.cc).
        self.stream_from_exchange_api = self.cuda
        self.current_gpu, self.set_gpu = bind_switch(core) if self.cuda else (lambda: -1, self._no_gpu)
        # Allocate the same-width signed type and view it: Paddle 3.3 CPU has no `empty` kernel for
        # uint32/uint64, and `paddle.empty(dtype=paddle.uint16)` silently returns a bfloat16 tensor.
        self._view_alloc = {paddle.uint16: paddle.int16, paddle.uint32: paddle.int32, paddle.uint64: paddle.int64}

    # -- tensors and places
    def exchange_api(self) -> int:
        # paddle.Tensor.__dlpack_c_exchange_api__ (Paddle >= 3.3; capsule or int by version, see seams).
        return _seams.exchange_api_pointer(paddle.Tensor) or 0

    @staticmethod
    def gpu_of(tensor) -> int:
        # Tensor.place (python/paddle/base/dygraph/tensor_patch_methods.py); Place.gpu_device_id() is 0 for CPU
        # places, so is_gpu_place() is asked first (paddle/fluid/pybind/place.cc).
        place = tensor.place
        return place.gpu_device_id() if place.is_gpu_place() else -1

    #: The base class of Paddle's places (CPUPlace, CUDAPlace and Place itself).
    place_type = paddle.base.libpaddle.Place
    #: paddle.device.Device (python/paddle/device/__init__.py), what torch.device maps to under the proxy.
    device_type = paddle.device.Device

    @staticmethod
    def gpu_of_place(place) -> int:
        return place.gpu_device_id() if place.is_gpu_place() else -1

    def default_gpu(self) -> int:
        # The expected place, what paddle.set_device sets (framework._current_expected_place_, see seams).
        place = self._expected_place()
        return place.gpu_device_id() if self.cuda and place.is_gpu_place() else -1

    @functools.lru_cache(maxsize=64)  # noqa: B019 - one driver per process
    def place(self, index: int):
        return paddle.CUDAPlace(index) if index >= 0 else self._cpu

    def allocate(self, shape, dtype, place):
        """``empty`` for any Paddle dtype, the unsigned ones through their same-width signed twin."""
        alloc = self._view_alloc.get(dtype)
        if alloc is not None:
            return self.empty(shape, alloc, place).view(dtype)
        return self.empty(shape, dtype, place)

    @staticmethod
    def place_of(tensor):
        # Tensor.place (python/paddle/base/dygraph/tensor_patch_methods.py).
        return tensor.place

    # _C_ops.randint/uniform/gaussian with an explicit place (paddle/phi/ops/yaml/ops.yaml): the dtypes every
    # Paddle build registers these kernels for are int64 and float32; seed 0 means Paddle's global generator
    # for the place, so paddle.seed makes the draws reproducible.
    @staticmethod
    def randint(low, high, shape, place):
        return _C_ops.randint(low, high, shape, paddle.int64, place)

    @staticmethod
    def uniform(shape, low, high, place):
        return _C_ops.uniform(shape, paddle.float32, low, high, 0, place)

    @staticmethod
    def normal(shape, mean, std, place):
        return _C_ops.gaussian(shape, mean, std, 0, paddle.float32, place)

    @staticmethod
    def copy(tensor):
        # paddle.assign(x) (python/paddle/tensor/creation.py assign): _C_ops.assign, a new contiguous tensor
        # on x's place.
        return paddle.assign(tensor)

    @staticmethod
    def zeros(shape, dtype, place):
        # paddle.zeros(shape, dtype, device=place) (python/paddle/tensor/creation.py).
        return paddle.zeros(shape, dtype=dtype, device=place)

    def dtype(self, name: str):
        from .dtypes import to_paddle

        pd = to_paddle(name)
        alloc = self._view_alloc.get(pd)
        return (alloc, pd) if alloc is not None else (pd, None)

    # -- devices and streams (CUDA builds only)
    def device_count(self) -> int:
        # paddle.device.cuda.device_count (python/paddle/device/cuda/__init__.py): 0 on CPU builds.
        return paddle.device.cuda.device_count() if self.cuda else 0

    @staticmethod
    def _bind_stream():
        try:
            # Paddle >= 3.3 (PR #75153): the cudaStream_t of GPU `index`'s current stream as an int, one pybind call
            # (paddle/fluid/pybind/cuda_streams_py.cc). It follows paddle.device.stream_guard / set_stream, which
            # replace that device context's stream (GPUContext::SetCUDAStream).
            from paddle.base.libpaddle import _get_current_raw_stream

            return _get_current_raw_stream
        except ImportError:
            # Older builds: core._get_current_stream(idx) -> CUDAStream with .cuda_stream.
            return lambda index: core._get_current_stream(index).cuda_stream

    @staticmethod
    def _no_gpu(index: int) -> None:
        raise RuntimeError(f"cannot make gpu:{index} current: this Paddle is a CPU-only build (install "
                           "paddlepaddle-gpu>=3.3)")

    # -- profiler stand-ins
    def synchronize(self, index: int) -> None:
        # paddle.device.synchronize("gpu:i") (python/paddle/device/__init__.py).
        paddle.device.synchronize(f"gpu:{index}")

    @staticmethod
    def event():
        # paddle.device.Event(enable_timing=True): record(), elapsed_time(end) in ms (python/paddle/device/__init__.py).
        return paddle.device.Event(enable_timing=True)

    def cuda_graph(self, index: int):
        # paddle.device.cuda.graphs.CUDAGraph(place, mode): capture_begin/capture_end/replay.
        from paddle.device.cuda.graphs import CUDAGraph

        return CUDAGraph(place=paddle.CUDAPlace(index), mode="thread_local")

    def cuda_graphs_supported(self) -> bool:
        from paddle.device.cuda import graphs

        return self.cuda and graphs.is_cuda_graph_supported() and self.device_count() > 0

    # -- for tilelang-paddle selftest (not part of the launch interface)
    #: What a failing selftest check names: the Paddle API behind each step it exercised.
    RELIES_ON = {
        "stream": "paddle.base.libpaddle._get_current_raw_stream(index), the stream paddle.device.stream_guard "
                  "sets (paddle/fluid/pybind/cuda_streams_py.cc; python/paddle/device/__init__.py stream_guard); "
                  "the fast launcher reads the same stream through the exchange API's current_work_stream "
                  "(paddle::pybind::DLPackCurrentWorkStream -> platform::get_current_stream(id)->raw_stream())",
        "switch": "core.get_cuda_current_device_id / core.set_cuda_current_device_id (paddle/fluid/pybind/pybind.cc)",
        "allocate": "_C_ops.empty(shape, dtype, CUDAPlace(index)) and, for tvm_ffi outputs, "
                    "paddle::experimental::empty on the current device (paddle/phi/api/lib/kernel_dispatch.cc)",
        "allocate_c": "the exchange API's managed_tensor_allocator, paddle::pybind::DLPackManagedTensorAllocator "
                      "(-> paddle::framework::DLDeviceToPlace -> paddle::experimental::empty, whose device context "
                      "is the current device's: paddle/phi/api/lib/kernel_dispatch.cc GetDeviceContextByBackend), "
                      "and managed_tensor_to_py_object_no_sync, paddle::pybind::DLPackManagedTensorToPyObjectNoSync; "
                      "the fast launcher's outputs (symbols of the 3.3.1 wheel's libpaddle.so)",
        "graph": "paddle.device.cuda.graphs.CUDAGraph(place, mode='thread_local'), capturing on the current stream "
                 "(paddle/fluid/platform/cuda_graph_with_memory_pool.cc BeginCUDAGraphCapture)",
        "events": "paddle.device.Event(enable_timing=True).record()/elapsed_time (python/paddle/device/__init__.py)",
        "custom_op": "paddle::Tensor::stream(), phi::backends::gpu::GetCurrentDeviceId/SetDeviceId "
                     "(paddle/phi/api/lib/tensor.cc; paddle/phi/backends/gpu/gpu_info.h)",
        "exchange_api": "paddle.Tensor.__dlpack_c_exchange_api__ (Paddle >= 3.3), read by the fast launcher and "
                        "tvm_ffi",
    }

    def from_numpy(self, array, index: int):
        # paddle.to_tensor(data, place=...) copies the array onto the place (python/paddle/tensor/creation.py).
        return paddle.to_tensor(array, place=self.place(index))

    @staticmethod
    def to_numpy(tensor):
        return tensor.numpy()

    @staticmethod
    def data_ptr(tensor) -> int:
        # Tensor.data_ptr(), a C method of paddle.Tensor (its docstring in the 3.3.1 wheel: the address of the
        # first element).
        return tensor.data_ptr()

    @staticmethod
    def new_stream(index: int):
        # paddle.device.Stream(device) (python/paddle/device/__init__.py): a new stream on that GPU.
        return paddle.device.Stream(device=paddle.CUDAPlace(index))

    @staticmethod
    def raw_stream(stream) -> int:
        # Stream.stream_base is a core.CUDAStream; .cuda_stream its cudaStream_t as an int
        # (paddle/fluid/pybind/cuda_streams_py.cc).
        return stream.stream_base.cuda_stream

    @staticmethod
    def stream_guard(stream):
        # paddle.device.stream_guard(stream): set_stream on entry, the previous stream back on exit.
        return paddle.device.stream_guard(stream)

    @staticmethod
    def gpu_facts(index: int) -> dict:
        # paddle.device.cuda.get_device_name / get_device_capability (python/paddle/device/cuda/__init__.py).
        major, minor = paddle.device.cuda.get_device_capability(index)
        return {"index": index, "name": paddle.device.cuda.get_device_name(index), "capability": [major, minor]}

    # -- for tilelang.paddle's helpers (not part of the launch interface)
    @staticmethod
    def from_dlpack(obj):
        # paddle.utils.dlpack.from_dlpack (python/paddle/utils/dlpack.py): takes __dlpack__ objects, no copy.
        return paddle.utils.dlpack.from_dlpack(obj)

    @staticmethod
    def has_operator(name: str) -> bool:
        # core.get_all_op_names() lists the registered (fluid and phi) operators (paddle/fluid/pybind/pybind.cc);
        # _C_ops holds the eager functions of the phi ones, so a name found in either would be shadowed.
        return name in core.get_all_op_names() or hasattr(_C_ops, name)


def bind_switch(core, cudart=None, visible: int | None = None):
    """``(current_gpu, set_gpu)`` from what this Paddle offers (the arguments let tests pass each shape).

    Paddle's ``core.get_cuda_current_device_id`` / ``set_cuda_current_device_id``
    (paddle/fluid/pybind/pybind.cc, CUDA builds: cudaGetDevice/cudaSetDevice of Paddle's runtime).
    Kernel libraries carry their own static CUDA runtime; the switch reaches them because
    cudaSetDevice makes the device's primary context current on the calling thread in the driver,
    which every runtime copy in the process shares (CUDA Runtime API, "Interactions with the CUDA
    Driver API"). Where Paddle lacks those names, the preloaded libcudart's own pair (``cudart``:
    None for the preloaded one, False for none); where neither exists, a switch to another GPU
    raises when several are visible (``visible``: None asks Paddle).
    """
    get_id = getattr(core, "get_cuda_current_device_id", None)
    set_id = getattr(core, "set_cuda_current_device_id", None)
    if get_id is not None and set_id is not None:
        return get_id, set_id
    if cudart is None:
        from .preload import last_result

        result = last_result()
        cudart = result.handle if result is not None else None
    if cudart:
        return _cudart_switch(cudart)
    if visible is None:
        visible = paddle.device.cuda.device_count() if paddle.is_compiled_with_cuda() else 0
    return _no_switch(visible)


def _cudart_switch(lib):
    """libcudart's own cudaGetDevice/cudaSetDevice (no state shared between threads)."""
    get_device, set_device = lib.cudaGetDevice, lib.cudaSetDevice

    def current() -> int:
        value = ctypes.c_int(-1)  # per call: the ctypes call releases the GIL
        return value.value if get_device(ctypes.byref(value)) == 0 else -1

    def switch(index: int) -> None:
        rc = set_device(index)
        if rc != 0:
            raise RuntimeError(f"cudaSetDevice({index}) failed with CUDA error {rc}; the kernel was not launched")

    return current, switch


def _no_switch(visible: int):
    """No way to switch: fine with one GPU; with several, a launch elsewhere would run on the wrong one."""

    def switch(index: int) -> None:
        if visible > 1:
            raise RuntimeError(
                f"cannot make gpu:{index} current for this kernel: this Paddle build has no "
                "core.set_cuda_current_device_id and no libcudart was preloaded, and "
                f"{visible} GPUs are visible; set CUDA_VISIBLE_DEVICES to one GPU or install a CUDA build of "
                "Paddle >= 3.3")

    # The current device is unknown: -2 never equals a GPU index, so every launch asks for a switch.
    return (lambda: -2), switch


_DRIVER: PaddleDriver | None = None


def paddle_driver() -> PaddleDriver:
    """The process's Paddle driver (bound on first use, after ``import tilelang`` set Paddle up)."""
    global _DRIVER
    if _DRIVER is None:
        _DRIVER = PaddleDriver()
    return _DRIVER
