"""Make the CUDA runtime (libcudart) visible in the global symbol namespace.

Why: upstream TileLang relies on ``import torch`` having loaded libcudart with
global visibility; its compiled kernels and stub libraries then resolve
``cuda*`` symbols from it. Paddle loads its libcudart as a DT_NEEDED of a
Python extension, i.e. RTLD_LOCAL, so nothing is global until we promote it.

Candidates, in order (the first that loads wins):

1. ``$TILELANG_PADDLE_CUDART``: an explicit path, for unusual installs.
2. The libcudart this process already mapped (Paddle's own copy), promoted with
   ``RTLD_NOLOAD | RTLD_GLOBAL`` so no second copy is loaded.
3. The pip CUDA runtime next to Paddle, matching Paddle's CUDA major
   (CUDA 13: ``nvidia/cu13/lib/libcudart.so.13``;
   CUDA 12: ``nvidia/cuda_runtime/lib/libcudart.so.12``).
4. ``$CUDA_HOME`` then ``$CUDA_PATH``: ``lib64``, ``lib``, ``targets/*/lib``.
5. ``/usr/local/cuda``, same sub-directories.
6. The dynamic loader's own search: ``libcudart.so.13``, ``libcudart.so.12``, ``libcudart.so``.

Within 3-6 the version matching Paddle's CUDA major is tried first. A
candidate that fails to load is recorded and skipped. If nothing loads, a
CPU-only Paddle goes on silently (debug log); a CUDA build of Paddle gets one
ImportError that lists every candidate tried and the variable to set.
"""

from __future__ import annotations

import ctypes
import glob
import logging
import os
from dataclasses import dataclass, field

logger = logging.getLogger("tilelang.paddle_runtime")

from .settings import CUDART as ENV_CUDART
_MAJORS = ("13", "12")


@dataclass
class PreloadResult:
    """What the preload chose and why (shown by the doctor)."""

    path: str | None = None  # library loaded, None when nothing loaded
    reason: str = ""  # which rule picked it
    tried: list[tuple[str, str]] = field(default_factory=list)  # (candidate, why it failed)
    handle: ctypes.CDLL | None = None


_RESULT: PreloadResult | None = None


def mapped_cudart() -> list[str]:
    """Paths of libcudart already mapped into this process (from /proc/self/maps)."""
    found = []
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.rsplit(None, 1)[-1] if "/" in line else ""
                if os.path.basename(path).startswith("libcudart.so") and path not in found:
                    found.append(path)
    except OSError:
        pass
    return found


def _ordered_majors(major: str | None) -> tuple[str, ...]:
    return (major, *[m for m in _MAJORS if m != major]) if major in _MAJORS else _MAJORS


def _toolkit_candidates(root: str, majors: tuple[str, ...]) -> list[tuple[str, str]]:
    dirs = [os.path.join(root, "lib64"), os.path.join(root, "lib"), *sorted(glob.glob(os.path.join(root, "targets", "*", "lib")))]
    out = []
    for major in majors:
        out += [(os.path.join(d, f"libcudart.so.{major}"), f"toolkit {root}") for d in dirs]
    out += [(os.path.join(d, "libcudart.so"), f"toolkit {root}") for d in dirs]
    return out


SYSTEM_ROOTS = ("/usr/local/cuda",)
LOADER_NAMES = tuple(f"libcudart.so.{m}" for m in _MAJORS) + ("libcudart.so",)


def candidates(cuda_major: str | None, site_dirs: list[str], environ=os.environ,
               system_roots=SYSTEM_ROOTS, loader_names=LOADER_NAMES) -> list[tuple[str, str, bool]]:
    """Ordered ``(path or soname, reason, promote_only)`` candidates; see the module docstring."""
    out: list[tuple[str, str, bool]] = []
    if environ.get(ENV_CUDART):
        out.append((environ[ENV_CUDART], f"${ENV_CUDART}", False))
    out += [(p, "already mapped in this process (e.g. Paddle's own copy), promoted to RTLD_GLOBAL", True) for p in mapped_cudart()]
    majors = _ordered_majors(cuda_major)
    for site in site_dirs:
        layouts = {"13": os.path.join(site, "nvidia", "cu13", "lib", "libcudart.so.13"),
                   "12": os.path.join(site, "nvidia", "cuda_runtime", "lib", "libcudart.so.12")}
        out += [(layouts[m], f"pip CUDA {m} runtime in {site}", False) for m in majors]
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if environ.get(var):
            out += [(p, f"${var} ({why})", False) for p, why in _toolkit_candidates(environ[var], majors)]
    for root in system_roots:
        out += [(p, why, False) for p, why in _toolkit_candidates(root, majors)]
    by_major = sorted(loader_names, key=lambda n: (n.rsplit(".", 1)[-1] not in majors[:1], n == "libcudart.so"))
    out += [(n, "dynamic loader search", False) for n in by_major]
    # Drop duplicates (CUDA_HOME is often /usr/local/cuda), keeping the first reason.
    seen, unique = set(), []
    for path, why, promote in out:
        if path not in seen:
            seen.add(path)
            unique.append((path, why, promote))
    return unique


def _try_load(path: str, promote_only: bool) -> ctypes.CDLL:
    if "/" in path and not os.path.exists(path):
        raise OSError("no such file")
    mode = ctypes.RTLD_GLOBAL | (os.RTLD_NOLOAD if promote_only else 0)
    handle = ctypes.CDLL(path, mode=mode)
    # A file named libcudart that is not the CUDA runtime must not win.
    if not hasattr(handle, "cudaRuntimeGetVersion"):
        raise OSError("does not export cudaRuntimeGetVersion")
    return handle


def preload(cuda_major: str | None, cuda_build: bool, site_dirs: list[str], environ=os.environ, **where) -> PreloadResult:
    """Load libcudart with RTLD_GLOBAL once per process; later calls return the first success.

    ``where`` (``system_roots``, ``loader_names``) narrows the search, for tests.
    """
    global _RESULT
    if _RESULT is not None and _RESULT.path is not None:
        return _RESULT
    result = PreloadResult()
    for path, why, promote in candidates(cuda_major, site_dirs, environ, **where):
        try:
            result.handle = _try_load(path, promote)
        except OSError as exc:
            result.tried.append((path, str(exc).splitlines()[0] if str(exc) else type(exc).__name__))
            continue
        result.path, result.reason = _resolved_path(path), why
        logger.debug("libcudart preloaded from %s (%s)", result.path, why)
        break
    else:
        if cuda_build:
            lines = "\n".join(f"  {p}: {err}" for p, err in result.tried)
            raise ImportError(
                "tilelang-paddle: Paddle is built with CUDA but no libcudart could be loaded. Tried, in order:\n"
                f"{lines}\nSet {ENV_CUDART}=/path/to/libcudart.so.<major> (matching paddle.version.cuda()), "
                "or install the CUDA runtime wheel matching your Paddle build."
            )
        result.reason = "CPU-only Paddle and no CUDA runtime found; CUDA kernels cannot run (compiling still works)"
        logger.debug("no libcudart preloaded: %s", [p for p, _ in result.tried])
    _RESULT = result
    return result


def _resolved_path(path: str) -> str:
    """The file the loader actually mapped for ``path`` (resolves sonames)."""
    if "/" in path:
        return os.path.realpath(path)
    for mapped in mapped_cudart():
        return mapped
    return path


def last_result() -> PreloadResult | None:
    return _RESULT
