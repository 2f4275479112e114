"""Paddle APIs whose shape differs between Paddle 3.3.1 and Paddle's develop branch (3.4), detected by capability.

Each function here looks for what the object offers, not at ``paddle.__version__``
(develop builds report 0.0.0), and raises one ImportError or RuntimeError naming
the Paddle version and what is missing when neither shape fits. The table of
every seam the fork touches, with the file and function in each Paddle, is
``docs/paddle-seams.md``.
"""

from __future__ import annotations

import ctypes

EXCHANGE_CAPSULE_NAME = b"dlpack_exchange_api"

_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_is_capsule = ctypes.pythonapi.PyCapsule_IsValid
_is_capsule.restype = ctypes.c_int
_is_capsule.argtypes = [ctypes.py_object, ctypes.c_char_p]


def exchange_api_pointer(tensor_type) -> int | None:
    """Address of the tensor type's DLPack ``DLPackExchangeAPI`` struct, or None when it has none.

    Shapes: ``__dlpack_c_exchange_api__``, a capsule named ``dlpack_exchange_api``
    (the DLPack 1.3 name; Paddle PR #76828, in 3.3.1 as read here), and the older
    ``__c_dlpack_exchange_api__``, an int address or the same capsule (#76828: an
    int with tvm-ffi 0.1.0-0.1.3; always the address on develop, #77533 as the
    issue reports it, not read). Either name, either kind. tvm-ffi accepts the
    same shapes (``_check_and_update_dlpack_c_exchange_api`` in
    ``tvm_ffi/_optional_torch_c_dlpack.py``).
    """
    for name in ("__dlpack_c_exchange_api__", "__c_dlpack_exchange_api__"):
        value = getattr(tensor_type, name, None)
        if value is None:
            continue
        if isinstance(value, int):
            return value or None
        if _is_capsule(value, EXCHANGE_CAPSULE_NAME):
            return _capsule_pointer(value, EXCHANGE_CAPSULE_NAME)
    return None


def enable_torch_proxy(paddle):
    """Paddle's function that enables the torch proxy for a scope: ``enable(scope=..., silent=...)``.

    ``paddle.enable_compat`` (Paddle 3.3.1 ``python/paddle/__init__.py``, and the
    only name on develop after PR #78923) or ``paddle.compat.enable_torch_proxy``
    (3.3.1 ``python/paddle/compat/proxy.py``, removed on develop).
    """
    fn = getattr(paddle, "enable_compat", None)
    if fn is None:
        fn = getattr(getattr(paddle, "compat", None), "enable_torch_proxy", None)
    if fn is None:
        raise ImportError(f"tilelang-paddle needs paddle.enable_compat (or paddle.compat.enable_torch_proxy), which "
                          f"Paddle {getattr(paddle, '__version__', '?')} does not have; install PaddlePaddle >= 3.3")
    return fn


def proxy_coverage(finder, scope: str) -> bool | None:
    """Whether Paddle's torch-proxy finder already covers ``scope``: True/False, or None when it cannot be read.

    Reads ``TorchProxyMetaFinder._globally_enabled`` and ``._local_enabled_scope``
    (``python/paddle/compat/proxy.py``, private; the same in 3.3.1 and develop as
    read). None means another shape: the caller then enables its scope, which
    Paddle extends (``_modify_scope_of_torch_proxy``) rather than replaces, unless
    the proxy was enabled globally, which that shape cannot tell us.
    """
    globally = getattr(finder, "_globally_enabled", None)
    local = getattr(finder, "_local_enabled_scope", None)
    if not isinstance(globally, bool) or not isinstance(local, (set, frozenset)):
        return None
    return globally or scope in local


def expected_place(paddle):
    """Paddle's "expected place" getter (``paddle.set_device``): a function returning a Place.

    ``paddle.base.framework._current_expected_place_`` (3.3.1, develop) or
    ``paddle.framework._current_expected_place`` (both; the one PaddleFleet uses).
    """
    framework = getattr(getattr(paddle, "base", None), "framework", None)
    fn = getattr(framework, "_current_expected_place_", None) or \
        getattr(getattr(paddle, "framework", None), "_current_expected_place", None)
    if fn is None:
        raise RuntimeError(f"Paddle {getattr(paddle, '__version__', '?')} has neither paddle.base.framework."
                           "_current_expected_place_ nor paddle.framework._current_expected_place, which "
                           "tilelang-paddle reads for kernels called without a tensor; please report this")
    return fn
