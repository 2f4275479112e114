"""``tilelang-paddle doctor``: one screen about this install, for debugging it."""

from __future__ import annotations

import importlib.metadata as md
import os
import shutil
import subprocess
import sys


def _nvcc(cuda_home: str | None) -> str:
    candidates = [shutil.which("nvcc")]
    if cuda_home:
        candidates.append(os.path.join(cuda_home, "bin", "nvcc"))
    for path in filter(None, candidates):
        if os.path.exists(path):
            try:
                out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30).stdout
                release = next((ln.split("release", 1)[1].strip() for ln in out.splitlines() if "release" in ln), "?")
            except (OSError, subprocess.SubprocessError):
                release = "version unknown"
            return f"{path} (release {release})"
    return "not found (CUDA kernels cannot be compiled; set CUDA_HOME or install the CUDA toolkit)"


def _nvrtc() -> str:
    try:
        import cuda.bindings  # noqa: F401

        return "cuda-python installed (NVRTC backend available)"
    except ImportError:
        return "cuda-python not installed (NVRTC backend unavailable; tvm_ffi and cython backends unaffected)"


def _compat_state() -> str:
    from paddle.compat import proxy

    finder = getattr(proxy, "TORCH_PROXY_FINDER", None)
    if finder is None or finder not in sys.meta_path:
        return "torch proxy not installed"
    if finder._globally_enabled:
        return "torch proxy enabled globally (every module's `import torch` gets Paddle)"
    return f"torch proxy enabled for scope {sorted(finder._local_enabled_scope)}"


def report() -> list[tuple[str, str]]:
    import paddle

    import tilelang
    from tilelang.env import env

    from . import preload
    from .device import CUDA_BUILD

    rows = [("tilelang-paddle", f"{tilelang.__version__} (upstream tilelang {tilelang.__version__.split('.post')[0]}) "
                                 f"at {os.path.dirname(tilelang.__file__)}")]
    gpus = paddle.device.cuda.device_count() if CUDA_BUILD else 0
    build = f"GPU build, CUDA {paddle.version.cuda()}, {gpus} GPU(s) visible" if CUDA_BUILD else "CPU-only build"
    rows.append(("Paddle", f"{paddle.__version__} ({build})"))
    try:
        md.distribution("torch")
        rows.append(("torch", "INSTALLED: not needed by tilelang-paddle; tilelang still uses Paddle"))
    except md.PackageNotFoundError:
        rows.append(("torch", "not installed (as intended)"))
    r = preload.last_result()
    if r is None:
        rows.append(("libcudart", "preload did not run"))
    else:
        chosen = r.path or "none loaded"
        rows.append(("libcudart", f"{chosen} — {r.reason}; {len(r.tried)} candidate(s) skipped before it"))
    rows.append(("nvcc", _nvcc(env.CUDA_HOME)))
    rows.append(("NVRTC", _nvrtc()))
    rows.append(("kernel cache", f"{env.TILELANG_CACHE_DIR} ({'enabled' if tilelang.is_cache_enabled() else 'disabled'})"))
    rows.append(("compat", _compat_state()))
    try:
        from tilelang.backend.target import determine_target

        rows.append(("default target", str(determine_target("auto"))))
    except Exception as exc:  # noqa: BLE001 - the doctor reports, never crashes
        rows.append(("default target", f"cannot auto-detect ({type(exc).__name__}: {exc}); pass target= explicitly"))
    return rows


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] != ["doctor"]:
        print("usage: tilelang-paddle doctor", file=sys.stderr)
        return 2
    rows = report()
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        print(f"{key:>{width}} : {value}")
    return 0
