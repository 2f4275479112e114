"""``tilelang-paddle doctor [--json]``: one screen about this install, for debugging it.

Each row is ``(name, value)``. What needs no Paddle (our version, tvm-ffi,
torch, nvcc) is reported first and always; Paddle and TileLang are imported
inside ``try`` so that a missing Paddle or a broken import is a row, not a
traceback. The exit status is 1 when something stops ``import tilelang``.
"""

from __future__ import annotations

import argparse
import importlib.metadata as md
import importlib.util
import json
import os
import shutil
import subprocess
import sys

from . import tvm_ffi_version

PADDLE_HINT = ("pip install 'paddlepaddle>=3.3' (CPU), or paddlepaddle-gpu>=3.3 from PaddlePaddle's "
               "package index for your CUDA version")


def _version(dist: str) -> str | None:
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


def _manifest_module():
    """The runtime's bundle manifest module, loaded from its file: importing ``tilelang`` runs its set-up (Paddle,
    the CUDA runtime), which may be what is broken; the module itself needs only the standard library."""
    import importlib.util

    spec = importlib.util.find_spec("tilelang")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = os.path.join(list(spec.submodule_search_locations)[0], "paddle_runtime", "cache", "manifest.py")
    module_spec = importlib.util.spec_from_file_location("_tilelang_paddle_manifest", path)
    if module_spec is None or not os.path.isfile(path):
        return None
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return module


def _bundles(raw: str | None) -> list[tuple[str, str]]:
    """One row per directory of TILELANG_PADDLE_BUNDLE: its kernels and targets, or why it is not usable."""
    if not raw:
        return [("bundles", "none (TILELANG_PADDLE_BUNDLE unset: kernels come from the cache or a compile)")]
    manifest = _manifest_module()
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
            rows.append((f"bundle {i}", f"{root}: NOT USABLE, cannot read {path} ({_first_line(exc)})"))
            continue
        if data is None:
            rows.append((f"bundle {i}", f"{root}: NOT USABLE, {path} is missing"))
            continue
        entries = data["entries"]
        targets = sorted({manifest.target_text(e.get("fields", {}).get("target", "?")) for e in entries.values()})
        made = (data.get("made_with") or {}).get("tilelang-paddle", "?")
        here = _version("tilelang-paddle")
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


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"


def report() -> tuple[list[tuple[str, str]], bool]:
    """``(rows, ok)``: ``ok`` is False when ``import tilelang`` cannot work as installed."""
    ours = _version("tilelang-paddle")
    rows = [("tilelang-paddle", f"{ours} (upstream tilelang {ours.split('.post')[0]})" if ours
             else "not installed as a distribution (running from a source tree?)")]
    ok = True
    tvm_ffi = _version("apache-tvm-ffi")
    tvm_problem = tvm_ffi_version.problem()
    rows.append(("tvm-ffi", f"{tvm_ffi or 'not installed'}" + (f" — PROBLEM: {tvm_problem}" if tvm_problem else "")))
    ok &= tvm_problem is None
    torch = _version("torch")
    rows.append(("torch", "INSTALLED: not needed by tilelang-paddle; tilelang still uses Paddle" if torch
                 else "not installed (as intended)"))
    try:
        import paddle
    except ImportError as exc:
        if importlib.util.find_spec("paddle") is not None:  # there, but its import fails (Paddle 3.2 wants setuptools)
            rows.append(("Paddle", f"installed but fails to import: {_first_line(exc)}; install what it names, or "
                                   f"a Paddle >= 3.3: {PADDLE_HINT}"))
        else:
            rows.append(("Paddle", f"not installed ({_first_line(exc)}); install it: {PADDLE_HINT}"))
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
        rows.append(("import tilelang", f"FAILED: {_first_line(exc)}"))
        rows.append(("nvcc", _nvcc(os.environ.get("CUDA_HOME"))))
        return rows, False
    from tilelang.paddle_runtime.driver import paddle_driver

    driver = paddle_driver()
    build = (f"GPU build, CUDA {driver.cuda_version}, {driver.device_count()} GPU(s) visible" if driver.cuda
             else "CPU-only build")
    rows[paddle_row] = ("Paddle", f"{paddle.__version__} ({build})")
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


def _parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description="tilelang-paddle: TileLang on PaddlePaddle")
    parser.add_argument("--version", action="version",
                        version=f"tilelang-paddle {_version('tilelang-paddle') or 'not installed'}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    doctor = sub.add_parser("doctor", help="report this install's state on one screen (versions, CUDA, cache)",
                            description="Report this install's state: versions, CUDA runtime, nvcc, kernel cache.")
    doctor.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    selftest = sub.add_parser("selftest", help="run kernels on this install and check the GPU contract",
                              description="Run TileLang kernels through this install's Paddle: on the CPU, and on "
                                          "every GPU Paddle sees (streams, devices, CUDA graphs, do_bench, "
                                          "custom ops). One line per check; exit status 1 if any check fails.")
    selftest.add_argument("--json", metavar="FILE", help="also write the doctor's facts and every result to FILE "
                                                         "(attach it to a bug report)")
    selftest.add_argument("--quick", action="store_true",
                          help="skip the checks that build operators and bundles; GPU checks on gpu:0, tvm_ffi only")
    bundle = sub.add_parser("bundle", help="compile a job's kernels into a directory that serving loads",
                            description="Run each MODULE:FUNCTION in a fresh process with a private kernel cache "
                                        "and write every kernel it compiled into OUT, with a manifest of their "
                                        "keys and sha256. Serve them with TILELANG_PADDLE_BUNDLE=OUT.")
    bundle.add_argument("out", metavar="OUT", help="the bundle directory (created; its old entries are kept)")
    bundle.add_argument("--run", action="append", required=True, metavar="MODULE:FUNCTION",
                        help="a function that compiles (and may call) kernels; repeatable")
    return parser


def _selftest(json_path: str | None, quick: bool) -> int:
    try:
        import tilelang  # noqa: F401 - its bootstrap checks Paddle and scopes the torch proxy
        from tilelang.paddle_runtime import selftest
    except Exception as exc:  # noqa: BLE001 - say what broke and where to look, not a traceback
        print(f"tilelang-paddle selftest: cannot start: {_first_line(exc)}; run `tilelang-paddle doctor`",
              file=sys.stderr)
        return 1
    return selftest.run(json_path, quick)


def main(argv: list[str] | None = None, prog: str = "tilelang-paddle") -> int:
    args = _parser(prog).parse_args(sys.argv[1:] if argv is None else argv)
    if args.command == "bundle":
        from .bundle import build

        return build(args.out, args.run)
    if args.command == "selftest":
        return _selftest(args.json, args.quick)
    rows, ok = report()
    if args.json:
        print(json.dumps({"ok": ok, **dict(rows)}, indent=2))
    else:
        width = max(len(k) for k, _ in rows)
        for key, value in rows:
            print(f"{key:>{width}} : {value}")
    return 0 if ok else 1
