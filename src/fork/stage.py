"""Stage a patched upstream TileLang tree for CMake to install.

``stage(out)`` verifies the pinned wheel, unpacks it into ``out``, applies the
patch series in order (stopping at the first drift, leaving ``out`` as it is
for inspection), overlays the repository's own ``tilelang/`` modules and
removes upstream's prebuilt Cython launcher, which CMake rebuilds from the
patched ``.pyx``.
"""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

from .patches import load_series
from .pin import REPO_ROOT, Pin, verified_wheel

OVERLAY = REPO_ROOT / "tilelang"
PREBUILT_LAUNCHER = "tilelang/lib/tilelang_cython_wrapper.abi3.so"


def stage(out: Path) -> Path:
    pin = Pin.load()
    wheel = verified_wheel(pin)
    out = Path(out)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(out)
        # zipfile drops the executable bit; restore it from the archive's mode bits.
        for info in zf.infolist():
            mode = info.external_attr >> 16
            if mode:
                (out / info.filename).chmod(mode & 0o777)

    for patch in load_series():
        target = out / patch.file
        target.write_text(patch.apply(target.read_text(), pin.version))

    for src in OVERLAY.rglob("*"):
        if src.is_dir() or "__pycache__" in src.parts:
            continue
        dest = out / "tilelang" / src.relative_to(OVERLAY)
        if dest.exists():
            raise RuntimeError(f"overlay file {src} would overwrite upstream {dest}; write a patch instead")
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dest)

    (out / PREBUILT_LAUNCHER).unlink()
    licenses = out / "licenses"
    licenses.mkdir()
    for lic in (out / f"tilelang-{pin.version}.dist-info" / "licenses").rglob("*"):
        if lic.is_file():
            shutil.copy2(lic, licenses / f"tilelang-{lic.name}")
    return out
