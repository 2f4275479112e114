"""The manylinux_2_34 aarch64 wheel, cross-built on an x86_64 machine, and its smoke test under emulation.

``build_aarch64(x86_wheel, outdir)``:

1. Stage the package from upstream's pinned aarch64 wheel (the same patches
   and overlay as the x86_64 build; ``stage.stage(..., "aarch64")``).
2. Cythonize our two modules (``tilelang_cython_wrapper`` from the patched
   ``.pyx``, our ``_launcher``) exactly as CMakeLists.txt does, and compile
   each as an abi3 extension with Debian's aarch64 cross compiler
   (``aarch64-linux-gnu-gcc``, package ``gcc-aarch64-linux-gnu``) against
   the arm64 CPython headers of Debian's ``libpython3.11-dev:arm64``
   (Python.h and the aarch64 ``pyconfig.h``), unpacked from its .deb.
3. Assemble the wheel: the staged tree, the two modules, the
   ``tilelang_paddle`` command package, and the x86_64 wheel's dist-info
   (METADATA, entry points, licences: they do not depend on the machine) with
   the tag ``cp310-abi3-manylinux_2_34_aarch64`` and a new RECORD.

``smoke(wheel)`` unpacks the wheel beside the aarch64 wheels of its compiled
dependencies (apache-tvm-ffi, z3-solver) and runs Debian's arm64 CPython
under ``qemu-aarch64-static`` (package ``qemu-user-static``), with Debian's
arm64 C and C++ runtimes as the sysroot: our two modules and every upstream
library in ``tilelang/lib`` load (``dlopen``), and ``_launcher`` imports and
reports its limits. Paddle is not involved: no Paddle 3.3 aarch64 wheel is on
the package index (3.2.2 is the newest there).

Debian packages are fetched with ``apt-get download`` (the arm64 architecture
added with ``dpkg --add-architecture arm64`` and ``apt-get update``) and
unpacked with ``dpkg -x``: nothing is installed for arm64.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from .pin import REPO_ROOT
from .stage import stage

PLATFORM = "manylinux_2_34_aarch64"
TAG = f"cp310-abi3-{PLATFORM}"
CROSS_CC = "aarch64-linux-gnu-gcc"
QEMU = "qemu-aarch64-static"
PY = "3.11"  # Debian bookworm's CPython: its headers build the abi3 modules, its interpreter runs the smoke test
HEADER_DEBS = (f"libpython{PY}-dev",)
RUNTIME_DEBS = (f"python{PY}-minimal", f"libpython{PY}-minimal", f"libpython{PY}-stdlib", f"libpython{PY}", "libc6",
                "libstdc++6", "libgcc-s1", "zlib1g", "libexpat1", "libffi8", "libssl3", "libbz2-1.0", "liblzma5",
                "libuuid1", "libcrypt1")
# Our two Cython modules: (module name, .pyx in the staged tree, where it goes in the wheel).
MODULES = (
    ("tilelang_cython_wrapper", "tilelang/jit/adapter/cython/cython_wrapper.pyx", "tilelang/lib"),
    ("_launcher", "tilelang/paddle_runtime/_launcher.pyx", "tilelang/paddle_runtime"),
)


class CrossError(RuntimeError):
    """A step of the aarch64 build or smoke test failed; the message says which and what to install."""


def _run(cmd, **kw) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)
    if proc.returncode != 0:
        raise CrossError(f"{' '.join(map(str, cmd))} failed (exit {proc.returncode}):\n"
                         f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return proc


def missing_tools() -> list[str]:
    """Debian packages the aarch64 build and smoke test need that this machine lacks."""
    need = {CROSS_CC: "gcc-aarch64-linux-gnu", QEMU: "qemu-user-static", "apt-get": "apt", "dpkg": "dpkg"}
    return [pkg for tool, pkg in need.items() if shutil.which(tool) is None]


def _require_cython() -> None:
    probe = subprocess.run([sys.executable, "-c", "import Cython"], capture_output=True)
    if probe.returncode != 0:
        raise CrossError("the aarch64 wheel needs Cython in this environment: `pip install --group release` "
                         "(pip >= 25.1) installs it")


def debian_arm64(packages, dest: Path) -> Path:
    """Unpack Debian's arm64 ``packages`` into ``dest`` (a sysroot); return it."""
    arches = _run(["dpkg", "--print-foreign-architectures"]).stdout.split()
    if "arm64" not in arches:
        raise CrossError("Debian's arm64 packages are needed: run `dpkg --add-architecture arm64 && apt-get update` "
                         "(as root), then retry")
    debs = dest / "debs"
    debs.mkdir(parents=True, exist_ok=True)
    _run(["apt-get", "download", *(f"{p}:arm64" for p in packages)], cwd=debs)
    root = dest / "sysroot"
    for deb in sorted(debs.glob("*.deb")):
        _run(["dpkg", "-x", deb, root])
    return root


