"""The main job: examples/quickstart.py runs and checks its GEMM against paddle.matmul."""

import os
import shutil
import subprocess
import sys

from conftest import ROOT


def test_quickstart_cpu_and_cuda_compile(tmp_path):
    args = [sys.executable, str(ROOT / "examples" / "quickstart.py"), "--size", "64"]
    has_nvcc = shutil.which("nvcc") or os.path.exists("/usr/local/cuda/bin/nvcc")
    if has_nvcc:
        args += ["--arch", "sm_90a"]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=900, env={**os.environ, "TMPDIR": str(tmp_path)})
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    out = proc.stdout
    assert "C = A @ B, 64x64 @ 64x64" in out and ": OK vs paddle.matmul" in out
    assert " us per call" in out
    if has_nvcc:
        src = tmp_path / "tilelang_paddle_quickstart_gemm_sm_90a.cu"
        assert f"generated CUDA source written to {src}" in out
        assert "wgmma" in src.read_text()
