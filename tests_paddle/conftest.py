"""Shared fixtures. Tests run against the *installed* tilelang-paddle wheel.

The repository root is appended (not prepended) to sys.path so the build
tooling (``src.fork``) is importable while ``import tilelang`` still finds the
installed package (the repo's ``tilelang/`` holds only our overlay and has no
``__init__.py``, so it can never shadow it).

The suite is hermetic (:func:`pytest_configure`): before anything is collected,
``HOME``, the kernel cache, the op cache and the upstream-wheel download cache
point into pytest's temporary directory, for this process and every process a
test starts. The pinned upstream wheel the build already downloaded is used
read-only from the user's cache where it is there; a test that must fetch
another (``test_fork_bump``, the aarch64 wheel) needs the package index and
skips naming why where it cannot be reached.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# The repo root for src.fork; examples/ so tests run the quickstart's own kernels.
for extra in (ROOT, ROOT / "examples"):
    if str(extra) not in sys.path:
        sys.path.append(str(extra))


@pytest.hookimpl(trylast=True)
def pytest_configure(config):
    """Point every cache and ``HOME`` into pytest's temporary directory (per xdist worker), before collection
    imports anything that writes (``import tilelang`` creates its kernel cache)."""
    from src.fork.pin import CACHE_ENV, Pin, cache_dir

    if os.environ.get("TILELANG_PADDLE_TESTS_HERMETIC"):  # a test's own pytest run inside the suite
        return
    base = config._tmp_path_factory.mktemp("hermetic", numbered=True)
    users = cache_dir()  # before HOME moves: the wheels the build downloaded, linked (read only) below
    (base / "wheel-cache" / "wheels").mkdir(parents=True)
    for name in Pin.load().wheels:
        if (users / name).is_file():
            (base / "wheel-cache" / "wheels" / name).symlink_to(users / name)
    for variable, sub in (("HOME", "home"), ("TILELANG_CACHE_DIR", "kernel-cache"),
                          ("TILELANG_PADDLE_OP_CACHE", "op-cache"), (CACHE_ENV, "wheel-cache"),
                          ("XDG_CACHE_HOME", "home/.cache")):
        (base / sub).mkdir(parents=True, exist_ok=True)
        os.environ[variable] = str(base / sub)
    os.environ["TILELANG_PADDLE_TESTS_HERMETIC"] = str(base)


def skip_without_index(exc: Exception) -> None:
    """Skip the test where ``exc`` says pip could not reach the package index; otherwise re-raise it."""
    text = str(exc)
    if "could not download" in text and any(m in text for m in ("Failed to establish", "No matching distribution",
                                                                   "Could not fetch", "Temporary failure",
                                                                   "Network is unreachable")):
        pytest.skip(f"needs the package index, which cannot be reached: {text.splitlines()[0]}")
    raise exc


def run_python(code: str, env: dict | None = None, timeout: int = 300, cwd: str | None = None) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter (import-time and crash-prone cases).

    The code goes through a real file: TileLang reads kernel sources with ``inspect``.
    """
    full_env = {**os.environ, **(env or {})}
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(textwrap.dedent(code))
    try:
        return subprocess.run([sys.executable, f.name], capture_output=True, text=True,
                              env=full_env, timeout=timeout, cwd=cwd or tempfile.gettempdir())
    finally:
        os.unlink(f.name)


def compiler_free_env(tmp_path: Path) -> dict:
    """This process's environment with no compiler reachable: no CC/CXX, a PATH of the basic tools only (links
    in a fresh directory), CUDA_HOME naming an empty directory; checked. The selftest's own, so the tests'
    slim host is the one ``tilelang-paddle selftest`` serves a bundle on."""
    from tilelang.paddle_runtime.selftest.paddle_checks import compiler_free_env as slim_env

    return slim_env(tmp_path)


def run_bare(code: str, env: dict, cwd: str, timeout: int = 300) -> subprocess.CompletedProcess:
    """``code`` in a fresh interpreter with exactly ``env`` (``run_python`` adds this process's environment)."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=timeout,
                          cwd=cwd)


@pytest.fixture(scope="session")
def pinned_wheel() -> Path:
    """The pinned upstream wheel (the user's download cache, read only, or pip), hash-verified."""
    from src.fork.pin import PinError, verified_wheel

    try:
        return verified_wheel()
    except PinError as exc:
        skip_without_index(exc)


@pytest.fixture(scope="session")
def tilelang_mod():
    import paddle

    paddle.enable_compat(scope={"tilelang"}, silent=True)
    import tilelang

    return tilelang
