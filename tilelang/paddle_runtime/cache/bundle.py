"""Read-only kernel bundles: kernels compiled once, served where nothing can compile (patch 0037).

``TILELANG_PADDLE_BUNDLE=DIR[:DIR...]`` names bundles that ``tilelang-paddle
bundle`` wrote (docs/deploying.md). TileLang's kernel cache asks them first,
before its writable cache, and never writes into them (a read-only mount works):

- A bundle is ``DIR/manifest.json`` (:mod:`.manifest`), ``DIR/kernels/<key>/``
  and ``DIR/autotune/<key>/``, one directory per kernel or tuned kernel,
  copied from a run's writable entries. ``<key>`` is the entry's key
  (:mod:`.key`), without the build tools that name writable entries: they
  are needed to make a kernel, not to load one, and a serving image often has
  none, so a bundle hit asks none of them. Every field of the key must match
  (docs/kernel-cache.md).
- Each entry's files are checked against the manifest's sha256 once per
  process before the first load; a missing or changed file skips the entry
  (one warning naming it), and the kernel falls through to the writable cache
  and a compile.
- Where the kernel is in no bundle and the compiler it needs is absent, the
  lookup raises at once, naming the kernel, the bundles, the fields in which
  their kernels of that name differ, one short line each (or why its entry
  did not load), and their targets: a compile could only fail later, with a
  message about a missing compiler.
"""

from __future__ import annotations

import functools
import logging
import os
import threading

from ..kernel_names import kernel_label, kernel_name
from ..settings import BUNDLE
from . import key as _key
from . import manifest as _manifest
from . import toolchain as _toolchain

logger = logging.getLogger("tilelang.paddle_runtime")

_CHECKED: dict = {}      # (root, key) -> None when the files match, else the problem
_WARNED: set = set()
_GUARD = threading.Lock()


@functools.lru_cache(maxsize=8)
def _roots(value: str) -> tuple:
    return tuple(os.path.abspath(os.path.expanduser(p)) for p in value.split(os.pathsep) if p.strip())


def bundle_dirs(environ=os.environ) -> tuple:
    return _roots(environ.get(BUNDLE, ""))


def _warn_once(what: str, message: str, *args) -> None:
    with _GUARD:
        if what in _WARNED:
            return
        _WARNED.add(what)
    logger.warning(message, *args)


@functools.lru_cache(maxsize=16)
def manifest(root: str) -> dict | None:
    path = os.path.join(root, _manifest.NAME)
    try:
        data = _manifest.read(root)
    except (OSError, ValueError) as exc:
        _warn_once(path, "%s=%s: cannot use %s (%s); it is not used", BUNDLE, root, path, exc)
        return None
    if data is None:
        _warn_once(path, "%s=%s: %s is missing; it is not used", BUNDLE, root, path)
    return data


def _problem(root: str, key: str, entry: dict, kind: str = "kernels") -> str | None:
    with _GUARD:
        if (root, kind, key) in _CHECKED:
            return _CHECKED[(root, kind, key)]
    problem = None
    files = entry.get("files") or {}
    if not files:
        problem = "the manifest lists no files"
    for name, digest in sorted(files.items()):
        path = os.path.join(root, kind, key, name)
        try:
            if _manifest.sha256_file(path) != digest:
                problem = f"{path} does not match its sha256 in the manifest"
                break
        except OSError as exc:
            problem = f"{path}: {exc.strerror or exc}"
            break
    with _GUARD:
        _CHECKED[(root, kind, key)] = problem
    return problem


def autotune_dirs(key: str) -> list:
    """The bundles' copies of autotune result ``key`` whose files match their manifest (patch 0039 asks).

    An autotune result is the tuner's pick and its compiled kernel; its key covers the programs of every
    config, the target, the compile and profiling arguments, our build and tvm-ffi (patch 0041).
    """
    found = []
    for root in bundle_dirs():
        data = manifest(root)
        entry = (data or {}).get("autotune", {}).get(key)
        if entry is None:
            continue
        problem = _problem(root, key, entry, kind="autotune")
        if problem is None:
            found.append(os.path.join(root, "autotune", key))
        else:
            known = _key.tuned_fields(key)
            _warn_once(f"autotune:{root}:{key}", "%s: autotune result %s%s is not loaded: %s", BUNDLE, key,
                       f" (kernel {known[0]})" if known else "", problem)
    return found


