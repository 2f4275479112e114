"""CUDA kernels compile here (nvcc 13, no GPU): sm_80 and the Hopper sm_90a GEMM with wgmma."""

import os
import shutil

import pytest

import tilelang
from quickstart import gemm_cuda as matmul  # the quickstart's own kernel

NVCC = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if os.path.exists("/usr/local/cuda/bin/nvcc") else None)
pytestmark = pytest.mark.skipif(NVCC is None, reason="needs nvcc (CUDA toolkit) to compile CUDA kernels")


@pytest.mark.parametrize("arch,marker", [("sm_80", "mma"), ("sm_90a", "wgmma")])
def test_gemm_compiles_for_arch(arch, marker):
    kernel = tilelang.compile(matmul(512, 512, 512), out_idx=[2], target={"kind": "cuda", "arch": arch})
    src = kernel.get_kernel_source()
    assert "__global__" in src and marker in src
    if arch == "sm_80":
        assert "wgmma" not in src
