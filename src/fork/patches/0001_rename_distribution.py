"""Report the fork's distribution version as ``tilelang.__version__``.

File: tilelang/__init__.py. Upstream reads ``importlib.metadata.version("tilelang")``;
our wheel installs the distribution ``tilelang-paddle``, so upstream would warn
and report ``0.0.dev0``.
"""

from ..patching import Edit, Patch

PATCH = Patch(
    name="0001_rename_distribution",
    file="tilelang/__init__.py",
    reason="version metadata lives under the distribution name tilelang-paddle",
    edits=(Edit('_dist_version("tilelang")', '_dist_version("tilelang-paddle")'),),
    forwarded="not-needed",
    checked_against=("0.1.14", "0.1.15"),
    drop_when="never",
)
