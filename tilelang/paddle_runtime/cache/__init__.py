"""One model for cache entries, kernels and tuned kernels alike (docs/kernel-cache.md says it for users).

- :mod:`.key`       what makes two entries the same: the kernel key and the tuned key, with shared fields
- :mod:`.toolchain` the tools that build an entry, asked once per tool file
- :mod:`.entries`   writable entries: ``<key>.<tools digest>``, re-checked in memory, written under a lock
- :mod:`.tuned`     the tuner's reads and writes through the same entries and bundles
- :mod:`.bundle`    read-only bundles, asked before the writable cache
- :mod:`.manifest`  a bundle's manifest, shared by the lookup and ``tilelang-paddle bundle``

Upstream's kernel cache and tuner reach it only through patches (0029, 0036-0039, 0041, 0043, 0047, 0048; each
module names its own).
"""
