"""The toolchain that builds a kernel, in TileLang's kernel cache key (patch 0036).

Upstream keys a cached kernel by its program, arguments, target, backend,
pass configs, flags, TileLang's version and the platform; patch 0023 adds our
build id. Nothing names the tools that turned the program into machine code,
so a new CUDA toolkit or host compiler would load kernels the old one built.
Two parts are added (docs/kernel-cache.md lists every field):

``tvm_ffi`` (in the key: :func:`complete_key`)
    the installed ``apache-tvm-ffi`` version (the ABI of every kernel library).
    The key is then what a kernel needs to *load*, so bundles are indexed by it.

the build tools (in the writable cache's directory name: :func:`cache_path`)
    ``host_cxx``: the C++ compiler upstream links host code with
    (``tilelang.contrib.cc.get_cplus_compiler``: ``$CXX``, ``$CC``, else
    ``g++``/``clang++``/``c++`` on ``PATH``), its ``--version`` output;
    ``nvcc`` (CUDA targets): ``<CUDA_HOME>/bin/nvcc --version`` (release and
    build lines; the CUDA binary cache below is keyed by it too, patch 0038);
    ``nvrtc`` (the nvrtc backend): ``nvrtcVersion()`` from ``cuda.bindings``.
    A tool that is missing gives ``"none"``.

The build tools are needed to make a kernel, not to load one: they are asked
only when the writable cache or a compile needs them, never for a bundle hit
(a serving image may have no compiler, or one that is slow to start); where
one is missing, the writable cache's entry of another toolchain loads. Each
identity is asked once per process per tool file (path, size and mtime); a
wrapper script with another version is another file.
"""

from __future__ import annotations

import contextvars
import functools
import hashlib
import importlib.metadata
import json
import os
import subprocess

NONE = "none"

#: The fields of the last key this thread's context made (:func:`complete_key`), for :mod:`.bundle`.
LAST_KEY_DATA: contextvars.ContextVar[dict | None] = contextvars.ContextVar("tlp_last_key_data", default=None)



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


def build_tools(kind: str, execution_backend: str) -> dict:
    """The build tools' identities for a target kind and backend (starts each tool once per process)."""
    fields = {"host_cxx": tool_identity(_host_cxx())}
    if kind == "cuda":
        if execution_backend == "nvrtc":
            fields["nvrtc"] = _nvrtc()
        else:
            fields["nvcc"] = nvcc_identity()
    return fields


#: key -> (target kind, backend) of every key made in this process, for :func:`cache_path`.
_BUILT_BY: dict = {}


def complete_key(key_data: dict) -> dict:
    """Add tvm-ffi's version to upstream's key fields (patch 0036) and remember them for this context.

    Starts no process: the build tools join only the writable cache's directory name (:func:`cache_path`).
    """
    key_data["toolchain"] = {"tvm_ffi": tvm_ffi_version()}
    LAST_KEY_DATA.set(key_data)
    return key_data


def remember(key: str, target, execution_backend: str) -> str:
    """Note which tools build ``key``'s kernel (patch 0036, as ``_generate_key`` returns ``key``)."""
    _BUILT_BY[key] = (target_kind(target), execution_backend)
    return key


def tools_for(key: str) -> dict:
    """The build tools of ``key``'s kernel (:func:`build_tools` for the target and backend it was made for)."""
    return build_tools(*_BUILT_BY.get(key, ("c", "")))


def cache_path(root: str, key: str) -> str:
    """The writable cache's directory for ``key``: ``<key>.<digest of the tools that build its kernel>``.

    Where a tool this kernel needs is missing, nothing here can build it, so an entry another toolchain
    built loads as well as its own would (the bundles' rule): the newest complete one of that key.
    """
    tools = tools_for(key)
    exact = os.path.join(root, f"{key}.{hashlib.sha256(json.dumps(tools, sort_keys=True).encode()).hexdigest()[:16]}")
    if NONE in tools.values() and not os.path.isdir(exact):
        import glob

        newest, newest_mtime = exact, None
        for path in glob.glob(os.path.join(root, glob.escape(key) + ".*")):
            try:
                mtime = os.stat(path).st_mtime
            except OSError:  # removed meanwhile
                continue
            if newest_mtime is None or mtime > newest_mtime:
                newest, newest_mtime = path, mtime
        return newest
    return exact
