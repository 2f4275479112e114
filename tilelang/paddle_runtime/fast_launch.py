"""The launch fast path of Cython-backend kernels: what it accepts, and how it is built.

``prepare(adapter, slow)`` runs once per kernel (patch 0015, from the Cython
adapter's ``_convert_torch_func``): it builds the kernel's
:class:`.launch.KernelRuntime` on Paddle's driver (upstream's launcher uses it
too, patch 0006) and returns a :class:`._launcher.Launcher` when the kernel
fits, else ``slow`` (upstream's launcher) unchanged. A kernel fits when:

- its target is the CPU (``c``/``llvm``) or CUDA;
- every parameter is a buffer (no scalar or ``T.ptr`` parameters), within ``_launcher.LIMITS``;
- every buffer is compact (``signature.Param.compact``), of a byte-sized scalar dtype
  (no vector lanes, no sub-byte packing), each dimension a constant or a
  symbolic variable that an *input* carries (so outputs can be allocated);
- ``out_idx`` names each output once.

Per call the launcher accepts only Paddle tensors whose dtype, rank, static
extents and device type match the table and whose strides are row-major
(size-1 dimensions ignored, as ``Tensor.is_contiguous`` does; any strides for a
zero-size tensor, which Paddle reports as 0); every other
call goes to ``slow``, whose errors name the argument (upstream's messages, or
:mod:`.arguments`' where upstream's would mislead). The outputs come back in
``out_idx`` order, as upstream's launcher returns them. The symbolic sizes are
passed in the order ``call`` declares them. A symbolic dimension carried by
several inputs must have one value, and it must fit the C type ``call``
declares it with (an ``int`` size above 2**31-1 would be truncated): both are
ValueErrors naming the arguments, here and on upstream's path (patch 0022).

``TILELANG_PADDLE_FAST_LAUNCH=0`` turns it off (upstream's path, for diagnosis).
"""

from __future__ import annotations

import logging

from . import arguments as _arguments
from . import launch as _launch
from . import settings
from .driver import paddle_driver

logger = logging.getLogger("tilelang.paddle_runtime")

try:
    from . import _launcher

    _API_MAJOR = _launcher.bind_exchange_api(paddle_driver().exchange_api())
except (ImportError, AttributeError, ValueError) as exc:  # no compiled launcher, or no (or another) exchange API
    _launcher, _API_MAJOR = None, None
    logger.debug("fast launcher unavailable: %s", exc)


def prepare(adapter, slow, driver=None):
    """The kernel's fast launcher, or ``slow`` when it does not fit (see module docstring).

    ``slow`` is first wrapped by :func:`.arguments.diagnosed`, so a bad call says
    what was wrong whichever launcher took it.
    """
    runtime = _launch.runtime_of(adapter, driver)
    sig = runtime.signature
    # Upstream's launcher checks the symbolic sizes through the signature (patch 0022) and follows the
    # runtime's protocol (patch 0006).
    adapter.cython_wrapper.tlp_signature = sig
    adapter.cython_wrapper.tlp_runtime = runtime
    slow = _arguments.diagnosed(lambda: sig, slow, runtime.tensor_type)
    if _launcher is None or _API_MAJOR != 1 or not settings.fast_launch():
        return slow
    if sig.target_kind not in ("c", "llvm", "cuda"):
        return slow
    built = runtime.fast_table()
    if isinstance(built, str):
        logger.debug("fast launcher not used for %s: %s", sig.kernel, built)
        return slow
    _fn, table, _outputs, dyn_max = built
    max_params, max_dims, max_dyn = _launcher.LIMITS
    if len(table) > max_params or len(dyn_max) > max_dyn or any(len(dims) > max_dims for _, _, dims in table):
        return slow
    return _launcher.Launcher(runtime, slow, built)
