"""The kernel cache key names the toolchain (patch 0036): another compiler rebuilds, the same one reuses.

Each step is a fresh process on one cache directory. The "other" compilers are
wrapper scripts that report another version and run the real tool, and log
every call, so a compile is seen as a call that is not ``--version``.
"""

import os
import shutil
import stat
from pathlib import Path

import pytest

from conftest import run_python

KERNEL = """
import json, sys
import numpy as np, paddle
import tilelang
import tilelang.language as T

@T.prim_func
def main(A: T.Tensor((16,), "float32"), B: T.Tensor((16,), "float32")):
    with T.Kernel(1, threads=1) as _:
        for i in T.serial(16):
            B[i] = A[i] * 3.0

TARGET = sys.argv[1] if len(sys.argv) > 1 else "c"
"""

C_CALL = KERNEL + """
k = tilelang.compile(main, out_idx=[1], target="c", execution_backend="cython")
a = np.random.default_rng(3).standard_normal(16).astype("float32")
np.testing.assert_allclose(k(paddle.to_tensor(a)).numpy(), a * 3.0, rtol=1e-6)
print("ok")
"""

CUDA_COMPILE = KERNEL + """
k = tilelang.compile(main, out_idx=[1], target={"kind": "cuda", "arch": "sm_90a"}, execution_backend="tvm_ffi")
assert "3.000000e+00" in k.get_kernel_source(), k.get_kernel_source()
print("ok")
"""


def _wrapper(path: Path, real: str, version: str, log: Path) -> Path:
    path.write_text(f"""#!/bin/sh
echo "$@" >> {log}
if [ "$1" = "--version" ]; then echo "{version}"; exit 0; fi
exec {real} "$@"
""")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


def _compiled(log: Path) -> bool:
    return log.exists() and any(line.strip() != "--version" for line in log.read_text().splitlines())


def _run(code, env):
    proc = run_python(code, env=env, timeout=600)
    assert proc.returncode == 0 and "ok" in proc.stdout, proc.stdout + proc.stderr[-3000:]


def test_another_host_compiler_recompiles_the_same_one_reuses(tmp_path):
    real = shutil.which("g++")
    if real is None:
        pytest.skip("needs g++ on PATH")
    cache = {"TILELANG_CACHE_DIR": str(tmp_path / "kc"), "CXX": real}
    _run(C_CALL, cache)                                        # compiled by the real g++, cached

    log = tmp_path / "other.log"
    other = _wrapper(tmp_path / "g++-other", real, "g++ (wrapper) 99.1.0", log)
    _run(C_CALL, {**cache, "CXX": str(other)})
    assert _compiled(log), "a kernel cached by another g++ was reused: " + (log.read_text() if log.exists() else "")

    log.unlink()
    _run(C_CALL, {**cache, "CXX": str(other)})                 # same compiler again: from the cache
    assert not _compiled(log), log.read_text()


def test_another_nvcc_recompiles(tmp_path):
    cuda = Path(os.environ.get("CUDA_HOME", "/usr/local/cuda"))
    if not (cuda / "bin" / "nvcc").is_file():
        pytest.skip(f"needs nvcc at {cuda}/bin/nvcc")
    cache = {"TILELANG_CACHE_DIR": str(tmp_path / "kc"), "CUDA_HOME": str(cuda)}
    _run(CUDA_COMPILE, cache)

    # Another toolkit: the same files, but bin/nvcc reports another release.
    other = tmp_path / "cuda-other"
    other.mkdir()
    for entry in cuda.iterdir():
        if entry.name != "bin":
            (other / entry.name).symlink_to(entry.resolve())
    (other / "bin").mkdir()
    for tool in (cuda / "bin").iterdir():
        if tool.name != "nvcc":
            (other / "bin" / tool.name).symlink_to(tool.resolve())
    log = tmp_path / "nvcc.log"
    _wrapper(other / "bin" / "nvcc", str((cuda / "bin" / "nvcc").resolve()),
             "Cuda compilation tools, release 99.0, V99.0.1", log)
    _run(CUDA_COMPILE, {**cache, "CUDA_HOME": str(other)})
    assert _compiled(log), "a kernel cached by another nvcc was reused: " + (log.read_text() if log.exists() else "")


