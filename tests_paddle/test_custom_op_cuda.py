"""CUDA custom operators (tilelang.paddle.custom_op on CUDA kernels).

Here (nvcc, no GPU, Paddle's CPU build): the generated ``.cu`` operator is compiled against
Paddle's own headers with the flags ``paddle.utils.cpp_extension`` gives CUDA sources, and
its object calls exactly the Paddle GPU API it relies on. Where Paddle sees a GPU, the op
runs against Paddle references, on Paddle's current stream and on a second GPU.
(No `from __future__ import annotations`: TileLang evaluates kernel annotations.)
"""

import os
import shutil
import subprocess

import numpy as np
import paddle
import pytest

import tilelang
import tilelang.language as T
from tilelang.paddle import custom_op
from tilelang.paddle.custom_op import _op_source


NVCC = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if os.path.exists("/usr/local/cuda/bin/nvcc") else None)
HAS_GPU = paddle.is_compiled_with_cuda() and paddle.device.cuda.device_count() > 0
COLS = 64
# A real GPU compiles for itself; without one, Hopper (what the examples target).
TARGET = {"kind": "cuda", "arch": "sm_90a"} if not HAS_GPU else "cuda"


@tilelang.jit(out_idx=[2], target=TARGET, execution_backend="cython")
def scale_forward(cols: int):
    rows = T.dynamic("rows")

    @T.prim_func
    def main(X: T.Tensor((rows, cols), "float32"), W: T.Tensor((cols,), "float32"),
             Y: T.Tensor((rows, cols), "float32")):
        with T.Kernel(rows, threads=cols) as r:
            for j in T.Parallel(cols):
                Y[r, j] = X[r, j] * W[j]

    return main


@tilelang.jit(out_idx=[4, 5], target=TARGET, execution_backend="cython")
def scale_backward(cols: int):
    rows = T.dynamic("rows")

    @T.prim_func
    def main(X: T.Tensor((rows, cols), "float32"), W: T.Tensor((cols,), "float32"),
             Y: T.Tensor((rows, cols), "float32"), GY: T.Tensor((rows, cols), "float32"),
             GX: T.Tensor((rows, cols), "float32"), GW: T.Tensor((cols,), "float32")):
        with T.Kernel(1, threads=cols) as _:
            for j in T.Parallel(cols):  # one thread per column: GW[j] has a single writer
                GW[j] = 0
            for r in T.serial(rows):
                for j in T.Parallel(cols):
                    GX[r, j] = GY[r, j] * W[j]
                    GW[j] += GY[r, j] * X[r, j]

    return main


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    """The CUDA kernel pair, built as Cython-backend libraries (what the op dlopens)."""
    if NVCC is None:
        pytest.skip("needs nvcc (CUDA toolkit) to compile CUDA kernels")
    return scale_forward(COLS), scale_backward(COLS)  # links without the driver here (cuda_link)


def _nvcc_flags_for_paddle_cuda_sources():
    """What paddle.utils.cpp_extension passes nvcc for a .cu source, read from Paddle's own helpers."""
    from paddle.utils.cpp_extension import extension_utils as eu

    includes = eu._get_all_paddle_includes_from_include_root(eu.get_include())
    # prepare_unix_cudaflags: PADDLE_WITH_CUDA, -fPIC and the rest; the ABI and standard flags are added for
    # every source in cpp_extension.BuildExtension.
    return [*eu.prepare_unix_cudaflags([]), "-D_GLIBCXX_USE_CXX11_ABI=1", "-std=c++17",
            *(f"-I{d}" for d in includes)]


@pytest.mark.skipif(NVCC is None, reason="needs nvcc (CUDA toolkit) to compile the CUDA operator")
def test_cuda_operator_compiles_against_paddles_headers(kernels, tmp_path):
    fwd, bwd = kernels
    _f, _b, source = _op_source(fwd, name="tl_cuda_scale", backward=bwd)
    assert "#define TILELANG_OP_CUDA 1" in source.splitlines()[:2]
    src = tmp_path / "tl_cuda_scale.cu"
    src.write_text(source)
    obj = tmp_path / "tl_cuda_scale.o"
    proc = subprocess.run([NVCC, "-c", str(src), "-o", str(obj), *_nvcc_flags_for_paddle_cuda_sources()],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-4000:]
    undefined = subprocess.run(["nm", "-C", "--undefined-only", str(obj)], capture_output=True, text=True,
                               check=True).stdout
    # The Paddle GPU API the op relies on (paddle/phi/api/lib/tensor.cc, paddle/phi/backends/gpu/gpu_info.h),
    # and no CUDA runtime call of its own: the kernel libraries carry theirs.
    for symbol in ("paddle::Tensor::stream() const", "phi::backends::gpu::GetCurrentDeviceId()",
                   "phi::backends::gpu::SetDeviceId(int)", "paddle::experimental::empty("):
        assert symbol in undefined, symbol
    assert "cudaSetDevice" not in undefined and "cudaGetDevice" not in undefined


