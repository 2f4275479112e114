"""Kernel bundles: compiled once by `tilelang-paddle bundle`, served where no compiler works (real processes).

The serving processes get compilers that are stubs: a C++ compiler and an nvcc
that log every call and fail, and an empty writable cache. A compile would
show in the log and fail; a bundle hit needs neither, and does not even ask
their versions (no call at all). A host with no compiler at all (none on
PATH, no CC/CXX, no CUDA toolkit) serves the same bundle.
"""

import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import compiler_free_env, run_bare, run_python

JOB = '''
import numpy as np, paddle
import tilelang
import tilelang.language as T

n = T.dynamic("n")

@tilelang.jit(out_idx=[1], target="c", execution_backend="cython")
def scale(c: float):
    @T.prim_func
    def main(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32")):
        with T.Kernel(1, threads=1) as _:
            for i in T.serial(n):
                B[i] = A[i] * c
    return main

@T.prim_func
def shift(A: T.Tensor((40,), "float32"), B: T.Tensor((40,), "float32")):
    with T.Kernel(1, threads=1) as _:
        for i in T.serial(40):
            B[i] = A[i] + 7.0

def kernels():
    return [scale(2.0), scale(3.0), tilelang.compile(shift, out_idx=[1], target="c", execution_backend="cython")]

def check():
    rng = np.random.default_rng(11)
    two, three, seven = kernels()
    for size in (1, 40, 333):
        a = rng.standard_normal(size).astype("float32")
        np.testing.assert_allclose(two(paddle.to_tensor(a)).numpy(), a * 2, rtol=1e-6)
        np.testing.assert_allclose(three(paddle.to_tensor(a)).numpy(), a * 3, rtol=1e-6)
    a = rng.standard_normal(40).astype("float32")
    np.testing.assert_allclose(seven(paddle.to_tensor(a)).numpy(), a + 7, rtol=1e-6)
    print("checked")

def other():
    scale(5.0)

@tilelang.jit(out_idx=[1], target="c", execution_backend="cython")
def triple():
    @T.prim_func
    def main(A: T.Tensor((16,), "float32"), B: T.Tensor((16,), "float32")):
        with T.Kernel(1, threads=1) as _:
            for i in T.serial(16):
                B[i] = A[i] * 3.0
    return main

@tilelang.autotune(configs=[{"block": b} for b in (32, 64)])
@tilelang.jit(out_idx=[1], target="c", execution_backend="cython")
def quadruple(N, block=32):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, block)) as bx:
            for i in T.serial(block):
                B[bx * block + i] = A[bx * block + i] * 4.0
    return main

def tune_job():
    kernel = quadruple(256)
    a = np.random.default_rng(3).standard_normal(256).astype("float32")
    np.testing.assert_allclose(kernel(paddle.to_tensor(a)).numpy(), a * 4, rtol=1e-6)
    print("tuned", kernel.config)

def prewarmed():
    from tilelang.paddle import prewarm
    return prewarm([lambda: scale(4.0), lambda: scale(6.0), triple], workers=2)

def op_job():
    from tilelang.paddle import custom_op
    op = custom_op(triple(), name="tl_bundle_triple")
    a = np.random.default_rng(5).standard_normal(16).astype("float32")
    np.testing.assert_allclose(op(paddle.to_tensor(a)).numpy(), a * 3, rtol=1e-6)
    print("op checked", op.library)
'''

EXE = shutil.which("tilelang-paddle") or str(Path(sys.executable).parent / "tilelang-paddle")


