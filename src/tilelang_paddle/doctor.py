"""``tilelang-paddle doctor [--json]``: one screen about this install, for debugging it (the rows: :mod:`.facts`).

The exit status is 1 when something stops ``import tilelang``.
"""

from __future__ import annotations

import json

from .facts import report


def run(as_json: bool) -> int:
    rows, ok = report()
    if as_json:
        print(json.dumps({"ok": ok, **dict(rows)}, indent=2))
    else:
        width = max(len(k) for k, _ in rows)
        for key, value in rows:
            print(f"{key:>{width}} : {value}")
    return 0 if ok else 1