def test_cuda_operator_passes_the_stream_last_and_inits_per_gpu(kernels):
    fwd, bwd = kernels
    _f, _b, source = _op_source(fwd, name="tl_cuda_scale", backward=bwd)
    forward_fn = source[source.index("std::vector<paddle::Tensor> TlpForward("):source.index("TlpForwardInferShape")]
    # The current GPU is the inputs' before the stream is read, init() runs there, then the call.
    order = [forward_fn.index(s) for s in ("TlpCurrentGpu tlp_current(tlp_device)", "TlpInitOnDevice(",
                                           "TlpEmpty(", "TlpPtr(X), TlpPtr(W), TlpPtr(tlp_out0), "
                                           "static_cast<int>(tlp_dims[0]), TlpStreamOf(X));")]
    # call()'s exact prototype: the CUDA wrapper declares the size `int` and takes the stream last.
    assert "using TlpCall = int32_t (*)(void*, void*, void*, int, void*);" in forward_fn
    assert order == sorted(order)


@pytest.mark.skipif(paddle.is_compiled_with_cuda(), reason="checks the message of a CPU-only Paddle build")
def test_cuda_operator_needs_a_cuda_build_of_paddle(kernels):
    with pytest.raises(RuntimeError, match=r"kernels target CUDA, but this Paddle build has no CUDA .*"
                                           r"install paddlepaddle-gpu>=3\.3"):
        custom_op(kernels[0], name="tl_cuda_scale", backward=kernels[1])


def test_cpu_and_cuda_kernels_do_not_mix(kernels):
    from test_custom_op import scale_backward as cpu_backward

    with pytest.raises(ValueError, match="same device kind, got a CUDA forward and a CPU backward"):
        custom_op(kernels[0], name="tl_mixed", backward=cpu_backward(COLS))


# ------------------------------------------------------------------ on a GPU (skipped without one)

on_gpu = pytest.mark.skipif(not HAS_GPU, reason="Paddle sees no GPU (CPU-only Paddle build or no CUDA device)")


@pytest.fixture(scope="module")
def gpu_op(kernels, tmp_path_factory):
    return custom_op(kernels[0], name="tl_cuda_scale", backward=kernels[1],
                     directory=tmp_path_factory.mktemp("cuda_op"))


@on_gpu
def test_cuda_operator_forward_and_backward(gpu_op):
    rng = np.random.default_rng()
    x0 = rng.standard_normal((37, COLS)).astype("float32")
    w0 = rng.standard_normal(COLS).astype("float32")
    x, w = paddle.to_tensor(x0, place="gpu:0", stop_gradient=False), paddle.to_tensor(w0, place="gpu:0",
                                                                                     stop_gradient=False)
    y = gpu_op(x, w)
    np.testing.assert_allclose(y.numpy(), x0 * w0, rtol=1e-6)
    (y * y).sum().backward()
    gy = 2 * x0 * w0
    np.testing.assert_allclose(x.grad.numpy(), gy * w0, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(w.grad.numpy(), (gy * x0).sum(0), rtol=1e-4, atol=1e-3)


@on_gpu
def test_cuda_operator_runs_on_paddles_current_stream(gpu_op):
    """Inside stream_guard the op runs on the guarded stream: ordered after a Paddle op there, no sync."""
    s = paddle.device.Stream()
    with paddle.device.stream_guard(s):
        x = paddle.randn([4096, COLS])
        w = paddle.randn([COLS])
        for _ in range(20):
            x = x * 0.5 + 0.25  # work queued on s: the op must follow it by stream order alone
        y = gpu_op(x, w)
    s.synchronize()
    np.testing.assert_allclose(y.numpy(), x.numpy() * w.numpy(), rtol=1e-5)


@on_gpu
@pytest.mark.skipif(HAS_GPU and paddle.device.cuda.device_count() < 2, reason="needs 2 GPUs")
def test_cuda_operator_follows_its_inputs_to_gpu1_and_restores_the_device(gpu_op):
    from paddle.base import core

    rng = np.random.default_rng()
    x0 = rng.standard_normal((9, COLS)).astype("float32")
    w0 = rng.standard_normal(COLS).astype("float32")
    core.set_cuda_current_device_id(0)
    y = gpu_op(paddle.to_tensor(x0, place="gpu:1"), paddle.to_tensor(w0, place="gpu:1"))
    assert y.place.gpu_device_id() == 1
    assert core.get_cuda_current_device_id() == 0
    np.testing.assert_allclose(y.numpy(), x0 * w0, rtol=1e-6)


@on_gpu
def test_cuda_operator_names_a_cpu_input(gpu_op):
    with pytest.raises(Exception, match="input W must be a GPU tensor"):
        gpu_op(paddle.randn([3, COLS]).cuda(), paddle.randn([COLS]).cpu())
