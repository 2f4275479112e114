"""Build tooling for tilelang-paddle: pin, fetch, patch and stage upstream TileLang.

Nothing here ships in the wheel. CMakeLists.txt runs ``python -m src.fork stage``
and compiles the result; maintainers run ``python -m src.fork check VERSION`` to
see whether the patch series still applies to another upstream release.
"""
