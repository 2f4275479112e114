"""Paddle's torch proxy for upstream's own ``import torch``, and nothing of the user's.

How Paddle scopes the proxy (``paddle/compat/proxy.py``, read in 3.3.1 and
develop): ``TorchProxyMetaFinder.find_spec`` proxies a ``torch`` import when
*any* frame on the stack belongs to a module flagged ``__enable_torch_proxy__``
(``_is_called_by_module_with_specific_dunder_attr``), a flag it sets on every
module of the scope (``_find_spec_for_specific_module``). So user code that
tilelang calls (a ``@tilelang.jit`` factory, an ``autograd_function`` forward,
a ``do_bench`` function) got Paddle as ``torch``, and the proxy stayed in
``sys.modules`` for the whole program afterwards.

:func:`install` narrows that decision on Paddle's finder object itself (so
re-enabling, and the extra copies Paddle 3.3.1's ``enable_compat`` inserts,
keep it): the *importer* decides, the first frame outside the import
machinery. A ``tilelang`` module's import goes to Paddle's own ``find_spec``
as before (the proxy). Any other importer gets what it would get without
tilelang: Paddle's decision with tilelang's frames left out, i.e. the proxy
when the user enabled it globally or for a module of theirs on the stack, and
otherwise Paddle's answer for an unscoped caller (the real torch where it was
imported before the proxy, else no spec: ``ModuleNotFoundError``, and
``importlib.util.find_spec("torch") is None``).

``import tilelang`` itself (:func:`end_package_import`):
Paddle runs each scoped module's ``exec_module`` and ``find_spec`` under
``use_torch_proxy_guard``, and each guard scans all of ``sys.modules`` twice
(``_swap_torch_modules_to_cache``, ``_clear_torch_proxy_modules``): four scans
for each of the ~600 modules ``import tilelang`` loads. While the ``tilelang``
package is still initialising, and no real ``torch`` is loaded (nothing to swap
out), a ``tilelang`` module is instead found by the other finders and flagged
``__enable_torch_proxy__`` *before* it runs, and every ``import torch`` is left
to Paddle's own ``find_spec`` (not narrowed): the any-frame rule then proxies
it for the module and for what it imports (tvm's ``import torch.utils.dlpack``),
as the guard's global enabling did. The proxies left in ``sys.modules`` are
removed once, when the package finishes (:func:`end_package_import`, patch
0051). importlib's own flag on the package's spec ends this mode even where
``import tilelang`` fails midway.

What this cannot cover: a proxy that an ``import torch`` in a tilelang
*function* put into ``sys.modules`` is what a later ``import torch`` anywhere
returns (Python consults ``sys.modules`` before any finder). Upstream's
module-level imports run inside Paddle's scope guard, which removes the
proxies afterwards. The lazy import upstream runs at kernel time, GPU target
detection on every compile without ``target=``, is bound at load instead
(patch 0030, ``cuda/target.py``); the ones left are off the paths this
package supports (``language/fp8.py``'s ``determine_fp8_type``, the NVRTC
library loader, macOS cache keys). :func:`hide` removes leftovers, and
``tilelang.paddle.autograd_function`` calls it before it runs user code
(:func:`user_code`).
"""

from __future__ import annotations

import contextlib
import sys

_SCOPE = "tilelang"
_MACHINERY = ("importlib", "_frozen_importlib", "paddle.compat.proxy", __name__)


def _in_scope(name: str) -> bool:
    return name == _SCOPE or name.startswith(_SCOPE + ".")


def _is_torch(name: str) -> bool:
    return name == "torch" or name.startswith("torch.")


def _importer(frame):
    """The first frame outside the import machinery (and Paddle's finder, and this module)."""
    while frame is not None:
        name = frame.f_globals.get("__name__") or ""
        if not name.startswith(_MACHINERY):
            return frame
        frame = frame.f_back
    return None


def _flagged_outside_scope(frame, enabled: str, disabled: str) -> bool:
    """Paddle's any-frame rule with tilelang's own frames left out."""
    while frame is not None:
        g = frame.f_globals
        if not _in_scope(g.get("__name__") or "") and (g.get(enabled) or g.get(disabled)):
            return True
        frame = frame.f_back
    return False


def _only_proxies_loaded(proxy) -> bool:
    """No real ``torch`` in ``sys.modules`` (Paddle's guard would swap it out while a tilelang module runs)."""
    top = sys.modules.get("torch")
    return top is None or isinstance(top, getattr(proxy, "ProxyModule", ()))


