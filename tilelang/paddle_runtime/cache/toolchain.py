"""The tools that build a kernel: their identities, asked once per tool file, for entry names and re-checks.

Every cache entry, a kernel or a tuned kernel, is made by these tools
(:mod:`.entries` names writable entries by them; docs/kernel-cache.md):

``host_cxx``
    the C++ compiler upstream links host code with
    (``tilelang.contrib.cc.get_cplus_compiler``: ``$CXX``, ``$CC``, else
    ``g++``/``clang++``/``c++`` on ``PATH``), its ``--version`` output;
``nvcc`` (CUDA targets)
    ``<CUDA_HOME>/bin/nvcc --version`` (release and build lines; the CUDA
    binary cache is keyed by it too, patch 0038);
``nvrtc`` (the nvrtc backend)
    ``nvrtcVersion()`` from ``cuda.bindings``.

A tool that is missing gives ``"none"``. A tool's identity is asked once per
tool file (its resolved path, size and modification time: :func:`stamps`), so
a compiler replaced in place, or a wrapper script that reports another
version, is asked again. The tools are asked only when the writable cache or a
compile needs them, never for a bundle hit: a serving image may have no
compiler, or one that is slow to start.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import json
import os
import shutil
import subprocess

NONE = "none"


def _file_stamp(path: str | None):
    if not path:
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (os.path.realpath(path), st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=16)
def _version_text(path: str, size: int, mtime_ns: int) -> str:
    del size, mtime_ns  # part of the cache key only: a changed file is asked again
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"{path}: unusable ({type(exc).__name__})"
    lines = [ln.strip() for ln in (out.stdout or out.stderr).splitlines() if ln.strip()]
    # gcc/clang: the first line names the compiler and version; nvcc: the "release" and "Build" lines.
    keep = [ln for ln in lines if ln.startswith(("Cuda compilation tools", "Build "))] or lines[:1]
    return " | ".join(keep) or f"{path}: no version output"


def tool_identity(path: str | None) -> str:
    """``path --version``, reduced to the lines that name the tool's version; ``"none"`` if it is absent."""
    stamp = _file_stamp(path)
    return NONE if stamp is None else _version_text(*stamp)


def _host_cxx() -> str | None:
    from tilelang.contrib.cc import get_cplus_compiler

    cxx = get_cplus_compiler()
    if cxx and not os.path.isabs(cxx):
        cxx = shutil.which(cxx) or cxx
    return cxx


def _nvcc() -> str | None:
    from tilelang import env

    home = env.CUDA_HOME
    return os.path.join(home, "bin", "nvcc") if home else None


def nvcc_identity() -> str:
    """``<CUDA_HOME>/bin/nvcc --version``'s release and build lines (patch 0038's CUDA binary cache key too)."""
    return tool_identity(_nvcc())


@functools.lru_cache(maxsize=1)
def _nvrtc() -> str:
    try:
        from cuda.bindings import nvrtc

        result, major, minor = nvrtc.nvrtcVersion()
        return f"{major}.{minor}" if result == nvrtc.nvrtcResult.NVRTC_SUCCESS else NONE
    except Exception:  # noqa: BLE001 - cuda-python absent or broken: the backend cannot build either
        return NONE


@functools.lru_cache(maxsize=1)
def tvm_ffi_version() -> str:
    try:
        return importlib.metadata.version("apache-tvm-ffi")
    except importlib.metadata.PackageNotFoundError:
        return NONE


def target_kind(target) -> str:
    """A target's kind name; upstream's adapters also hold targets as strings (``"cuda"``, a JSON config)."""
    kind = getattr(target, "kind", None)
    if kind is None:
        from tvm.target import Target

        kind = Target(target).kind
    return kind.name


def _tool_files(kind: str, execution_backend: str) -> dict:
    files = {"host_cxx": _host_cxx()}
    if kind == "cuda" and execution_backend != "nvrtc":
        files["nvcc"] = _nvcc()
    return files


def build_tools(kind: str, execution_backend: str) -> dict:
    """The build tools' identities for a target kind and backend (starts each tool once per tool file)."""
    fields = {tool: tool_identity(path) for tool, path in _tool_files(kind, execution_backend).items()}
    if kind == "cuda" and execution_backend == "nvrtc":
        fields["nvrtc"] = _nvrtc()
    return fields


def stamps(kind: str, execution_backend: str) -> tuple:
    """Each build tool file's (resolved path, size, mtime), or None where it is missing; starts no process."""
    return tuple(_file_stamp(path) for path in _tool_files(kind, execution_backend).values())


def digest(tools: dict) -> str:
    """16 hex digits naming a set of tool identities (:func:`build_tools`) in entry directory names."""
    return hashlib.sha256(json.dumps(tools, sort_keys=True).encode()).hexdigest()[:16]
