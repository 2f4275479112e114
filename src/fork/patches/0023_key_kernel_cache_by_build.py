"""Key TileLang's kernel cache by the exact tilelang-paddle build, not only by version.

File: tilelang/cache/kernel_cache.py. Upstream's key holds
``tilelang.__version__`` (ours, ``0.1.15.postN``, patch 0001) and the platform,
nothing of our patches: a kernel compiled by an earlier build of the same
version (before patch 0020 changed the host launch code, say, or 0021 the
order of its sizes) would be loaded as it was. ``src/fork/stage.py`` writes
``tilelang/paddle_runtime/_build_id.py``, a digest of the upstream wheel's
sha256, the patch series and our overlay; it joins the key as
``tilelang_paddle_build``.
"""

from ..patching import Edit, Patch

PATCH = Patch(
    name="0023_key_kernel_cache_by_build",
    file="tilelang/cache/kernel_cache.py",
    reason="a kernel compiled by another build of the fork (other patches, same version) must not be reused",
    edits=(
        Edit('        base = {"version": __version__, "platform": platform.machine()}\n',
             '        base = {"version": __version__, "platform": platform.machine()}\n'
             "        from tilelang.paddle_runtime import _build_id  # tilelang-paddle patch 0023\n\n"
             '        base["tilelang_paddle_build"] = _build_id.BUILD_ID\n'),
    ),
    forwarded="not-needed",
    checked_against=("0.1.15",),
    drop_when="never",
)
