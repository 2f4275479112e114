"""The upstream pin (``3rdparty/upstream.toml``) and the fetching of its wheel.

Wheel lookup order (first hit wins; every hit is hash-checked when verifying):

1. ``TILELANG_PADDLE_UPSTREAM_WHEEL``: path to a wheel file already on disk
   (offline builds, and the tests that feed the build a tampered file).
2. The download cache ``$TILELANG_PADDLE_CACHE`` (default
   ``~/.cache/tilelang-paddle/wheels``), so repeated builds do not download again.
3. ``pip download --no-deps --only-binary=:all: tilelang==VERSION`` (with
   ``--platform manylinux_2_34_aarch64`` for the aarch64 wheel).

Each lookup is for one machine (``x86_64`` by default, ``aarch64`` for the
cross-built wheel); the cache holds both and is searched by machine.
``TILELANG_PADDLE_UPSTREAM_WHEEL`` stands for the x86_64 wheel only.
"""

from __future__ import annotations

import os
import subprocess
import sys

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the same parser as a package (a build requirement there)
    import tomli as tomllib
from dataclasses import dataclass
from pathlib import Path

from ..tilelang_paddle.digest import sha256_file

REPO_ROOT = Path(__file__).resolve().parents[2]
PIN_FILE = REPO_ROOT / "3rdparty" / "upstream.toml"
WHEEL_ENV = "TILELANG_PADDLE_UPSTREAM_WHEEL"
CACHE_ENV = "TILELANG_PADDLE_CACHE"
HOST_MACHINE = "x86_64"
# pip's --platform for each machine we build for other than the host: upstream's aarch64 wheel's tag.
PIP_PLATFORM = {"aarch64": "manylinux_2_34_aarch64"}


class PinError(RuntimeError):
    """The upstream wheel is missing, unpinned, or does not match its pin."""


@dataclass(frozen=True)
class Pin:
    version: str
    wheels: dict[str, str]  # file name -> sha256

    @classmethod
    def load(cls, path: Path = PIN_FILE) -> Pin:
        data = tomllib.loads(path.read_text())
        return cls(version=data["version"], wheels=dict(data["wheels"]))


def cache_dir() -> Path:
    root = os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "tilelang-paddle"
    return Path(root) / "wheels"


def _for_machine(paths, machine: str) -> list[Path]:
    return sorted(p for p in paths if p.name.endswith(f"_{machine}.whl"))


def _pip_download(version: str, dest: Path, machine: str = HOST_MACHINE) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
           "--disable-pip-version-check", "-d", str(dest), f"tilelang=={version}"]
    if machine in PIP_PLATFORM:
        cmd += ["--platform", PIP_PLATFORM[machine]]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise PinError(f"could not download tilelang=={version} ({machine}) with pip:\n{proc.stdout}\n{proc.stderr}\n"
                       f"Set {WHEEL_ENV}=/path/to/tilelang-{version}-*.whl to build offline.")
    found = _for_machine(dest.glob(f"tilelang-{version}-*.whl"), machine)
    if not found:
        raise PinError(f"pip reported success but no tilelang-{version}-*_{machine}.whl is in {dest}")
    return found[-1]


def find_wheel(version: str, machine: str = HOST_MACHINE) -> Path:
    """Return a local wheel of upstream ``version`` for ``machine`` (see module docstring for the order)."""
    override = os.environ.get(WHEEL_ENV)
    if override and machine == HOST_MACHINE:
        path = Path(override)
        if not path.is_file():
            raise PinError(f"{WHEEL_ENV}={override!r} is not a file")
        return path
    cached = _for_machine(cache_dir().glob(f"tilelang-{version}-*.whl"), machine)
    if cached:
        return cached[-1]
    return _pip_download(version, cache_dir(), machine)


def verified_wheel(pin: Pin | None = None, machine: str = HOST_MACHINE) -> Path:
    """Return the pinned upstream wheel for ``machine`` after checking its sha256; raise PinError otherwise."""
    pin = pin or Pin.load()
    wheel = find_wheel(pin.version, machine)
    name = wheel.name
    if os.environ.get(WHEEL_ENV) and machine == HOST_MACHINE:
        # An override may be renamed; accept it under any pinned name whose version matches.
        expected = pin.wheels.get(name) or next(
            (h for n, h in pin.wheels.items() if n.startswith(f"tilelang-{pin.version}-")), None)
    else:
        expected = pin.wheels.get(name)
    if expected is None:
        raise PinError(f"no sha256 pinned for {name} in {PIN_FILE}; pinned wheels: {sorted(pin.wheels)}. "
                       f"Add its hash there after checking where it came from.")
    actual = sha256_file(wheel)
    if actual != expected:
        raise PinError(f"sha256 mismatch for upstream wheel {wheel}:\n  expected {expected} (pinned in {PIN_FILE})\n"
                       f"  actual   {actual}\nThe file is not the pinned upstream release; refusing to build. "
                       f"Delete it (it may be a corrupt cache entry) or fix the pin.")
    return wheel
