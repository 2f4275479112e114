"""The facts about this install that ``tilelang-paddle doctor`` prints and ``selftest --json`` records.

:func:`report` gives rows ``(name, value)``. What needs no Paddle (our
version, tvm-ffi, torch, nvcc) is reported first and always; Paddle and
TileLang are imported inside ``try`` so that a missing Paddle or a broken
import is a row, not a traceback; ``ok`` is False when something stops
``import tilelang``.
"""

from __future__ import annotations

import importlib.metadata as md
import importlib.util
import os
import shutil
import subprocess
import sys

from . import tvm_ffi_version

PADDLE_HINT = ("pip install 'paddlepaddle>=3.3' (CPU), or paddlepaddle-gpu>=3.3 from PaddlePaddle's "
               "package index for your CUDA version")


def version(dist: str) -> str | None:
    try:
        return md.version(dist)
    except md.PackageNotFoundError:
        return None


def _nvcc(cuda_home: str | None) -> str:
    candidates = [shutil.which("nvcc")]
    if cuda_home:
        candidates.append(os.path.join(cuda_home, "bin", "nvcc"))
    for path in filter(None, candidates):
        if os.path.exists(path):
            try:
                out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30).stdout
                release = next((ln.split("release", 1)[1].strip() for ln in out.splitlines() if "release" in ln), "?")
            except (OSError, subprocess.SubprocessError):
                release = "version unknown"
            return f"{path} (release {release})"
    return "not found (CUDA kernels cannot be compiled; set CUDA_HOME or install the CUDA toolkit)"


def _version_line(path: str) -> str:
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"{path} (cannot run it: {type(exc).__name__})"
    first = next((ln.strip() for ln in (out.stdout or out.stderr).splitlines() if ln.strip()), "no version output")
    return f"{path} ({first})"


def _cxx() -> str:
    """The C++ compiler TileLang compiles CPU kernels and links host code with, as it finds one."""
    from tilelang.contrib.cc import get_cplus_compiler

    cxx = get_cplus_compiler()
    if cxx is None:
        return ("none found ($CXX, $CC, g++, clang++, c++ on PATH): CPU kernels (target=\"c\"), the Cython "
                "backend and custom_op cannot be compiled here; kernels and ops from bundles and the cache "
                "still load and run")
    return _version_line(shutil.which(cxx) or cxx)


def _cmake() -> str:
    path = shutil.which("cmake")
    return (_version_line(path) + "; needed to build this package from source, not at run time" if path else
            "not found: needed only to build this package from source (pip install from a clone or sdist)")


def runtime_module(*parts: str):
    """A standard-library-only module of the installed runtime (``tilelang/<parts>.py``), loaded from its file,
    or None: importing ``tilelang`` runs its set-up (Paddle, the CUDA runtime), which may be what is broken."""
    spec = importlib.util.find_spec("tilelang")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = os.path.join(list(spec.submodule_search_locations)[0], *parts[:-1], parts[-1] + ".py")
    if not os.path.isfile(path):
        return None
    module_spec = importlib.util.spec_from_file_location("_tilelang_paddle_" + "_".join(parts), path)
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return module


def build() -> str:
    """``<build id>[, commit <sha>]``: which build this is (the id every kernel key holds; the git commit it
    was built from, where it was built from a checkout), or why that is unknown."""
    ids = runtime_module("paddle_runtime", "_build_id")
    if ids is None:
        return "unknown (no installed tilelang-paddle runtime)"
    commit = getattr(ids, "GIT_COMMIT", None)
    return ids.BUILD_ID + (f", commit {commit}" if commit else "")


def _bundles(raw: str | None) -> list[tuple[str, str]]:
    """One row per directory of TILELANG_PADDLE_BUNDLE: its kernels and targets, or why it is not usable."""
    if not raw:
        return [("bundles", "none (TILELANG_PADDLE_BUNDLE unset: kernels come from the cache or a compile)")]
    manifest = runtime_module("paddle_runtime", "cache", "manifest")
    if manifest is None:
        return [("bundles", f"{raw}: cannot be read: the tilelang package is not installed")]
    rows = []
    for i, root in enumerate(filter(None, (p.strip() for p in raw.split(os.pathsep))), 1):
        path = os.path.join(root, manifest.NAME)
        try:
            data = manifest.read(root)
        except manifest.NotABundle as exc:
            rows.append((f"bundle {i}", f"{root}: NOT USABLE, {path} is not a tilelang-paddle bundle manifest ({exc})"))
            continue
        except OSError as exc:
            rows.append((f"bundle {i}", f"{root}: NOT USABLE, cannot read {path} ({first_line(exc)})"))
            continue
        if data is None:
            rows.append((f"bundle {i}", f"{root}: NOT USABLE, {path} is missing"))
            continue
        entries = data["entries"]
        targets = sorted({manifest.target_text(e.get("fields", {}).get("target", "?")) for e in entries.values()})
        made = (data.get("made_with") or {}).get("tilelang-paddle", "?")
        here = version("tilelang-paddle")
        note = "" if made == here else f"; made with tilelang-paddle {made}, this is {here}: its kernels will not match"
        rows.append((f"bundle {i}", f"{root}: {len(entries)} kernel(s) for {', '.join(targets) or 'no target'}, "
                               f"{len(data.get('autotune') or {})} autotune result(s){note}"))
    return rows