def _cross_compile(staged: Path, sysroot: Path, out: Path) -> list[tuple[Path, str]]:
    """Cythonize and cross-compile our modules; return ``[(built .so, its path in the wheel)]``."""
    include = sysroot / "usr" / "include"
    built = []
    for name, pyx, dest in MODULES:
        c_file = out / f"{name}.c"
        _run([sys.executable, "-m", "cython", "-3", "--module-name", name, pyx, "-o", c_file], cwd=staged)
        so = out / f"{name}.abi3.so"
        _run([CROSS_CC, "-shared", "-fPIC", "-O2", "-DNDEBUG", "-DPy_LIMITED_API=0x030A0000",
              f"-I{include / f'python{PY}'}", f"-I{include}", c_file, "-o", so])
        built.append((so, f"{dest}/{name}.abi3.so"))
    return built


def _record_line(arcname: str, data: bytes) -> list[str]:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return [arcname, f"sha256={digest}", str(len(data))]


def build_aarch64(x86_wheel: Path, outdir: Path, work: Path | None = None) -> Path:
    """Cross-build the aarch64 wheel next to ``x86_wheel`` (see module docstring); return its path."""
    missing = missing_tools()
    if missing:
        raise CrossError(f"the aarch64 wheel needs Debian's {', '.join(missing)}: "
                         f"`apt-get install {' '.join(missing)}` (as root)")
    _require_cython()
    with tempfile.TemporaryDirectory(prefix="tilelang-paddle-aarch64-") as tmp:
        tmp = Path(work or tmp)
        staged = stage(tmp / "stage", "aarch64")
        sysroot = debian_arm64(HEADER_DEBS, tmp / "debian")
        objs = tmp / "objs"
        objs.mkdir()
        modules = _cross_compile(staged, sysroot, objs)
        with zipfile.ZipFile(x86_wheel) as zf:
            dist_info = next(n.split("/", 1)[0] for n in zf.namelist() if n.split("/", 1)[0].endswith(".dist-info"))
            meta = {n: zf.read(n) for n in zf.namelist() if n.startswith(dist_info + "/") and not n.endswith("/")}
        name = Path(x86_wheel).name.split("-")
        wheel = Path(outdir) / f"{name[0]}-{name[1]}-{TAG}.whl"
        entries: dict[str, bytes] = {}
        for path in sorted(staged.joinpath("tilelang").rglob("*")):
            rel = path.relative_to(staged).as_posix()
            if path.is_file() and "__pycache__" not in rel:  # the same files as the x86_64 wheel
                entries[rel] = path.read_bytes()
        for so, arcname in modules:
            entries[arcname] = so.read_bytes()
        for path in sorted((REPO_ROOT / "src" / "tilelang_paddle").glob("*.py")):
            entries[f"tilelang_paddle/{path.name}"] = path.read_bytes()
        for arcname, data in meta.items():
            if arcname.endswith("/RECORD"):
                continue
            if arcname.endswith("/WHEEL"):
                lines = [ln for ln in data.decode().splitlines() if not ln.startswith("Tag:")]
                data = ("\n".join(lines) + f"\nTag: {TAG}\n").encode()
            entries[arcname] = data
        record = io.StringIO()
        writer = csv.writer(record, lineterminator="\n")
        for arcname, data in entries.items():
            writer.writerow(_record_line(arcname, data))
        writer.writerow([f"{dist_info}/RECORD", "", ""])
        Path(outdir).mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as out:
            for arcname, data in entries.items():
                info = zipfile.ZipInfo(arcname, date_time=(2026, 1, 1, 0, 0, 0))
                info.external_attr = (0o755 if arcname.endswith(".so") else 0o644) << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                out.writestr(info, data)
            out.writestr(f"{dist_info}/RECORD", record.getvalue())
    return wheel


