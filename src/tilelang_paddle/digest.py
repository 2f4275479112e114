"""One file hash for the upstream pin, bundles and operator caches (standard library only: the build tooling,
the doctor and the runtime all use it)."""

from __future__ import annotations

import hashlib


def sha256_file(path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
