"""Tuned kernels (the tuner's pick and its compiled kernel) in the same entry model as kernels.

Upstream's tuner reads and writes ``<cache>/autotuner/<key>`` only. Here, as for
a kernel (patches 0039 and 0047):

- the bundles are asked first (``TILELANG_PADDLE_BUNDLE``: ``autotune/<key>``),
  then the writable entry named by the key and the build tools
  (:func:`.entries.entry_dir`), so a compiler or nvcc upgrade tunes again;
- where neither holds it and nothing here can compile the configs, the lookup
  raises naming the kernel and the differing key fields (:func:`.bundle.autotune_missing`);
- a loaded result's kernel carries the decorated function's name, as a fresh
  one does (the pickled PrimFunc has lost the function it was built from);
- a write is atomic, under the key's node lock, and a disk that refuses it costs
  the cache, not the call (:func:`.entries.write`).
"""

from __future__ import annotations

import os
from collections.abc import Callable

from ..kernel_names import named
from . import bundle as _bundle
from . import entries as _entries
from . import key as _key


def _name(key: str) -> str | None:
    known = _key.tuned_fields(key)
    return known[0] if known else None


def load(key: str, cache_dir, load_from: Callable[[str], object]):
    """The tuned result of ``key``: from a bundle, else the writable entry; None where tuning must run."""
    with named(_name(key)):
        for path in _bundle.autotune_dirs(key):
            result = load_from(path)
            if result is not None:
                return result
        result = load_from(_entries.entry_dir(os.fspath(cache_dir), key))
    if result is None:
        _bundle.autotune_missing(key)
    return result


def save(key: str, cache_dir, save_to: Callable[[str], object]) -> None:
    """Write the tuned result of ``key`` to its writable entry (``save_to(path)``: upstream's atomic save)."""
    root = os.fspath(cache_dir)
    path = _entries.entry_dir(root, key)
    _entries.write(root, key, path, lambda: save_to(path))