SMOKE = r'''
import ctypes, glob, os, platform, sys
site = sys.argv[1]
sys.path.insert(0, site)
print("python", platform.python_version(), platform.machine())
loaded = []
for lib in sorted(glob.glob(os.path.join(site, "tvm_ffi", "lib", "*.so"))):
    ctypes.CDLL(lib, mode=ctypes.RTLD_GLOBAL)
    loaded.append(os.path.relpath(lib, site))
for lib in sorted(glob.glob(os.path.join(site, "tilelang", "lib", "*.so"))):
    ctypes.CDLL(lib)
    loaded.append(os.path.relpath(lib, site))
for lib in ("tilelang/paddle_runtime/_launcher.abi3.so",):
    ctypes.CDLL(os.path.join(site, lib))
sys.path.insert(0, os.path.join(site, "tilelang", "paddle_runtime"))
import _launcher
print("loaded", len(loaded), "libraries:", ", ".join(loaded))
print("_launcher imported: LIMITS", _launcher.LIMITS, "MAX_CALL_ARGS", _launcher.MAX_CALL_ARGS)
print("SMOKE OK")
'''


def _compiled_requirements(wheel: Path) -> list[str]:
    """The wheel's own requirements on apache-tvm-ffi and z3-solver (their shared libraries are loaded)."""
    with zipfile.ZipFile(wheel) as zf:
        meta = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        lines = zf.read(meta).decode().splitlines()
    reqs = [ln.split(":", 1)[1].strip() for ln in lines if ln.startswith("Requires-Dist:")]
    return [r.split(";")[0].strip() for r in reqs if r.startswith(("apache-tvm-ffi", "z3-solver")) and "extra" not in r]


def smoke(wheel: Path, work: Path | None = None) -> str:
    """Load the aarch64 wheel's compiled modules and upstream's libraries under qemu (see module docstring)."""
    with tempfile.TemporaryDirectory(prefix="tilelang-paddle-aarch64-smoke-") as tmp:
        tmp = Path(work or tmp)
        sysroot = debian_arm64(RUNTIME_DEBS, tmp / "debian")
        site = tmp / "site"
        with zipfile.ZipFile(wheel) as zf:
            zf.extractall(site)
        deps = tmp / "deps"
        # The compiled dependencies' aarch64 wheels, at the versions pip picks for the wheel's own requirements.
        # pip takes each --platform literally (no older manylinux implied): list the ones manylinux_2_34 covers.
        platforms = [arg for p in (PLATFORM, "manylinux_2_28_aarch64", "manylinux_2_17_aarch64", "manylinux2014_aarch64")
                     for arg in ("--platform", p)]
        _run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:", *platforms,
              "--python-version", PY, "-d", deps, *_compiled_requirements(wheel)])
        for dep in deps.glob("*.whl"):
            with zipfile.ZipFile(dep) as zf:
                zf.extractall(site)
        script = tmp / "smoke.py"
        script.write_text(SMOKE)
        python = sysroot / "usr" / "bin" / f"python{PY}"
        env = {**os.environ, "PYTHONHOME": str(sysroot / "usr"), "PYTHONDONTWRITEBYTECODE": "1"}
        proc = _run([QEMU, "-L", sysroot, python, script, site], env=env)
        return proc.stdout
