"""The ``tilelang-paddle`` command (``python -m tilelang_paddle``): its arguments, and one module per command.

``doctor`` (:mod:`.doctor`), ``selftest`` (:mod:`.selftest`), ``bundle``
(:mod:`.bundle`); ``--version`` names the build (:func:`.facts.build`).
Each command module is imported only when it runs.
"""

from __future__ import annotations

import argparse
import sys

from .facts import build, version


class _Version(argparse.Action):
    """``--version``: the version and the build on one line (argparse's own action would wrap it)."""

    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"tilelang-paddle {version('tilelang-paddle') or 'not installed'} (build {build()})")
        parser.exit()


def _parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description="tilelang-paddle: TileLang on PaddlePaddle")
    parser.add_argument("--version", action=_Version, help="print the version and build, then exit")
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


def main(argv: list[str] | None = None, prog: str = "tilelang-paddle") -> int:
    args = _parser(prog).parse_args(sys.argv[1:] if argv is None else argv)
    if args.command == "bundle":
        from .bundle import build as build_bundle

        return build_bundle(args.out, args.run)
    if args.command == "selftest":
        from .selftest import run as selftest

        return selftest(args.json, args.quick)
    from .doctor import run as doctor

    return doctor(args.json)
