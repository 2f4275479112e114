"""CPU-target kernels (C codegen + Cython launcher) on Paddle CPU tensors, against numpy.

Every input is fresh random data; outputs are checked elementwise. (No
`from __future__ import annotations` here: TileLang evaluates kernel annotations.)
"""


import numpy as np
import paddle
import pytest

import tilelang
import tilelang.language as T
from quickstart import gemm_cpu as tiled_gemm  # the quickstart's own CPU kernel

CPU = dict(target="c", execution_backend="cython")
RNG = np.random.default_rng()

# dtypes TileLang's C target compiles (upstream: bool fails in g++, uint32 is
# rejected by codegen, bfloat16/float8 have no C type).
C_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint64", "float16", "float32", "float64"]


def elementwise_add(N, dtype, block=8):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype), C: T.Tensor((N,), dtype)):
        with T.Kernel(T.ceildiv(N, block)) as bx:
            for i in T.serial(block):
                C[bx * block + i] = A[bx * block + i] + B[bx * block + i]

    return main


def row_sum(M, N, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), S: T.Tensor((M,), dtype)):
        with T.Kernel(M) as row:
            acc = T.alloc_local((1,), dtype)
            acc[0] = 0
            for j in T.serial(N):
                acc[0] += A[row, j]
            S[row] = acc[0]

    return main


def scale_symbolic(dtype="float32"):
    n = T.symbolic("n")

    @T.prim_func
    def main(A: T.Tensor((n,), dtype), B: T.Tensor((n,), dtype)):
        with T.Kernel(1) as _:
            for i in T.serial(n):
                B[i] = A[i] * 2.0 + 1.0

    return main


def sum_and_diff(N, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype), S: T.Tensor((N,), dtype), D: T.Tensor((N,), dtype)):
        with T.Kernel(1) as _:
            for i in T.serial(N):
                S[i] = A[i] + B[i]
                D[i] = A[i] - B[i]

    return main


@pytest.fixture(scope="module")
def gemm():
    return tilelang.compile(tiled_gemm(48, 32, 64, 16, 16, 16), out_idx=[2], **CPU)


def test_tiled_gemm_matches_numpy(gemm):
    a = RNG.standard_normal((48, 64), dtype=np.float32)
    b = RNG.standard_normal((64, 32), dtype=np.float32)
    c = gemm(paddle.to_tensor(a), paddle.to_tensor(b))
    assert isinstance(c, paddle.Tensor) and c.place.is_cpu_place()
    assert c.shape == [48, 32] and c.dtype == paddle.float32
    np.testing.assert_allclose(c.numpy(), a @ b, rtol=1e-4, atol=1e-4)


def test_caller_allocated_output():
    kernel = tilelang.compile(tiled_gemm(48, 32, 64, 16, 16, 16), **CPU)  # no out_idx: C is an argument
    a, b = paddle.randn([48, 64]), paddle.randn([64, 32])
    c = paddle.full([48, 32], float("nan"))
    kernel(a, b, c)
    np.testing.assert_allclose(c.numpy(), a.numpy() @ b.numpy(), rtol=1e-4, atol=1e-4)


def _random(dtype: str, n: int) -> np.ndarray:
    if dtype.startswith("float"):
        return RNG.uniform(-4, 4, n).astype(dtype)
    info = np.iinfo(dtype)
    # Half the range so the sum cannot overflow.
    return RNG.integers(info.min // 2, info.max // 2, n, endpoint=True).astype(dtype)


def _to_paddle(x: np.ndarray, dtype: str) -> paddle.Tensor:
    # to_tensor reads a uint16 array as bfloat16 and rejects uint64: go through int64
    # (the values are at most half the range, so they fit).
    if dtype in ("uint16", "uint64"):
        return paddle.to_tensor(x.astype(np.int64)).astype(getattr(paddle, dtype))
    return paddle.to_tensor(x)


@pytest.mark.parametrize("dtype", C_DTYPES)
def test_elementwise_every_c_dtype(dtype):
    kernel = tilelang.compile(elementwise_add(64, dtype), out_idx=[2], **CPU)
    a, b = _random(dtype, 64), _random(dtype, 64)
    c = kernel(_to_paddle(a, dtype), _to_paddle(b, dtype))
    assert c.dtype == getattr(paddle, dtype), (c.dtype, dtype)
    got = c.astype("float64").numpy() if dtype == "uint16" else c.numpy()
    expected = (a + b).astype(dtype)
    if dtype == "float16":
        np.testing.assert_allclose(got, expected, rtol=1e-3)
    else:
        np.testing.assert_array_equal(got, expected.astype(got.dtype))


def test_row_reduction():
    kernel = tilelang.compile(row_sum(24, 40), out_idx=[1], **CPU)
    a = RNG.standard_normal((24, 40), dtype=np.float32)
    s = kernel(paddle.to_tensor(a))
    np.testing.assert_allclose(s.numpy(), a.sum(axis=1), rtol=1e-5, atol=1e-5)


def test_symbolic_dimension_two_sizes():
    kernel = tilelang.compile(scale_symbolic(), out_idx=[1], **CPU)
    for n in (7, 300):
        a = RNG.standard_normal(n, dtype=np.float32)
        b = kernel(paddle.to_tensor(a))
        assert b.shape == [n]
        np.testing.assert_allclose(b.numpy(), a * 2 + 1, rtol=1e-6)


def test_two_outputs_via_out_idx():
    kernel = tilelang.compile(sum_and_diff(50), out_idx=[2, 3], **CPU)
    a, b = RNG.standard_normal(50, dtype=np.float32), RNG.standard_normal(50, dtype=np.float32)
    s, d = kernel(paddle.to_tensor(a), paddle.to_tensor(b))
    np.testing.assert_allclose(s.numpy(), a + b, rtol=1e-6)
    np.testing.assert_allclose(d.numpy(), a - b, rtol=1e-6)


def test_profiler_on_cpu_times_and_checks(gemm):
    profiler = gemm.get_profiler()
    ms = profiler.do_bench(n_warmup=1, n_repeat=3)  # default backend: wall clock without a GPU
    assert 0 < ms < 10_000
    profiler.assert_allclose(lambda A, B: paddle.matmul(A, B), atol=1e-3, rtol=1e-3)
    with pytest.raises(AssertionError, match="Too many mismatched elements"):
        profiler.assert_allclose(lambda A, B: paddle.matmul(A, B) + 1.0, atol=1e-3, rtol=1e-3)


def test_do_bench_wall_backend_on_cpu():
    from tilelang.profiler import do_bench

    a = paddle.randn([64, 64])
    ms = do_bench(lambda: paddle.matmul(a, a), backend="wall", _n_warmup=1, _n_repeat=5)
    assert 0 < ms < 1_000


def test_quickstart_cpu_gemm_rejects_ragged_sizes():
    with pytest.raises(ValueError, match="gemm_cpu: M=48 must be a multiple of its block size 32"):
        tiled_gemm(48, 32, 64)