def _stub(path: Path, log: Path) -> str:
    path.write_text(f"#!/bin/sh\necho \"$@\" >> {log}\nexit 1\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


def _calls(log: Path) -> list:
    """The stub compilers' logged calls, ``--version`` probes included: a bundle hit makes none."""
    return log.read_text().splitlines() if log.exists() else []


def _digest(root: Path) -> dict:
    return {str(p.relative_to(root)): (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    work = tmp_path_factory.mktemp("bundle")
    (work / "job.py").write_text(textwrap.dedent(JOB))
    out = work / "out"
    proc = subprocess.run([EXE, "bundle", str(out), "--run", "job:kernels", "--run", "job:op_job", "--run",
                           "job:tune_job"], cwd=str(work),
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, "TILELANG_CACHE_DIR": str(work / "unused"),
                               "TILELANG_PADDLE_OP_CACHE": str(work / "unused-ops")})
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    assert "1 custom operator(s) copied; 1 autotune result(s)" in proc.stdout, proc.stdout
    assert not (work / "unused-ops").exists()                   # the op was built in a private cache too
    assert not (work / "unused").exists() or not list((work / "unused").rglob("kernel_lib.so"))  # a private cache
    return work, out


def _serve(work, out, tmp_path, what="check", extra=None):
    log = tmp_path / "compilers.log"
    cuda = tmp_path / "cuda" / "bin"
    cuda.mkdir(parents=True, exist_ok=True)
    env = {"TILELANG_PADDLE_BUNDLE": str(out), "TILELANG_CACHE_DIR": str(tmp_path / "empty"),
           "CXX": _stub(tmp_path / "c++", log), "CUDA_HOME": str(tmp_path / "cuda"), **(extra or {})}
    _stub(cuda / "nvcc", log)
    code = f"import sys; sys.path.insert(0, {str(work)!r}); import job; job.{what}()"
    return run_python(code, env=env, timeout=300), log


def test_served_with_failing_compilers_zero_compiles_bundle_untouched(bundle, tmp_path):
    work, out = bundle
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["format"] == 1 and len(manifest["autotune"]) == 1
    assert len(manifest["entries"]) >= 5          # 3 kernels, the op's, and the tuned configs'
    before = _digest(out)
    proc, log = _serve(work, out, tmp_path)
    assert proc.returncode == 0 and "checked" in proc.stdout, proc.stdout + proc.stderr[-3000:]
    calls = _calls(log)
    assert calls == [], calls                                  # nothing compiled
    assert _digest(out) == before                              # the bundle untouched
    assert not list((tmp_path / "empty").rglob("kernel_lib.so"))


def test_a_custom_op_is_served_from_the_bundle_with_failing_compilers(bundle, tmp_path):
    work, out = bundle
    before = _digest(out)
    proc, log = _serve(work, out, tmp_path, what="op_job", extra={"TILELANG_PADDLE_OP_CACHE": str(tmp_path / "ops")})
    assert proc.returncode == 0 and "op checked" in proc.stdout, proc.stdout + proc.stderr[-3000:]
    library = proc.stdout.split("op checked", 1)[1].split()[0]
    assert library.startswith(str(out / "ops" / "tl_bundle_triple-")), library     # loaded from the bundle
    calls = _calls(log)
    assert calls == [], calls
    assert _digest(out) == before
    assert not (tmp_path / "ops").exists()                                        # nothing built or written


def test_an_autotuned_kernel_is_served_without_tuning_again(bundle, tmp_path):
    work, out = bundle
    before = _digest(out)
    proc, log = _serve(work, out, tmp_path, what="tune_job")
    assert proc.returncode == 0 and "tuned {'block':" in proc.stdout, proc.stdout + proc.stderr[-3000:]
    calls = _calls(log)
    assert calls == [], calls                                  # no config compiled
    assert _digest(out) == before
    assert not list((tmp_path / "empty").rglob("kernel_lib.so"))
    assert not [p for p in (tmp_path / "empty").rglob("*") if p.parent.name == "autotuner"]  # not tuned anew


def test_a_corrupt_entry_is_not_loaded(bundle, tmp_path):
    work, out = bundle
    broken = tmp_path / "broken"
    shutil.copytree(out, broken)
    # The kernel `shift`: `check` loads it, and it is the only kernel of that name (rglob's order is the
    # file system's, and the op's and the tuner's kernels are not loaded by `check`).
    entries = json.loads((broken / "manifest.json").read_text())["entries"]
    (key,) = [k for k, e in entries.items() if e["name"] == "shift"]
    lib = broken / "kernels" / key / "kernel_lib.so"
    data = bytearray(lib.read_bytes())
    data[len(data) // 2] ^= 0xFF
    lib.write_bytes(bytes(data))
    # With a real compiler, the corrupt entry's kernel is compiled instead, and all results are right.
    proc, _ = _serve(work, broken, tmp_path, extra={"CXX": shutil.which("g++") or "g++",
                                                     "CUDA_HOME": os.environ.get("CUDA_HOME", "/usr/local/cuda")})
    assert proc.returncode == 0 and "checked" in proc.stdout, proc.stdout + proc.stderr[-3000:]
    assert f"{lib} does not match its sha256 in the manifest" in proc.stdout + proc.stderr, proc.stdout[-3000:]
    assert "kernel shift: bundle entry" in proc.stdout + proc.stderr, proc.stdout[-3000:]   # names the kernel
    assert len(list((tmp_path / "empty").rglob("kernel_lib.so"))) == 1   # only that one compiled


@pytest.mark.parametrize("what, shows", [("check", "checked"), ("op_job", "op checked"), ("tune_job", "tuned {'block':")])
def test_served_on_a_host_with_no_compiler_at_all(bundle, tmp_path, what, shows):
    work, out = bundle
    env = {**compiler_free_env(tmp_path), "TILELANG_PADDLE_BUNDLE": str(out),
           "TILELANG_CACHE_DIR": str(tmp_path / "empty"), "TILELANG_PADDLE_OP_CACHE": str(tmp_path / "ops")}
    proc = run_bare(f"import sys; sys.path.insert(0, {str(work)!r}); import job; job.{what}()", env, cwd=str(tmp_path))
    assert proc.returncode == 0 and shows in proc.stdout, proc.stdout + proc.stderr[-3000:]
    assert "failed to load" not in proc.stderr and "not loaded" not in proc.stderr, proc.stderr[-3000:]
    assert not list((tmp_path / "empty").rglob("kernel_lib.so")) and not (tmp_path / "ops").exists()


def _serving_image_tools() -> list:
    """The tools docs/deploying.md says a serving image needs ("What the serving host needs")."""
    import re

    text = (Path(__file__).resolve().parents[1] / "docs" / "deploying.md").read_text()
    paragraphs = [" ".join(p.split()) for p in text.split("\n\n")]
    paragraph = next(p for p in paragraphs if "Paddle's own import runs:" in p)
    return re.findall(r"`([a-z]+)`", paragraph.split("Paddle's own import runs:", 1)[1].split("(", 1)[0])


def test_a_serving_image_with_only_the_documented_tools_is_quiet(bundle, tmp_path):
    """Exactly the tools deploying.md lists, each logging its calls, and no compiler: the bundle serves, and no
    process asks for a tool the image lacks (``sh: 1: grep: not found`` on a slimmer one)."""
    work, out = bundle
    tools = _serving_image_tools()
    assert set(tools) >= {"sh", "grep", "ldd"}, tools
    bin_dir, log = tmp_path / "bin", tmp_path / "calls.log"
    bin_dir.mkdir()
    for tool in tools:
        real = shutil.which(tool)
        assert real, f"{tool} is not on this machine"
        if tool == "sh":
            (bin_dir / tool).symlink_to(real)
            continue
        (bin_dir / tool).write_text(f'#!/bin/sh\necho {tool} >> {log}\nexec {real} "$@"\n')
        (bin_dir / tool).chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("CC", "CXX", "CUDA_PATH")}
    (tmp_path / "no-cuda").mkdir()
    env.update(PATH=str(bin_dir), CUDA_HOME=str(tmp_path / "no-cuda"), TILELANG_PADDLE_BUNDLE=str(out),
               TILELANG_CACHE_DIR=str(tmp_path / "empty"))
    proc = run_bare(f"import sys; sys.path.insert(0, {str(work)!r}); import job; job.check()", env, cwd=str(tmp_path))
    assert proc.returncode == 0 and "checked" in proc.stdout, proc.stdout + proc.stderr[-3000:]
    assert "not found" not in proc.stderr, proc.stderr[-3000:]
    assert not list((tmp_path / "empty").rglob("kernel_lib.so"))


def test_a_kernel_missing_from_the_bundle_without_a_compiler_is_named(bundle, tmp_path):
    work, out = bundle
    env = {**compiler_free_env(tmp_path), "TILELANG_PADDLE_BUNDLE": str(out),
           "TILELANG_CACHE_DIR": str(tmp_path / "empty")}
    proc = run_bare(f"import sys; sys.path.insert(0, {str(work)!r}); import job; job.other()", env, cwd=str(tmp_path))
    assert proc.returncode != 0
    err = proc.stderr
    assert "kernel scale(c=5.0) is in no bundle of TILELANG_PADDLE_BUNDLE=" in err, err[-3000:]   # by its factory
    assert "this machine cannot compile it (no C++ compiler" in err, err[-3000:]
    assert "the bundle's kernel(s) named scale differ in func:" in err, err[-3000:]
    assert "The bundles hold kernels for: c" in err, err[-3000:]


# `tilelang-paddle bundle` whose copies SIGKILL the process after the first file of the first entry is staged:
# a real kill, at the one point a run could leave a half-written bundle behind.
KILLED_MID_COPY = """
import os, shutil, signal, sys
copytree = shutil.copytree
def copy_then_die(src, dst, *args, **kwargs):
    shutil.copy2(src, dst)
    os.kill(os.getpid(), signal.SIGKILL)
shutil.copytree = lambda src, dst, **kwargs: copytree(src, dst, copy_function=copy_then_die, **kwargs)
from tilelang_paddle.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_a_bundle_run_killed_mid_copy_leaves_a_bundle_that_serves_and_the_next_run_completes_it(bundle, tmp_path):
    work, out = bundle
    target = tmp_path / "out"
    shutil.copytree(out, target)
    before = (target / "manifest.json").read_bytes()
    env = {**os.environ, "TILELANG_CACHE_DIR": str(tmp_path / "unused"),
           "TILELANG_PADDLE_OP_CACHE": str(tmp_path / "unused-ops")}
    killed = subprocess.run([sys.executable, "-c", KILLED_MID_COPY, "bundle", str(target), "--run", "job:other"],
                            cwd=str(work), capture_output=True, text=True, timeout=600, env=env)
    assert killed.returncode == -9, killed.stdout + killed.stderr[-3000:]
    staged = [p.name for p in (target / "kernels").iterdir() if p.name.startswith(".")]
    assert staged, "the kill did not come mid-copy"
    assert (target / "manifest.json").read_bytes() == before          # the manifest it found, untouched
    served = run_bare(f"import sys; sys.path.insert(0, {str(work)!r}); import job; job.check()",
                      {**compiler_free_env(tmp_path), "TILELANG_PADDLE_BUNDLE": str(target),
                       "TILELANG_CACHE_DIR": str(tmp_path / "empty")}, cwd=str(tmp_path))
    assert served.returncode == 0 and "checked" in served.stdout, served.stdout + served.stderr[-3000:]
    # The next run (the lock the killed one held died with it) adds the kernel and removes what was staged.
    again = subprocess.run([EXE, "bundle", str(target), "--run", "job:other"], cwd=str(work), capture_output=True,
                           text=True, timeout=600, env=env)
    assert again.returncode == 0 and "(1 new" in again.stdout, again.stdout + again.stderr[-3000:]
    assert not [p for p in target.rglob(".*") if p.name != ".bundle.lock"], sorted(target.rglob(".*"))
    other = run_bare(f"import sys; sys.path.insert(0, {str(work)!r}); import job; job.other(); print('other ok')",
                     {**compiler_free_env(tmp_path), "TILELANG_PADDLE_BUNDLE": str(target),
                      "TILELANG_CACHE_DIR": str(tmp_path / "empty2")}, cwd=str(tmp_path))
    assert other.returncode == 0 and "other ok" in other.stdout, other.stdout + other.stderr[-3000:]


MARKER_JOB = """
import pathlib
def run():
    pathlib.Path("ran").write_text("the --run function ran")
"""


@pytest.mark.parametrize("what", ["a-file", "foreign-manifest", "unreadable-manifest"])
def test_the_bundle_command_refuses_an_out_that_is_not_its_own_before_compiling(tmp_path, what):
    (tmp_path / "marker_job.py").write_text(MARKER_JOB)
    out = tmp_path / "out"
    if what == "a-file":
        out.write_text("a file of the user's\n")
        before, expected = out.read_text(), f"OUT {out} is a file, not a directory; nothing was compiled"
    else:
        out.mkdir()
        text = '{"keys": ["the user\'s"], "format": 7}' if what == "foreign-manifest" else "{not json"
        (out / "manifest.json").write_text(text)
        before = text
        expected = f"{out / 'manifest.json'} is not a tilelang-paddle bundle manifest ("
    proc = subprocess.run([EXE, "bundle", str(out), "--run", "marker_job:run"], cwd=str(tmp_path),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0 and expected in proc.stderr + proc.stdout, proc.stdout + proc.stderr[-3000:]
    assert not (tmp_path / "ran").exists()                                 # refused before the run
    assert (out if what == "a-file" else out / "manifest.json").read_text() == before


def test_a_relative_bundle_path_is_made_absolute_at_import(bundle, tmp_path):
    work, out = bundle
    rel = os.path.relpath(out, tmp_path)
    (tmp_path / "elsewhere").mkdir()
    proc = run_python(f"""
        import os
        import paddle, tilelang
        os.chdir({str(tmp_path / 'elsewhere')!r})    # a launcher's run directory, after import
        import sys; sys.path.insert(0, {str(work)!r}); import job; job.check()
        print("bundle", os.environ["TILELANG_PADDLE_BUNDLE"])
    """, env={"TILELANG_PADDLE_BUNDLE": rel, "TILELANG_CACHE_DIR": str(tmp_path / "empty")}, cwd=str(tmp_path))
    assert proc.returncode == 0 and "checked" in proc.stdout, proc.stdout + proc.stderr[-3000:]
    assert f"bundle {out}" in proc.stdout, proc.stdout
    assert not list((tmp_path / "empty").rglob("kernel_lib.so"))          # served from the bundle


def test_bundle_command_usage_errors(tmp_path):
    proc = subprocess.run([EXE, "bundle", str(tmp_path / "o"), "--run", "nocolon"], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode != 0 and "--run expects MODULE:FUNCTION, got 'nocolon'" in proc.stderr + proc.stdout
    proc = subprocess.run([EXE, "bundle", str(tmp_path / "o")], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "--run" in proc.stderr


def test_an_entry_that_fails_to_load_is_reported_as_that_not_as_a_file_check(bundle, tmp_path):
    work, out = bundle
    broken = tmp_path / "broken"
    shutil.copytree(out, broken)
    manifest = json.loads((broken / "manifest.json").read_text())
    (key,) = [k for k, e in manifest["entries"].items() if e["name"] == "shift"]
    lib = broken / "kernels" / key / "kernel_lib.so"
    lib.write_bytes(b"not a shared library\n")              # intact by the manifest (updated), but no library
    manifest["entries"][key]["files"]["kernel_lib.so"] = hashlib.sha256(lib.read_bytes()).hexdigest()
    (broken / "manifest.json").write_text(json.dumps(manifest))
    env = {**compiler_free_env(tmp_path), "TILELANG_PADDLE_BUNDLE": str(broken),
           "TILELANG_CACHE_DIR": str(tmp_path / "empty")}
    proc = run_bare(f"import sys; sys.path.insert(0, {str(work)!r}); import job; job.check()", env, cwd=str(tmp_path))
    assert proc.returncode != 0
    err = proc.stderr
    assert "kernel shift is in no bundle" in err, err[-3000:]
    assert f"its bundle entry did not load: {broken / 'kernels' / key}:" in err, err[-3000:]
    assert "failed their check" not in err, err[-3000:]
    # The warning (TileLang's log handler writes to stdout) names the kernel too.
    assert "kernel shift: bundle entry" in proc.stdout and "failed to load" in proc.stdout, proc.stdout[-3000:]


def test_the_writable_cache_serves_a_host_that_has_lost_its_compiler(bundle, tmp_path):
    """Kernels compiled into the writable cache with a compiler load there when none is left (a slim image
    reusing a cache volume): the entry's build tools are another toolchain's, and nothing here could rebuild."""
    work, _ = bundle
    cache = tmp_path / "kc"
    proc = run_python(f"import sys; sys.path.insert(0, {str(work)!r}); import job; job.check()",
                      env={"TILELANG_CACHE_DIR": str(cache)})
    assert proc.returncode == 0 and "checked" in proc.stdout, proc.stderr[-3000:]
    before = sorted(p.parent.name for p in cache.rglob("kernel_lib.so"))
    env = {**compiler_free_env(tmp_path), "TILELANG_CACHE_DIR": str(cache)}
    proc = run_bare(f"import sys; sys.path.insert(0, {str(work)!r}); import job; job.check()", env, cwd=str(tmp_path))
    assert proc.returncode == 0 and "checked" in proc.stdout, proc.stdout + proc.stderr[-3000:]
    assert sorted(p.parent.name for p in cache.rglob("kernel_lib.so")) == before      # loaded, nothing rebuilt


def test_a_run_function_returning_prewarm_bundles_every_kernel_it_compiled_in_threads(bundle, tmp_path):
    work, _ = bundle
    out = tmp_path / "out"
    proc = subprocess.run([EXE, "bundle", str(out), "--run", "job:prewarmed"], cwd=str(work), capture_output=True,
                          text=True, timeout=600, env={**os.environ, "TILELANG_CACHE_DIR": str(tmp_path / "unused")})
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    entries = json.loads((out / "manifest.json").read_text())["entries"].values()
    assert sorted(e["label"] for e in entries) == ["scale(c=4.0)", "scale(c=6.0)", "triple"], proc.stdout
