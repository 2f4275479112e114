"""What an autotune result is keyed by: the programs the tuner compiles, not the text of one function (patch 0041).

Upstream keys a finished tuning (the picked config and its kernel, in the
writable autotune cache and, through patch 0039, in bundles) by the decorated
function's source text, its arguments, the configs, the compile and profiling
arguments and TileLang's version. A module constant the kernel body reads, a
helper it calls or a default it inherits can change the program without
changing that text, and the old pick was then served with the old program's
numbers. :func:`make_key` keeps upstream's fields and adds:

``programs``
    per config, the SHA-256 of the program it elaborates to
    (``PrimFunc.script(show_meta=True)``, as the kernel cache keys a kernel),
    or the error that elaboration raised;
``target``
    the target the configs compile for, resolved as a compile resolves it
    (``"auto"`` becomes the GPU's arch);
``tilelang_paddle_build`` and ``tvm_ffi``
    our build id and tvm-ffi's version, as in every kernel's key.

Elaborating every config costs the tuner's own first step once per process
(not a compile). The fields are kept per key for the bundle lookup's refusal
(:func:`fields`), and a bundle run records them (``TILELANG_PADDLE_BUNDLE_RECORD``).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading

from . import toolchain as _toolchain

_FIELDS: dict = {}   # key -> (kernel name, key data, resolved Target or None, backend)
_GUARD = threading.Lock()


def _program(elaborate, config: dict) -> str:
    try:
        func = elaborate(**dict(config))
        return hashlib.sha256(func.script(show_meta=True).encode()).hexdigest()
    except Exception as exc:  # noqa: BLE001 - the tuner meets the same error for this config; key it as such
        return f"error: {type(exc).__name__}: {re.sub(r'0x[0-9a-fA-F]+', '0x', str(exc))[:500]}"  # no addresses


def _resolved(compile_args):
    """The Target (and backend name) the configs compile for, as the kernel cache resolves them; None if none."""
    try:
        from tilelang.backend.module import create_backend_context

        ctx = create_backend_context(compile_args.target, compile_args.target_host, compile_args.execution_backend)
        return ctx.target, ctx.execution_backend.name
    except Exception:  # noqa: BLE001 - no target here (no GPU for "auto"): the tuner's compile says why
        return None, str(compile_args.execution_backend)


def make_key(key_data: dict, tuner) -> str:
    """Upstream's key fields plus the programs, target, build and tvm-ffi; returns the key (patch 0041)."""
    from . import _build_id

    _, elaborate = tuner._ensure_jit_functions()
    target, backend = _resolved(tuner.compile_args)
    key_data["programs"] = [_program(elaborate, config) for config in tuner.configs]
    key_data["target"] = str(target) if target is not None else str(tuner.compile_args.target)
    key_data["tilelang_paddle_build"] = _build_id.BUILD_ID
    key_data["tvm_ffi"] = _toolchain.tvm_ffi_version()
    key = hashlib.sha256(json.dumps(key_data, sort_keys=True, default=str).encode()).hexdigest()
    name = getattr(tuner.fn, "__name__", None) or type(tuner.fn).__name__
    with _GUARD:
        _FIELDS[key] = (name, key_data, target, backend)
    _record(key, name, key_data)
    return key


def fields(key: str):
    """``(kernel name, key data, Target or None, backend)`` of a key :func:`make_key` made here, else None."""
    with _GUARD:
        return _FIELDS.get(key)


def _record(key: str, name: str, key_data: dict) -> None:
    from .bundle import RECORD

    path = os.environ.get(RECORD)
    if not path:
        return
    line = json.dumps({"autotune_key": key, "name": name, "fields": key_data}, sort_keys=True, default=str)
    with _GUARD, open(path, "a") as f:
        f.write(line + "\n")
