"""Shared fixtures. Tests run against the *installed* tilelang-paddle wheel.

The repository root is appended (not prepended) to sys.path so the build
tooling (``src.fork``) is importable while ``import tilelang`` still finds the
installed package (the repo's ``tilelang/`` holds only our overlay and has no
``__init__.py``, so it can never shadow it).
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
    """The pinned upstream wheel (download cache or pip), hash-verified."""
    from src.fork.pin import verified_wheel

    return verified_wheel()


@pytest.fixture(scope="session")
def tilelang_mod():
    import paddle

    paddle.enable_compat(scope={"tilelang"}, silent=True)
    import tilelang

    return tilelang
