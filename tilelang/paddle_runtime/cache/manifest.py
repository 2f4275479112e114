"""A bundle's ``manifest.json``: its format, reading and checking it, and the fields in which two keys differ.

Read by the lookup (:mod:`.bundle`) and read, merged and written by
``tilelang-paddle bundle``, so both sides agree on one format:
``{"format": 1, "made_with": {...}, "entries": {key: entry}, "autotune": {key: entry}}``,
each entry ``{"name", "label", "fields", "files": {relative path: sha256}}``.
"""

from __future__ import annotations

import hashlib
import json
import os

from tilelang_paddle.digest import sha256_file  # noqa: F401 - the bundle's file hash, for its readers and writer

FORMAT = 1
NAME = "manifest.json"


def target_text(target) -> str:
    """``cuda sm_90a`` / ``c`` from a target as the manifest stores it (its JSON or its string)."""
    text = str(target)
    try:
        data = json.loads(text)
    except ValueError:
        return text.split(" -keys")[0]
    return " ".join(str(p) for p in (data.get("kind", "?"), data.get("arch")) if p)


class NotABundle(ValueError):
    """A ``manifest.json`` that is not one of ours; the message says why."""


def read(root: str) -> dict | None:
    """``root``'s manifest, None where it has none; :class:`NotABundle` (or OSError) where it cannot be used."""
    path = os.path.join(root, NAME)
    try:
        with open(path) as f:
            data = json.load(f)
    except FileNotFoundError:
        return None
    except ValueError as exc:
        raise NotABundle(f"it cannot be read as JSON ({exc})") from None
    if not isinstance(data, dict):
        raise NotABundle("it is not a JSON object")
    if data.get("format") != FORMAT or not isinstance(data.get("entries"), dict):
        raise NotABundle(f"its format is {data.get('format')!r}, ours is {FORMAT}")
    return data


def _short(value) -> str:
    """A value as a refusal shows it: itself when short, else its length and a digest (never a whole source)."""
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    if len(text) <= 72:
        return repr(value)
    return f"<{len(text)} characters, sha256 {hashlib.sha256(text.encode()).hexdigest()[:12]}>"


def differing_fields(bundled: dict, here: dict) -> str:
    """``field: bundle X, here Y; ...`` for the fields of two keys' data that differ, each value kept short."""
    here = json.loads(json.dumps(here, sort_keys=True, default=str))
    differ = []
    for field in sorted(set(bundled) | set(here)):
        b, h = bundled.get(field), here.get(field)
        if b == h:
            continue
        if isinstance(b, list) and isinstance(h, list) and len(b) == len(h):
            items = [i for i, (x, y) in enumerate(zip(b, h)) if x != y]
            differ.append(f"{field}: item(s) {', '.join(map(str, items))} of {len(h)}")
        else:
            differ.append(f"{field}: bundle {_short(b)}, here {_short(h)}")
    return "; ".join(differ)
