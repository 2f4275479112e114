"""GPU behaviour: real kernels on Paddle GPU tensors. Skipped where Paddle sees no GPU.

Not run in our CI (no GPU, and no Paddle 3.x GPU build installable there).
"""

import numpy as np
import paddle
import pytest

import tilelang
from quickstart import gemm_cuda as matmul  # the quickstart's own kernel
from tilelang.paddle_runtime import device

HAS_GPU = paddle.is_compiled_with_cuda() and paddle.device.cuda.device_count() > 0
pytestmark = pytest.mark.skipif(not HAS_GPU, reason="Paddle sees no GPU (CPU-only Paddle build or no CUDA device)")
two_gpus = pytest.mark.skipif(HAS_GPU and paddle.device.cuda.device_count() < 2, reason="needs 2 GPUs")


def _inputs(place, M=256, N=256, K=128):
    a = paddle.to_tensor(np.random.randn(M, K).astype("float16"), place=place)
    b = paddle.to_tensor(np.random.randn(K, N).astype("float16"), place=place)
    return a, b


def _check(c, a, b):
    ref = paddle.matmul(a.astype("float32"), b.astype("float32"))
    np.testing.assert_allclose(c.astype("float32").numpy(), ref.numpy(), rtol=2e-2, atol=2e-1)


@pytest.fixture(scope="module", params=["tvm_ffi", "cython"])
def gemm(request):
    return tilelang.compile(matmul(256, 256, 128), out_idx=[2], execution_backend=request.param)


def test_cuda_gemm_matches_paddle_matmul(gemm):
    a, b = _inputs(paddle.CUDAPlace(0))
    c = gemm(a, b)
    assert c.place.is_gpu_place() and c.place.gpu_device_id() == 0
    _check(c, a, b)


@two_gpus
def test_device_index_follows_the_tensors_on_gpu1(gemm):
    paddle.set_device("gpu:0")  # expected place says 0; the tensors say 1
    a, b = _inputs(paddle.CUDAPlace(1))
    paddle.ones([1]).sum()  # a Paddle op on gpu:0 leaves the CUDA runtime's current device at 0
    c = gemm(a, b)
    assert c.place.is_gpu_place() and c.place.gpu_device_id() == 1
    assert device.stream_of(a) == device.raw_stream(1)
    _check(c, a, b)


def test_stream_guard_is_honored(gemm):
    a, b = _inputs(paddle.CUDAPlace(0))
    s = paddle.device.Stream()
    default = device.stream_of(a)
    with paddle.device.stream_guard(s):
        assert device.stream_of(a) == s.stream_base.cuda_stream != default
        c = gemm(a, b)
    s.synchronize()
    _check(c, a, b)
    assert device.stream_of(a) == default


def test_outputs_on_inputs_device(gemm):
    a, b = _inputs(paddle.CUDAPlace(0))
    assert gemm(a, b).place == a.place


def test_cpu_tensor_to_gpu_kernel_is_refused(gemm):
    a, b = _inputs(paddle.CPUPlace())
    with pytest.raises((ValueError, RuntimeError), match="device"):
        gemm(a, b)
