"""Cython-backend CUDA kernels link on machines without the NVIDIA driver (CPU-only CI building bundles).

Upstream links each such kernel library with ``-lcuda`` (``jit/adapter/libgen.py``).
The driver's ``libcuda.so`` is what a machine with a GPU has; a CI machine
with only the CUDA toolkit lacks it and the link fails (``cannot find -lcuda``),
though nothing runs there. :func:`link_flags` (patch 0049) adds, only where the
linker would not find ``libcuda.so``:

1. the toolkit's link-time stub directory (``<CUDA_HOME>/lib64/stubs``, or
   ``targets/<arch>/lib/stubs``), which NVIDIA ships for exactly this;
2. else an empty library we make once per cache root with the host compiler,
   named ``libcuda.so`` with the soname ``libcuda.so.1``, as the toolkit's stub
   has.

The stub changes nothing in the kernel library. Its host code reaches the
driver through the CUDA runtime (statically linked by nvcc) and CUTLASS's
``CUTLASS_CUDA_DRIVER_WRAPPER_CALL``, which asks ``cudaGetDriverEntryPoint``
at run time, not by symbol: the library has no undefined ``cu*`` symbol, and
the link records no ``libcuda`` where the driver's library is either (nvcc's
link keeps only the libraries used). tests_paddle/test_cache_model.py checks
the first; a bundle built here and served on an H100 checked the rest.
"""

from __future__ import annotations

import functools
import glob
import os
import subprocess
import tempfile

SONAME = "libcuda.so.1"


def _linker_finds(cxx: str | None, library_dirs: tuple) -> bool:
    if any(os.path.exists(os.path.join(d, "libcuda.so")) for d in library_dirs):
        return True
    for d in filter(None, os.environ.get("LIBRARY_PATH", "").split(os.pathsep)):
        if os.path.exists(os.path.join(d, "libcuda.so")):
            return True
    if not cxx:
        return False
    try:
        out = subprocess.run([cxx, "-print-file-name=libcuda.so"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return False
    return os.path.isabs(out.stdout.strip())  # gcc and clang print the bare name when they find none


def _toolkit_stubs(cuda_home: str | None) -> str | None:
    if not cuda_home:
        return None
    for pattern in ("lib64/stubs", "targets/*/lib/stubs", "lib/stubs"):
        for d in sorted(glob.glob(os.path.join(glob.escape(cuda_home), pattern))):
            if os.path.exists(os.path.join(d, "libcuda.so")):
                return d
    return None


def _make_stub(cxx: str, where: str) -> str:
    """``where/libcuda.so`` (soname libcuda.so.1, no symbols), made beside its final name and renamed in."""
    lib = os.path.join(where, "libcuda.so")
    if os.path.exists(lib):
        return where
    os.makedirs(where, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=where) as tmp:
        src = os.path.join(tmp, "stub.c")
        with open(src, "w") as f:
            f.write("/* link-time stand-in for the NVIDIA driver's libcuda (tilelang-paddle) */\n"
                    "int tilelang_paddle_libcuda_link_stub;\n")
        built = os.path.join(tmp, "libcuda.so")
        proc = subprocess.run([cxx, "-x", "c", "-shared", "-fPIC", f"-Wl,-soname,{SONAME}", "-o", built, src],
                              capture_output=True, text=True, timeout=120)
        if proc.returncode:
            raise RuntimeError(f"making a link stub for libcuda with {cxx} failed: {proc.stderr.strip()[:500]}")
        os.replace(built, lib)
    return where


@functools.lru_cache(maxsize=4)
def _link_dirs(cuda_home: str | None, cxx: str | None, library_dirs: tuple, cache_root: str) -> tuple:
    if _linker_finds(cxx, library_dirs):
        return ()
    stubs = _toolkit_stubs(cuda_home)
    if stubs:
        return (stubs,)
    if not cxx:
        return ()  # nvcc's own failure names the missing host compiler
    try:
        return (_make_stub(cxx, os.path.join(cache_root, "cuda-link-stub")),)
    except OSError:  # a cache that cannot be written: a directory of this process's own
        return (_make_stub(cxx, tempfile.mkdtemp(prefix="tilelang-cuda-link-stub-")),)


def link_flags(library_dirs) -> list:
    """nvcc flags, placed before its ``-lcuda``, that let it link here: none where the driver's library is found."""
    from tilelang import env
    from tilelang.contrib.cc import get_cplus_compiler

    dirs = _link_dirs(env.CUDA_HOME, get_cplus_compiler(), tuple(library_dirs), env.TILELANG_CACHE_DIR)
    return [f"-L{d}" for d in dirs]
