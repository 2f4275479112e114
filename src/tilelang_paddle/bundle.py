"""``tilelang-paddle bundle OUT --run MODULE:FUNCTION``: every kernel a job compiles, in one directory.

Each ``--run`` runs in a fresh process with a fresh private kernel cache (so
every kernel it uses is compiled there, none comes from this machine's
cache or from other bundles) and ``TILELANG_PADDLE_BUNDLE_RECORD`` naming a
file where TileLang's kernel cache lists every kernel looked up (patch 0037).
Afterwards each recorded kernel's cache entry is copied to
``OUT/kernels/<bundle key>/`` and ``OUT/manifest.json`` lists, per kernel, its
name, key fields (target and arch, backend, versions, toolchain) and every
file's sha256, and for the bundle the versions it was made with. The manifest
is written last, replacing any earlier one; entries already in ``OUT`` are kept.
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
    for dirpath, dirnames, _ in os.walk(cache):
        if key in dirnames and os.path.basename(dirpath) == "kernels":
            return os.path.join(dirpath, key)
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


def build(out: str, runs: list[str]) -> int:
    out = os.path.abspath(out)
    records = []
    with tempfile.TemporaryDirectory(prefix="tilelang-bundle-") as tmp:
        cache, record, ops = (os.path.join(tmp, n) for n in ("cache", "record.jsonl", "ops"))
        for spec in runs:
            _run(spec, cache, record, ops)
        if os.path.exists(record):
            with open(record) as f:
                records = [json.loads(line) for line in f if line.strip()]
        manifest_path = os.path.join(out, "manifest.json")
        entries, tuned = {}, {}
        if os.path.exists(manifest_path):
            with open(manifest_path) as f:
                old = json.load(f)
            if old.get("format") == FORMAT:
                entries, tuned = old.get("entries", {}), old.get("autotune", {})
        os.makedirs(os.path.join(out, "kernels"), exist_ok=True)
        added = 0
        for rec in records:
            bkey = rec["bundle_key"]
            src = _entry_dir(cache, rec["key"])
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
            entries[bkey] = {"name": rec["name"], "key": rec["key"], "fields": rec["fields"], "files": files}
        op_dirs = _copy_ops(ops, os.path.join(out, "ops"))
        tuned.update(_copy_autotune(cache, os.path.join(out, "autotune")))
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
    print(f"tilelang-paddle bundle: {out}: {len(entries)} kernel(s) ({added} new, from {len(records)} lookups); "
          f"targets: {', '.join(targets) or 'none'}; {len(op_dirs)} custom operator(s) copied; "
          f"{len(tuned)} autotune result(s)")
    return 0
