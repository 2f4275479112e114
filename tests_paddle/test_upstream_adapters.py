"""Upstream's adapters as upstream's own tests build them: our runtime degrades to upstream's dispatch where the
adapter holds only what that dispatch reads (issue 55; upstream's testing/python/jit/
test_tilelang_jit_tvm_ffi_executable.py, ``test_callee_allocated_output_dispatch_uses_single_main_entry``,
rewritten here with Paddle tensors: upstream's imports torch)."""

import threading
from types import SimpleNamespace

import paddle
import pytest


@pytest.fixture(scope="module")
def adapter_type(tilelang_mod):
    from tilelang.jit.adapter.tvm_ffi import TVMFFIKernelAdapter

    class _TestAdapter(TVMFFIKernelAdapter):
        @property
        def prim_func(self):
            return self._test_prim_func

    return _TestAdapter


class _FakeKernelParam:
    shape = [1]
    dtype = SimpleNamespace(bits=32, lanes=1)

    @staticmethod
    def torch_dtype():
        return paddle.float32


def test_a_stand_in_adapter_keeps_upstreams_callee_allocated_dispatch(adapter_type):
    adapter = adapter_type.__new__(adapter_type)
    tir_param = object()
    adapter.params = [_FakeKernelParam(), _FakeKernelParam()]
    adapter.result_idx = [1]
    adapter._test_prim_func = SimpleNamespace(params=[tir_param],
                                              buffer_map={tir_param: SimpleNamespace(dtype="float32")})
    adapter._process_dynamic_symbolic = lambda: {}
    adapter.dynamic_symbolic_map = {}
    adapter._ffi_callee_allocated_output_abi = True
    adapter._executable_lock = threading.Lock()
    calls, expected = [], object()

    def main(*args):
        calls.append(args)
        return expected

    adapter.executable = main
    tensor = paddle.empty([1])
    assert adapter._convert_torch_func()(tensor) is expected
    assert len(calls) == 1 and all(arg is tensor for arg in calls[0]) and len(calls[0]) == 2


def test_a_real_adapter_still_takes_the_runtimes_dispatch(tilelang_mod):
    """The degradation is for stand-ins only: a compiled tvm_ffi kernel's PrimFunc is described, and its call is the
    runtime's (compiled for sm_90a here; tvm_ffi cannot build the C target, and nothing runs without a GPU)."""
    import os
    import shutil

    import tilelang.language as T
    from tilelang.paddle_runtime import tvm_ffi_call

    if shutil.which("nvcc") is None and not os.path.exists("/usr/local/cuda/bin/nvcc"):
        pytest.skip("needs nvcc (the CUDA toolkit) to compile a tvm_ffi kernel")

    @T.prim_func
    def main(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "float32")):
        with T.Kernel(1, threads=128) as _:
            for i in T.Parallel(128):
                B[i] = A[i] * 2.0

    kernel = tilelang_mod.compile(main, out_idx=[1], target={"kind": "cuda", "arch": "sm_90a"},
                                  execution_backend="tvm_ffi")
    assert tvm_ffi_call.describable(kernel.adapter)
    assert kernel.adapter._ffi_callee_allocated_output_abi
    assert kernel.adapter._convert_torch_func().__qualname__.startswith("callee_allocated_call")
