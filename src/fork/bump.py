"""``python -m src.fork bump X.Y.Z``: move the pin to another upstream release.

What it changes (and nothing else; patches are never touched):

- ``3rdparty/upstream.toml``: ``version`` and the ``[wheels]`` table (the
  downloaded wheel's file name and sha256);
- ``pyproject.toml``: ``version = "X.Y.Z.post1"``, upstream's
  ``requires-python``, and the blocks between the
  ``# begin/end upstream dependencies`` and ``# begin/end upstream extras``
  markers, rewritten from that wheel's METADATA minus :data:`FRAMEWORK`
  (our own extras, ``cpu`` and ``test``, sit outside the markers and stay).

Then it runs ``check`` against the new wheel, so the output ends with the
patches that drifted. Read each drifted upstream file and update the patch.
"""

from __future__ import annotations

import re
import zipfile
from email.parser import Parser
from pathlib import Path

from packaging.requirements import Requirement

from .pin import PinError, find_wheel, sha256_file

# Packages of the framework upstream runs on; Paddle replaces them.
FRAMEWORK = frozenset({"torch", "torch-c-dlpack-ext"})

_EXTRA = re.compile(r'^extra == "([^"]+)"$')


class BumpError(RuntimeError):
    pass


def upstream_metadata(wheel: Path):
    """The wheel's METADATA as an email message."""
    with zipfile.ZipFile(wheel) as zf:
        name = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        return Parser().parsestr(zf.read(name).decode())


def upstream_requirements(meta) -> tuple[list[str], dict[str, list[str]]]:
    """(dependencies, extras) from upstream METADATA, minus FRAMEWORK, in METADATA order."""
    deps: list[str] = []
    extras: dict[str, list[str]] = {e: [] for e in meta.get_all("Provides-Extra") or []}
    for line in meta.get_all("Requires-Dist") or []:
        req = Requirement(line)
        if req.name in FRAMEWORK:
            continue
        extra, rest = _split_extra(str(req.marker) if req.marker else "")
        req.marker = None
        text = str(req) + (f"; {rest}" if rest else "")
        (extras[extra] if extra else deps).append(text)
    return deps, extras


def _split_extra(marker: str) -> tuple[str | None, str]:
    """Split ``A and extra == "x"`` into ("x", "A"). Upstream's backend writes the extra last."""
    parts = [p.strip() for p in marker.split(" and ")] if marker else []
    extra = next((m.group(1) for p in parts if (m := _EXTRA.match(p))), None)
    rest = " and ".join(p for p in parts if not _EXTRA.match(p))
    if rest.startswith("(") and rest.endswith(")") and rest.count("(") == 1:
        rest = rest[1:-1]
    return extra, rest


def _toml_str(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _toml_list(items: list[str]) -> str:
    if len(items) <= 1:
        return "[" + ", ".join(map(_toml_str, items)) + "]"
    return "[\n" + "".join(f"    {_toml_str(i)},\n" for i in items) + "]"


def _replace_block(text: str, name: str, body: str) -> str:
    begin, end = f"# begin {name}\n", f"# end {name}\n"
    if text.count(begin) != 1 or text.count(end) != 1:
        raise BumpError(f"pyproject.toml must contain the markers {begin.strip()!r} and {end.strip()!r} once each")
    head, rest = text.split(begin)
    _, tail = rest.split(end)
    return head + begin + body + end + tail


def _set_line(text: str, key: str, value: str, file: str) -> str:
    text, n = re.subn(rf'(?m)^{re.escape(key)} = "[^"]*"$', f'{key} = "{value}"', text, count=1)
    if n != 1:
        raise BumpError(f'{file} has no top-level `{key} = "..."` line')
    return text


def rewrite_pyproject(text: str, meta) -> str:
    deps, extras = upstream_requirements(meta)
    text = _set_line(text, "version", f"{meta['Version']}.post1", "pyproject.toml")
    text = _set_line(text, "requires-python", meta["Requires-Python"], "pyproject.toml")
    text = _replace_block(text, "upstream dependencies", f"dependencies = {_toml_list(deps)}\n")
    return _replace_block(text, "upstream extras", "".join(f"{k} = {_toml_list(v)}\n" for k, v in extras.items()))


def rewrite_pin(text: str, version: str, wheels: dict) -> str:
    """The pin file for ``version`` with ``wheels`` ({file name: sha256}, one per machine) as its [wheels] table."""
    text = _set_line(text, "version", version, "3rdparty/upstream.toml")
    head, sep, tail = text.partition("[wheels]\n")
    if not sep:
        raise BumpError("3rdparty/upstream.toml has no [wheels] table")
    comments = "".join(line + "\n" for line in tail.splitlines() if line.startswith("#"))
    return f"{head}{sep}{comments}" + "".join(f'"{name}" = "{digest}"\n' for name, digest in wheels.items())


def bump(version: str, root: Path) -> Path:
    """Rewrite the pin and pyproject under ``root`` for upstream ``version``; return the wheel used."""
    wheel = find_wheel(version)
    meta = upstream_metadata(wheel)
    if meta["Version"] != version:
        raise BumpError(f"{wheel} is tilelang {meta['Version']}, not {version}")
    pin_file, pyproject = root / "3rdparty" / "upstream.toml", root / "pyproject.toml"
    wheels = {wheel.name: sha256_file(wheel)}
    try:  # the aarch64 wheel too, when upstream published one for this version
        arm = find_wheel(version, "aarch64")
        wheels[arm.name] = sha256_file(arm)
    except PinError:
        pass
    new_pin = rewrite_pin(pin_file.read_text(), version, wheels)
    new_project = rewrite_pyproject(pyproject.read_text(), meta)
    pin_file.write_text(new_pin)
    pyproject.write_text(new_project)
    return wheel
