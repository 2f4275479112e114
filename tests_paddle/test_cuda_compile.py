"""CUDA kernels compile here (nvcc 13, no GPU): sm_80 and the Hopper sm_90a GEMM with wgmma."""

import os
import shutil

import pytest

import tilelang
import tilelang.language as T

NVCC = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if os.path.exists("/usr/local/cuda/bin/nvcc") else None)
pytestmark = pytest.mark.skipif(NVCC is None, reason="needs nvcc (CUDA toolkit) to compile CUDA kernels")


def matmul(M, N, K, block_M=128, block_N=128, block_K=32, dtype="float16", accum_dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.clear(C_local)
            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):
                T.copy(A[by * block_M, ko * block_K], A_shared)
                T.copy(B[ko * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main


@pytest.mark.parametrize("arch,marker", [("sm_80", "mma"), ("sm_90a", "wgmma")])
def test_gemm_compiles_for_arch(arch, marker):
    kernel = tilelang.compile(matmul(512, 512, 512), out_idx=[2], target={"kind": "cuda", "arch": arch})
    src = kernel.get_kernel_source()
    assert "__global__" in src and marker in src
    if arch == "sm_80":
        assert "wgmma" not in src
