"""What makes two cache entries the same: the key of a kernel and the key of a tuned kernel.

Both keys hold what the entry computes and what it needs to load, with the same
fields wherever they mean the same thing (docs/kernel-cache.md lists them):

- what it computes: a kernel's program (``func``, the SHA-256 of
  ``PrimFunc.script(show_meta=True)``, upstream's field), or, for a tuned
  kernel, the same digest of each config's program (``programs``; a config
  whose elaboration raises is keyed by its error). The tuned key no longer
  holds the decorated function's source text (upstream's ``func_source``):
  the programs cover everything it changes that matters, so a comment,
  docstring or whitespace edit keeps the key, and an edited constant or
  helper the text never showed changes it;
- how it is built and called: target (resolved as a compile resolves it,
  ``"auto"`` becoming the GPU's arch), backend, pass configs, flags, out_idx,
  arguments, for a tuned kernel its configs and profiling arguments;
- what it loads with: TileLang's version (upstream's ``version``) and
  :func:`shared_fields`, our build id (``tilelang_paddle_build``) and
  tvm-ffi's version (``tvm_ffi``).

The build tools are not in the key: they name the writable cache's entry
directories (:mod:`.entries`), so a bundle hit asks none of them.
:func:`kernel_key` completes upstream's kernel key (patch 0036),
:func:`tuned_key` upstream's autotune key (patch 0041); a bundle run records
both (``TILELANG_PADDLE_BUNDLE_RECORD``).
"""

from __future__ import annotations

import contextvars
import hashlib
import json
import logging
import os
import re
import threading

from . import toolchain as _toolchain

#: The fields of the last kernel key this thread's context made, for :mod:`.bundle`'s lookup.
LAST_KEY_DATA: contextvars.ContextVar[dict | None] = contextvars.ContextVar("tlp_last_key_data", default=None)

_FIELDS: dict = {}      # tuned key -> (kernel name, key data, resolved Target or None, backend)
_BUILT_BY: dict = {}    # key (either kind) -> (target kind, backend), for the entry's build tools
_GUARD = threading.Lock()
_ELABORATING = contextvars.ContextVar("tlp_elaborating_for_key", default=False)


def shared_fields() -> dict:
    """The fields every entry's key holds for what it loads with: our build id and tvm-ffi's version."""
    from .. import _build_id

    return {"tilelang_paddle_build": _build_id.BUILD_ID, "tvm_ffi": _toolchain.tvm_ffi_version()}


def kernel_key(key_data: dict) -> dict:
    """Upstream's kernel key fields plus :func:`shared_fields`, left for this context's bundle lookup."""
    key_data.update(shared_fields())
    LAST_KEY_DATA.set(key_data)
    return key_data


def remember(key: str, target, execution_backend: str) -> str:
    """Note the target kind and backend whose tools build ``key``'s entry (:func:`built_by`); return ``key``."""
    _BUILT_BY[key] = (_toolchain.target_kind(target), execution_backend)
    return key


def built_by(key: str) -> tuple:
    """``(target kind, backend)`` of a key made in this process (the C target's tools for an unknown one)."""
    return _BUILT_BY.get(key, ("c", ""))


class _QuietWhileKeying(logging.Filter):
    """Drops the builder's report of a config that fails to elaborate while a key is computed: nothing is
    built then, and the tuner reports the same config's error when it does build it."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not _ELABORATING.get()


logging.getLogger("tilelang.language.eager.builder").addFilter(_QuietWhileKeying())


def _program(elaborate, config: dict) -> str:
    token = _ELABORATING.set(True)
    try:
        func = elaborate(**dict(config))
        return hashlib.sha256(func.script(show_meta=True).encode()).hexdigest()
    except Exception as exc:  # noqa: BLE001 - the tuner meets the same error for this config; key it as such
        return f"error: {type(exc).__name__}: {re.sub(r'0x[0-9a-fA-F]+', '0x', str(exc))[:500]}"  # no addresses
    finally:
        _ELABORATING.reset(token)


def _resolved(compile_args):
    """The Target (and backend name) the configs compile for, as the kernel cache resolves them; None if none."""
    try:
        from tilelang.backend.module import create_backend_context

        ctx = create_backend_context(compile_args.target, compile_args.target_host, compile_args.execution_backend)
        return ctx.target, ctx.execution_backend.name
    except Exception:  # noqa: BLE001 - no target here (no GPU for "auto"): the tuner's compile says why
        return None, str(compile_args.execution_backend)


def tuned_key(key_data: dict, tuner) -> str:
    """Upstream's autotune key fields, less the source text, plus programs, target and shared fields (patch 0041)."""
    _, elaborate = tuner._ensure_jit_functions()
    target, backend = _resolved(tuner.compile_args)
    key_data.pop("func_source", None)
    key_data["programs"] = [_program(elaborate, config) for config in tuner.configs]
    key_data["target"] = str(target) if target is not None else str(tuner.compile_args.target)
    key_data.update(shared_fields())
    key = hashlib.sha256(json.dumps(key_data, sort_keys=True, default=str).encode()).hexdigest()
    name = getattr(tuner.fn, "__name__", None) or type(tuner.fn).__name__
    with _GUARD:
        _FIELDS[key] = (name, key_data, target, backend)
    if target is not None:
        remember(key, target, backend)
    record({"autotune_key": key, "name": name, "fields": key_data})
    return key


def tuned_fields(key: str):
    """``(kernel name, key data, Target or None, backend)`` of a tuned key :func:`tuned_key` made here, else None."""
    with _GUARD:
        return _FIELDS.get(key)


#: Set by ``tilelang-paddle bundle`` in the runs it starts: a JSON-lines file listing every key looked up.
RECORD = "TILELANG_PADDLE_BUNDLE_RECORD"


def record(line: dict) -> None:
    path = os.environ.get(RECORD)
    if not path:
        return
    text = json.dumps(line, sort_keys=True, default=str)
    with _GUARD, open(path, "a") as f:
        f.write(text + "\n")
