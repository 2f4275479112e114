"""Release artifacts: the sdist, the x86_64 manylinux wheel and the aarch64 one, checked as an index would.

``release(outdir)``:

1. ``python -m build`` builds the sdist from the source tree, then the wheel
   *from that sdist* (so a file missing from the sdist breaks the release
   here, not on a user's machine).
2. The sdist must hold exactly what the build needs: every tracked file under
   ``SDIST_TREES`` plus ``SDIST_FILES`` (and the PKG-INFO the backend adds).
3. ``auditwheel repair --plat PLATFORM`` retags the wheel. Nothing is grafted:
   the libraries our wheel links to but does not carry come from its declared
   dependencies or from the user's driver (``EXCLUDE``). auditwheel refuses
   the tag if any binary needs a newer glibc/libstdc++ symbol than PLATFORM
   allows, so the tag is proven, never written by hand.
4. ``auditwheel show --json`` on the result must report a symbol tag no newer
   than PLATFORM and no external library outside ``EXCLUDE``.
5. ``twine check --strict`` on every file (long description renders, metadata valid).
6. Unless ``skip_aarch64``: the ``manylinux_2_34_aarch64`` wheel, cross-built from
   upstream's aarch64 wheel (``src/fork/cross.py``), checked the same way
   (``auditwheel show`` must find it fits its tag and links nothing unexpected)
   and smoke-tested under qemu.

The tools come from the ``release`` dependency group in pyproject.toml
(``pip install --group release``, pip >= 25.1).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from .pin import REPO_ROOT

# Upstream's own wheel is manylinux_2_27/2_28; our only added binary (the Cython
# launcher) needs nothing newer, so we claim no more than the oldest of the two.
PLATFORM = "manylinux_2_27_x86_64"

# SONAMEs never grafted into the wheel, each with the reason (upstream excludes
# the same ones in its cibuildwheel repair command):
EXCLUDE = {
    # libtilelang/libtvm_* link it; the apache-tvm-ffi dependency ships it and
    # RUNPATH $ORIGIN/../../tvm_ffi/lib finds it there.
    "libtvm_ffi.so": "from the apache-tvm-ffi dependency",
    # libtvm_compiler links it; the z3-solver dependency ships it ($ORIGIN/../../z3/lib).
    "libz3.so.*": "from the z3-solver dependency",
    # The CUDA driver belongs to the machine; upstream's stub libraries
    # (tilelang/lib/libstub_cuda.so) dlopen it lazily, so no binary should
    # link it directly. Excluded so a future direct link can never be bundled.
    "libcuda.so.*": "the user's NVIDIA driver",
    # Runtime/compiler libraries of the CUDA toolkit or ROCm/Ascend stacks:
    # upstream's stub libraries (libstub_cudart/nvrtc/hip/hiprtc/ascendcl.so)
    # dlopen whichever copy the process has, which is the point of the stubs;
    # bundling one would pin a CUDA major and break the others.
    "libcudart.so.*": "the user's CUDA runtime (dlopened by libstub_cudart)",
    "libnvrtc.so.*": "the user's CUDA toolkit (dlopened by libstub_nvrtc)",
    "libamdhip64.so.*": "the user's ROCm (dlopened by libstub_hip)",
    "libhiprtc.so.*": "the user's ROCm (dlopened by libstub_hiprtc)",
    "libascendcl.so": "the user's Ascend CANN (dlopened by libstub_ascendcl)",
}

SDIST_FILES = ("pyproject.toml", "CMakeLists.txt", "README.md", "LICENSE", "PKG-INFO")
SDIST_TREES = ("3rdparty", "src/fork", "src/tilelang_paddle", "tilelang")


class ReleaseError(RuntimeError):
    """A release check failed; the message says which and shows the tool's output."""


def _run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if proc.returncode != 0:
        raise ReleaseError(f"{' '.join(map(str, cmd))} failed (exit {proc.returncode}):\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
    return proc


def _tool(module: str) -> list[str]:
    """``python -m module`` if importable; a clear error naming the install command otherwise."""
    probe = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True)
    if probe.returncode != 0:
        raise ReleaseError(f"{module} is not installed; run `pip install --group release` (pip >= 25.1) in the repository root")
    return [sys.executable, "-m", module]


def _glob_to_regex(pattern: str) -> re.Pattern:
    return re.compile("^" + re.escape(pattern).replace(r"\*", ".*") + "$")


def expected_sdist_members(root: Path = REPO_ROOT) -> set[str] | None:
    """Files the sdist must hold (relative paths), from git; None outside a git checkout."""
    proc = subprocess.run(["git", "ls-files", "--", *SDIST_TREES], capture_output=True, text=True, cwd=root)
    if proc.returncode != 0:
        return None
    return set(proc.stdout.split()) | set(SDIST_FILES)


