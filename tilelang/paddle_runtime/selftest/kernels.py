"""The selftest's kernels: small, with exact or well-conditioned results, each checking one thing.

Plain TileLang, no framework: the same factories run on Paddle (``tilelang-paddle
selftest``) and on a GPU machine with a stand-in driver. Factories are named for what
the kernel does, since kernel names in errors come from them.
(No ``from __future__ import annotations``: TileLang evaluates kernel annotations.)
"""

import tilelang.language as T

#: The spin kernel's iteration count: ~10-40 ms on an H100/H200 (dependent FMAs), long enough that a
#: kernel on another stream visibly overtakes it, short enough for a selftest.
SPIN_ITERS = 1 << 22


def sum_and_product(dtype="float32"):
    """S = A + B and P = A * B over a ``T.dynamic`` length; compiled with ``out_idx=[3, 2]`` it returns (P, S)."""
    n = T.dynamic("n")

    @T.prim_func
    def main(A: T.Tensor((n,), dtype), B: T.Tensor((n,), dtype), S: T.Tensor((n,), dtype),
             P: T.Tensor((n,), dtype)):
        with T.Kernel(1) as _:
            for i in T.serial(n):
                S[i] = A[i] + B[i]
                P[i] = A[i] * B[i]

    return main


def cpu_matmul(M, N, K, dtype="float32"):
    """C = A @ B on the CPU target (the autograd and custom-op checks' kernel)."""

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(M) as i:
            for j in T.serial(N):
                acc = T.alloc_local((1,), "float32")
                acc[0] = 0
                for k in T.serial(K):
                    acc[0] += A[i, k] * B[k, j]
                C[i, j] = acc[0]

    return main


def row_scale(cols):
    """Y[r, :] = X[r, :] * W over ``T.dynamic`` rows, on whichever target it is compiled for."""
    rows = T.dynamic("rows")

    @T.prim_func
    def main(X: T.Tensor((rows, cols), "float32"), W: T.Tensor((cols,), "float32"),
             Y: T.Tensor((rows, cols), "float32")):
        with T.Kernel(rows, threads=cols) as r:
            for j in T.Parallel(cols):
                Y[r, j] = X[r, j] * W[j]

    return main


def gemm(M, N, K, bm=128, bn=128, bk=64):
    """C = A @ B in float16 with float32 accumulation.

    Three pipeline stages of 128x64 and 64x128 tiles take 96 KiB of shared memory, above the 48 KiB a kernel
    gets without ``init()`` raising its limit on the GPU it runs on (launch protocol step 4).
    """

    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float16")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=256) as (bx, by):
            A_s = T.alloc_shared((bm, bk), "float16")
            B_s = T.alloc_shared((bk, bn), "float16")
            C_l = T.alloc_fragment((bm, bn), "float32")
            T.clear(C_l)
            for ko in T.Pipelined(T.ceildiv(K, bk), num_stages=3):
                T.copy(A[by * bm, ko * bk], A_s)
                T.copy(B[ko * bk, bx * bn], B_s)
                T.gemm(A_s, B_s, C_l)
            T.copy(C_l, C[by * bm, bx * bn])

    return main


def negate_in_place(M, N):
    """A = -A (float16, exact): changes a captured graph's input between capture and replay."""

    @T.prim_func
    def main(A: T.Tensor((M, N), "float16")):
        with T.Kernel(M, threads=128) as r:
            for j in T.Parallel(N):
                A[r, j] = -A[r, j]

    return main


def spin_then_write(n, iters=SPIN_ITERS, trigger_first=False):
    """B[i] = 2 after ``iters`` dependent steps of x = x / 2 + 1 from A[i] in [0, 1) (exactly 2.0 in float32).

    The loop cannot be shortened by the compiler, so B is written only at the end of a long kernel.
    ``trigger_first``: the kernel first lets its dependents start (``T.pdl_trigger()``, sm_90+), so a kernel
    launched after it as a programmatic dependent without ``T.pdl_sync()`` reads B long before it is written,
    and one launched in plain stream order reads it written.
    """

    @T.prim_func
    def main(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32")):
        with T.Kernel(T.ceildiv(n, 128), threads=128) as bx:
            tx = T.get_thread_binding(0)
            x = T.alloc_var("float32")
            if trigger_first:
                T.pdl_trigger()
            if bx * 128 + tx < n:
                x = A[bx * 128 + tx]
                for _ in T.serial(iters):
                    x = x * 0.5 + 1.0
                B[bx * 128 + tx] = x

    return main


def plus_one(n):
    """C = B + 1 (float32): a reader that must run after ``spin_then_write`` wrote B."""

    @T.prim_func
    def main(B: T.Tensor((n,), "float32"), C: T.Tensor((n,), "float32")):
        with T.Kernel(T.ceildiv(n, 128), threads=128) as bx:
            for t in T.Parallel(128):
                if bx * 128 + t < n:
                    C[bx * 128 + t] = B[bx * 128 + t] + 1.0

    return main


def bundle_job():
    """The bundle check's kernel, compiled by ``tilelang-paddle bundle --run <this module>:bundle_job``."""
    import tilelang

    tilelang.compile(sum_and_product(), out_idx=[3, 2], target="c", execution_backend="cython")
