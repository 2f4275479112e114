"""``python -m src.fork bump``: on a copy of the repository, against upstream 0.1.14."""

from __future__ import annotations

import shutil
import subprocess
import sys
try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

import pytest
from conftest import ROOT, skip_without_index

from src.fork.bump import FRAMEWORK, _split_extra, upstream_metadata, upstream_requirements
from src.fork.patches import load_series
from src.fork.pin import find_wheel, sha256_file

OLD = "0.1.14"


def _git_files():
    out = subprocess.run(["git", "ls-files"], capture_output=True, text=True, cwd=ROOT)
    if out.returncode != 0:
        pytest.skip("needs a git checkout of the repository")
    return out.stdout.split()


@pytest.fixture(scope="module")
def bumped(tmp_path_factory):
    """A copy of the tracked tree with scrambled upstream lists, bumped to OLD."""
    copy = tmp_path_factory.mktemp("repo")
    for name in _git_files():
        (copy / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, copy / name)
    pyproject = copy / "pyproject.toml"
    text = pyproject.read_text()
    # Scramble what bump must rewrite, to see it rewritten (0.1.14 and 0.1.15 declare the same requirements).
    head, rest = text.split("# begin upstream dependencies\n")
    _, tail = rest.split("# end upstream dependencies\n")
    text = head + '# begin upstream dependencies\ndependencies = ["stale-package"]\n# end upstream dependencies\n' + tail
    pyproject.write_text(text.replace('fp4 = ["ml-dtypes>=0.5.1"]', 'fp4 = ["stale-extra"]'))
    before = {p: (ROOT / p).read_bytes() for p in ("pyproject.toml", "3rdparty/upstream.toml")}
    proc = subprocess.run([sys.executable, "-m", "src.fork", "bump", OLD], capture_output=True, text=True, cwd=copy)
    if proc.returncode and "could not download" in proc.stderr:  # bump fetches upstream OLD into the suite's cache
        skip_without_index(RuntimeError(proc.stderr[proc.stderr.index("could not download"):]))
    after = {p: (ROOT / p).read_bytes() for p in before}
    return copy, proc, before == after


def test_bump_writes_pin_and_version(bumped):
    copy, proc, _ = bumped
    wheel, arm = find_wheel(OLD), find_wheel(OLD, "aarch64")  # upstream publishes both machines
    pin = tomllib.loads((copy / "3rdparty" / "upstream.toml").read_text())
    assert pin == {"version": OLD, "wheels": {wheel.name: sha256_file(wheel), arm.name: sha256_file(arm)}}
    assert arm.name.endswith("_aarch64.whl") and wheel.name.endswith("_x86_64.whl")
    project = tomllib.loads((copy / "pyproject.toml").read_text())["project"]
    assert project["version"] == f"{OLD}.post1"
    assert project["requires-python"] == upstream_metadata(wheel)["Requires-Python"]


def test_bump_rewrites_upstream_requirements_and_keeps_ours(bumped):
    copy, _, _ = bumped
    project = tomllib.loads((copy / "pyproject.toml").read_text())["project"]
    deps, extras = upstream_requirements(upstream_metadata(find_wheel(OLD)))
    assert project["dependencies"] == deps and "stale-package" not in deps
    assert not any(d.split(";")[0].strip().startswith(tuple(FRAMEWORK)) for d in deps)
    ours = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert project["optional-dependencies"] == {**extras, "cpu": ours["cpu"], "test": ours["test"]}
    assert project["optional-dependencies"]["fp4"] == ["ml-dtypes>=0.5.1"]


def test_bump_names_the_drifted_patches_and_leaves_the_repo_alone(bumped):
    _, proc, repo_untouched = bumped
    assert proc.returncode == 1, proc.stdout + proc.stderr
    drifted = {line.split()[0] for line in proc.stdout.splitlines() if " DRIFT: " in line}
    assert drifted == {"0003_route_device_utils", "0005_route_cython_adapter_devices",
                       "0006_launch_protocol_in_cython_launcher", "0009_shim_torch_profiler_bench",
                       "0013_route_profiler_timing", "0022_check_symbolic_sizes",
                       "0023_key_kernel_cache_by_build", "0038_key_cuda_binaries_by_nvcc"}
    total = len(load_series())
    assert f"{total - len(drifted)} of {total} patches apply" in proc.stdout
    assert repo_untouched


def test_bump_never_touches_patches(bumped):
    copy, _, _ = bumped
    for patch in (ROOT / "src" / "fork" / "patches").glob("*.py"):
        assert (copy / "src" / "fork" / "patches" / patch.name).read_bytes() == patch.read_bytes()


@pytest.mark.parametrize("marker,expected", [
    ('extra == "nvcc"', ("nvcc", "")),
    ('platform_system == "Windows" and extra == "nvcc"', ("nvcc", 'platform_system == "Windows"')),
    ('python_version < "3.14"', (None, 'python_version < "3.14"')),
    ("", (None, "")),
])
def test_split_extra(marker, expected):
    assert _split_extra(marker) == expected
