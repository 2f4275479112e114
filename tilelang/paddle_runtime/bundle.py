"""Read-only kernel bundles: kernels compiled once, served where nothing can compile (patch 0037).

``TILELANG_PADDLE_BUNDLE=DIR[:DIR...]`` names bundles that ``tilelang-paddle
bundle`` wrote (docs/deploying.md). TileLang's kernel cache asks them first,
before its writable cache, and never writes into them (a read-only mount works):

- A bundle is ``DIR/manifest.json`` and ``DIR/kernels/<key>/``, one directory
  per kernel, copied from a compile's cache entry. ``<key>`` is the kernel's
  cache key without the build tools (:data:`.toolchain.BUILD_TOOLS`: the host
  compiler, nvcc, NVRTC): those are needed to make a kernel, not to load one,
  and a serving image often has none. Every other field must match: the
  program, target and arch, backend, pass configs, TileLang, our build and
  tvm-ffi (docs/kernel-cache.md).
- Each entry's files are checked against the manifest's sha256 once per
  process before the first load; a missing or changed file skips the entry
  (one warning naming it), and the kernel falls through to the writable cache
  and a compile.
- Where the kernel is in no bundle and the compiler it needs is absent, the
  lookup raises at once, naming the kernel, the bundles, the fields in which
  their kernels of that name differ, and their targets: a compile could only
  fail later, with a message about a missing compiler.

``TILELANG_PADDLE_BUNDLE_RECORD`` (set by the bundle command in the process it
runs) appends every kernel looked up to a JSON-lines file.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import threading

from . import toolchain as _toolchain

logger = logging.getLogger("tilelang.paddle_runtime")

from tilelang_paddle.bundle import FORMAT, sha256_file, target_text  # the writer's (the same wheel's)

BUNDLE = "TILELANG_PADDLE_BUNDLE"
RECORD = "TILELANG_PADDLE_BUNDLE_RECORD"

_CHECKED: dict = {}      # (root, key) -> None when the files match, else the problem
_WARNED: set = set()
_GUARD = threading.Lock()


def portable_key(key_data: dict) -> str:
    """The cache key without the build tools: what a bundle is indexed by."""
    data = dict(key_data)
    data["toolchain"] = {k: v for k, v in key_data.get("toolchain", {}).items() if k not in _toolchain.BUILD_TOOLS}
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()


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
    path = os.path.join(root, "manifest.json")
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError) as exc:
        _warn_once(path, "%s=%s: cannot read %s (%s); it is not used", BUNDLE, root, path, exc)
        return None
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("entries"), dict):
        _warn_once(path, "%s: %s is not a tilelang-paddle bundle manifest of format %d; it is not used", BUNDLE,
                   path, FORMAT)
        return None
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
            if sha256_file(path) != digest:
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

    An autotune result is the tuner's pick and its compiled kernel; its key is upstream's (the kernel's
    source, the configs, the compile and profiling arguments), so it serves wherever the bundle's kernels do.
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
            _warn_once(f"autotune:{root}:{key}", "%s: autotune result %s is not loaded: %s", BUNDLE, key, problem)
    return found


def _record(key: str, pkey: str, key_data: dict, func) -> None:
    path = os.environ.get(RECORD)
    if not path:
        return
    from tilelang.utils.language import get_prim_func_name

    line = json.dumps({"key": key, "bundle_key": pkey, "name": get_prim_func_name(func, "<unknown>"),
                       "fields": key_data}, sort_keys=True, default=str)
    with _GUARD, open(path, "a") as f:
        f.write(line + "\n")


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


def _missing_tool(key_data: dict) -> str | None:
    tools = key_data.get("toolchain", {})
    for tool, what in (("nvcc", "nvcc (CUDA_HOME)"), ("nvrtc", "NVRTC (cuda-python)"),
                       ("host_cxx", "C++ compiler ($CXX, g++, clang++ or c++ on PATH)")):
        if tools.get(tool) == _toolchain.NONE:
            return what
    return None


def _refuse(key_data: dict, name: str, roots: tuple, missing: str) -> None:
    key_data = json.loads(json.dumps(key_data, sort_keys=True, default=str))  # as the manifest stores it
    near, targets = [], set()
    for root in roots:
        data = manifest(root) or {"entries": {}}
        for entry in data["entries"].values():
            fields = entry.get("fields", {})
            targets.add(target_text(fields.get("target", "?")))
            if entry.get("name") == name:
                differ = [f"{field}: bundle {fields.get(field)!r}, here {key_data.get(field)!r}"
                          for field in sorted(set(fields) | set(key_data))
                          if field != "toolchain" and fields.get(field) != key_data.get(field)]
                tvm_b, tvm_h = fields.get("toolchain", {}).get("tvm_ffi"), key_data["toolchain"].get("tvm_ffi")
                if tvm_b != tvm_h:
                    differ.append(f"tvm_ffi: bundle {tvm_b!r}, here {tvm_h!r}")
                near.append("; ".join(differ) or "no field (its files failed their check)")
    held = ", ".join(sorted(targets)) or "nothing"
    why = (f"the bundle's kernel(s) named {name} differ in " + " | ".join(near)) if near else \
        f"the bundles hold no kernel named {name}"
    raise RuntimeError(
        f"kernel {name} is in no bundle of {BUNDLE}={os.pathsep.join(roots)} and this machine cannot compile it "
        f"(no {missing}): {why}. The bundles hold kernels for: {held}. Rebuild the bundle with this kernel "
        f"(tilelang-paddle bundle), or install the compiler")


def load(cache, key: str, func, backend_context, out_idx, pass_configs, compile_flags):
    """The kernel from the first bundle that holds ``key``'s kernel intact, or None (patch 0037)."""
    roots = bundle_dirs()
    key_data = _toolchain.LAST_KEY_DATA.get()
    if key_data is None or not (roots or os.environ.get(RECORD)):
        return None  # no bundle in use: nothing to compute
    pkey = portable_key(key_data)
    _record(key, pkey, key_data, func)
    if not roots:
        return None
    for root in roots:
        data = manifest(root)
        entry = data["entries"].get(pkey) if data else None
        if entry is None:
            continue
        problem = _problem(root, pkey, entry)
        if problem:
            _warn_once(f"{root}/{pkey}", "bundle entry %s of %s is not loaded: %s", pkey[:16], root, problem)
            continue
        try:
            return _build(cache, os.path.join(root, "kernels", pkey), func, backend_context, out_idx, pass_configs,
                          compile_flags)
        except Exception as exc:  # noqa: BLE001 - a bundle that does not load is skipped like a corrupt one
            _warn_once(f"{root}/{pkey}", "bundle entry %s of %s failed to load (%s: %s); skipping it", pkey[:16],
                       root, type(exc).__name__, exc)
    missing = _missing_tool(key_data)
    if missing:
        from tilelang.utils.language import get_prim_func_name

        _refuse(key_data, get_prim_func_name(func, "<unknown>"), roots, missing)
    return None
