"""The installed distribution's metadata versus the pinned upstream wheel."""

from __future__ import annotations

import importlib.metadata as md
try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib
import zipfile
from email.parser import Parser

from conftest import ROOT
from packaging.requirements import Requirement

from src.fork.bump import FRAMEWORK as DROPPED
OURS_EXTRAS = {"cpu": {"paddlepaddle>=3.3"}}


def _reqs(lines):
    return {str(Requirement(r)) for r in lines}


def _upstream_metadata(wheel):
    with zipfile.ZipFile(wheel) as zf:
        name = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        return Parser().parsestr(zf.read(name).decode())


def test_requires_dist_is_upstream_minus_torch(pinned_wheel):
    upstream = _reqs(_upstream_metadata(pinned_wheel).get_all("Requires-Dist"))
    expected = {r for r in upstream if Requirement(r).name not in DROPPED}
    ours = _reqs(md.requires("tilelang-paddle"))
    ours_without_own_extras = {
        r for r in ours if not any(f'extra == "{e}"' in r for e in ("cpu", "test"))
    }
    assert ours_without_own_extras == expected


def test_extras_are_upstream_plus_cpu_and_test(pinned_wheel):
    upstream = set(_upstream_metadata(pinned_wheel).get_all("Provides-Extra"))
    ours = set(md.metadata("tilelang-paddle").get_all("Provides-Extra"))
    assert ours == upstream | {"cpu", "test"}
    cpu = {r for r in md.requires("tilelang-paddle") if 'extra == "cpu"' in r}
    assert cpu == {'paddlepaddle>=3.3; extra == "cpu"'}


def test_no_torch_anywhere_in_requirements():
    for req in md.requires("tilelang-paddle"):
        assert "torch" not in Requirement(req).name, req
    installed = {d.metadata["Name"].lower() for d in md.distributions()}
    assert not {"torch", "torch-c-dlpack-ext"} & installed


def test_version_names_upstream_base_and_revision(tilelang_mod):
    pin = tomllib.loads((ROOT / "3rdparty" / "upstream.toml").read_text())["version"]
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert project.startswith(pin + ".post"), (project, pin)
    assert "+" not in project
    assert md.version("tilelang-paddle") == project
    assert tilelang_mod.__version__ == project


def test_python_requirement_and_licenses_carried(pinned_wheel):
    upstream = _upstream_metadata(pinned_wheel)
    assert md.metadata("tilelang-paddle")["Requires-Python"] == upstream["Requires-Python"]
    files = [str(f) for f in md.files("tilelang-paddle")]
    assert any(f.endswith("licenses/tilelang-LICENSE") for f in files), files[:20]
    assert any(f.endswith("licenses/LICENSE") for f in files)
