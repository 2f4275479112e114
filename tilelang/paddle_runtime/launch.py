"""One launch runtime per compiled kernel: the launch protocol, written once.

:class:`KernelRuntime` is built once per kernel from its
:mod:`.signature`, its library and a driver (:mod:`.driver`; Paddle's by
default, any object with the same methods otherwise: a GPU run without Paddle
passes a torch-backed one). Every launcher follows its protocol: the fast
path (``_launcher.Launcher`` reads the runtime once when it is built),
upstream's Cython launcher (patch 0006), tvm_ffi (:mod:`.tvm_ffi_call`) and
nvrtc (patch 0012). ``tilelang.paddle.custom_op``'s C++ follows the same steps
(``op_runtime.h``), with the zero-size hint rendered from this module.

The protocol, in this order:

1. **Device.** The GPU of the tensor arguments (all on one; the launchers
   check), or for a call without tensors the driver's ``default_gpu()``
   (Paddle: the expected place, ``paddle.set_device``), never a fixed 0.
2. **Switch** to that GPU (:meth:`KernelRuntime.select`) *before* the outputs
   are allocated. Paddle's generated eager Python-C functions set the device
   of their place and never restore it (``FUNCTION_SET_DEVICE_TEMPLATE`` in
   ``paddle/fluid/eager/auto_code_generator/generator/python_c_gen.py``:
   ``phi::backends::gpu::SetDeviceId(place.device)``), so
   ``_C_ops.empty(shape, dtype, CUDAPlace(1))`` leaves gpu:1 current; a switch
   after it would see nothing to undo. Compiled kernels launch on the current
   device, and Paddle's allocator behind ``paddle::experimental::empty`` (the
   tvm_ffi allocator, custom-op outputs) takes its device context from it
   (``GetDeviceContextByBackend`` -> ``phi::backends::gpu::GetCurrentDeviceId()``,
   paddle/phi/api/lib/kernel_dispatch.cc).
3. **Allocate** the outputs on that GPU, in ``out_idx`` order (the order every
   launcher returns them in).
4. **Initialise** the kernel library on that GPU once (:class:`InitOnce`): the
   Cython backend's ``init()`` sets ``cudaFuncAttributeMaxDynamicSharedMemorySize``,
   which CUDA keeps per device; upstream runs it once, on the device current
   when the library loads, so a kernel with more than 48 KiB of dynamic shared
   memory failed on every other GPU ("invalid argument"; bitsandbytes PR #1952
   fixed the same with a per-device record).
5. **Stream**: the driver's current stream on that GPU (Paddle's honours
   ``paddle.device.stream_guard``).
6. **Call**, then 7. **restore** the caller's GPU in ``finally``: Paddle reads
   the current device where no place is given
   (``paddle.device.cuda.current_stream(None)``; ``extract_cuda_device_id(None)``
   in python/paddle/device/cuda/__init__.py), and Paddle's own use of the pair
   restores in ``finally`` (``_reduce_lodtensor`` in
   python/paddle/incubate/multiprocessing/reductions.py).
8. **Errors**: the library's ``get_last_error()`` text, and why a zero-size
   tensor makes a CUDA launch fail (:data:`ZERO_SIZE_HINT`).

Steps 2, 4 and 5 run for CUDA kernels on a driver with CUDA only; CPU kernels
allocate on the CPU and call. The fast launcher does the same with fewer calls
into Python: steps 2 and 7 not at all when one GPU is visible
(:attr:`KernelRuntime.sole_gpu`), step 4 once per GPU by a bit of its own, and
step 5 through the exchange API where the driver says that is its stream
(:attr:`KernelRuntime.stream_from_exchange_api`). This module imports no
framework: everything framework-specific comes from the driver.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools

from . import arguments as _arguments

#: Why a CUDA launch with a zero-size tensor fails, and what to do (the custom op renders the same text).
ZERO_SIZE_HINT = ("a zero-size tensor was passed: a grid computed from it has no blocks, which CUDA refuses to "
                  "launch; skip the call for empty inputs, or give the kernel at least one block")

_DL_CPU, _DL_CUDA = 1, 2


class InitOnce:
    """``ensure(index)``: run the kernel library's ``init()`` once per GPU, with that GPU current (protocol step 4).

    ``init()`` only sets attributes, so running it again on the GPU it ran on at load is harmless.
    """

    __slots__ = ("_init", "_error_text", "_done")

    def __init__(self, init, error_text):
        self._init, self._error_text, self._done = init, error_text, set()

    def ensure(self, index: int) -> None:
        if index not in self._done:
            if self._init() != 0:
                raise RuntimeError(f"Kernel initialisation on GPU {index} failed: {self._error_text()}")
            self._done.add(index)


class KernelRuntime:
    """The launch protocol of one compiled kernel on one driver (see module docstring).

    Parameters
    ----------
    signature : signature.KernelSignature
    lib : ctypes.CDLL or None
        The kernel library (its ``call``, ``init`` and ``get_last_error``); None for backends without one
        (tvm_ffi, nvrtc), which then use only the device steps.
    driver : driver.PaddleDriver or an object with the same methods
    """

    def __init__(self, signature, lib, driver):
        self.signature, self.lib, self.driver = signature, lib, driver
        self.tensor_type = driver.tensor_type
        #: The GPU steps (switch, init, stream) apply: a CUDA kernel on a driver that runs CUDA.
        self.cuda = bool(signature.cuda and driver.cuda)
        self.device_type = _DL_CUDA if signature.cuda else _DL_CPU
        self.init_once = InitOnce(lib.init, self.error_text) if self.cuda and lib is not None else None
        self.stream = driver.stream if self.cuda else _no_stream
        self.empty = driver.empty
        self.mismatch = functools.partial(_arguments.symbol_mismatch, signature)
        self.too_large = functools.partial(_arguments.size_too_large, signature)
        #: The driver's pair for steps 2 and 7 (None off the GPU path); ``select``/``restore`` use them.
        self.current_gpu, self.set_gpu = (driver.current_gpu, driver.set_gpu) if self.cuda else (None, None)
        #: One GPU visible: it is every thread's current device, so a launch on it has nothing to switch (the
        #: fast launcher then skips steps 2 and 7; the count is fixed once CUDA is initialised).
        self.sole_gpu = self.cuda and driver.device_count() == 1
        #: Step 5 may read the stream from the DLPack exchange API's ``current_work_stream`` (in C, the fast
        #: launcher) where the driver says that is the stream its ``stream`` returns.
        self.stream_from_exchange_api = bool(getattr(driver, "stream_from_exchange_api", False))
        self._cpu_place = None if signature.cuda else driver.place(-1)

    # ---------------------------------------------------------------- 1. device
    def gpu_of(self, args) -> int:
        """The GPU a call with these arguments runs on: the first tensor's, else the default; -1 off the GPU path."""
        if not self.cuda:
            return -1
        tensor_type = self.tensor_type
        for value in args:
            if isinstance(value, tensor_type):
                index = self.driver.gpu_of(value)
                if index >= 0:
                    return index
                break
        return self.default_gpu()

    def default_gpu(self) -> int:
        """The GPU of a call without tensor arguments: the driver's default, or GPU 0 when that is the CPU."""
        return max(self.driver.default_gpu(), 0) if self.cuda else 0

    # ---------------------------------------------------------------- 2./7. switch and restore
    def select(self, index: int) -> int:
        """Make GPU ``index`` current (one driver call when it already is); the previous GPU, or -1: nothing to undo."""
        if index < 0 or self.current_gpu is None:
            return -1
        previous = self.current_gpu()
        if previous == index:
            return -1
        self.set_gpu(index)
        return previous

    def restore(self, previous: int) -> None:
        if previous >= 0:
            self.set_gpu(previous)

    @contextlib.contextmanager
    def on(self, index: int):
        """``with runtime.on(index):`` steps 2 to 7 of a launcher that allocates and calls inside the block."""
        previous = self.select(index)
        try:
            yield
        finally:
            self.restore(previous)

    # ---------------------------------------------------------------- 3. allocate
    def place_for(self, index: int):
        """Where the outputs of a call on GPU ``index`` go (the CPU for a CPU kernel)."""
        return self._cpu_place if self._cpu_place is not None else self.driver.place(index)

    def allocate(self, shape, dtype, index: int):
        """An output of framework dtype ``dtype`` on GPU ``index`` (or the CPU for a CPU kernel)."""
        return self.driver.allocate(list(shape), dtype, self.place_for(index))

    # ---------------------------------------------------------------- 4. init
    def ensure_init(self, index: int) -> None:
        if self.init_once is not None and index >= 0:
            self.init_once.ensure(index)

    # ---------------------------------------------------------------- 8. errors
    def error_text(self) -> str:
        return self.lib.get_last_error().decode("utf-8", "replace")

    def launch_failed(self, zero_size: bool) -> RuntimeError:
        hint = f" ({ZERO_SIZE_HINT})" if zero_size and self.signature.cuda else ""
        return RuntimeError(f"Kernel call failed: {self.error_text()}{hint}")

    def launch_failed_for(self, tensors) -> RuntimeError:
        """:meth:`launch_failed` for a call whose tensors are known (upstream's launcher)."""
        tensor_type = self.tensor_type
        zero = any(isinstance(t, tensor_type) and 0 in list(t.shape) for t in tensors)
        return self.launch_failed(zero)

    # ---------------------------------------------------------------- the fast launcher's table
    def fast_table(self):
        """``(fn, table, outputs_meta, dyn_max)`` for ``_launcher.Launcher``, or a reason string it does not fit.

        ``table``: per parameter ``(is_output, (code, bits, lanes), dims)``, a dim >= 0 static, -1-k symbolic
        size k. ``outputs_meta``: per output in ``out_idx`` order ``(param index, alloc dtype, view dtype or
        None, dims)``. ``dyn_max``: per symbolic size, the largest value of its C type.
        """
        sig = self.signature
        for sym in sig.symbols:
            if sym.binder is None:
                return f"symbolic {sym.name} is not an input's dimension"
        table = []
        for p in sig.params:
            if not p.is_buffer:
                return f"parameter {p.index} is not a buffer"
            if p.lanes != 1 or p.bits < 8 or not p.compact:
                return f"buffer {p.name} is packed, vectorised or not compact"
            dims = []
            for d in p.dims:
                if isinstance(d, int):
                    dims.append(d)
                elif isinstance(d, str):
                    dims.append(-1 - sig.symbol_index(d))
                else:
                    return f"buffer {p.name} has a computed dimension {d}"
            table.append((p.is_output, (p.type_code, p.bits, p.lanes), dims))
        if len(set(sig.result_idx)) != len(sig.result_idx):
            return "out_idx names a parameter twice"
        outputs_meta = []
        for p in sig.outputs:  # out_idx order: the launcher returns the outputs in the order it allocates them
            try:
                alloc, view = self.driver.dtype(p.dtype)
            except TypeError:  # a dtype the framework lacks: upstream's launcher reports it
                return f"output {p.name} has no {self.driver.name} dtype"
            outputs_meta.append((p.index, alloc, view, table[p.index][2]))
        fn = ctypes.cast(self.lib.call, ctypes.c_void_p).value
        return fn, table, outputs_meta, [sym.max_value for sym in sig.symbols]


def _no_stream(index: int) -> int:
    return 0


def runtime_of(adapter, driver=None, *, host_call: bool = True) -> KernelRuntime:
    """The adapter's runtime, built once (``driver``: Paddle's when not given)."""
    runtime = getattr(adapter, "_tlp_runtime", None)
    if runtime is None:
        from . import signature as _signature

        if driver is None:
            from .driver import paddle_driver

            driver = paddle_driver()
        runtime = KernelRuntime(_signature.of(adapter, host_call=host_call),
                                adapter.lib if host_call else None, driver)
        adapter._tlp_runtime = runtime
    return runtime
