"""The device/stream seam and the torch shim, on a CPU Paddle (GPU cases: test_gpu.py)."""

import os
import shutil

import paddle
import pytest

import tilelang  # noqa: F401 - sets up the control plane
from tilelang.jit.adapter.base import BaseKernelAdapter
from tilelang.paddle_runtime import device
from tilelang.paddle_runtime.device import DeviceSpec
from tilelang.paddle_runtime.torch_shim import device as torch_device, wrap
from conftest import run_python


def test_device_of_tensors_places_and_strings():
    t = paddle.randn([3])
    assert device.device_of(t) == DeviceSpec("cpu")
    assert device.device_of(t.device) == DeviceSpec("cpu")  # paddle.device.Device (a str)
    assert device.device_of("gpu:1") == DeviceSpec("cuda", 1)
    assert device.device_of("cuda") == DeviceSpec("cuda", None)
    assert device.device_of(2) == DeviceSpec("cuda", 2)
    assert device.device_of(paddle.CPUPlace()) == DeviceSpec("cpu")
    assert device.device_of(t.place) == DeviceSpec("cpu")
    assert str(DeviceSpec("cuda", 1)) == "cuda:1" and str(DeviceSpec("cuda")) == "cuda"


@pytest.mark.skipif(paddle.is_compiled_with_cuda(), reason="checks the CPU-only build's behaviour")
def test_cpu_build_never_touches_cuda():
    # On a CPU build the raw-stream accessor would segfault; the seam must return 0 without calling it.
    assert device.CUDA_BUILD is False
    assert device.stream_of(paddle.randn([2])) == 0
    assert device.stream_of(DeviceSpec("cuda", 0)) == 0
    assert device.stream_functor(DeviceSpec("cuda", 1))() == 0
    assert device.current_device() == DeviceSpec("cpu")
    with pytest.raises(RuntimeError, match="Paddle sees no CUDA device"):
        device.synchronize()


def test_adapters_use_the_seam():
    assert BaseKernelAdapter.get_current_stream_functor is device.stream_functor
    assert BaseKernelAdapter.get_current_device_functor is device.device_functor
    assert BaseKernelAdapter.get_current_device_functor()() == device.current_device()


def test_torch_shim_device_is_callable_and_a_type():
    d = torch_device("cuda", 1)
    assert d == DeviceSpec("cuda", 1) and d.type == "cuda" and d.index == 1
    assert torch_device("cuda:3").index == 3 and torch_device("cpu").type == "cpu"
    assert isinstance(d, torch_device) and isinstance(paddle.randn([1]).device, torch_device)
    assert not isinstance("cuda", torch_device)


def test_torch_shim_passes_everything_else_through():
    from tilelang.profiler import bench  # a patched upstream module: its `torch` is the shim

    shim = bench.torch
    assert type(shim._proxy).__name__ == "ProxyModule"  # Paddle's real torch proxy underneath
    assert wrap(shim) is shim
    assert shim.float16 is paddle.float16
    shim.cuda.synchronize()  # no GPU: a CPU kernel is synchronous, nothing to wait for
    out = shim.empty(2, 3, dtype=paddle.uint64, device="cpu")
    assert out.dtype is paddle.uint64 and out.shape == [2, 3]
    out16 = shim.empty((4,), dtype=paddle.uint16)
    assert out16.dtype is paddle.uint16  # paddle.empty alone would hand back bfloat16


def test_gpu_selection_falls_back_to_the_preloaded_runtime():
    """Without Paddle's CUDA-only device setters (a CPU build) the switch binds cudaGetDevice/cudaSetDevice.

    Without a GPU both calls just return an error code; what is checked is that
    the binding exists and is harmless (the GPU effect is covered in test_gpu.py).
    """
    from tilelang.paddle_runtime import preload

    if preload.last_result() is None or preload.last_result().handle is None:
        pytest.skip("no libcudart was preloaded on this machine")
    select_gpu = device._bind_select_gpu()
    select_gpu(0)
    select_gpu(0)


def test_switcher_switches_only_when_the_device_differs():
    """The rule every launch path uses: read the current device, set it only on a mismatch."""
    state = {"current": 0, "sets": []}

    def set_index(i):
        state["sets"].append(i)
        state["current"] = i

    select = device.switcher(lambda: state["current"], set_index)
    select(0)
    select(0)
    assert state["sets"] == []
    select(1)
    select(1)
    select(0)
    assert state["sets"] == [1, 0]


def test_select_device_of_is_a_no_op_for_the_cpu():
    # On every build a CPU device never touches CUDA (a CPU-only Paddle would crash in its CUDA calls).
    device.select_device_of(device.device_of(paddle.zeros([1])))
    device.select_device_of(device.DeviceSpec("cpu"))


@pytest.mark.skipif(not (shutil.which("nvcc") or os.path.exists("/usr/local/cuda/bin/nvcc")), reason="needs nvcc to build a CUDA kernel")
def test_tvm_ffi_callee_allocation_selects_the_inputs_device_first():
    """Patch 0011: before the tvm-ffi call the adapter makes the first input's device current.

    Here the inputs are CPU tensors (no GPU), so the selection is a no-op and the
    generated host code then refuses them; what is checked is the order and
    the device asked for (a recording wrapper around the real function).
    """
    proc = run_python(
        """
        import paddle, tilelang
        import tilelang.language as T
        from tilelang.paddle_runtime import device

        def add(N=256, block=128):
            @T.prim_func
            def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32"), C: T.Tensor((N,), "float32")):
                with T.Kernel(T.ceildiv(N, block), threads=block) as bx:
                    for i in T.Parallel(block):
                        C[bx * block + i] = A[bx * block + i] + B[bx * block + i]
            return main

        seen, real = [], device.select_device_of
        device.select_device_of = lambda spec: (seen.append(str(spec)), real(spec))[1]
        k = tilelang.compile(add(), out_idx=[2], target={"kind": "cuda", "arch": "sm_90a"}, execution_backend="tvm_ffi")
        assert k.adapter._ffi_callee_allocated_output_abi
        try:
            k(paddle.randn([256]), paddle.randn([256]))
        except RuntimeError as exc:
            print("refused:", exc)
        print("selected:", seen)
        """
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "selected: ['cpu']" in proc.stdout
    assert "allocator anchor has the wrong device type" in proc.stdout
