"""``python -m src.fork {list,check,stage,release,bump}`` (run from the repository root).

list            the patch series in apply order, with each patch's reason
check [VER]     check every patch's precondition against upstream VER (default: the pin)
                or a local wheel path; builds nothing; exit 1 on drift
stage OUT       verify the pin, unpack, patch and overlay into OUT (used by CMakeLists.txt)
release OUT     build the sdist and the manylinux wheel into OUT and check both
                (auditwheel, twine); tools: `pip install --group release`
bump X.Y.Z      pin upstream X.Y.Z: rewrite 3rdparty/upstream.toml and pyproject.toml
                (version, upstream dependencies and extras), then run check X.Y.Z;
                never touches patches; exit 1 when patches drifted
"""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

from .patches import load_series
from .patching import PatchDrift
from .pin import REPO_ROOT, Pin, PinError, find_wheel
from .stage import stage


def cmd_list() -> int:
    for p in load_series():
        print(f"{p.name:34} {p.file}\n{'':34} {p.reason}")
    return 0


def cmd_check(arg: str | None) -> int:
    if arg and arg.endswith(".whl"):
        wheel, version = Path(arg), Path(arg).name.split("-")[1]
    else:
        version = arg or Pin.load().version
        wheel = find_wheel(version)
    print(f"upstream tilelang {version} ({wheel.name})")
    print(f"{'patch':34} {'file':48} status")
    failed = 0
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        for p in load_series():
            if p.file not in names:
                status, failed = "DRIFT: file missing", failed + 1
            else:
                problems = p.problems(zf.read(p.file).decode())
                status = "ok" if not problems else "DRIFT: " + "; ".join(problems)
                failed += bool(problems)
            print(f"{p.name:34} {p.file:48} {status}")
    print(f"{len(load_series()) - failed} of {len(load_series())} patches apply")
    return 1 if failed else 0


def cmd_bump(version: str) -> int:
    from .bump import bump  # needs `packaging`, which the wheel build does not

    wheel = bump(version, REPO_ROOT)
    print(f"pinned upstream tilelang {version}: {wheel.name}")
    print("rewrote 3rdparty/upstream.toml and pyproject.toml (version, dependencies, upstream extras)\n")
    status = cmd_check(version)
    if status:
        print("\nUpdate the drifted patches above (read the new upstream files), then rebuild and run the tests.")
    return status


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0
    try:
        if argv[0] == "list":
            return cmd_list()
        if argv[0] == "check":
            return cmd_check(argv[1] if len(argv) > 1 else None)
        if argv[0] == "stage" and len(argv) == 2:
            print(f"staged patched upstream into {stage(Path(argv[1]))}")
            return 0
        if argv[0] == "release" and len(argv) == 2:
            from .release import main as release_main

            return release_main(argv[1])
        if argv[0] == "bump" and len(argv) == 2:
            return cmd_bump(argv[1])
    except (PinError, PatchDrift, RuntimeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