def test_the_key_fields_name_each_tool(tmp_path):
    proc = run_python("""
        import json, shutil
        import tilelang
        from tvm.target import Target
        from tilelang.paddle_runtime.cache import toolchain

        def fields(target, backend):
            return {"tvm_ffi": toolchain.tvm_ffi_version(),
                    **toolchain.build_tools(toolchain.target_kind(target), backend)}

        cpu = fields(Target("c"), "cython")
        cuda = fields(Target({"kind": "cuda", "arch": "sm_90a"}), "tvm_ffi")
        nvrtc = fields(Target({"kind": "cuda", "arch": "sm_90a"}), "nvrtc")
        print(json.dumps([cpu, cuda, nvrtc]))
    """)
    assert proc.returncode == 0, proc.stderr[-3000:]
    import importlib.metadata
    import json

    cpu, cuda, nvrtc = json.loads(proc.stdout.strip().splitlines()[-1])
    assert cpu["tvm_ffi"] == importlib.metadata.version("apache-tvm-ffi")
    assert cpu.keys() == {"tvm_ffi", "host_cxx"}
    assert any(name in cpu["host_cxx"] for name in ("g++", "c++", "clang")), cpu
    assert "release" in cuda["nvcc"] or cuda["nvcc"] == "none", cuda
    assert "nvrtc" in nvrtc and "nvcc" not in nvrtc, nvrtc


def test_a_cuda_bundle_built_without_a_gpu_matches_auto_detection_on_that_gpu():
    """A bundle built where there is no GPU, for {"kind": "cuda", "arch": "sm_90a"}, is looked up on a serving
    H100/H200 whose code passes no target: there TileLang's detection (tilelang/cuda/target.py
    ``_detect_cuda_target``) builds ``Target({"kind": "cuda", "arch": "sm_" + get_target_arch((9, 0))})`` from the
    GPU's compute capability. Both resolve to the same kernel cache key, so the bundle is found; ``"cuda"``
    without a GPU is another key (and another arch), which docs/deploying.md says not to build with."""
    proc = run_python("""
        import tilelang
        import tilelang.language as T
        from tilelang.backend.module import create_backend_context
        from tilelang.cache.kernel_cache import KernelCache
        from tilelang.contrib import nvcc
        from tilelang.cuda.target import _cuda_target_from_arch

        @T.prim_func
        def main(A: T.Tensor((16,), "float32"), B: T.Tensor((16,), "float32")):
            with T.Kernel(1, threads=32) as _:
                for i in T.serial(16):
                    B[i] = A[i] * 3.0

        def key(target):
            ctx = create_backend_context(target, None, "tvm_ffi")
            return str(ctx.target), KernelCache()._generate_key(main, [1], "tvm_ffi", args=(), target=ctx.target,
                                                               target_host=ctx.target_host)

        detected = _cuda_target_from_arch("sm_" + nvcc.get_target_arch((9, 0)))   # an H100/H200's detection
        built = key({"kind": "cuda", "arch": "sm_90a"})
        served = key(detected)
        plain = key("cuda")
        print("built", built[0]); print("served", served[0]); print("plain", plain[0])
        assert built == served, (built, served)
        assert plain[1] != built[1]
        print("same key")
    """)
    assert proc.returncode == 0 and "same key" in proc.stdout, proc.stdout + proc.stderr[-3000:]
    lines = dict(line.split(" ", 1) for line in proc.stdout.splitlines() if line.startswith(("built", "plain")))
    assert '"arch":"sm_90a"' in lines["built"] and '"arch":"sm_50"' in lines["plain"], lines
