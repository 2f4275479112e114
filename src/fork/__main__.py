"""``python -m src.fork COMMAND`` (run from the repository root): the build tooling's command line.

list            the patch series in apply order: each patch's reason, forwarded, checked
                versions and drop condition (the patch's fields, the one place they are kept)
check [VER]     check every patch's precondition against upstream VER (default: the pin)
                or a local wheel path, applying the series in order as stage does;
                builds nothing; exit 1 on drift
stage OUT       verify the pin, unpack, patch and overlay into OUT (used by CMakeLists.txt)
release OUT     build the sdist, the x86_64 manylinux wheel and the aarch64 one (cross-built,
                smoke-tested under qemu) into OUT and check them (auditwheel, twine);
                tools: `pip install --group release`, Debian's gcc-aarch64-linux-gnu and
                qemu-user-static; --skip-aarch64 builds the x86_64 wheel only
bump X.Y.Z      pin upstream X.Y.Z: rewrite 3rdparty/upstream.toml and pyproject.toml
                (version, upstream dependencies and extras), then run check X.Y.Z;
                never touches patches; exit 1 when patches drifted
"""

from __future__ import annotations

import argparse
import sys
import zipfile
from pathlib import Path

from .patches import load_series
from .patching import PatchDrift
from .pin import REPO_ROOT, Pin, PinError, find_wheel
from .stage import stage


def cmd_list() -> int:
    for p in load_series():
        print(f"{p.name}  ({p.file})\n    why:        {p.reason}\n    forwarded:  {p.forwarded}\n"
              f"    checked:    {', '.join(p.checked_against) or '-'}\n    drop when:  {p.drop_when or '-'}")
    return 0


def cmd_check(arg: str | None) -> int:
    if arg and arg.endswith(".whl"):
        wheel, version = Path(arg), Path(arg).name.split("-")[1]
    else:
        version = arg or Pin.load().version
        wheel = find_wheel(version)
    print(f"upstream tilelang {version} ({wheel.name})")
    print(f"{'patch':40} {'file':48} status")
    failed = 0
    texts: dict[str, str] = {}  # each file as the patches before this one left it, as stage applies them
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        for p in load_series():
            if p.file not in names:
                status, failed = "DRIFT: file missing", failed + 1
            else:
                text = texts.setdefault(p.file, zf.read(p.file).decode())
                problems = p.problems(text)
                status = "ok" if not problems else "DRIFT: " + "; ".join(problems)
                failed += bool(problems)
                if not problems:
                    texts[p.file] = p.apply(text, version)
            print(f"{p.name:40} {p.file:48} {status}")
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


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m src.fork", description="Build tooling of tilelang-paddle: the upstream pin, the patch series, staging, releases",
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__.split("\n\n", 1)[1])
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    sub.add_parser("list", help="the patch series in apply order, with each patch's reason")
    check = sub.add_parser("check", help="check every patch's precondition against an upstream version; builds nothing")
    check.add_argument("version", nargs="?", metavar="VER", help="upstream version or a local wheel path (default: the pin)")
    stage_p = sub.add_parser("stage", help="verify the pin, unpack, patch and overlay into OUT")
    stage_p.add_argument("out", metavar="OUT", help="staging directory")
    release = sub.add_parser("release", help="build the sdist and the x86_64 and aarch64 manylinux wheels into OUT "
                                             "and check them")
    release.add_argument("out", metavar="OUT", help="output directory for the artifacts")
    release.add_argument("--skip-aarch64", action="store_true",
                         help="build the x86_64 wheel only (no cross compiler or qemu needed)")
    bump_p = sub.add_parser("bump", help="pin upstream X.Y.Z and rewrite the metadata, then check")
    bump_p.add_argument("version", metavar="X.Y.Z", help="the upstream tilelang version to pin")
    return parser


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)  # --help and usage errors exit here, before anything is built
    try:
        if args.command == "list":
            return cmd_list()
        if args.command == "check":
            return cmd_check(args.version)
        if args.command == "stage":
            print(f"staged patched upstream into {stage(Path(args.out))}")
            return 0
        if args.command == "release":
            from .release import main as release_main

            return release_main(args.out, skip_aarch64=args.skip_aarch64)
        return cmd_bump(args.version)
    except (PinError, PatchDrift, RuntimeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
