"""The launch fast path of Cython-backend kernels: what it accepts, and the table it runs from.

``prepare(adapter, slow)`` runs once per kernel (patch 0015, from the Cython
adapter's ``_convert_torch_func``) and returns a :class:`._launcher.Launcher`
when the kernel fits, else ``slow`` (upstream's launcher) unchanged. A kernel
fits when:

- its target is the CPU (``c``/``llvm``) or CUDA;
- every parameter is a buffer (no scalar or ``T.ptr`` parameters), within ``_launcher.LIMITS``;
- every buffer is compact (``signature.Param.compact``), of a byte-sized scalar dtype
  (no vector lanes, no sub-byte packing), each dimension a constant or a
  symbolic variable that an *input* carries (so outputs can be allocated).

Per call the launcher accepts only Paddle tensors whose dtype, rank, static
extents and device type match the table and whose strides are row-major
(size-1 dimensions ignored, as ``Tensor.is_contiguous`` does; any strides for a
zero-size tensor, which Paddle reports as 0); every other
call goes to ``slow``, whose errors name the argument (upstream's messages, or
:mod:`.arguments`' where upstream's would mislead). The table comes from
the kernel's :mod:`.signature`: the symbolic sizes are passed in the order
``call`` declares them. A symbolic dimension carried by several inputs must
have one value, and it must fit the C type ``call`` declares it with (an
``int`` size above 2**31-1 would be truncated): both are ValueErrors naming
the arguments, here and on upstream's path (patch 0022).

``TILELANG_PADDLE_FAST_LAUNCH=0`` turns it off (upstream's path, for diagnosis).
"""

from __future__ import annotations

import ctypes
import functools
import logging

import paddle
from paddle import _C_ops

from . import arguments as _arguments
from . import device as _device
from . import gpu_guard as _gpu_guard
from . import seams as _seams
from . import signature as _signature
from . import settings
from .dtypes import to_paddle
from .tensors import _VIEW_ALLOC, _place

logger = logging.getLogger("tilelang.paddle_runtime")

_CPU_KINDS = {"c", "llvm"}
_DL_CPU, _DL_CUDA = 1, 2

try:
    from . import _launcher

    _API_MAJOR = _launcher.bind_exchange_api(_seams.exchange_api_pointer(paddle.Tensor) or 0)
except (ImportError, AttributeError, ValueError) as exc:  # no compiled launcher, or no (or another) exchange API
    _launcher, _API_MAJOR = None, None
    logger.debug("fast launcher unavailable: %s", exc)


_CPU_PLACE = paddle.CPUPlace()


def _cpu_place(_index):
    return _CPU_PLACE


def _no_index():
    return 0


def _cuda_place(index):
    return _place("cuda", index)


def _table(sig):
    """The launcher's parameter table from the kernel's signature, or a reason string why it does not fit."""
    for sym in sig.symbols:
        if sym.binder is None:
            return f"symbolic {sym.name} is not an input's dimension"
    table, outputs_meta = [], []
    for p in sig.params:
        if not p.is_buffer:
            return f"parameter {p.index} is not a buffer"
        if p.lanes != 1 or p.bits < 8 or not p.compact:
            return f"buffer {p.name} is packed, vectorised or not compact"
        dims = []
        for d in p.dims:
            if isinstance(d, int):
                dims.append(d)
            elif isinstance(d, str):
                dims.append(-1 - sig.symbol_index(d))
            else:
                return f"buffer {p.name} has a computed dimension {d}"
        table.append((p.is_output, (p.type_code, p.bits, p.lanes), dims))
    if len(set(sig.result_idx)) != len(sig.result_idx):
        return "out_idx names a parameter twice"
    # In out_idx order: the launcher returns the outputs in the order it allocates them.
    for p in sig.outputs:
        try:
            pd = to_paddle(p.dtype)
        except TypeError:  # a dtype Paddle lacks: upstream's launcher reports it
            return f"output {p.name} has no Paddle dtype"
        alloc = _VIEW_ALLOC.get(pd)
        outputs_meta.append((p.index, alloc or pd, pd if alloc is not None else None, table[p.index][2]))
    return table, outputs_meta


def prepare(adapter, slow):
    """The kernel's fast launcher, or ``slow`` when it does not fit (see module docstring).

    ``slow`` is first wrapped by :func:`.arguments.diagnosed`, so a bad call says
    what was wrong whichever launcher took it.
    """
    sig = _signature.of(adapter)
    # Upstream's launcher checks the symbolic sizes through this (patch 0022).
    adapter.cython_wrapper.tlp_signature = sig
    slow = _arguments.diagnosed(lambda: sig, slow, paddle.Tensor)
    if _launcher is None or _API_MAJOR != 1 or not settings.fast_launch():
        return slow
    kind = sig.target_kind
    if kind not in _CPU_KINDS and kind != "cuda":
        return slow
    built = _table(sig)
    if isinstance(built, str):
        logger.debug("fast launcher not used for %s: %s", sig.kernel, built)
        return slow
    table, outputs_meta = built
    n_dyn = len(sig.symbols)
    max_params, max_dims, max_dyn = _launcher.LIMITS
    if len(table) > max_params or n_dyn > max_dyn or any(len(dims) > max_dims for _, _, dims in table):
        return slow
    cuda = kind == "cuda"
    lib = adapter.lib
    return _launcher.Launcher(
        slow,
        ctypes.cast(lib.call, ctypes.c_void_p).value,
        _DL_CUDA if cuda else _DL_CPU,
        table,
        outputs_meta,
        [sym.max_value for sym in sig.symbols],
        paddle.Tensor,
        _device.raw_stream if cuda and _device.CUDA_BUILD else None,
        _cuda_place if cuda else _cpu_place,
        _C_ops.empty,
        lambda: lib.get_last_error().decode("utf-8", "replace"),
        functools.partial(_arguments.symbol_mismatch, sig),
        functools.partial(_arguments.size_too_large, sig),
        _device.current_device_index if cuda else _no_index,
        _gpu_guard.select_gpu if cuda and _device.CUDA_BUILD else None,
        # init() sets the dynamic shared memory limit, which CUDA keeps per device: once per GPU.
        lib.init if cuda and _device.CUDA_BUILD else None,
    )
