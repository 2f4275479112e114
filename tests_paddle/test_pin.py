"""The upstream pin: a wheel that does not match its sha256 stops the build."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT, skip_without_index
from src.fork.pin import Pin, PinError, WHEEL_ENV, verified_wheel


@pytest.fixture()
def tampered_wheel(pinned_wheel, tmp_path):
    bad = tmp_path / pinned_wheel.name
    shutil.copy(pinned_wheel, bad)
    with open(bad, "r+b") as f:  # flip one byte in the middle of the archive
        f.seek(os.path.getsize(bad) // 2)
        byte = f.read(1)
        f.seek(-1, 1)
        f.write(bytes([byte[0] ^ 0xFF]))
    return bad


def test_pin_file_lists_hash_for_version():
    pin = Pin.load()
    assert pin.wheels and all(name.startswith(f"tilelang-{pin.version}-") for name in pin.wheels)
    assert all(len(h) == 64 for h in pin.wheels.values())


def test_tampered_wheel_is_refused(tampered_wheel, monkeypatch):
    monkeypatch.setenv(WHEEL_ENV, str(tampered_wheel))
    with pytest.raises(PinError, match="sha256 mismatch"):
        verified_wheel()


def test_tampered_wheel_stops_stage_command(tampered_wheel, tmp_path):
    proc = subprocess.run([sys.executable, "-m", "src.fork", "stage", str(tmp_path / "stage")], cwd=ROOT,
                          capture_output=True, text=True, env={**os.environ, WHEEL_ENV: str(tampered_wheel)})
    assert proc.returncode == 1
    assert "sha256 mismatch" in proc.stderr and "refusing to build" in proc.stderr


def test_tampered_wheel_stops_pip_build(tampered_wheel, tmp_path):
    """The real build (pip -> scikit-build-core -> CMake) fails on the hash, before compiling anything."""
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(tmp_path / "dist"), str(ROOT)],
        capture_output=True, text=True, timeout=900,
        env={**os.environ, WHEEL_ENV: str(tampered_wheel), "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out[-2000:]
    assert "sha256 mismatch" in out, out[-2000:]
    assert not list((tmp_path / "dist").glob("*.whl"))


def test_the_pin_holds_one_wheel_per_machine_and_lookups_keep_them_apart():
    """x86_64 for the build, aarch64 for the cross-built wheel: a cache holding both must not mix them up."""
    pin = Pin.load()
    assert sorted("aarch64" if n.endswith("_aarch64.whl") else "x86_64" if n.endswith("_x86_64.whl") else n
                  for n in pin.wheels) == ["aarch64", "x86_64"]
    assert verified_wheel(pin).name.endswith("_x86_64.whl")
    try:
        arm = verified_wheel(pin, "aarch64")  # downloaded into the suite's own cache: needs the package index
    except PinError as exc:
        skip_without_index(exc)
    assert arm.name.endswith("_aarch64.whl")
