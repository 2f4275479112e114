"""The toolchain that builds a kernel, as fields of TileLang's kernel cache key (patch 0036).

Upstream keys a cached kernel by its program, arguments, target, backend,
pass configs, flags, TileLang's version and the platform; patch 0023 adds our
build id. Nothing names the tools that turned the program into machine code,
so a new CUDA toolkit or host compiler would load kernels the old one built.
:func:`key_fields` adds them (docs/kernel-cache.md lists every field):

``tvm_ffi``
    the installed ``apache-tvm-ffi`` version (the ABI of every kernel library).
``host_cxx``
    the C++ compiler upstream links host code with (``tilelang.contrib.cc.get_cplus_compiler``:
    ``$CXX``, ``$CC``, else ``g++``/``clang++``/``c++`` on ``PATH``): its ``--version`` output.
``nvcc``
    CUDA targets: ``<CUDA_HOME>/bin/nvcc --version`` (release and build lines); the
    CUDA binary cache below the kernel cache is keyed by it too (patch 0038).
``nvrtc``
    the nvrtc backend: ``nvrtcVersion()`` from ``cuda.bindings``.

A tool that is missing gives ``"none"``. Each identity is asked once per
process per tool file (path, size and mtime), so a cache lookup costs a dict
lookup after the first; a wrapper script with another version is another file.
"""

from __future__ import annotations

import contextvars
import functools
import importlib.metadata
import os
import subprocess

NONE = "none"

#: The fields of the last key this thread's context made (:func:`complete_key`), for :mod:`.bundle`.
LAST_KEY_DATA: contextvars.ContextVar[dict | None] = contextvars.ContextVar("tlp_last_key_data", default=None)

#: The build tools among the fields: needed to compile a kernel, not to load one (see :mod:`.bundle`).
BUILD_TOOLS = ("host_cxx", "nvcc", "nvrtc")


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
        import shutil

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
def _tvm_ffi() -> str:
    try:
        return importlib.metadata.version("apache-tvm-ffi")
    except importlib.metadata.PackageNotFoundError:
        return NONE


def key_fields(target, execution_backend: str) -> dict:
    """The toolchain fields of a kernel's cache key for ``target`` (a tvm Target) and the backend's name."""
    kind = getattr(getattr(target, "kind", None), "name", None) or str(target).split()[0]
    fields = {"tvm_ffi": _tvm_ffi(), "host_cxx": tool_identity(_host_cxx())}
    if kind == "cuda":
        if execution_backend == "nvrtc":
            fields["nvrtc"] = _nvrtc()
        else:
            fields["nvcc"] = nvcc_identity()
    return fields


def complete_key(key_data: dict, target, execution_backend: str) -> dict:
    """Add the toolchain to upstream's key fields (patch 0036) and remember them for this context."""
    key_data["toolchain"] = key_fields(target, execution_backend)
    LAST_KEY_DATA.set(key_data)
    return key_data
