"""The per-call path of tvm_ffi-backend kernels with callee-allocated outputs (TileLang's CUDA kernels).

Patch 0011 returns :func:`callee_allocated_call` from the adapter's
``_convert_torch_func`` in place of upstream's
``_convert_ffi_callee_allocated_output_func``. Per call it follows the
kernel's launch protocol (:mod:`.launch`) where tvm-ffi does not do it
itself: the argument count, the device (the first tensor input's, which the
generated host code allocates the outputs on and reads ``dev_id`` from; the
default GPU without one), that GPU current, the executable call, the caller's
GPU restored. tvm-ffi does the rest: it reads the stream from Paddle's
exchange API (``current_work_stream`` of the first GPU tensor, so
``stream_guard`` is honored) and allocates the outputs through it
(``TVMFFIEnvTensorAlloc`` -> ``paddle::experimental::empty``, whose device
context follows the thread's *current* GPU, hence the switch first).
Everything that does not change between calls is resolved once: the
exchange-API check, the output arity, the runtime; the executable on the
first call. Upstream's NPU stream hook (``_prepare_torch_device``) is not
called: it is for torch_npu, which a Paddle process does not have.
"""

from __future__ import annotations

from collections.abc import Callable

from . import arguments as _arguments
from . import launch as _launch

_NO_EXCHANGE_API = (
    "TVM-FFI callee-allocated outputs need Paddle's DLPack exchange API "
    "(paddle.Tensor.__dlpack_c_exchange_api__, Paddle >= 3.3); this Paddle lacks it"
)


def describable(adapter) -> bool:
    """Whether the signature model (:mod:`.signature`) can read this adapter: its ``prim_func`` is a TIR PrimFunc.

    Upstream's adapters always hold one; a stand-in with only the fields upstream's own dispatch reads (its unit
    tests) keeps upstream's dispatch, which needs no more.
    """
    from tvm import tirx

    return isinstance(adapter.prim_func, tirx.PrimFunc)


def callee_allocated_call(adapter, driver=None) -> Callable:
    """The kernel's callable: ``call(*inputs)`` -> output tensor (or list of them)."""
    runtime = _launch.runtime_of(adapter, driver, host_call=False)
    signature, driver = runtime.signature, runtime.driver
    expected = len(signature.inputs)
    single = len(signature.result_idx) == 1
    tensor_type = runtime.tensor_type
    has_api = driver.exchange_api() != 0
    cuda = signature.cuda
    adapter_type = type(adapter)
    executable = None

    def call(*inputs):
        nonlocal executable
        if len(inputs) != expected:
            raise _arguments.diagnose(signature, inputs, {}, tensor_type)
        if not has_api:
            raise RuntimeError(_NO_EXCHANGE_API)
        anchor = next((value for value in inputs if isinstance(value, tensor_type)), None)
        if anchor is not None:
            gpu = driver.gpu_of(anchor)
        else:
            # No tensor input: the adapter class's device functor (through the class: a guard that restored it
            # without its staticmethod must not break this), as upstream does.
            spec = adapter_type.get_current_device_functor()()
            if getattr(spec, "type", None) == "cuda":
                gpu = spec.index if spec.index is not None else runtime.default_gpu()
            else:
                gpu = -1
        if cuda and gpu < 0:  # a bad argument first (an int for a tensor), else the device
            raise _arguments.diagnose(signature, inputs, {}, tensor_type) or \
                _arguments.not_on_gpu(signature, inputs, tensor_type, driver.gpu_of)
        if executable is None:
            executable = adapter._get_executable()
        previous = runtime.select(gpu)  # before the anchor's allocation, which would switch it for good
        try:
            if anchor is None:
                # A zero-element anchor on that device carries the allocator and the device into the call.
                anchor = driver.allocate([0], driver.dtype("float32")[0], driver.place(gpu))
            result = executable(*inputs, anchor)
        except (RuntimeError, ValueError, TypeError) as exc:
            # A tensor on another device than the first: say which (tvm-ffi's message names neither).
            problem = _arguments.devices_disagree(signature, inputs, tensor_type, driver.gpu_of)
            if problem is None:
                raise
            raise problem from exc
        finally:
            runtime.restore(previous)
        return result if single else list(result)

    return call