def autotune_missing(key: str) -> None:
    """Raise where autotune result ``key`` is in no bundle nor the writable cache and nothing here can compile its
    configs (patch 0039): naming the kernel and the fields in which the bundles' results for it differ."""
    roots = bundle_dirs()
    known = _key.tuned_fields(key)
    if not roots or known is None:
        return
    name, key_data, target, backend = known
    if target is None:
        return  # no target resolved here: the tuner's own compile says why
    missing = _missing_tool(_toolchain.build_tools(_toolchain.target_kind(target), backend))
    if missing is None:
        return  # a compiler is here: tune
    near = []
    for root in roots:
        for entry in ((manifest(root) or {}).get("autotune") or {}).values():
            if entry.get("name") == name:
                near.append(_manifest.differing_fields(entry.get("fields", {}), key_data)
                            or "no field (the result did not load: see the warning before this error)")
    why = (f"the bundles' results for {name} differ in " + " | ".join(near)) if near else \
        f"the bundles hold no autotune result for {name}"
    raise RuntimeError(
        f"autotuned kernel {name} is in no bundle of {BUNDLE}={os.pathsep.join(roots)} and this machine cannot "
        f"tune it (no {missing}): {why}. Rebuild the bundle with this release's code (tilelang-paddle bundle), "
        "or install the compiler")


def _build(cache, path: str, func, backend_context, out_idx, pass_configs, compile_flags):
    # The files a cache entry holds, loaded as upstream's _load_kernel_from_disk does, minus what would
    # write: it deletes an entry that fails to load and tags the kernel with its path for later saves.
    from tilelang.cache.kernel_cache import CachedTextSource, load_kernel_params

    with open(os.path.join(path, cache.params_path)) as f:
        params = load_kernel_params(f.read())
    return cache._build_kernel(
        func=func,
        host_kernel_source=CachedTextSource(path=os.path.join(path, cache.host_kernel_path)),
        device_kernel_source=CachedTextSource(path=os.path.join(path, cache.device_kernel_path)),
        kernel_lib_path=os.path.join(path, cache.kernel_lib_path),
        kernel_params=params,
        backend_context=backend_context,
        out_idx=out_idx,
        pass_configs=pass_configs,
        compile_flags=compile_flags,
    )


def _missing_tool(tools: dict) -> str | None:
    """The build tool (as a user would name it) of ``tools`` (:func:`.toolchain.build_tools`) that is absent."""
    for tool, what in (("nvcc", "nvcc (CUDA_HOME)"), ("nvrtc", "NVRTC (cuda-python)"),
                       ("host_cxx", "C++ compiler ($CXX, g++, clang++ or c++ on PATH)")):
        if tools.get(tool) == _toolchain.NONE:
            return what
    return None


def _refuse(key_data: dict, func, roots: tuple, missing: str, failed: list) -> None:
    name = kernel_name(func)
    near, targets = [], set()
    for root in roots:
        data = manifest(root) or {"entries": {}}
        for entry in data["entries"].values():
            fields = entry.get("fields", {})
            targets.add(_manifest.target_text(fields.get("target", "?")))
            if entry.get("name") == name:
                near.append(_manifest.differing_fields(fields, key_data))
    held = ", ".join(sorted(targets)) or "nothing"
    if failed:
        why = "its bundle entry did not load: " + " | ".join(failed)
    elif near:
        why = f"the bundle's kernel(s) named {name} differ in " + " | ".join(d for d in near if d)
    else:
        why = f"the bundles hold no kernel named {name}"
    raise RuntimeError(
        f"kernel {kernel_label(func)} is in no bundle of {BUNDLE}={os.pathsep.join(roots)} and this machine cannot compile it "
        f"(no {missing}): {why}. The bundles hold kernels for: {held}. Rebuild the bundle with this kernel "
        f"(tilelang-paddle bundle), or install the compiler")


def load(cache, key: str, func, backend_context, out_idx, pass_configs, compile_flags):
    """The kernel from the first bundle that holds ``key``'s kernel intact, or None (patch 0037)."""
    roots = bundle_dirs()
    key_data = _key.LAST_KEY_DATA.get()
    if key_data is None or not (roots or os.environ.get(_key.RECORD)):
        return None  # no bundle in use: nothing to compute
    # "bundle_key": the entry's directory in the bundle; in the run's writable cache, <key>.<tools digest>.
    _key.record({"bundle_key": key, "name": kernel_name(func), "label": kernel_label(func), "fields": key_data})
    if not roots:
        return None
    failed = []
    for root in roots:
        data = manifest(root)
        entry = data["entries"].get(key) if data else None
        if entry is None:
            continue
        problem = _problem(root, key, entry)
        if problem:
            _warn_once(f"{root}/{key}", "kernel %s: bundle entry %s of %s is not loaded: %s", kernel_label(func),
                       key[:16], root, problem)
            failed.append(problem)
            continue
        try:
            return _build(cache, os.path.join(root, "kernels", key), func, backend_context, out_idx, pass_configs,
                          compile_flags)
        except Exception as exc:  # noqa: BLE001 - a bundle that does not load is skipped like a corrupt one
            _warn_once(f"{root}/{key}", "kernel %s: bundle entry %s of %s failed to load (%s: %s); skipping it",
                       kernel_label(func), key[:16], root, type(exc).__name__, exc)
            failed.append(f"{os.path.join(root, 'kernels', key)}: {type(exc).__name__}: {exc}")
    missing = _missing_tool(_toolchain.build_tools(*_key.built_by(key)))
    if missing:
        _refuse(key_data, func, roots, missing, failed)
    return None
