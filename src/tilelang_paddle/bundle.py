"""``tilelang-paddle bundle OUT --run MODULE:FUNCTION``: every kernel a job compiles, in one directory.

``OUT`` is checked first: a file, a ``manifest.json`` that is not a bundle of
ours, or a directory that cannot be written is refused, naming the path,
before anything compiles. Each ``--run`` then runs in a fresh process with a
fresh private kernel cache (so every kernel it uses is compiled there, none
comes from this machine's cache or from other bundles) and
``TILELANG_PADDLE_BUNDLE_RECORD`` naming a file where TileLang's kernel cache
and tuner list every key looked up.

Afterwards, under a lock on ``OUT`` (``OUT/.bundle.lock``), the manifest is
read again, each recorded kernel's entry is copied to ``OUT/kernels/<key>/``
and each tuned kernel's to ``OUT/autotune/<key>/`` (an intact entry already
there is kept: the same key is the same kernel), and the merged manifest
replaces the old one atomically. Several runs into one ``OUT`` (parallel CI
jobs) therefore all end up listed, and a run killed midway leaves the last
manifest, whose files are all in place (an entry is copied beside its final
name and renamed into it before the manifest names it); what such a run had
staged is removed by the next run, under the same lock. Operators
``tilelang.paddle.custom_op`` built in its default op cache are copied to
``OUT/ops/<op>-<digest>/`` the same way. Serving reads it all with
``TILELANG_PADDLE_BUNDLE=OUT`` (``tilelang.paddle_runtime.cache.bundle`` for
kernels, ``custom_op`` for operators).
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

_RUNNER = """
import importlib, sys
import paddle
import tilelang
module, _, function = sys.argv[1].partition(":")
getattr(importlib.import_module(module), function)()
"""


def _fail(message: str) -> SystemExit:
    return SystemExit(f"tilelang-paddle bundle: {message}")


def _run(spec: str, cache: str, record: str, ops: str) -> None:
    module, sep, function = spec.partition(":")
    if not (sep and module and function):
        raise _fail(f"--run expects MODULE:FUNCTION, got {spec!r}")
    env = {k: v for k, v in os.environ.items() if k != "TILELANG_PADDLE_BUNDLE"}
    env.update({"TILELANG_CACHE_DIR": cache, "TILELANG_PADDLE_BUNDLE_RECORD": record, "TILELANG_PADDLE_OP_CACHE": ops})
    # The runner runs in the current directory, which is first on its path (python -c), as for `python -m`.
    proc = subprocess.run([sys.executable, "-c", _RUNNER, spec], env=env)
    if proc.returncode:
        raise _fail(f"--run {spec} failed (exit status {proc.returncode}); nothing was written")


def _check_out(out: str, manifest) -> None:
    """Refuse, before anything compiles, an ``OUT`` that is a file, holds a foreign manifest or cannot be written."""
    if os.path.exists(out) and not os.path.isdir(out):
        raise _fail(f"OUT {out} is a file, not a directory; nothing was compiled. Name a new or an existing bundle "
                    "directory")
    _existing(out, manifest)
    try:
        os.makedirs(out, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".write-check-", dir=out)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise _fail(f"OUT {out} cannot be written ({exc.strerror or exc}); nothing was compiled. Name a directory "
                    "you can write") from None


def _existing(out: str, manifest) -> dict:
    """The manifest in ``OUT`` (empty for a new bundle); refuses one that is not ours to write."""
    path = os.path.join(out, manifest.NAME)
    try:
        data = manifest.read(out)
    except (OSError, ValueError) as exc:
        raise _fail(f"{path} is not a tilelang-paddle bundle manifest ({exc}); it was left as it is and nothing "
                    "was compiled. Name another OUT directory") from None
    return data or {}


def _files(root: str) -> dict:
    files = {}
    for d, _, names in os.walk(root):
        for name in names:
            path = os.path.join(d, name)
            files[os.path.relpath(path, root)] = path
    return dict(sorted(files.items()))


def _intact(dst: str, listed: dict | None, manifest) -> bool:
    files = (listed or {}).get("files") or {}
    try:
        return bool(files) and all(manifest.sha256_file(os.path.join(dst, n)) == d for n, d in files.items())
    except OSError:
        return False


def _place(src: str, dst: str, listed: dict | None, manifest, ignore=None) -> dict:
    """``src`` copied to ``dst`` (beside it first, then renamed in) unless ``listed`` says ``dst`` is intact;
    returns ``{relative path: sha256}`` of ``dst``."""
    if not _intact(dst, listed, manifest):
        staged = os.path.join(os.path.dirname(dst), f".{os.path.basename(dst)}.{os.getpid()}")
        shutil.rmtree(staged, ignore_errors=True)
        shutil.copytree(src, staged, ignore=ignore)
        shutil.rmtree(dst, ignore_errors=True)
        os.rename(staged, dst)
    return {name: manifest.sha256_file(path) for name, path in _files(dst).items()}


#: What a run stages beside its final names (``_place``, ``_write``): ``.<name>.<pid>``, ``.manifest.json.<pid>.tmp``.
_STAGED = re.compile(r"^\..+\.\d+(\.tmp)?$")


def _sweep(out: str) -> None:
    """Remove what killed runs staged in ``out``. Called under the lock, which every run holds while it stages,
    so nothing staged there belongs to a live run."""
    for sub in ("", "kernels", "autotune", "ops"):
        folder = os.path.join(out, sub)
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            if _STAGED.match(name):
                path = os.path.join(folder, name)
                if os.path.isdir(path) and not os.path.islink(path):
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    with contextlib.suppress(OSError):
                        os.unlink(path)


def _entry_dirs(cache: str, kind: str) -> dict:
    """``{key: directory}`` of the run's writable entries under ``.../<kind>/<key>.<tools digest>`` (one
    toolchain per run); upstream's staging and lock directories start with a dot."""
    found = {}
    for dirpath, dirnames, _ in os.walk(cache):
        if os.path.basename(dirpath) == kind:
            for name in dirnames:
                if not name.startswith("."):
                    found[name.rsplit(".", 1)[0]] = os.path.join(dirpath, name)
            dirnames[:] = []
    return found


