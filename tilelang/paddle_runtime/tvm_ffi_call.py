"""The per-call path of tvm_ffi-backend kernels with callee-allocated outputs (TileLang's CUDA kernels).

Patch 0011 returns :func:`callee_allocated_call` from the adapter's
``_convert_torch_func`` in place of upstream's
``_convert_ffi_callee_allocated_output_func``. Per call it does what tvm-ffi
needs and nothing else: the argument count, the allocator anchor (the first
tensor input, whose device the generated host code allocates outputs on), the
inputs' GPU made current, and the executable call. Everything that does not
change between calls is resolved here once: the exchange-API check, the
output arity, the bound device functions; the executable on the first call.
The caller's current device is restored after the call (see :mod:`.gpu_guard`).

Why the device switch: the host code allocates outputs through
``TVMFFIEnvTensorAlloc`` -> Paddle's exchange-API allocator, which allocates
on the *current* CUDA device, and only afterwards calls ``__tvm_set_device``
(see patch 0011 and :mod:`.gpu_guard`). Upstream's NPU stream
hook (``_prepare_torch_device``) is not called: it is for torch_npu, which a
Paddle process does not have.
"""

from __future__ import annotations

from collections.abc import Callable

import paddle

from . import arguments as _arguments
from . import device as _device
from . import gpu_guard as _gpu_guard
from . import seams as _seams
from . import signature as _signature
from .tensors import empty as _empty

_NO_EXCHANGE_API = (
    "TVM-FFI callee-allocated outputs need Paddle's DLPack exchange API "
    "(paddle.Tensor.__dlpack_c_exchange_api__, Paddle >= 3.3); this Paddle lacks it"
)


def callee_allocated_call(adapter) -> Callable:
    """The kernel's callable: ``call(*inputs)`` -> output tensor (or list of them)."""
    expected = len(adapter.params) - len(adapter.result_idx)
    single = len(adapter.result_idx) == 1
    tensor_type = paddle.Tensor
    has_api = _seams.exchange_api_pointer(tensor_type) is not None
    cuda = adapter.target.kind.name == "cuda"
    # Bound now: a kernel is compiled after the control plane is set up, and the
    # lookups would otherwise be repeated on every call.
    device_of, select_device_of, restore_gpu = _device.device_of, _gpu_guard.select_device_of, _gpu_guard.restore_gpu
    adapter_type = type(adapter)
    executable = None

    def call(*inputs):
        nonlocal executable
        if len(inputs) != expected:
            raise _arguments.diagnose(_signature.of(adapter, host_call=False), inputs, {}, tensor_type)
        if not has_api:
            raise RuntimeError(_NO_EXCHANGE_API)
        anchor = next((value for value in inputs if isinstance(value, tensor_type)), None)
        # No tensor input: the adapter class's device functor (through the class: a guard that restored it
        # without its staticmethod must not break this), as upstream does.
        spec = device_of(anchor) if anchor is not None else device_of(adapter_type.get_current_device_functor()())
        if cuda and spec.type != "cuda":  # a bad argument first (an int for a tensor), else the device
            signature = _signature.of(adapter, host_call=False)
            raise _arguments.diagnose(signature, inputs, {}, tensor_type) or \
                _arguments.not_on_gpu(signature, inputs, tensor_type)
        if executable is None:
            executable = adapter._get_executable()
        previous = select_device_of(spec)  # before the anchor's allocation, which would switch it for good
        try:
            if anchor is None:
                # A zero-element anchor on that device carries the allocator and the device into the call.
                anchor = _empty([0], paddle.float32, spec)
            result = executable(*inputs, anchor)
        except (RuntimeError, ValueError, TypeError) as exc:
            # A tensor on another device than the first: say which (tvm-ffi's message names neither).
            problem = _arguments.devices_disagree(_signature.of(adapter, host_call=False), inputs, tensor_type)
            if problem is None:
                raise
            raise problem from exc
        finally:
            restore_gpu(previous)
        return result if single else list(result)

    return call
