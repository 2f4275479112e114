"""``tilelang-paddle bundle OUT --run MODULE:FUNCTION``: every kernel a job compiles, in one directory.

Each ``--run`` runs in a fresh process with a fresh private kernel cache (so
every kernel it uses is compiled there, none comes from this machine's
cache or from other bundles) and ``TILELANG_PADDLE_BUNDLE_RECORD`` naming a
file where TileLang's kernel cache lists every kernel looked up (patch 0037).
Afterwards each recorded kernel's cache entry is copied to
``OUT/kernels/<bundle key>/`` and ``OUT/manifest.json`` lists, per kernel, its
name, key fields (target and arch, backend, versions, toolchain) and every
file's sha256, and for the bundle the versions it was made with. The manifest
is written last, replacing an earlier one of ours; entries already in ``OUT`` are kept.
An ``OUT`` that is a file, or holds a ``manifest.json`` that is not a bundle of
ours, is refused before anything compiles.
Operators ``tilelang.paddle.custom_op`` builds in its default op cache (no
``directory=``) are built into a private one too and copied whole to
``OUT/ops/<op>-<digest>/``. Serving reads it all with ``TILELANG_PADDLE_BUNDLE=OUT``
(tilelang/paddle_runtime/bundle.py for kernels, ``custom_op`` for operators).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import tempfile

#: The manifest's format; the reader (tilelang/paddle_runtime/bundle.py) imports it and the helpers below.
FORMAT = 1

_RUNNER = """
import importlib, sys
import paddle
import tilelang
module, _, function = sys.argv[1].partition(":")
getattr(importlib.import_module(module), function)()
"""


def sha256_file(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def target_text(target) -> str:
    """``cuda sm_90a`` / ``c`` from a target as the manifest stores it (its JSON or its string)."""
    text = str(target)
    try:
        data = json.loads(text)
    except ValueError:
        return text.split(" -keys")[0]
    return " ".join(str(p) for p in (data.get("kind", "?"), data.get("arch")) if p)


def _run(spec: str, cache: str, record: str, ops: str) -> None:
    module, sep, function = spec.partition(":")
    if not (sep and module and function):
        raise SystemExit(f"tilelang-paddle bundle: --run expects MODULE:FUNCTION, got {spec!r}")
    env = {k: v for k, v in os.environ.items() if k != "TILELANG_PADDLE_BUNDLE"}
    env.update({"TILELANG_CACHE_DIR": cache, "TILELANG_PADDLE_BUNDLE_RECORD": record, "TILELANG_PADDLE_OP_CACHE": ops})
    # The runner runs in the current directory, which is first on its path (python -c), as for `python -m`.
    proc = subprocess.run([sys.executable, "-c", _RUNNER, spec], env=env)
    if proc.returncode:
        raise SystemExit(f"tilelang-paddle bundle: --run {spec} failed (exit status {proc.returncode}); "
                         "nothing was written")


def _entry_dir(cache: str, key: str) -> str | None:
    """The run's writable-cache entry of ``key``: ``.../kernels/<key>.<tools digest>`` (one toolchain per run)."""
    for dirpath, dirnames, _ in os.walk(cache):
        if os.path.basename(dirpath) == "kernels":
            for name in dirnames:
                if name.startswith(key + "."):
                    return os.path.join(dirpath, name)
    return None


def _copy_ops(ops: str, dst_root: str) -> list:
    """Every complete operator directory the runs built under the default op cache (``custom_op`` without
    ``directory=``), copied to ``OUT/ops/<op>-<digest>/`` with its manifest; lock files are left behind."""
    copied = []
    for sub in sorted(os.listdir(ops)) if os.path.isdir(ops) else []:
        src = os.path.join(ops, sub)
        op = sub.rsplit("-", 1)[0]
        if not os.path.isfile(os.path.join(src, op, "tilelang_op.json")):  # a build that did not finish
            continue
        dst = os.path.join(dst_root, sub)
        if os.path.exists(dst):
            shutil.rmtree(dst)
        shutil.copytree(src, dst, ignore=shutil.ignore_patterns(".tilelang-op-*.lock"))
        copied.append(sub)
    return copied


