"""Every patch's precondition against the pinned wheel, and the drift/idempotence rules."""

from __future__ import annotations

import subprocess
import sys
import zipfile

import pytest

from conftest import ROOT
from src.fork.patches import SERIES, load_series
from src.fork.patching import PatchDrift
from src.fork.pin import Pin

PATCHES = load_series()


def test_series_matches_patch_files():
    on_disk = sorted(p.stem for p in (ROOT / "src" / "fork" / "patches").glob("[0-9][0-9][0-9][0-9]_*.py"))
    assert sorted(SERIES) == on_disk
    assert SERIES == sorted(SERIES), "apply order follows the NNNN numbers"


def _as_staged(patch, zf):
    """The patch's file as stage leaves it for this patch: pristine, with the earlier patches of the series applied."""
    text = zf.read(patch.file).decode()
    for earlier in PATCHES[:PATCHES.index(patch)]:
        if earlier.file == patch.file:
            text = earlier.apply(text, "test")
    return text


@pytest.mark.parametrize("patch", PATCHES, ids=lambda p: p.name)
def test_precondition_holds_on_pinned_wheel(patch, pinned_wheel):
    with zipfile.ZipFile(pinned_wheel) as zf:
        text = _as_staged(patch, zf)
    assert patch.problems(text) == []
    assert Pin.load().version in patch.checked_against
    assert patch.reason and patch.drop_when


@pytest.mark.parametrize("patch", PATCHES, ids=lambda p: p.name)
def test_apply_is_idempotent_and_marked(patch, pinned_wheel):
    with zipfile.ZipFile(pinned_wheel) as zf:
        text = _as_staged(patch, zf)
    once = patch.apply(text, "test")
    assert once != text and patch.marker in once
    assert patch.apply(once, "test") == once


@pytest.mark.parametrize("patch", PATCHES, ids=lambda p: p.name)
def test_drift_fails_loudly(patch, pinned_wheel):
    with zipfile.ZipFile(pinned_wheel) as zf:
        text = _as_staged(patch, zf)
    drifted = text.replace(patch.edits[0].anchor, "# upstream rewrote this\n")
    with pytest.raises(PatchDrift, match=f"patch {patch.name} no longer applies to {patch.file} of upstream tilelang 9.9"):
        patch.apply(drifted, "9.9")


def test_check_command_reports_drift_by_patch(pinned_wheel, tmp_path):
    """`python -m src.fork check WHEEL` builds nothing and names each drifted patch."""
    # A patch whose first anchor no other patch shares, so exactly one drifts.
    target = next(p for p in PATCHES if p.name.startswith("0027_"))
    drifted = tmp_path / "tilelang-9.9.9-cp39-abi3-linux_x86_64.whl"
    with zipfile.ZipFile(pinned_wheel) as src, zipfile.ZipFile(drifted, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename == target.file:
                data = data.decode().replace(target.edits[0].anchor, "").encode()
            dst.writestr(info, data)
    proc = subprocess.run([sys.executable, "-m", "src.fork", "check", str(drifted)], cwd=ROOT,
                          capture_output=True, text=True)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert f"{target.name}" in proc.stdout and "DRIFT" in proc.stdout
    assert f"{len(PATCHES) - 1} of {len(PATCHES)} patches apply" in proc.stdout
    ok = subprocess.run([sys.executable, "-m", "src.fork", "check", str(pinned_wheel)], cwd=ROOT,
                        capture_output=True, text=True)
    assert ok.returncode == 0 and f"{len(PATCHES)} of {len(PATCHES)} patches apply" in ok.stdout


def test_installed_package_carries_every_patch(tilelang_mod):
    from pathlib import Path

    root = Path(tilelang_mod.__file__).parent.parent
    for patch in PATCHES:
        if patch.file.endswith(".pyx"):
            continue  # compiled; the .pyx is not what runs
        assert patch.marker in (root / patch.file).read_text(), patch.name


def test_fork_cli_help_builds_nothing(tmp_path):
    """`--help` on every command prints usage and exits 0; nothing is built (it once made ./--help/)."""
    import subprocess
    import sys

    from conftest import ROOT

    for command in ([], ["release"], ["stage"], ["check"], ["bump"], ["list"]):
        proc = subprocess.run([sys.executable, "-m", "src.fork", *command, "--help"], capture_output=True, text=True,
                              cwd=ROOT, timeout=120)
        assert proc.returncode == 0, (command, proc.stderr)
        assert proc.stdout.startswith("usage: python -m src.fork"), (command, proc.stdout)
    assert not (ROOT / "--help").exists()
    proc = subprocess.run([sys.executable, "-m", "src.fork", "bump"], capture_output=True, text=True, cwd=ROOT,
                          timeout=120)
    assert proc.returncode == 2 and "the following arguments are required: X.Y.Z" in proc.stderr
