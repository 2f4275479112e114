"""A model edited between two releases never gets the old release's autotuned kernel (issue 50, patch 0041).

Release 1 of a model module tunes a kernel whose body reads a module constant and
calls a helper; release 2 edits one of them, not the decorated function. Each
step is a fresh process: the writable autotune cache, a bundle served where a
compiler works (it retunes), and one served where none does (refused, naming
the kernel and the field). The expected values come from the module itself, so
each release is checked against its own numbers.
"""

import json
import os
import shutil
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

SCALE = {scale}


def shifted(x):
    return x + {shift}


@tilelang.autotune(configs=[{{"block": b}} for b in (32, 64)])
@tilelang.jit(out_idx=[1], target="c", execution_backend="cython")
def scaled(N, block=32):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, block)) as bx:
            for i in T.serial(block):
                B[bx * block + i] = shifted(A[bx * block + i]) * SCALE
    return main


def run():
    a = np.random.default_rng(7).standard_normal(256).astype("float32")
    got = scaled(256)(paddle.to_tensor(a)).numpy()
    want = shifted(a) * SCALE
    print("max error", float(np.abs(got - want).max()))
    np.testing.assert_allclose(got, want, rtol=1e-5)
    print("release ok")
'''

EXE = shutil.which("tilelang-paddle") or str(Path(sys.executable).parent / "tilelang-paddle")


def _release(where: Path, scale=4.0, shift=1.0) -> Path:
    where.mkdir(parents=True, exist_ok=True)
    (where / "model.py").write_text(textwrap.dedent(MODEL.format(scale=scale, shift=shift)))
    return where


def _code(release: Path) -> str:
    return f"import sys; sys.path.insert(0, {str(release)!r}); import model; model.run()"


def _run(release: Path, env: dict):
    return run_python(_code(release), env=env, timeout=300)


def _bare_run(release: Path, env: dict):
    return run_bare(_code(release), env, cwd=str(release))


def _tuned_dirs(cache: Path) -> list:
    return [p for p in cache.rglob("*") if p.parent.name == "autotuner" and not p.name.startswith(".")]


@pytest.mark.parametrize("edit", [{"scale": 5.0}, {"shift": 2.0}], ids=["module-constant", "helper"])
def test_an_edit_outside_the_decorated_function_retunes_from_the_writable_cache(tmp_path, edit):
    env = {"TILELANG_CACHE_DIR": str(tmp_path / "kc")}
    proc = _run(_release(tmp_path / "r1"), env)
    assert proc.returncode == 0 and "release ok" in proc.stdout, proc.stdout + proc.stderr[-3000:]
    assert len(_tuned_dirs(tmp_path / "kc")) == 1
    proc = _run(_release(tmp_path / "r2", **edit), env)
    assert proc.returncode == 0 and "release ok" in proc.stdout, proc.stdout + proc.stderr[-3000:]
    assert len(_tuned_dirs(tmp_path / "kc")) == 2          # tuned again, under another key
    proc = _run(tmp_path / "r1", env)                        # release 1 again: its own result, no new tuning
    assert proc.returncode == 0 and "release ok" in proc.stdout, proc.stdout + proc.stderr[-3000:]
    assert len(_tuned_dirs(tmp_path / "kc")) == 2


@pytest.fixture(scope="module")
def release1_bundle(tmp_path_factory):
    work = tmp_path_factory.mktemp("releases")
    release = _release(work / "r1")
    out = work / "bundle"
    proc = subprocess.run([EXE, "bundle", str(out), "--run", "model:run"], cwd=str(release), capture_output=True,
                          text=True, timeout=600, env={**os.environ, "TILELANG_CACHE_DIR": str(work / "unused")})
    assert proc.returncode == 0 and "1 autotune result(s)" in proc.stdout, proc.stdout + proc.stderr[-3000:]
    (entry,) = json.loads((out / "manifest.json").read_text())["autotune"].values()
    assert entry["name"] == "scaled" and len(entry["fields"]["programs"]) == 2, entry
    return work, out


def test_release_1_is_served_from_its_bundle_on_a_host_without_any_compiler(release1_bundle, tmp_path):
    work, out = release1_bundle
    env = {**compiler_free_env(tmp_path), "TILELANG_PADDLE_BUNDLE": str(out),
           "TILELANG_CACHE_DIR": str(tmp_path / "kc")}
    proc = _bare_run(work / "r1", env)
    assert proc.returncode == 0 and "release ok" in proc.stdout, proc.stdout + proc.stderr[-3000:]
    assert "failed to load" not in proc.stderr, proc.stderr[-3000:]
    assert not list((tmp_path / "kc").rglob("kernel_lib.so"))


@pytest.mark.parametrize("edit", [{"scale": 5.0}, {"shift": 2.0}], ids=["module-constant", "helper"])
def test_an_edited_release_with_an_old_bundle_retunes_where_a_compiler_works(release1_bundle, tmp_path, edit):
    work, out = release1_bundle
    release = _release(tmp_path / "r2", **edit)
    env = {"TILELANG_PADDLE_BUNDLE": str(out), "TILELANG_CACHE_DIR": str(tmp_path / "kc")}
    proc = _run(release, env)
    assert proc.returncode == 0 and "release ok" in proc.stdout, proc.stdout + proc.stderr[-3000:]
    assert len(_tuned_dirs(tmp_path / "kc")) == 1          # tuned here, not taken from the bundle


def test_an_edited_release_with_an_old_bundle_and_no_compiler_is_refused_by_name(release1_bundle, tmp_path):
    work, out = release1_bundle
    release = _release(tmp_path / "r2", scale=5.0)
    env = {**compiler_free_env(tmp_path), "TILELANG_PADDLE_BUNDLE": str(out),
           "TILELANG_CACHE_DIR": str(tmp_path / "kc")}
    proc = _bare_run(release, env)
    assert proc.returncode != 0 and "release ok" not in proc.stdout, proc.stdout
    err = proc.stderr
    assert "autotuned kernel scaled is in no bundle of TILELANG_PADDLE_BUNDLE=" in err, err[-3000:]
    assert "cannot tune it (no C++ compiler" in err, err[-3000:]
    assert "differ in programs: item(s) 0, 1 of 2" in err, err[-3000:]


def test_another_build_id_does_not_take_the_bundled_result(release1_bundle, tmp_path):
    # The build id is a digest of the installed build (src/fork/stage.py); another build is stood in for by
    # rebinding it before the first kernel, the one thing this test cannot install for real.
    work, out = release1_bundle
    env = {"TILELANG_PADDLE_BUNDLE": str(out), "TILELANG_CACHE_DIR": str(tmp_path / "kc")}
    proc = run_python(f"""
        import sys; sys.path.insert(0, {str(work / 'r1')!r})
        import tilelang.paddle_runtime._build_id as build
        build.BUILD_ID = "another-build"
        import model; model.run()
    """, env=env, timeout=300)
    assert proc.returncode == 0 and "release ok" in proc.stdout, proc.stdout + proc.stderr[-3000:]
    assert len(_tuned_dirs(tmp_path / "kc")) == 1