def _nvrtc() -> str:
    try:
        import cuda.bindings  # noqa: F401

        return "cuda-python installed (NVRTC backend available)"
    except ImportError:
        return "cuda-python not installed (NVRTC backend unavailable; tvm_ffi and cython backends unaffected)"


def _compat_state() -> str:
    from paddle.compat import proxy

    finder = getattr(proxy, "TORCH_PROXY_FINDER", None)
    if finder is None or finder not in sys.meta_path:
        return "torch proxy not installed"
    if finder._globally_enabled:
        return "torch proxy enabled globally (every module's `import torch` gets Paddle)"
    return f"torch proxy enabled for scope {sorted(finder._local_enabled_scope)}"


def first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"


def report() -> tuple[list[tuple[str, str]], bool]:
    """``(rows, ok)``: ``ok`` is False when ``import tilelang`` cannot work as installed."""
    ours = version("tilelang-paddle")
    rows = [("tilelang-paddle", f"{ours} (upstream tilelang {ours.split('.post')[0]})" if ours
             else "not installed as a distribution (running from a source tree?)"), ("build", build())]
    ok = True
    tvm_ffi = version("apache-tvm-ffi")
    tvm_problem = tvm_ffi_version.problem()
    rows.append(("tvm-ffi", f"{tvm_ffi or 'not installed'}" + (f" — PROBLEM: {tvm_problem}" if tvm_problem else "")))
    ok &= tvm_problem is None
    torch = version("torch")
    rows.append(("torch", "INSTALLED: not needed by tilelang-paddle; tilelang still uses Paddle" if torch
                 else "not installed (as intended)"))
    try:
        import paddle
    except ImportError as exc:
        if importlib.util.find_spec("paddle") is not None:  # there, but its import fails (Paddle 3.2 wants setuptools)
            rows.append(("Paddle", f"installed but fails to import: {first_line(exc)}; install what it names, or "
                                   f"a Paddle >= 3.3: {PADDLE_HINT}"))
        else:
            rows.append(("Paddle", f"not installed ({first_line(exc)}); install it: {PADDLE_HINT}"))
        rows.append(("nvcc", _nvcc(os.environ.get("CUDA_HOME"))))
        return rows, False
    # What the build can do (CUDA, GPUs) is asked through tilelang's driver below, once tilelang imports.
    paddle_row = len(rows)
    rows.append(("Paddle", paddle.__version__))
    try:
        import tilelang
        from tilelang.env import env
        from tilelang.paddle_runtime import preload
    except Exception as exc:  # noqa: BLE001 - the doctor reports, never crashes
        rows.append(("import tilelang", f"FAILED: {first_line(exc)}"))
        rows.append(("nvcc", _nvcc(os.environ.get("CUDA_HOME"))))
        return rows, False
    from tilelang.paddle_runtime.driver import paddle_driver

    driver = paddle_driver()
    paddle_build = (f"GPU build, CUDA {driver.cuda_version}, {driver.device_count()} GPU(s) visible" if driver.cuda
                    else "CPU-only build")
    rows[paddle_row] = ("Paddle", f"{paddle.__version__} ({paddle_build})")
    rows[0] = ("tilelang-paddle", f"{tilelang.__version__} (upstream tilelang {tilelang.__version__.split('.post')[0]}) "
                                  f"at {os.path.dirname(tilelang.__file__)}")
    r = preload.last_result()
    if r is None:
        rows.append(("libcudart", "preload did not run"))
    else:
        rows.append(("libcudart", f"{r.path or 'none loaded'} — {r.reason}; {len(r.tried)} candidate(s) skipped before it"))
    rows.append(("nvcc", _nvcc(env.CUDA_HOME)))
    rows.append(("NVRTC", _nvrtc()))
    rows.append(("C++ compiler", _cxx()))
    rows.append(("CMake", _cmake()))
    rows.append(("kernel cache", f"{env.TILELANG_CACHE_DIR} ({'enabled' if tilelang.is_cache_enabled() else 'disabled'})"))
    rows.extend(_bundles(os.environ.get("TILELANG_PADDLE_BUNDLE")))
    rows.append(("compat", _compat_state()))
    try:
        from tilelang.backend.target import determine_target

        rows.append(("default target", str(determine_target("auto"))))
    except Exception as exc:  # noqa: BLE001
        rows.append(("default target", f"cannot auto-detect ({type(exc).__name__}: {exc}); pass target= explicitly"))
    rows.append(("next", "`tilelang-paddle selftest` runs kernels here and checks the GPU contract "
                         "(README, \"Check your install\")"))
    return rows, ok
