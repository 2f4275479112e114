"""Import-time set-up, run first thing by ``tilelang/__init__.py`` (patch 0002).

1. Import Paddle, or fail with one ImportError saying what to install.
2. Make ``import torch`` inside the ``tilelang`` package resolve to Paddle's
   torch proxy, whether or not the user called
   ``paddle.enable_compat(scope={"tilelang"})`` first; code outside the scope,
   user code that tilelang calls included, keeps seeing no torch
   (:mod:`.torch_scope`).
3. Refuse an apache-tvm-ffi outside the range upstream's libraries were built
   against, with the install command (``tilelang_paddle.tvm_ffi_version``), before
   upstream fails on it with a registry error.
4. Preload libcudart with RTLD_GLOBAL (see :mod:`.preload`).

Before all of them, the cache directory variables are made absolute and
checked (:mod:`.cache_paths`).
"""

from __future__ import annotations

import os
import site
import sys

MIN_PADDLE = (3, 3)
SCOPE = "tilelang"

_INSTALL_HINT = (
    "Install PaddlePaddle 3.3 or newer first:\n"
    "  CPU: pip install 'paddlepaddle>=3.3'   (or, from a clone of tilelang-paddle: pip install '.[cpu]'; the\n"
    "       package index's 'tilelang-paddle' is another project)\n"
    "  GPU: pip install 'paddlepaddle-gpu>=3.3' from PaddlePaddle's package index for your CUDA version "
    "(see the PaddlePaddle installation guide)"
)


def _parse_version(text: str) -> tuple[int, int]:
    parts = []
    for piece in text.split(".")[:2]:
        digits = "".join(ch for ch in piece if ch.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts + [0] * (2 - len(parts)))  # type: ignore[return-value]


def require_paddle():
    """Import and return ``paddle``; raise one clear ImportError when it is absent or too old."""
    try:
        import paddle
    except ImportError as exc:
        raise ImportError(f"tilelang-paddle needs PaddlePaddle, which is not installed ({exc}).\n{_INSTALL_HINT}") from None
    version = getattr(paddle, "__version__", "0.0.0")
    # Paddle's develop builds report 0.0.0; what matters is the compat API (seams.enable_torch_proxy).
    too_old = version != "0.0.0" and _parse_version(version) < MIN_PADDLE
    has_compat = hasattr(paddle, "enable_compat") or hasattr(getattr(paddle, "compat", None), "enable_torch_proxy")
    if too_old or not has_compat:
        raise ImportError(
            f"tilelang-paddle needs PaddlePaddle >= {MIN_PADDLE[0]}.{MIN_PADDLE[1]} "
            f"(for paddle.enable_compat), found {version}.\n{_INSTALL_HINT}"
        )
    return paddle


def enable_scope(paddle, module_globals: dict) -> None:
    """Proxy ``import torch`` to Paddle inside ``tilelang`` only (silently).

    The proxy's state and the enabling function are read through :mod:`.seams`
    (their shapes differ between Paddle 3.3.1 and develop). Where the finder's
    state cannot be read, our scope is enabled: Paddle extends an existing
    scope with it.
    """
    from paddle.compat import proxy

    from . import seams

    finder = getattr(proxy, "TORCH_PROXY_FINDER", None)
    active = finder is not None and finder in sys.meta_path
    covered = seams.proxy_coverage(finder, SCOPE) if active else False
    if not covered:
        scope = set(finder._local_enabled_scope) if covered is False and active else set()
        seams.enable_torch_proxy(paddle)(scope=scope | {SCOPE}, silent=True)
    # Upstream's imports only: user code tilelang calls sees what it would without tilelang.
    from . import torch_scope

    torch_scope.install(proxy)
    # tilelang/__init__ itself was imported before the proxy existed, so Paddle's
    # finder did not tag it; its own `import torch` calls look for this tag.
    module_globals[getattr(proxy, "MAGIC_ENABLED_MODULE_ATTR", "__enable_torch_proxy__")] = True


def site_dirs(paddle) -> list[str]:
    dirs = [os.path.dirname(os.path.dirname(os.path.abspath(paddle.__file__)))]
    try:
        dirs += site.getsitepackages()
    except AttributeError:  # virtualenv's old site.py
        pass
    return list(dict.fromkeys(dirs))


def install(module_globals: dict) -> None:
    from . import cache_paths

    cache_paths.normalize_environ()  # before upstream creates the kernel cache directory
    paddle = require_paddle()
    # PFCCLab's Paddle builds of torch libraries declare themselves so (flashinfer-python-paddle's
    # flashinfer/__init__.py); downstream code checks getattr(module, "__is_paddle_compatible_library__").
    module_globals["__is_paddle_compatible_library__"] = True
    enable_scope(paddle, module_globals)
    from tilelang_paddle import tvm_ffi_version  # beside tilelang, so the doctor can use it without Paddle

    from . import preload

    mismatch = tvm_ffi_version.problem()
    if mismatch:
        raise ImportError(mismatch)

    from .driver import build_cuda  # the driver module asks Paddle; the driver itself is bound after the preload

    cuda = build_cuda()
    preload.preload(cuda.split(".")[0] if cuda else None, cuda is not None, site_dirs(paddle))
    # What every kernel lookup and Cython-backend call uses, imported now, with the rest of `tilelang`: imported
    # at the first compile instead, inside `tilelang`, each import paid a pass of Paddle's torch-proxy guard over
    # sys.modules, about 20 ms in all on the first kernel a serving process loads (docs/performance.md).
    from . import fast_launch, signature  # noqa: F401
    from .cache import bundle  # noqa: F401
