"""Is the installed apache-tvm-ffi one that upstream tilelang's libraries were built against?

Upstream tilelang 0.1.15 requires ``apache-tvm-ffi>=0.1.11,<0.1.13``. With a
newer one installed (pip lets another package upgrade it), ``import tilelang``
dies deep inside upstream with ``ValueError: Type 'ffi.Tensor' already has a
registered class``. :func:`problem` says so first, with the version found and
the command that fixes it; ``tilelang.paddle_runtime.bootstrap`` raises it as an
ImportError and ``tilelang-paddle doctor`` prints it. (It lives here, outside
``tilelang``, because the doctor must run it without importing ``tilelang``.)

The range is read from this distribution's own metadata (``Requires-Dist``,
written from upstream's by ``python -m src.fork bump``), so it is never
repeated here. (PaddleFleet pins ``<0.1.12`` because one 0.1.12 build aborted
with ``TypeAttr __ffi_repr__ is already registered``, upstream issue #2367;
the 0.1.12 wheel on the index imports and runs our tests here.)
"""

from __future__ import annotations

import importlib.metadata as md
import re

DISTRIBUTION = "tilelang-paddle"
TVM_FFI = "apache-tvm-ffi"


def _release(version: str) -> tuple[int, ...]:
    """The numeric release part of a PEP 440 version (``0.1.13.post3`` -> ``(0, 1, 13)``)."""
    match = re.match(r"\s*v?(\d+(?:\.\d+)*)", version)
    return tuple(int(p) for p in match.group(1).split(".")) if match else ()


def _pad(a: tuple[int, ...], n: int) -> tuple[int, ...]:
    return a + (0,) * (n - len(a))


def satisfies(version: str, specifier: str) -> bool:
    """Whether ``version`` meets a comma-separated ``>=``/``<``/``<=``/``>``/``==`` specifier, by release numbers.

    Post-releases of an excluded upper bound are excluded too (``0.1.13.post3`` is not ``<0.1.13``), as PEP 440 says.
    """
    have = _release(version)
    for clause in filter(None, (c.strip() for c in specifier.split(","))):
        op, bound = re.match(r"(>=|<=|==|!=|<|>|~=)?\s*(.*)", clause).groups()
        want = _release(bound)
        n = max(len(have), len(want))
        h, w = _pad(have, n), _pad(want, n)
        ok = {">=": h >= w, "<=": h <= w, "<": h < w, ">": h > w, "==": h == w, "!=": h != w,
              "~=": h >= w and h[: len(want) - 1] == w[: len(want) - 1], None: h == w}[op]
        if not ok:
            return False
    return True


def required_range(requires=None) -> str | None:
    """The ``apache-tvm-ffi`` specifier this install requires, e.g. ``<0.1.13,>=0.1.11`` (None if unknown)."""
    try:
        requires = md.requires(DISTRIBUTION) if requires is None else requires
    except md.PackageNotFoundError:  # running from a source tree that is not installed
        return None
    for req in requires or ():
        if ";" in req:
            continue  # extras and platform-only requirements
        name = re.match(r"[A-Za-z0-9_.\-]+", req).group(0)
        if name.lower().replace("_", "-") == TVM_FFI:
            return req[len(name):].strip().strip("()") or None
    return None


def installed() -> str | None:
    try:
        return md.version(TVM_FFI)
    except md.PackageNotFoundError:
        return None


def problem(found: str | None = None, wanted: str | None = None) -> str | None:
    """A message saying what to install, or None when the installed tvm-ffi fits (or nothing can be said)."""
    found = installed() if found is None else found
    wanted = required_range() if wanted is None else wanted
    if wanted is None:
        return None
    fix = f"pip install '{TVM_FFI}{wanted}'"
    if found is None:
        return f"{TVM_FFI} is not installed; tilelang-paddle needs {TVM_FFI}{wanted}: {fix}"
    if satisfies(found, wanted):
        return None
    return (f"{TVM_FFI} {found} is installed, but upstream tilelang's libraries in this tilelang-paddle were "
            f"built against {TVM_FFI}{wanted} (another version fails in `import tilelang` with "
            f"\"Type 'ffi.Tensor' already has a registered class\"): {fix}")
