"""GPU behaviour: real kernels on Paddle GPU tensors. Skipped where Paddle sees no GPU.

Not run in our CI (no GPU, and no Paddle 3.x GPU build installable there):
every test here was written against Paddle 3.3.1's source and is unverified
until it runs on a GPU machine.
"""

import contextlib

import numpy as np
import paddle
import pytest

import tilelang
import tilelang.language as T
from quickstart import gemm_cuda as matmul  # the quickstart's own kernel
from tilelang.autotuner.tuner import AutoTuner
from tilelang.engine.param import KernelParam
from tilelang.paddle_runtime import device, tensors
from tilelang.paddle_runtime.device import DeviceSpec

HAS_GPU = paddle.is_compiled_with_cuda() and paddle.device.cuda.device_count() > 0
pytestmark = pytest.mark.skipif(not HAS_GPU, reason="Paddle sees no GPU (CPU-only Paddle build or no CUDA device)")
two_gpus = pytest.mark.skipif(HAS_GPU and paddle.device.cuda.device_count() < 2, reason="needs 2 GPUs")


@contextlib.contextmanager
def expected_place(name):
    """Run Paddle ops with ``name`` as the expected place: Paddle sets the CUDA device from it for every op."""
    previous = paddle.get_device()
    paddle.set_device(name)
    try:
        yield
    finally:
        paddle.set_device(previous)


def _inputs(place, M=256, N=256, K=128):
    a = paddle.to_tensor(np.random.randn(M, K).astype("float16"), place=place)
    b = paddle.to_tensor(np.random.randn(K, N).astype("float16"), place=place)
    return a, b


def _check(c, a, b):
    """Compare with paddle.matmul computed on the tensors' own GPU (expected place = that GPU)."""
    gpu = f"gpu:{a.place.gpu_device_id()}"
    with expected_place(gpu):
        ref = paddle.matmul(a.astype("float32"), b.astype("float32"))
        got = c.astype("float32")
        paddle.device.synchronize(gpu)
        np.testing.assert_allclose(got.numpy(), ref.numpy(), rtol=2e-2, atol=2e-1)


@pytest.fixture(scope="module", params=["tvm_ffi", "cython"])
def gemm(request):
    return tilelang.compile(matmul(256, 256, 128), out_idx=[2], execution_backend=request.param)


def test_cuda_gemm_matches_paddle_matmul(gemm):
    if gemm.execution_backend == "cython":
        assert type(gemm.torch_function).__name__ == "Launcher"  # the fast path serves CUDA kernels too
    a, b = _inputs(paddle.CUDAPlace(0))
    c = gemm(a, b)
    assert c.place.is_gpu_place() and c.place.gpu_device_id() == 0
    _check(c, a, b)


@two_gpus
def test_outputs_and_launch_follow_the_tensors_on_gpu1(gemm):
    """Issue 7 items 1 and 2: the current device is 0, the tensors are on 1.

    tvm_ffi: the output is allocated by Paddle on the *current* device unless
    we switch it (patch 0011); the host code then refuses a gpu:0 output.
    cython: the launch must use gpu:1's stream on gpu:1. A wrong device shows
    as an error, as an output on gpu:0, or as wrong values.
    """
    with expected_place("gpu:0"):
        paddle.ones([1]).sum()  # a Paddle op on gpu:0 leaves the current CUDA device at 0
        a, b = _inputs(paddle.CUDAPlace(1))
        c = gemm(a, b)
    assert c.place.is_gpu_place() and c.place.gpu_device_id() == 1
    _check(c, a, b)


