"""Bring up the Paddle control plane before upstream touches torch or CUDA.

File: tilelang/__init__.py. Upstream's ``_lazy_load_lib`` does ``import torch``
(to get libcudart into the global symbol namespace) before loading its own
libraries. We run ``tilelang.paddle_runtime.bootstrap.install`` first: it
imports Paddle (one clear ImportError when it is missing or older than 3.3),
makes ``import torch`` inside the ``tilelang`` package resolve to Paddle's
proxy (also for a plain ``import tilelang`` without ``paddle.enable_compat``),
and preloads libcudart with RTLD_GLOBAL.
"""

from ..patching import Edit, Patch

ANCHOR = "from .env import env as env  # noqa: F401\n"

PATCH = Patch(
    name="0002_bootstrap_paddle",
    file="tilelang/__init__.py",
    reason="import Paddle, scope the torch proxy to tilelang and preload libcudart before upstream loads",
    edits=(
        Edit(
            ANCHOR,
            "from .paddle_runtime import bootstrap as _paddle_bootstrap  # noqa: E402\n\n"
            "_paddle_bootstrap.install(globals())\n"
            "del _paddle_bootstrap\n\n" + ANCHOR,
        ),
    ),
    forwarded="not-needed",
    checked_against=("0.1.14", "0.1.15"),
    drop_when="never",
)
