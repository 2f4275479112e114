"""CPU-target kernels (C codegen + Cython launcher) on Paddle CPU tensors, against numpy."""

from __future__ import annotations

import numpy as np
import paddle
import pytest

import tilelang
import tilelang.language as T

CPU = dict(target="c", execution_backend="cython")


def tiled_gemm(M, N, K, bm=16, bn=16, bk=16, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm)) as (bx, by):
            acc = T.alloc_local((bm, bn), dtype)
            for i, j in T.grid(bm, bn):
                acc[i, j] = 0
            for ko in T.serial(T.ceildiv(K, bk)):
                for i, k, j in T.grid(bm, bk, bn):
                    acc[i, j] += A[by * bm + i, ko * bk + k] * B[ko * bk + k, bx * bn + j]
            for i, j in T.grid(bm, bn):
                C[by * bm + i, bx * bn + j] = acc[i, j]

    return main


@pytest.fixture(scope="module")
def gemm():
    return tilelang.compile(tiled_gemm(48, 32, 64), out_idx=[2], **CPU)


def test_tiled_gemm_matches_numpy(gemm):
    rng = np.random.default_rng()
    a = rng.standard_normal((48, 64), dtype=np.float32)
    b = rng.standard_normal((64, 32), dtype=np.float32)
    c = gemm(paddle.to_tensor(a), paddle.to_tensor(b))
    assert isinstance(c, paddle.Tensor) and c.place.is_cpu_place()
    assert c.shape == [48, 32] and c.dtype == paddle.float32
    np.testing.assert_allclose(c.numpy(), a @ b, rtol=1e-4, atol=1e-4)


def test_caller_allocated_output(gemm):
    kernel = tilelang.compile(tiled_gemm(48, 32, 64), **CPU)  # no out_idx: C is an input
    a = paddle.randn([48, 64])
    b = paddle.randn([64, 32])
    c = paddle.full([48, 32], float("nan"))
    kernel(a, b, c)
    np.testing.assert_allclose(c.numpy(), a.numpy() @ b.numpy(), rtol=1e-4, atol=1e-4)