def test_stream_guard_is_honored(gemm):
    """The launch goes to the guarded stream: captured there into a CUDA graph, it replays with new inputs.

    A launch on any other stream during the capture is either a capture error or
    escapes the graph, and then the replay leaves ``c`` at the old product.
    (Paddle's CUDAGraph captures on the current stream of its place, which
    stream_guard sets: python/paddle/device/cuda/graphs.py, paddle/device/__init__.py.)
    """
    from paddle.device.cuda.graphs import CUDAGraph

    a, b = _inputs(paddle.CUDAPlace(0))
    gemm(a, b)  # load the module outside the capture
    paddle.device.synchronize("gpu:0")
    s = paddle.device.Stream()
    default = device.stream_of(a)
    with paddle.device.stream_guard(s):
        assert device.stream_of(a) == s.stream_base.cuda_stream != default
        graph = CUDAGraph(place=paddle.CUDAPlace(0), mode="thread_local")
        graph.capture_begin()
        c = gemm(a, b)
        graph.capture_end()
    new_a, _ = _inputs(paddle.CUDAPlace(0))
    paddle.assign(new_a, output=a)
    with paddle.device.stream_guard(s):
        graph.replay()
    s.synchronize()
    _check(c, a, b)
    graph.reset()
    assert device.stream_of(a) == default


@two_gpus
@pytest.mark.parametrize("launcher", ["cython fast path", "cython upstream launcher", "tvm_ffi"])
def test_current_device_is_restored_after_an_allocating_launch_on_gpu1(launcher):
    """Paddle reads the current device (current_stream(None), memory_allocated()): a launch leaves it as it was.

    The output is allocated (out_idx) on gpu:1 while gpu:0 is current. Paddle's allocation on a place
    switches the device and never switches back (launch.py, protocol step 2), so each launcher must switch before it.
    """
    from paddle.base import core

    backend = "tvm_ffi" if launcher == "tvm_ffi" else "cython"
    kernel = tilelang.compile(matmul(256, 256, 128), out_idx=[2], execution_backend=backend)
    call = (lambda *a: kernel.adapter.cython_wrapper.forward(list(a))) if launcher.endswith("upstream launcher") \
        else kernel
    a, b = _inputs(paddle.CUDAPlace(1))
    core.set_cuda_current_device_id(0)
    c = call(a, b)
    assert core.get_cuda_current_device_id() == 0
    assert c.place.gpu_device_id() == 1
    _check(c, a, b)


@two_gpus
@pytest.mark.parametrize("backend", ["cython", "tvm_ffi"])
def test_caller_allocated_output_on_gpu1(backend):
    """No out_idx: the caller's gpu:1 output is written on gpu:1 (nothing allocated by us)."""
    kernel = tilelang.compile(matmul(256, 256, 128), execution_backend=backend)
    with expected_place("gpu:0"):
        paddle.ones([1]).sum()
        a, b = _inputs(paddle.CUDAPlace(1))
        c = paddle.to_tensor(np.zeros((256, 256), "float16"), place=paddle.CUDAPlace(1))
        kernel(a, b, c)
    _check(c, a, b)


@two_gpus
def test_large_shared_memory_kernel_runs_on_both_gpus():
    """init() (the >48 KiB dynamic shared memory limit) is per device: run once per GPU before its first launch."""
    kernel = tilelang.compile(matmul(1024, 1024, 1024), out_idx=[2], execution_backend="cython")  # 96 KiB of tiles
    assert "cudaFuncAttributeMaxDynamicSharedMemorySize" in kernel.adapter.lib_generator.lib_code
    for place in (paddle.CUDAPlace(0), paddle.CUDAPlace(1), paddle.CUDAPlace(0)):
        a, b = _inputs(place, 1024, 1024, 1024)
        _check(kernel(a, b), a, b)


@two_gpus
def test_do_bench_flush_buffer_goes_on_the_current_gpu():
    from tilelang.profiler import bench

    with expected_place("gpu:1"):
        assert str(bench._cache_device(None)) == "cuda:1"


def _has_cuda_python():
    import importlib.util

    return importlib.util.find_spec("cuda") is not None and importlib.util.find_spec("cuda.bindings") is not None


