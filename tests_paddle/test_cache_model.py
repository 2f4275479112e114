"""One entry model for kernels and tuned kernels, as a release pipeline meets it (issue 54; real processes).

A model module with a tuned kernel (three configs, one of which fails to
elaborate) goes through releases: a comment-only edit, a program edit, a
compiler upgrade (a g++ wrapper whose reported version changes, between
processes and within one), parallel bundle builds into one directory, a
read-only bundle directory, and CUDA bundles of both backends built here,
where there is no NVIDIA driver.
"""

import json
import os
import re
import shutil
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import compiler_free_env, run_bare, run_python

MODEL = '''
import numpy as np, paddle
import tilelang
import tilelang.language as T


@tilelang.autotune(configs=[{{"block": b}} for b in (32, 64, 128)])
@tilelang.jit(out_idx=[1], target="c", execution_backend="cython")
def tuned(N, block=32):
    {comment}
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        assert block <= 64, "block 128 does not fit"  # the third config fails to elaborate
        with T.Kernel(T.ceildiv(N, block)) as bx:
            for i in T.serial(block):
                B[bx * block + i] = A[bx * block + i] * {scale}
    return main


def run():
    a = np.random.default_rng().standard_normal(256).astype("float32")
    kernel = tuned(256)
    np.testing.assert_allclose(kernel(paddle.to_tensor(a)).numpy(), a * {scale}, rtol=1e-6)
    try:
        kernel()
    except TypeError as exc:
        print("NAMED", exc)
    print("release ok", kernel.config)
'''

COMMENTS = {"r1": "# release 1", "r2": '"""Release 2: only this docstring and a comment changed."""  # a comment'}
EXE = shutil.which("tilelang-paddle") or str(Path(sys.executable).parent / "tilelang-paddle")


def _release(where: Path, comment="# release 1", scale=4.0) -> Path:
    where.mkdir(parents=True, exist_ok=True)
    (where / "model.py").write_text(textwrap.dedent(MODEL.format(comment=comment, scale=scale)))
    return where


def _code(release: Path) -> str:
    return f"import sys; sys.path.insert(0, {str(release)!r}); import model; model.run()"


def _tuned_dirs(cache: Path) -> list:
    return sorted(p.name for p in cache.rglob("*") if p.parent.name == "autotuner" and not p.name.startswith("."))


def _gxx(path: Path, version: str, log: Path) -> Path:
    """A g++ that logs every call and reports ``version``; it compiles with the real one."""
    real = shutil.which("g++")
    path.write_text(f'#!/bin/sh\necho "$@" >> {log}\n'
                    f'if [ "$1" = "--version" ]; then echo "g++ (wrapper) {version}"; exit 0; fi\nexec {real} "$@"\n')
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


def _compiles(log: Path) -> int:
    return sum(1 for ln in log.read_text().splitlines() if ln.strip() != "--version") if log.exists() else 0


def _ok(proc):
    assert proc.returncode == 0 and "release ok" in proc.stdout, proc.stdout + proc.stderr[-3000:]


def _quiet_and_named(proc):
    """A hit logs nothing above DEBUG, and its argument errors name the tuned function, not ``main``."""
    assert "Failed to build prim_func" not in proc.stderr and "CRITICAL" not in proc.stderr, proc.stderr[-3000:]
    assert "NAMED kernel tuned takes 1 argument" in proc.stdout, proc.stdout


@pytest.fixture(scope="module")
def release1(tmp_path_factory):
    """Release 1, bundled (tuned once, in the bundle run's private cache)."""
    work = tmp_path_factory.mktemp("cache_model")
    release = _release(work / "r1")
    out = work / "bundle"
    proc = subprocess.run([EXE, "bundle", str(out), "--run", "model:run"], cwd=str(release), capture_output=True,
                          text=True, timeout=600, env={**os.environ, "TILELANG_CACHE_DIR": str(work / "unused")})
    assert proc.returncode == 0 and "1 autotune result(s)" in proc.stdout, proc.stdout + proc.stderr[-3000:]
    return work, out