def _package_initializing() -> bool:
    """``import tilelang`` is still running (importlib's own flag on the package's spec)."""
    package = sys.modules.get(_SCOPE)
    return bool(getattr(getattr(package, "__spec__", None), "_initializing", False))


class _FlaggedLoader:
    """The module's own loader, with Paddle's scope flag set before the module runs (not after, as Paddle's guard
    does: the flag is what proxies the module's ``import torch`` without the guard); everything else delegates."""

    def __init__(self, loader, flag: str):
        self._loader, self._flag = loader, flag

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        module.__dict__[self._flag] = True
        self._loader.exec_module(module)

    def __getattr__(self, name):  # get_source, get_resource_reader, is_package, ...
        return getattr(self._loader, name)


def _spec_without(finder, fullname, path, target, flag):
    """``fullname``'s spec from every finder but Paddle's (its copies included), with :class:`_FlaggedLoader`."""
    for other in sys.meta_path:
        if other is finder:
            continue
        find = getattr(other, "find_spec", None)
        spec = find(fullname, path, target) if find is not None else None
        if spec is not None:
            if spec.loader is not None:
                spec.loader = _FlaggedLoader(spec.loader, flag)
            return spec
    return None


def install(proxy) -> bool:
    """Narrow Paddle's finder (``proxy``: ``paddle.compat.proxy``) as the module docstring says; once.

    Returns False where this Paddle's finder lacks the pieces read here (its
    behaviour is then left as Paddle ships it).
    """
    finder = getattr(proxy, "TORCH_PROXY_FINDER", None)
    original = getattr(type(finder), "find_spec", None)
    cached = getattr(finder, "_find_spec_for_cached_torch_module", None)
    modules_cache = getattr(proxy, "TORCH_MODULES_CACHE", None)
    if original is None or cached is None or modules_cache is None or "_globally_enabled" not in vars(finder):
        return False
    if getattr(finder, "_tlp_narrowed", False):
        return True
    enabled = getattr(proxy, "MAGIC_ENABLED_MODULE_ATTR", "__enable_torch_proxy__")
    disabled = getattr(proxy, "MAGIC_DISABLED_MODULE_ATTR", "__disable_torch_proxy__")

    def find_spec(fullname, path, target=None):
        # ``import tilelang`` in progress: its modules run flagged, without Paddle's guards (module docstring),
        # and every ``import torch`` under them is Paddle's decision, as under the guards.
        package_import = not finder._globally_enabled and _package_initializing() and _only_proxies_loaded(proxy)
        if package_import and _in_scope(fullname):
            return _spec_without(finder, fullname, path, target, enabled)
        if _is_torch(fullname) and not finder._globally_enabled and not package_import:
            importer = _importer(sys._getframe(1))
            if importer is not None and not _in_scope(importer.f_globals.get("__name__") or "") \
                    and not _flagged_outside_scope(importer, enabled, disabled):
                # An unscoped caller, as Paddle's find_spec answers it.
                return cached(fullname) if fullname in modules_cache else None
        return original(finder, fullname, path, target)

    finder.find_spec = find_spec
    finder._tlp_narrowed = True
    return True


def hide() -> None:
    """Take Paddle's torch proxies out of ``sys.modules`` (modules that imported them keep theirs).

    One dict lookup when there is nothing to hide (a submodule proxy comes with ``torch`` itself), and
    nothing is hidden while the user has the proxy on globally: it is theirs then.
    """
    top = sys.modules.get("torch")
    if top is None:
        return
    from paddle.compat import proxy

    proxy_type = getattr(proxy, "ProxyModule", None)
    finder = getattr(proxy, "TORCH_PROXY_FINDER", None)
    if proxy_type is None or not isinstance(top, proxy_type) or getattr(finder, "_globally_enabled", False):
        return
    for name, module in list(sys.modules.items()):
        if _is_torch(name) and isinstance(module, proxy_type):
            del sys.modules[name]


def end_package_import() -> None:
    """The end of ``tilelang/__init__`` (patch 0051): the proxies its modules imported leave ``sys.modules``."""
    hide()


@contextlib.contextmanager
def user_code():
    """``with user_code():`` around a call into user code: no proxy left in ``sys.modules`` for it to find."""
    hide()
    yield
