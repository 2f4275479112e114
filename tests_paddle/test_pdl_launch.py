"""Programmatic dependent launch (PDL) only for kernels that wait for their predecessor (patch 0020).

A kernel launched with programmatic stream serialization may start once the previous kernel in
the stream has triggered its dependents, before that kernel's writes are visible; only
``T.pdl_sync()`` (``griddepcontrol.wait``) makes them visible. Here (nvcc, no GPU) the
Cython backend's generated launch code is read; where Paddle sees a GPU, a reader that does not
wait runs right after a kernel that triggers early, and must see every value.
(No `from __future__ import annotations`: TileLang evaluates kernel annotations.)
"""

import os
import re
import shutil

import numpy as np
import paddle
import pytest

import tilelang
import tilelang.language as T


NVCC = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if os.path.exists("/usr/local/cuda/bin/nvcc") else None)
HAS_GPU = paddle.is_compiled_with_cuda() and paddle.device.cuda.device_count() > 0
TARGET = "cuda" if HAS_GPU else {"kind": "cuda", "arch": "sm_90a"}
pytestmark = pytest.mark.skipif(NVCC is None, reason="needs nvcc (CUDA toolkit) to compile CUDA kernels")
N = 4096


def scale(n, wait=False, cluster=None):
    """Y = 2 * X, optionally waiting for the previous kernel first, optionally in clusters."""
    extra = {} if cluster is None else {"cluster_dims": cluster}

    @T.prim_func
    def main(X: T.Tensor((n,), "float32"), Y: T.Tensor((n,), "float32")):
        with T.Kernel(T.ceildiv(n, 256), threads=256, **extra) as bx:
            if wait:
                T.pdl_sync()
            for i in T.Parallel(256):
                if bx * 256 + i < n:
                    Y[bx * 256 + i] = X[bx * 256 + i] * 2.0

    return main


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    """Compile with the Cython backend (its C++ wrapper holds the launch code)."""
    def compile_(prog):
        return tilelang.compile(prog, target=TARGET, execution_backend="cython")  # links without the driver here

    return compile_


def launch_attributes(kernel):
    """The attributes each cudaLaunchKernelEx in the host wrapper really passes (the first numAttrs)."""
    host = kernel.adapter.get_host_source()
    out = []
    for block in host.split("cudaLaunchConfig_t config;")[1:]:
        count = int(re.search(r"config\.numAttrs = (\d+);", block).group(1))
        ids = re.findall(r"attribute\[(\d+)\]\.id = (\w+);", block)
        out.append([name for index, name in ids if int(index) < count])
    assert out, f"no cudaLaunchKernelEx launch in the host wrapper:\n{host}"
    return out


@pytest.mark.parametrize(
    "kw,expected",
    [
        (dict(), []),
        (dict(wait=True), ["cudaLaunchAttributeProgrammaticStreamSerialization"]),
        (dict(cluster=(2, 1, 1)), ["cudaLaunchAttributeClusterDimension"]),
        (dict(cluster=(2, 1, 1), wait=True),
         ["cudaLaunchAttributeClusterDimension", "cudaLaunchAttributeProgrammaticStreamSerialization"]),
    ],
    ids=["plain", "waits", "cluster", "cluster-waits"],
)
def test_programmatic_launch_only_for_kernels_that_wait(build, kw, expected):
    kernel = build(scale(N, **kw))
    assert launch_attributes(kernel) == [expected]
    assert ("cudaGridDependencySynchronize" in kernel.get_kernel_source()) == bool(kw.get("wait"))


def test_gemm_example_waits_before_its_first_load():
    """With pdl, the example GEMM waits (so it launches as a programmatic dependent) before it reads A or B.

    Its launch attributes are those of any waiting kernel (above); its Cython library cannot be
    loaded here (loading sets its shared-memory size through the CUDA runtime, which needs a driver).
    """
    from quickstart import gemm_cuda, has_pdl

    src = tilelang.compile(gemm_cuda(256, 256, 256, pdl=True), target={"kind": "cuda", "arch": "sm_90a"}
                           ).get_kernel_source()
    assert src.index("cudaGridDependencySynchronize") < src.index("tma_load")
    assert "cudaGridDependencySynchronize" not in tilelang.compile(
        gemm_cuda(256, 256, 256, pdl=False), target={"kind": "cuda", "arch": "sm_90a"}).get_kernel_source()
    assert (has_pdl("sm_80"), has_pdl("sm_90a"), has_pdl("sm_100a"), has_pdl("sm_120")) == (False, True, True, True)
    with pytest.raises(ValueError, match="arch: expected a CUDA arch such as sm_80 or sm_90a, got 'hopper'"):
        has_pdl("hopper")


def gemm_triggering_early(M, N, K, bm=128, bn=256, bk=64):
    """C = A @ B that lets its dependents start after its main loop, before it stores C (the H200 race)."""

    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float16")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=256) as (bx, by):
            A_s = T.alloc_shared((bm, bk), "float16")
            B_s = T.alloc_shared((bk, bn), "float16")
            C_l = T.alloc_fragment((bm, bn), "float32")
            C_s = T.alloc_shared((bm, bn), "float16")
            T.pdl_sync()
            T.clear(C_l)
            for ko in T.Pipelined(T.ceildiv(K, bk), num_stages=3):
                T.copy(A[by * bm, ko * bk], A_s)
                T.copy(B[ko * bk, bx * bn], B_s)
                T.gemm(A_s, B_s, C_l)
            T.pdl_trigger()
            T.copy(C_l, C_s)
            T.copy(C_s, C[by * bm, bx * bn])

    return main


def double(M, N):
    """Y = 2 * X in float16 (exact), without T.pdl_sync()."""

    @T.prim_func
    def main(X: T.Tensor((M, N), "float16"), Y: T.Tensor((M, N), "float16")):
        with T.Kernel(T.ceildiv(N, 256), M, threads=256) as (bx, by):
            for j in T.Parallel(256):
                if bx * 256 + j < N:
                    Y[by, bx * 256 + j] = X[by, bx * 256 + j] * T.float16(2)

    return main


@pytest.mark.skipif(not HAS_GPU or paddle.device.cuda.get_device_capability()[0] < 9,
                    reason="needs Paddle with a CUDA GPU of compute capability >= 9.0 (programmatic launch)")
def test_reader_that_does_not_wait_sees_every_write(build):
    """A GEMM that triggers its dependents before its epilogue, then a reader without T.pdl_sync().

    Before patch 0020 the reader was launched as a programmatic dependent anyway and read stale
    memory: 47.9 M stale values in 400 runs at this size on an H200 (upstream tilelang on torch;
    docs/performance.md, "GPU kernels").
    """
    M = N = K = 1024
    producer = build(gemm_triggering_early(M, N, K))
    reader = build(double(M, N))
    rng = np.random.default_rng(0)
    a = paddle.to_tensor((rng.standard_normal((M, K)) / 8).astype("float16"), place=paddle.CUDAPlace(0))
    b = paddle.to_tensor((rng.standard_normal((K, N)) / 8).astype("float16"), place=paddle.CUDAPlace(0))
    c = paddle.empty([M, N], dtype="float16")
    out = paddle.empty([M, N], dtype="float16")
    producer(a, b, c)
    expected = c.numpy().astype("float32") * 2
    for _ in range(100):
        c.zero_()
        producer(a, b, c)
        reader(c, out)
        np.testing.assert_array_equal(out.numpy().astype("float32"), expected)
