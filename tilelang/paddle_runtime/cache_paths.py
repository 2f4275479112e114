"""The cache directories from the environment, made absolute once, with errors that name the variable.

``TILELANG_CACHE_DIR`` (upstream's kernel cache, read live from ``os.environ``
by ``tilelang.env``) and ``TILELANG_PADDLE_OP_CACHE`` (custom operators) are
read here first, at ``import tilelang`` (:func:`normalize_environ`, from
:mod:`.bootstrap`):

- ``~`` and ``$VARS`` are expanded, surrounding quotes and spaces dropped (a
  value written as ``"~/x"`` in a config file otherwise makes a literal ``./~``);
- an empty value means the default;
- a relative path becomes absolute against the directory current at import,
  and is written back to ``os.environ``, so a later ``os.chdir`` (the run
  directories of Hydra-style launchers) and child processes see the same cache;
- ``TILELANG_PADDLE_BUNDLE``'s directories are made absolute the same way
  (they are only read, so nothing else is checked here: :mod:`.bundle` says
  what is wrong with one when it is first used);
- a path that cannot be a directory (a file in the way, or under one) is a
  :class:`CachePathError` naming the variable, its value and the fix, before
  upstream's ``os.makedirs`` fails on it with a bare ``FileExistsError``.
"""

from __future__ import annotations

import os

from .settings import BUNDLE, OP_CACHE

KERNEL_CACHE = "TILELANG_CACHE_DIR"
DEFAULTS = {KERNEL_CACHE: "~/.tilelang/cache", OP_CACHE: "~/.cache/tilelang-paddle/ops"}


class CachePathError(RuntimeError):
    """A cache directory variable names a path that cannot be a directory."""


def expand(value: str) -> str:
    """The path a user means by ``value``: unquoted, ``~`` and ``$VARS`` expanded, absolute."""
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        value = value[1:-1].strip()
    return os.path.abspath(os.path.expandvars(os.path.expanduser(value)))


def _problem(path: str) -> str | None:
    """Why ``path`` cannot be (or become) a directory, or None."""
    probe = path
    while True:
        if os.path.exists(probe):
            if not os.path.isdir(probe):
                return f"{probe} is a file, not a directory" if probe == path else f"{probe} is a file"
            return None
        parent = os.path.dirname(probe)
        if parent == probe:
            return None
        probe = parent


def resolve(variable: str, environ=os.environ) -> str:
    """The absolute directory ``variable`` names (its default when unset or empty); raise CachePathError."""
    raw = environ.get(variable)
    path = expand(raw if raw and raw.strip() else DEFAULTS[variable])
    problem = _problem(path)
    if problem:
        shown = f"{variable}={raw!r}" if raw and raw.strip() else f"the default {variable} ({DEFAULTS[variable]})"
        raise CachePathError(f"{shown} cannot be used as a cache directory: {problem}. Set {variable} to a "
                             f"directory you can write (it is created if missing), or unset it for the default "
                             f"{DEFAULTS[variable]}")
    return path


def normalize_environ(environ=os.environ) -> None:
    """Write both cache variables and the bundles back as absolute paths (unset or empty ones stay unset)."""
    bundles = [expand(p) for p in environ.get(BUNDLE, "").split(os.pathsep) if p.strip()]
    if bundles:
        environ[BUNDLE] = os.pathsep.join(bundles)
    else:
        environ.pop(BUNDLE, None)
    for variable in (KERNEL_CACHE, OP_CACHE):
        raw = environ.get(variable)
        if raw is None or not raw.strip():
            environ.pop(variable, None)
            resolve(variable, environ)  # the default must be usable too
            continue
        environ[variable] = resolve(variable, environ)