def check_sdist(sdist: Path, expected: set[str] | None) -> None:
    with tarfile.open(sdist) as tf:
        prefix = tf.getnames()[0].split("/", 1)[0] + "/"
        members = {m.name[len(prefix):] for m in tf.getmembers() if m.isfile()}
    if expected is None:
        expected = members
    missing, extra = sorted(expected - members), sorted(members - expected)
    if missing or extra:
        raise ReleaseError(f"sdist {sdist.name}: missing {missing}, unexpected {extra}. "
                           "Fix [tool.scikit-build] sdist.include/exclude in pyproject.toml.")


def check_wheel_tag(wheel: Path, platform: str = PLATFORM) -> dict:
    """``auditwheel show --json`` must agree with ``platform``; return its report."""
    report = json.loads(_run([*_tool("auditwheel"), "show", "--json", str(wheel)]).stdout)
    tag = report.get("sym_tag", "")
    if _policy_glibc(tag) > _policy_glibc(platform) or tag.rsplit("_", 1)[-1] != platform.rsplit("_", 1)[-1]:
        raise ReleaseError(f"{wheel.name}: binaries need {tag}, not within {platform}:\n{json.dumps(report, indent=1)[:4000]}")
    unexpected = [lib for lib in report.get("external_libs", {}) if not any(_glob_to_regex(p).match(lib) for p in EXCLUDE)]
    if unexpected:
        raise ReleaseError(f"{wheel.name}: links libraries that are neither bundled nor excluded: {unexpected}")
    if f"-{platform}.whl" not in wheel.name or "-cp310-abi3-" not in wheel.name:
        raise ReleaseError(f"{wheel.name}: expected a cp310-abi3-{platform} wheel")
    return report


def _policy_glibc(tag: str) -> tuple[int, int]:
    m = re.match(r"manylinux_(\d+)_(\d+)_", tag)
    return (int(m.group(1)), int(m.group(2))) if m else (99, 99)  # linux_* counts as newest


def release(outdir: Path, root: Path = REPO_ROOT, skip_aarch64: bool = False) -> tuple[list, Path, dict]:
    """Build, repair, check; write the wheels (x86_64, then aarch64 unless skipped) and the sdist into ``outdir``.

    Returns the wheels, the sdist and auditwheel's report on each wheel (by file name); the aarch64
    smoke test's output is in the report under ``"smoke"``.
    """
    outdir = Path(outdir)
    build, auditwheel, twine = _tool("build"), _tool("auditwheel"), _tool("twine")
    with tempfile.TemporaryDirectory(prefix="tilelang-paddle-release-") as tmp:
        raw, repaired = Path(tmp, "raw"), Path(tmp, "repaired")
        # No --sdist/--wheel: build makes the sdist, then the wheel from it.
        _run([*build, "--outdir", str(raw), str(root)])
        (sdist,) = raw.glob("*.tar.gz")
        (wheel,) = raw.glob("*.whl")
        check_sdist(sdist, expected_sdist_members(root))
        cmd = [*auditwheel, "repair", "--plat", PLATFORM, "-w", str(repaired)]
        for pattern in EXCLUDE:
            cmd += ["--exclude", pattern]
        _run([*cmd, str(wheel)])
        (fixed,) = repaired.glob("*.whl")
        report = check_wheel_tag(fixed)
        wheels, reports = [fixed], {fixed.name: report}
        if not skip_aarch64:
            from . import cross

            arm = cross.build_aarch64(fixed, repaired)
            reports[arm.name] = check_wheel_tag(arm, cross.PLATFORM)
            reports["smoke"] = cross.smoke(arm)
            wheels.append(arm)
        _run([*twine, "check", "--strict", str(sdist), *map(str, wheels)])
        outdir.mkdir(parents=True, exist_ok=True)
        for old in [*outdir.glob("tilelang_paddle-*.whl"), *outdir.glob("tilelang_paddle-*.tar.gz")]:
            old.unlink()
        out_sdist = outdir / sdist.name
        shutil.copy2(sdist, out_sdist)
        out_wheels = []
        for w in wheels:
            shutil.copy2(w, outdir / w.name)
            out_wheels.append(outdir / w.name)
    return out_wheels, out_sdist, reports


def main(outdir: str, skip_aarch64: bool = False) -> int:
    wheels, sdist, reports = release(Path(outdir), skip_aarch64=skip_aarch64)
    for wheel in wheels:
        report = reports[wheel.name]
        print(f"wheel  {wheel}  ({wheel.stat().st_size / 1e6:.1f} MB)")
        print(f"       auditwheel: symbol versions fit {report['sym_tag']}; libraries linked but not carried: "
              f"{', '.join(sorted(report['external_libs'])) or 'none'} (excluded: provided by dependencies)")
    if "smoke" in reports:
        print("aarch64 smoke test under qemu (Debian's arm64 CPython):")
        print("       " + reports["smoke"].strip().replace("\n", "\n       "))
    else:
        print("aarch64 wheel: skipped (--skip-aarch64)")
    print(f"sdist  {sdist}  ({sdist.stat().st_size / 1e3:.0f} kB, exactly the build's inputs)")
    print(f"twine check --strict: PASSED for all {len(wheels) + 1}")
    return 0
