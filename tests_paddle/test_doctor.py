"""`tilelang-paddle doctor` prints the install's state on one screen."""

import shutil
import subprocess
import sys
from pathlib import Path


def test_doctor_reports_every_line():
    exe = shutil.which("tilelang-paddle") or str(Path(sys.executable).parent / "tilelang-paddle")
    proc = subprocess.run([exe, "doctor"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = dict(
        (k.strip(), v.strip()) for k, _, v in (ln.partition(" : ") for ln in proc.stdout.splitlines()) if v
    )
    import paddle

    import tilelang

    assert lines["tilelang-paddle"].startswith(f"{tilelang.__version__} (upstream tilelang 0.1.15)")
    assert lines["Paddle"].startswith(paddle.__version__)
    assert ("CPU-only build" in lines["Paddle"]) == (not paddle.is_compiled_with_cuda())
    assert lines["torch"] == "not installed (as intended)"
    assert "libcudart" in lines and ("candidate(s) skipped" in lines["libcudart"])
    assert lines["nvcc"].startswith("/") or lines["nvcc"].startswith("not found")
    assert lines["compat"] == "torch proxy enabled for scope ['tilelang']"
    assert "kernel cache" in lines and "default target" in lines
    assert len(proc.stdout.splitlines()) <= 24  # one screen


def test_doctor_usage_error():
    exe = shutil.which("tilelang-paddle") or str(Path(sys.executable).parent / "tilelang-paddle")
    proc = subprocess.run([exe], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and "usage: tilelang-paddle doctor" in proc.stderr