@pytest.mark.skipif(not _has_cuda_python(), reason="the NVRTC backend needs cuda-python (pip install cuda-python)")
def test_nvrtc_backend_takes_paddles_stream():
    """Without stream=, nvrtc launches on Paddle's current stream of the inputs' GPU (patch 0012)."""
    kernel = tilelang.compile(matmul(256, 256, 128), out_idx=[2], execution_backend="nvrtc")
    a, b = _inputs(paddle.CUDAPlace(0))
    c = kernel(a, b)
    _check(c, a, b)
    s = paddle.device.Stream()
    with paddle.device.stream_guard(s):
        c = kernel(a, b)
    s.synchronize()
    _check(c, a, b)


def test_cuda_graph_captures_and_replays_a_kernel(gemm):
    """Capture on Paddle's capturing stream, outputs from the graph's pool, replay with new inputs."""
    from paddle.device.cuda.graphs import CUDAGraph

    a, b = _inputs(paddle.CUDAPlace(0))
    gemm(a, b)  # load the module outside the capture
    paddle.device.synchronize("gpu:0")
    graph = CUDAGraph(place=paddle.CUDAPlace(0), mode="thread_local")
    graph.capture_begin()
    c = gemm(a, b)
    graph.capture_end()
    new_a, _ = _inputs(paddle.CUDAPlace(0))
    paddle.assign(new_a, output=a)  # same buffer, new values: the replay must read them
    graph.replay()
    paddle.device.synchronize("gpu:0")
    _check(c, a, b)
    graph.reset()


@pytest.mark.parametrize("backend", ["event", "cudagraph"])
def test_do_bench_device_backends(gemm, backend):
    profiler = gemm.get_profiler()
    ms = profiler.do_bench(backend=backend, quantiles=[0.5])
    assert isinstance(ms, float) and ms > 0
    mean = profiler.do_bench(backend=backend)
    assert isinstance(mean, float) and mean > 0


def test_do_bench_cupti_is_refused(gemm):
    with pytest.raises(NotImplementedError, match='backend="cupti"'):
        gemm.get_profiler().do_bench(backend="cupti")


@two_gpus
def test_multi_gpu_tuning_is_refused_on_two_gpus():
    tuner = AutoTuner.from_kernel(kernel=lambda block: None, configs=[{"block": 32}])
    with pytest.raises(ValueError, match=r"benchmark_multi_gpu=True would benchmark on GPUs \[0, 1\].*process-wide"):
        tuner._resolve_benchmark_devices(benchmark_multi_gpu=True, benchmark_devices=None, target_kind="cuda")


@two_gpus
def test_indexless_cuda_means_the_current_gpu():
    with expected_place("gpu:1"):
        out = tensors.empty([4], paddle.float32, "cuda")
    assert out.place.gpu_device_id() == 1


def test_supply_draws_on_the_gpu():
    param = KernelParam(T.dtype("float16"), [128, 128])
    x = tensors.make_tensor(param, "Uniform", device=DeviceSpec("cuda", 0))
    assert x.place.is_gpu_place() and x.dtype is paddle.float16
    values = x.astype("float32").numpy()
    assert values.min() >= -1.0 and values.max() <= 1.0 and values.std() > 0.4


def test_cpu_tensor_to_gpu_kernel_is_refused(gemm):
    a, b = _inputs(paddle.CPUPlace())
    with pytest.raises((ValueError, RuntimeError), match="device"):
        gemm(a, b)


@pytest.mark.parametrize("example,args", [
    ("gemm.py", ["--dtype", "float16"]), ("gemm.py", ["--dtype", "bfloat16"]), ("rmsnorm.py", []),
    ("softmax.py", []), ("flash_attention.py", []), ("flash_attention.py", ["--causal"]),
    ("flash_attention.py", ["--decode", "--seq", "4097", "--dim", "128"]), ("train_mlp.py", []),
])
def test_examples_run_and_check_themselves_on_the_gpu(example, args):
    from conftest import ROOT, run_python

    examples = ROOT / "examples"
    proc = run_python(f"import sys, runpy\nsys.path.insert(0, {str(examples)!r})\nsys.argv = [{example!r}, *{args!r}]\n"
                      f"runpy.run_path({str(examples / example)!r}, run_name='__main__')\n")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "[GPU]" in proc.stdout