def _copy_autotune(cache: str, dst_root: str) -> dict:
    """Every finished autotune result in the runs' private cache (``.../autotuner/<key>/``, upstream's layout),
    copied to ``OUT/autotune/<key>/``; returns ``{key: {"files": {relative path: sha256}}}``."""
    tuned = {}
    for dirpath, dirnames, _ in os.walk(cache):
        if os.path.basename(dirpath) != "autotuner":
            continue
        for key in dirnames:
            if key.startswith("."):  # upstream's staging area
                continue
            src, dst = os.path.join(dirpath, key), os.path.join(dst_root, key)
            if os.path.exists(dst):
                shutil.rmtree(dst)
            shutil.copytree(src, dst)
            files = {}
            for d, _, names in os.walk(dst):
                for name in names:
                    path = os.path.join(d, name)
                    files[os.path.relpath(path, dst)] = sha256_file(path)
            tuned[key] = {"files": dict(sorted(files.items()))}
        dirnames[:] = []
    return tuned


def _existing(out: str) -> dict:
    """The manifest already in ``OUT`` (empty for a new bundle); refuses an ``OUT`` that is not ours to write."""
    if os.path.exists(out) and not os.path.isdir(out):
        raise SystemExit(f"tilelang-paddle bundle: OUT {out} is a file, not a directory; nothing was compiled. "
                         "Name a new or an existing bundle directory")
    path = os.path.join(out, "manifest.json")
    if not os.path.exists(path):
        return {}
    try:
        with open(path) as f:
            old = json.load(f)
    except (OSError, ValueError) as exc:
        old, why = None, f"it cannot be read as JSON ({exc})"
    else:
        why = f"its format is {old.get('format')!r}, ours is {FORMAT}" if isinstance(old, dict) else "not an object"
    if not (isinstance(old, dict) and old.get("format") == FORMAT and isinstance(old.get("entries"), dict)):
        raise SystemExit(f"tilelang-paddle bundle: {path} is not a tilelang-paddle bundle manifest ({why}); it was "
                         "left as it is and nothing was compiled. Name another OUT directory")
    return old


def build(out: str, runs: list[str]) -> int:
    out = os.path.abspath(out)
    old = _existing(out)
    records = []
    with tempfile.TemporaryDirectory(prefix="tilelang-bundle-") as tmp:
        cache, record, ops = (os.path.join(tmp, n) for n in ("cache", "record.jsonl", "ops"))
        for spec in runs:
            _run(spec, cache, record, ops)
        if os.path.exists(record):
            with open(record) as f:
                records = [json.loads(line) for line in f if line.strip()]
        manifest_path = os.path.join(out, "manifest.json")
        entries, tuned = old.get("entries", {}), old.get("autotune", {})
        os.makedirs(os.path.join(out, "kernels"), exist_ok=True)
        added = 0
        kernels = [rec for rec in records if "bundle_key" in rec]
        for rec in kernels:
            bkey = rec["bundle_key"]
            src = _entry_dir(cache, bkey)
            if src is None:
                raise SystemExit(f"tilelang-paddle bundle: kernel {rec['name']} was used but is not in the private "
                                 f"cache (was its cache write refused, or TILELANG_DISABLE_CACHE set?)")
            dst = os.path.join(out, "kernels", bkey)
            if os.path.exists(dst):
                shutil.rmtree(dst)
            shutil.copytree(src, dst)
            files = {name: sha256_file(os.path.join(dst, name)) for name in sorted(os.listdir(dst))
                     if os.path.isfile(os.path.join(dst, name))}
            added += bkey not in entries
            entries[bkey] = {"name": rec["name"], "label": rec.get("label"), "fields": rec["fields"], "files": files}
        op_dirs = _copy_ops(ops, os.path.join(out, "ops"))
        tuned_here = _copy_autotune(cache, os.path.join(out, "autotune"))
        for rec in records:  # the kernel's name and key fields, for the serving side's refusal
            if rec.get("autotune_key") in tuned_here:
                tuned_here[rec["autotune_key"]].update(name=rec["name"], fields=rec["fields"])
        tuned.update(tuned_here)
    versions = {}
    for dist in ("tilelang-paddle", "apache-tvm-ffi", "paddlepaddle", "paddlepaddle-gpu"):
        try:
            versions[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            pass
    manifest = {"format": FORMAT, "made_with": versions, "entries": entries, "autotune": tuned}
    tmp_manifest = os.path.join(out, ".manifest.json.tmp")
    with open(tmp_manifest, "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
    os.replace(tmp_manifest, manifest_path)
    targets = sorted({target_text(e["fields"].get("target", "?")) for e in entries.values()})
    print(f"tilelang-paddle bundle: {out}: {len(entries)} kernel(s) ({added} new, from {len(kernels)} lookups); "
          f"targets: {', '.join(targets) or 'none'}; {len(op_dirs)} custom operator(s) copied; "
          f"{len(tuned)} autotune result(s)")
    return 0