def test_a_comment_only_release_is_served_from_the_bundle_with_no_compiler(release1, tmp_path):
    work, out = release1
    release = _release(tmp_path / "r2", comment=COMMENTS["r2"])
    env = {**compiler_free_env(tmp_path), "TILELANG_PADDLE_BUNDLE": str(out),
           "TILELANG_CACHE_DIR": str(tmp_path / "kc")}
    proc = run_bare(_code(release), env, cwd=str(release))
    _ok(proc)
    _quiet_and_named(proc)
    assert not list((tmp_path / "kc").rglob("kernel_lib.so"))                # nothing compiled here


def test_a_program_edit_without_a_compiler_is_refused_in_short_lines(release1, tmp_path):
    work, out = release1
    release = _release(tmp_path / "r3", comment=COMMENTS["r2"], scale=5.0)
    env = {**compiler_free_env(tmp_path), "TILELANG_PADDLE_BUNDLE": str(out),
           "TILELANG_CACHE_DIR": str(tmp_path / "kc")}
    proc = run_bare(_code(release), env, cwd=str(release))
    assert proc.returncode != 0 and "release ok" not in proc.stdout, proc.stdout
    err = proc.stderr
    assert "autotuned kernel tuned is in no bundle of TILELANG_PADDLE_BUNDLE=" in err, err[-3000:]
    assert "differ in programs: item(s) 0, 1 of 3" in err, err[-3000:]     # the failing config's error is the same
    assert "def tuned" not in err and "func_source" not in err, err[-3000:]
    message = next(ln for ln in err.splitlines() if "autotuned kernel tuned" in ln)
    assert len(message) < 700, message


def test_the_writable_cache_serves_a_comment_only_release_without_tuning_or_compiling(tmp_path):
    log = tmp_path / "gxx.log"
    env = {"TILELANG_CACHE_DIR": str(tmp_path / "kc"), "CXX": str(_gxx(tmp_path / "g++", "12.2.0", log))}
    _ok(run_python(_code(_release(tmp_path / "r1")), env=env))
    assert len(_tuned_dirs(tmp_path / "kc")) == 1 and _compiles(log) >= 2     # two configs built
    log.unlink()
    proc = run_python(_code(_release(tmp_path / "r2", comment=COMMENTS["r2"])), env=env)
    _ok(proc)
    _quiet_and_named(proc)
    assert _compiles(log) == 0 and len(_tuned_dirs(tmp_path / "kc")) == 1
    proc = run_python(f"import sys; sys.path.insert(0, {str(tmp_path / 'r2')!r}); import model\n"
                      "from tilelang.paddle import prewarm\nprewarm([lambda: model.tuned(256)])", env=env)
    assert proc.returncode == 0 and "prewarm [1/1] builds[0] (tuned" in proc.stderr, proc.stderr[-3000:]


def test_a_compiler_upgrade_tunes_again_as_it_rebuilds_any_kernel(tmp_path):
    log = tmp_path / "gxx.log"
    gxx = tmp_path / "g++"
    env = {"TILELANG_CACHE_DIR": str(tmp_path / "kc"), "CXX": str(gxx)}
    release = _release(tmp_path / "r1")
    _gxx(gxx, "12.2.0", log)
    _ok(run_python(_code(release), env=env))
    _gxx(gxx, "13.1.0", log)
    log.unlink()
    _ok(run_python(_code(release), env=env))
    assert _compiles(log) >= 2, log.read_text()                              # both configs built again
    first, second = _tuned_dirs(tmp_path / "kc")                              # one entry per toolchain, one key
    assert first.split(".")[0] == second.split(".")[0] and first != second


def test_a_compiler_replaced_within_a_process_is_asked_again(tmp_path):
    log = tmp_path / "gxx.log"
    gxx = _gxx(tmp_path / "g++", "12.2.0", log)
    proc = run_python(f"""
        import pathlib
        import tilelang
        import tilelang.language as T

        @T.prim_func
        def main(A: T.Tensor((8,), "float32"), B: T.Tensor((8,), "float32")):
            with T.Kernel(1) as _:
                for i in T.serial(8):
                    B[i] = A[i] + 1.0

        def compiles():
            return sum(1 for ln in pathlib.Path({str(log)!r}).read_text().splitlines() if ln.strip() != "--version")

        tilelang.compile(main, out_idx=[1], target="c", execution_backend="cython")
        before = compiles()
        tilelang.compile(main, out_idx=[1], target="c", execution_backend="cython")
        print("UNCHANGED", compiles() - before)
        gxx = pathlib.Path({str(gxx)!r})
        gxx.write_text(gxx.read_text().replace("12.2.0", "13.1.0"))      # upgraded in place
        tilelang.compile(main, out_idx=[1], target="c", execution_backend="cython")
        print("UPGRADED", compiles() - before)
    """, env={"TILELANG_CACHE_DIR": str(tmp_path / "kc"), "CXX": str(gxx)})
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    assert "UNCHANGED 0" in proc.stdout and "UPGRADED 1" in proc.stdout, proc.stdout


