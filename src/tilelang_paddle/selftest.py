"""``tilelang-paddle selftest [--json FILE] [--quick]``: the runtime's self-test (``tilelang.paddle_runtime.selftest``).

``FILE`` is checked before anything runs: a missing directory, a directory in
its place or a path that cannot be written is one line naming the path, exit
status 2, and nothing is left behind.
"""

from __future__ import annotations

import os
import sys
import tempfile

from .facts import first_line


def _json_problem(path: str) -> str | None:
    """Why the report cannot be written to ``path``, or None (checked by writing a probe beside it)."""
    target = os.path.abspath(path)
    parent = os.path.dirname(target)
    if os.path.isdir(target):
        return "it is a directory; name a file"
    if not os.path.exists(parent):
        return f"its directory {parent} does not exist"
    if not os.path.isdir(parent):
        return f"{parent} is not a directory"
    try:
        fd, probe = tempfile.mkstemp(prefix=f".{os.path.basename(target)}.", dir=parent)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        return f"it cannot be written ({exc.strerror or exc})"
    if os.path.exists(target) and not os.access(target, os.W_OK):
        return "it cannot be written (Permission denied)"
    return None


def run(json_path: str | None, quick: bool) -> int:
    if json_path is not None:
        problem = _json_problem(json_path)
        if problem:
            print(f"tilelang-paddle selftest: --json {json_path}: {problem}", file=sys.stderr)
            return 2
    try:
        import tilelang  # noqa: F401 - its bootstrap checks Paddle and scopes the torch proxy
        from tilelang.paddle_runtime import selftest
    except Exception as exc:  # noqa: BLE001 - say what broke and where to look, not a traceback
        print(f"tilelang-paddle selftest: cannot start: {first_line(exc)}; run `tilelang-paddle doctor`",
              file=sys.stderr)
        return 1
    return selftest.run(json_path, quick)