def _ops(ops: str) -> list:
    """The complete operator directories the runs built under the default op cache (``custom_op`` without
    ``directory=``)."""
    done = []
    for sub in sorted(os.listdir(ops)) if os.path.isdir(ops) else []:
        op = sub.rsplit("-", 1)[0]
        if os.path.isfile(os.path.join(ops, sub, op, "tilelang_op.json")):  # else a build that did not finish
            done.append(sub)
    return done


def _versions() -> dict:
    versions = {}
    for dist in ("tilelang-paddle", "apache-tvm-ffi", "paddlepaddle", "paddlepaddle-gpu"):
        try:
            versions[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            pass
    return versions


def _write(out: str, manifest, data: dict) -> None:
    tmp = os.path.join(out, f".{manifest.NAME}.{os.getpid()}.tmp")
    with open(tmp, "w") as f:
        json.dump(data, f, indent=1, sort_keys=True)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, os.path.join(out, manifest.NAME))


def build(out: str, runs: list[str]) -> int:
    from tilelang.paddle_runtime.cache import manifest
    from tilelang.paddle_runtime.file_lock import FileLock

    out = os.path.abspath(out)
    _check_out(out, manifest)
    with tempfile.TemporaryDirectory(prefix="tilelang-bundle-") as tmp:
        cache, record, ops = (os.path.join(tmp, n) for n in ("cache", "record.jsonl", "ops"))
        for spec in runs:
            _run(spec, cache, record, ops)
        records = []
        if os.path.exists(record):
            with open(record) as f:
                records = [json.loads(line) for line in f if line.strip()]
        kernels = [rec for rec in records if "bundle_key" in rec]
        built, tuned_here = _entry_dirs(cache, "kernels"), _entry_dirs(cache, "autotuner")
        for rec in kernels:
            if rec["bundle_key"] not in built:
                raise _fail(f"kernel {rec['name']} was used but is not in the private cache (was its cache write "
                            "refused, or TILELANG_DISABLE_CACHE set?)")
        with FileLock(os.path.join(out, ".bundle.lock"), what="writing a bundle"):
            old = _existing(out, manifest)  # another run may have written it since the check
            _sweep(out)
            entries, tuned = old.get("entries", {}), old.get("autotune", {})
            os.makedirs(os.path.join(out, "kernels"), exist_ok=True)
            added = len({rec["bundle_key"] for rec in kernels} - set(entries))
            for rec in kernels:
                key = rec["bundle_key"]
                files = _place(built[key], os.path.join(out, "kernels", key), entries.get(key), manifest)
                entries[key] = {"name": rec["name"], "label": rec.get("label"), "fields": rec["fields"],
                                "files": files}
            names = {rec["autotune_key"]: rec for rec in records if "autotune_key" in rec}
            os.makedirs(os.path.join(out, "autotune"), exist_ok=True)
            for key, src in tuned_here.items():
                files = _place(src, os.path.join(out, "autotune", key), tuned.get(key), manifest)
                rec = names.get(key, {})
                tuned[key] = {"name": rec.get("name"), "fields": rec.get("fields", {}), "files": files}
            op_dirs = _ops(ops)
            if op_dirs:
                os.makedirs(os.path.join(out, "ops"), exist_ok=True)
            for sub in op_dirs:
                dst = os.path.join(out, "ops", sub)
                if not os.path.isdir(dst):  # <op>-<digest>: the same name is the same operator
                    _place(os.path.join(ops, sub), dst, None, manifest,
                           ignore=shutil.ignore_patterns(".tilelang-op-*.lock"))
            _write(out, manifest, {"format": manifest.FORMAT, "made_with": _versions(), "entries": entries,
                                   "autotune": tuned})
    targets = sorted({manifest.target_text(e["fields"].get("target", "?")) for e in entries.values()})
    print(f"tilelang-paddle bundle: {out}: {len(entries)} kernel(s) ({added} new, from {len(kernels)} lookups); "
          f"targets: {', '.join(targets) or 'none'}; {len(op_dirs)} custom operator(s) copied; "
          f"{len(tuned)} autotune result(s)")
    return 0
