"""The examples users copy: each CPU path runs and checks itself; each CUDA kernel compiles for sm_90a."""

import os
import shutil

import pytest
from conftest import ROOT, run_python

import tilelang

NVCC = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if os.path.exists("/usr/local/cuda/bin/nvcc") else None)
needs_nvcc = pytest.mark.skipif(NVCC is None, reason="needs nvcc (CUDA toolkit) to compile CUDA kernels")
EXAMPLES = ROOT / "examples"


def _run_example(name: str, *args: str):
    code = f"import sys\nsys.path.insert(0, {str(EXAMPLES)!r})\nsys.argv = [{name!r}, *{list(args)!r}]\n" \
           f"import runpy\nrunpy.run_path({str(EXAMPLES / name)!r}, run_name='__main__')\n"
    return run_python(code)


def test_rmsnorm_example_cpu_path_checks_itself():
    proc = _run_example("rmsnorm.py", "--rows", "96", "--hidden", "256")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "OK" in proc.stdout and "us (Paddle ops)" in proc.stdout


def test_train_mlp_example_losses_agree():
    proc = _run_example("train_mlp.py", "--steps", "3")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "OK: the losses agree" in proc.stdout


@needs_nvcc
def test_example_cuda_kernels_compile_for_sm_90a():
    import sys

    sys.path.insert(0, str(EXAMPLES))
    from quickstart import gemm_cuda
    from rmsnorm import rmsnorm_cuda

    target = {"kind": "cuda", "arch": "sm_90a"}
    norm = tilelang.compile(rmsnorm_cuda(1024), out_idx=[2], target=target)
    assert "__global__" in norm.get_kernel_source()
    gemm = tilelang.compile(gemm_cuda(64, 128, 64, 64, 64, 32), out_idx=[2], target=target)  # train_mlp's shapes
    assert "__global__" in gemm.get_kernel_source()
