"""`tilelang-paddle doctor` prints the install's state on one screen, with Paddle and without it."""

import json
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

EXE = shutil.which("tilelang-paddle") or str(Path(sys.executable).parent / "tilelang-paddle")


def _rows(text: str) -> dict:
    return dict((k.strip(), v.strip()) for k, _, v in (ln.partition(" : ") for ln in text.splitlines()) if v)


def test_doctor_reports_every_line():
    proc = subprocess.run([EXE, "doctor"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = _rows(proc.stdout)
    import paddle

    import tilelang

    assert lines["tilelang-paddle"].startswith(f"{tilelang.__version__} (upstream tilelang 0.1.15)")
    assert lines["Paddle"].startswith(paddle.__version__)
    assert ("CPU-only build" in lines["Paddle"]) == (not paddle.is_compiled_with_cuda())
    assert lines["torch"] == "not installed (as intended)"
    import tvm_ffi

    assert lines["tvm-ffi"] == tvm_ffi.__version__
    assert "libcudart" in lines and ("candidate(s) skipped" in lines["libcudart"])
    assert lines["nvcc"].startswith("/") or lines["nvcc"].startswith("not found")
    assert lines["compat"] == "torch proxy enabled for scope ['tilelang']"
    assert "kernel cache" in lines and "default target" in lines
    assert len(proc.stdout.splitlines()) <= 24  # one screen


def test_doctor_json_and_python_m():
    proc = subprocess.run([EXE, "doctor", "--json"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    data = json.loads(proc.stdout)
    assert data["ok"] is True and data["torch"] == "not installed (as intended)"
    proc = subprocess.run([sys.executable, "-m", "tilelang_paddle", "doctor"], capture_output=True, text=True,
                          timeout=300, cwd="/")
    assert proc.returncode == 0 and _rows(proc.stdout)["compat"].startswith("torch proxy enabled"), proc.stderr[-2000:]


def test_help_and_usage_errors():
    proc = subprocess.run([EXE, "--help"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "doctor" in proc.stdout and "usage: tilelang-paddle" in proc.stdout
    proc = subprocess.run([EXE], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "usage: tilelang-paddle" in proc.stderr and "required" in proc.stderr
    proc = subprocess.run([EXE, "doctor", "--jsn"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "unrecognized arguments: --jsn" in proc.stderr


def _doctor_in_a_bare_venv(tmp_path, extra=None):
    """Run the doctor in a fresh venv holding only our command's package and metadata (no Paddle, no
    tilelang), plus ``extra``: {relative path: file text} added to its site directory."""
    return _rows(_command_in_a_bare_venv(tmp_path, "doctor", extra).stdout)


def _command_in_a_bare_venv(tmp_path, command, extra=None):
    import importlib.metadata as md

    import tilelang_paddle

    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    site = tmp_path / "site"
    site.mkdir()
    shutil.copytree(Path(tilelang_paddle.__file__).parent, site / "tilelang_paddle")
    dist = md.distribution("tilelang-paddle")
    dist_info = next(Path(f.locate()).parent for f in dist.files if f.name == "METADATA")
    shutil.copytree(dist_info, site / dist_info.name)
    for rel, text in (extra or {}).items():
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        (site / rel).write_text(text)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PYTHONPATH"] = str(site)
    proc = subprocess.run([str(env_dir / "bin" / "python"), "-m", "tilelang_paddle", command], capture_output=True,
                          text=True, timeout=120, env=env, cwd=str(tmp_path))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def test_doctor_without_paddle(tmp_path):
    """A fresh venv with no Paddle (and no tilelang on its path): the doctor reports, it does not crash."""
    import importlib.metadata as md

    lines = _doctor_in_a_bare_venv(tmp_path)
    assert lines["Paddle"].startswith("not installed") and "pip install 'paddlepaddle>=3.3'" in lines["Paddle"]
    assert lines["tilelang-paddle"].startswith(md.version("tilelang-paddle"))
    assert "nvcc" in lines


def test_selftest_without_paddle_says_why_it_cannot_start(tmp_path):
    proc = _command_in_a_bare_venv(tmp_path, "selftest")
    assert proc.stderr.startswith("tilelang-paddle selftest: cannot start: ModuleNotFoundError: No module named"), \
        proc.stderr
    assert proc.stderr.rstrip().endswith("run `tilelang-paddle doctor`")


def test_doctor_tells_a_broken_paddle_from_a_missing_one(tmp_path):
    # What Paddle 3.2 does on Python 3.12 without setuptools: the package is there, its import fails.
    broken = {"paddle/__init__.py": "raise ModuleNotFoundError(\"No module named 'setuptools'\", name='setuptools')\n"}
    lines = _doctor_in_a_bare_venv(tmp_path, broken)
    assert lines["Paddle"].startswith("installed but fails to import: ModuleNotFoundError: No module named 'setuptools'"), lines["Paddle"]
    assert "paddlepaddle>=3.3" in lines["Paddle"]


def test_doctor_names_a_bad_cache_directory(tmp_path):
    (tmp_path / "afile").write_text("")
    proc = subprocess.run([EXE, "doctor"], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "TILELANG_CACHE_DIR": str(tmp_path / "afile")})
    assert proc.returncode == 1, proc.stdout + proc.stderr
    row = _rows(proc.stdout)["import tilelang"]
    assert "TILELANG_CACHE_DIR=" in row and "afile is a file, not a directory" in row, row


@pytest.mark.parametrize("found, ok", [("0.1.11", True), ("0.1.12", True), ("0.1.12.post1", True),
                                       ("0.1.13.post3", False), ("0.1.14.post1", False), ("0.1.15.post2", False),
                                       ("0.1.10", False)])
def test_tvm_ffi_range(found, ok):
    from tilelang_paddle import tvm_ffi_version

    wanted = tvm_ffi_version.required_range()
    assert wanted == "<0.1.13,>=0.1.11"  # from this install's own metadata (upstream's requirement)
    message = tvm_ffi_version.problem(found=found)
    if ok:
        assert message is None
    else:
        assert f"apache-tvm-ffi {found} is installed" in message
        assert "pip install 'apache-tvm-ffi<0.1.13,>=0.1.11'" in message


def test_wrong_tvm_ffi_stops_import_with_the_fix(tmp_path):
    """Distribution metadata saying 0.1.14.post1 first on the path: `import tilelang` names the fix."""
    meta = tmp_path / "apache_tvm_ffi-0.1.14.post1.dist-info"
    meta.mkdir()
    (meta / "METADATA").write_text("Metadata-Version: 2.1\nName: apache-tvm-ffi\nVersion: 0.1.14.post1\n")
    code = (f"import sys\nsys.path.insert(0, {str(tmp_path)!r})\n"
            "try:\n    import tilelang\nexcept ImportError as exc:\n    print('IMPORTERROR', exc)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=str(tmp_path))
    assert "IMPORTERROR apache-tvm-ffi 0.1.14.post1 is installed" in proc.stdout, proc.stdout + proc.stderr[-2000:]
    assert "pip install 'apache-tvm-ffi<0.1.13,>=0.1.11'" in proc.stdout
    doctor = subprocess.run([sys.executable, "-m", "tilelang_paddle", "doctor"], capture_output=True, text=True,
                            timeout=300, cwd=str(tmp_path), env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert doctor.returncode == 1 and "PROBLEM: apache-tvm-ffi 0.1.14.post1" in doctor.stdout, doctor.stdout


def test_version_flag():
    import subprocess
    import sys
    from importlib import metadata

    from tilelang.paddle_runtime import _build_id

    proc = subprocess.run([sys.executable, "-m", "tilelang_paddle", "--version"], capture_output=True, text=True)
    commit = f", commit {_build_id.GIT_COMMIT}" if _build_id.GIT_COMMIT else ""
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"tilelang-paddle {metadata.version('tilelang-paddle')} (build {_build_id.BUILD_ID}{commit})\n"
    assert len(_build_id.BUILD_ID) == 24 and (_build_id.GIT_COMMIT is None or len(_build_id.GIT_COMMIT) >= 12)
    doctor = subprocess.run([sys.executable, "-m", "tilelang_paddle", "doctor", "--json"], capture_output=True,
                            text=True, timeout=300)
    assert json.loads(doctor.stdout)["build"] == f"{_build_id.BUILD_ID}{commit}", doctor.stdout


def test_the_runtime_imports_no_command_module():
    """The command line sits on the runtime, never the other way: nothing under tilelang/ imports a command."""
    import re

    root = Path(__file__).resolve().parents[1]
    commands = ("cli", "doctor", "selftest", "bundle")
    found = []
    for path in (root / "tilelang").rglob("*.py"):
        for line in path.read_text().splitlines():
            if re.search(rf"tilelang_paddle(\.| import )({'|'.join(commands)})\b", line):
                found.append(f"{path.relative_to(root)}: {line.strip()}")
    assert found == []


def test_doctor_names_the_compiler_cmake_and_each_bundle(tmp_path):
    good, foreign = tmp_path / "good", tmp_path / "foreign"
    good.mkdir()
    foreign.mkdir()
    entry = {"name": "main", "fields": {"target": "c"}, "files": {}}
    (good / "manifest.json").write_text(json.dumps({"format": 1, "entries": {"k1": entry, "k2": entry},
                                                    "autotune": {"a": {}}, "made_with": {}}))
    (foreign / "manifest.json").write_text('{"keys": []}')
    env = {**os.environ, "TILELANG_PADDLE_BUNDLE": os.pathsep.join([str(good), str(foreign), str(tmp_path / "none")])}
    proc = subprocess.run([EXE, "doctor"], capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = _rows(proc.stdout)
    cxx = shutil.which(os.environ.get("CXX") or "g++")
    assert lines["C++ compiler"].startswith(f"{cxx} (") if cxx else lines["C++ compiler"].startswith("none found")
    assert lines["CMake"].startswith(shutil.which("cmake") or "not found"), lines["CMake"]
    assert lines["bundle 1"].startswith(f"{good}: 2 kernel(s) for c, 1 autotune result(s); made with"), lines
    assert lines["bundle 2"] == f"{foreign}: NOT USABLE, {foreign / 'manifest.json'} is not a tilelang-paddle " \
                                "bundle manifest (its format is None, ours is 1)", lines
    assert lines["bundle 3"] == f"{tmp_path / 'none'}: NOT USABLE, {tmp_path / 'none' / 'manifest.json'} is missing", \
        lines


def test_doctor_on_a_host_without_a_compiler_says_what_still_works(tmp_path):
    from conftest import compiler_free_env

    proc = subprocess.run([EXE, "doctor"], capture_output=True, text=True, timeout=300,
                          env=compiler_free_env(tmp_path))
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = _rows(proc.stdout)
    assert lines["C++ compiler"].startswith("none found ($CXX, $CC, g++, clang++, c++ on PATH): CPU kernels"), lines
    assert "kernels and ops from bundles and the cache still load and run" in lines["C++ compiler"]
    assert lines["CMake"].startswith("not found: needed only to build this package from source"), lines