# ------------------------------------------------------------------------------------------ the bundle command

JOBS = '''
import numpy as np, paddle
import tilelang
import tilelang.language as T


def factory(c):
    @T.prim_func
    def main(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
        with T.Kernel(1) as _:
            for i in T.serial(64):
                B[i] = A[i] * c
    return main


def kernels(values):
    return [tilelang.compile(factory(c), out_idx=[1], target="c", execution_backend="cython") for c in values]


def model_a():
    kernels([2.0, 3.0])


def model_b():
    kernels([5.0, 7.0])


def serve():
    a = np.random.default_rng().standard_normal(64).astype("float32")
    for c, kernel in zip([2.0, 3.0, 5.0, 7.0], kernels([2.0, 3.0, 5.0, 7.0])):
        np.testing.assert_allclose(kernel(paddle.to_tensor(a)).numpy(), a * c, rtol=1e-6)
    print("served 4")
'''


def test_parallel_bundle_builds_into_one_directory_keep_every_kernel(tmp_path):
    (tmp_path / "jobs.py").write_text(textwrap.dedent(JOBS))
    out = tmp_path / "dist" / "kernels"
    procs = [subprocess.Popen([EXE, "bundle", str(out), "--run", f"jobs:{job}"], cwd=str(tmp_path),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for job in ("model_a", "model_b")]
    for proc in procs:
        stdout, stderr = proc.communicate(timeout=600)
        assert proc.returncode == 0, stdout + stderr[-3000:]
    manifest = json.loads((out / "manifest.json").read_text())
    assert len(manifest["entries"]) == 4, sorted(e["label"] for e in manifest["entries"].values())
    assert sorted(p.name for p in (out / "kernels").iterdir()) == sorted(manifest["entries"])
    env = {**compiler_free_env(tmp_path), "TILELANG_PADDLE_BUNDLE": str(out),
           "TILELANG_CACHE_DIR": str(tmp_path / "kc")}
    proc = run_bare("import jobs; jobs.serve()", env, cwd=str(tmp_path))
    assert proc.returncode == 0 and "served 4" in proc.stdout, proc.stdout + proc.stderr[-3000:]


def _unshare_reason() -> str | None:
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return "needs root and util-linux's unshare for a private read-only mount"
    probe = subprocess.run(["unshare", "-m", "sh", "-c", "mount -t tmpfs -o ro,size=1m tmpfs /mnt"],
                           capture_output=True, text=True)
    return None if probe.returncode == 0 else f"unshare -m / mount tmpfs refused: {probe.stderr.strip()}"


def test_a_read_only_bundle_directory_is_refused_before_anything_compiles(tmp_path):
    reason = _unshare_reason()
    if reason:
        pytest.skip(reason)
    (tmp_path / "marker_job.py").write_text("import pathlib\ndef run():\n    pathlib.Path('ran').write_text('x')\n")
    out = tmp_path / "ro"
    out.mkdir()
    proc = subprocess.run(["unshare", "-m", "sh", "-c",
                           f"mount -t tmpfs -o ro,size=1m tmpfs {out} && exec {EXE} bundle {out} --run marker_job:run"],
                          cwd=str(tmp_path), capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0, proc.stdout + proc.stderr[-3000:]
    assert (f"tilelang-paddle bundle: OUT {out} cannot be written (Read-only file system); nothing was compiled"
            in proc.stderr), proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr and not (tmp_path / "ran").exists()


# ------------------------------------------------------------------------- CUDA bundles without a driver

CUDA_JOB = '''
import tilelang
import tilelang.language as T


def triple():
    @T.prim_func
    def main(A: T.Tensor((1024,), "float32"), B: T.Tensor((1024,), "float32")):
        with T.Kernel(8, threads=128) as bx:
            for i in T.Parallel(128):
                B[bx * 128 + i] = A[bx * 128 + i] * 3.0
    return main


def both():
    for backend in ("cython", "tvm_ffi"):
        tilelang.compile(triple(), out_idx=[1], target={"kind": "cuda", "arch": "sm_90a"}, execution_backend=backend)
'''


def _needs_toolkit_without_driver():
    import ctypes.util

    if not os.path.exists("/usr/local/cuda/bin/nvcc") and shutil.which("nvcc") is None:
        pytest.skip("needs nvcc (the CUDA toolkit)")
    if ctypes.util.find_library("cuda"):
        pytest.skip("this machine has the NVIDIA driver's libcuda: the link needs no stand-in")


def _linked(lib: Path) -> tuple:
    """The libraries ``lib`` needs and its undefined CUDA driver API symbols (``cu`` + a capital)."""
    needed = subprocess.run(["readelf", "-d", str(lib)], capture_output=True, text=True, check=True).stdout
    undefined = subprocess.run(["nm", "-D", "--undefined-only", str(lib)], capture_output=True, text=True,
                               check=True).stdout
    return ([ln.split("[")[1].rstrip("]") for ln in needed.splitlines() if "(NEEDED)" in ln],
            re.findall(r"\bcu[A-Z]\w*", undefined))


def test_cuda_bundles_of_both_backends_build_without_the_driver(tmp_path):
    _needs_toolkit_without_driver()
    (tmp_path / "cuda_job.py").write_text(textwrap.dedent(CUDA_JOB))
    out = tmp_path / "bundle"
    proc = subprocess.run([EXE, "bundle", str(out), "--run", "cuda_job:both"], cwd=str(tmp_path),
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, "TILELANG_CACHE_DIR": str(tmp_path / "unused")})
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    entries = json.loads((out / "manifest.json").read_text())["entries"]
    assert sorted(e["fields"]["execution_backend"] for e in entries.values()) == ["cython", "tvm_ffi"]
    (cython,) = [k for k, e in entries.items() if e["fields"]["execution_backend"] == "cython"]
    needed, driver_symbols = _linked(out / "kernels" / cython / "kernel_lib.so")
    assert driver_symbols == [] and not [n for n in needed if "cuda" in n], (needed, driver_symbols)


def test_the_toolkits_own_stubs_are_preferred_where_they_exist(tmp_path):
    _needs_toolkit_without_driver()
    real = Path(os.environ.get("CUDA_HOME") or "/usr/local/cuda").resolve()
    toolkit = tmp_path / "cuda"
    toolkit.mkdir()
    for entry in real.iterdir():
        (toolkit / entry.name).symlink_to(entry)
    (toolkit / "lib64").unlink()
    (toolkit / "lib64").mkdir()
    for entry in (real / "lib64").iterdir():
        (toolkit / "lib64" / entry.name).symlink_to(entry)
    (toolkit / "lib64" / "stubs").mkdir()
    (tmp_path / "stub.c").write_text("int stub;\n")
    subprocess.run(["cc", "-shared", "-fPIC", "-Wl,-soname,libcuda.so.1", "-o",
                    str(toolkit / "lib64" / "stubs" / "libcuda.so"), str(tmp_path / "stub.c")], check=True)
    (tmp_path / "cuda_job.py").write_text(textwrap.dedent(CUDA_JOB))
    proc = run_python("import cuda_job, tilelang; k = tilelang.compile(cuda_job.triple(), out_idx=[1], "
                      "target={'kind': 'cuda', 'arch': 'sm_90a'}, execution_backend='cython'); print('built')",
                      env={"CUDA_HOME": str(toolkit), "TILELANG_CACHE_DIR": str(tmp_path / "kc"),
                           "PYTHONPATH": str(tmp_path)}, cwd=str(tmp_path))
    assert proc.returncode == 0 and "built" in proc.stdout, proc.stdout + proc.stderr[-3000:]
    assert not (tmp_path / "kc" / "cuda-link-stub").exists()                 # the toolkit's stub, not ours
