"""The launch fast path of Cython-backend kernels: what it accepts, and the table it runs from.

``prepare(adapter, slow)`` runs once per kernel (patch 0015, from the Cython
adapter's ``_convert_torch_func``) and returns a :class:`._launcher.Launcher`
when the kernel fits, else ``slow`` (upstream's launcher) unchanged. A kernel
fits when:

- its target is the CPU (``c``/``llvm``) or CUDA;
- every parameter is a buffer (no scalar or ``T.ptr`` parameters), within ``_launcher.LIMITS``;
- every buffer is compact (upstream's ``static_contiguous_list``), of a byte-sized scalar dtype
  (no vector lanes, no sub-byte packing), each dimension a constant or a
  symbolic variable that an *input* carries (so outputs can be allocated).

Per call the launcher accepts only Paddle tensors whose dtype, rank, static
extents and device type match the table and whose strides are row-major
(size-1 dimensions ignored, as ``Tensor.is_contiguous`` does; any strides for a
zero-size tensor, which Paddle reports as 0); every other
call goes to ``slow``, whose errors name the argument (upstream's messages, or
:mod:`.arguments`' where upstream's would mislead). One check is the fast
path's own: a symbolic dimension carried by several inputs must have one
value (upstream would pass the first and let the kernel read out of bounds).

``TILELANG_PADDLE_FAST_LAUNCH=0`` turns it off (upstream's path, for diagnosis).
"""

from __future__ import annotations

import ctypes
import logging

import paddle
from paddle import _C_ops

from . import arguments as _arguments
from . import device as _device
from . import settings
from .dtypes import to_paddle
from .tensors import _VIEW_ALLOC, _place

logger = logging.getLogger("tilelang.paddle_runtime")

_CPU_KINDS = {"c", "llvm"}
_DL_CPU, _DL_CUDA = 1, 2

try:
    from . import _launcher

    _API_MAJOR = _launcher.bind_exchange_api(paddle.Tensor)
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


def _table(adapter):
    """The launcher's parameter table, or a reason string why the kernel does not fit."""
    func = adapter.prim_func
    params, buffer_map = list(func.params), func.buffer_map
    outputs = set(adapter.result_idx or [])
    dyn_vars = list(adapter.dynamic_symbolic_map)
    dyn_index = {str(v): k for k, v in enumerate(dyn_vars)}
    for var, (ref_id, buffer_idx, _dim, _scale) in adapter.dynamic_symbolic_map.items():
        if ref_id != 0 or buffer_idx in outputs:
            return f"symbolic {var} is not an input's dimension"
    compact = {i for i, _name in adapter.static_contiguous_list}  # upstream's own contiguity analysis
    table, outputs_meta = [], []
    for i, param in enumerate(params):
        if param not in buffer_map:
            return f"parameter {i} is not a buffer"
        buf = buffer_map[param]
        dt = buf.dtype
        code, bits, lanes = int(dt.type_code), int(dt.bits), int(dt.lanes)
        if lanes != 1 or bits < 8 or i not in compact:
            return f"buffer {buf.name} is packed, vectorised or not compact"
        dims = []
        for d in buf.shape:
            if hasattr(d, "value") and not hasattr(d, "name"):  # IntImm
                dims.append(int(d.value))
            elif str(d) in dyn_index:
                dims.append(-1 - dyn_index[str(d)])
            else:
                return f"buffer {buf.name} has a computed dimension {d}"
        table.append((i in outputs, (code, bits, lanes), dims))
        if i in outputs:
            try:
                pd = to_paddle(str(dt))
            except TypeError:  # a dtype Paddle lacks: upstream's launcher reports it
                return f"output {buf.name} has no Paddle dtype"
            alloc = _VIEW_ALLOC.get(pd)
            outputs_meta.append((i, alloc or pd, pd if alloc is not None else None, dims))
    return table, outputs_meta, dyn_vars


def _mismatch_error(adapter, dyn_vars):
    """A ValueError naming the inputs that disagree on a symbolic dimension (the error path only)."""
    params, buffer_map = list(adapter.prim_func.params), adapter.prim_func.buffer_map
    outputs = set(adapter.result_idx or [])
    inputs = [i for i in range(len(params)) if i not in outputs]
    symbolic = {str(v) for v in dyn_vars}

    def describe(args):
        seen = {}
        for pos, i in enumerate(inputs):
            buf = buffer_map[params[i]]
            for k, d in enumerate(buf.shape):
                name = str(d)
                if name not in symbolic:
                    continue
                value = int(args[pos].shape[k])
                if name in seen and seen[name][0] != value:
                    first_value, first_arg, first_dim = seen[name]
                    return ValueError(
                        f"kernel argument {pos} ({buf.name}): dimension {k} is the symbolic {name}={value}, "
                        f"but argument {first_arg} gave {name}={first_value} (dimension {first_dim}); "
                        "every tensor carrying a symbolic dimension must agree on its value"
                    )
                seen.setdefault(name, (value, pos, k))
        return ValueError("kernel arguments disagree on a symbolic dimension")

    return describe


def prepare(adapter, slow):
    """The kernel's fast launcher, or ``slow`` when it does not fit (see module docstring).

    ``slow`` is first wrapped by :func:`.arguments.diagnosed`, so a bad call says
    what was wrong whichever launcher took it.
    """
    slow = _arguments.diagnosed(adapter.prim_func, adapter.result_idx, slow, paddle.Tensor)
    if _launcher is None or _API_MAJOR != 1 or not settings.fast_launch():
        return slow
    kind = adapter.target.kind.name
    if kind not in _CPU_KINDS and kind != "cuda":
        return slow
    built = _table(adapter)
    if isinstance(built, str):
        logger.debug("fast launcher not used for %s: %s", adapter.prim_func.attrs.get("global_symbol", "kernel"), built)
        return slow
    table, outputs_meta, dyn_vars = built
    max_params, max_dims, max_dyn = _launcher.LIMITS
    if len(table) > max_params or len(dyn_vars) > max_dyn or any(len(dims) > max_dims for _, _, dims in table):
        return slow
    cuda = kind == "cuda"
    lib = adapter.lib
    return _launcher.Launcher(
        slow,
        ctypes.cast(lib.call, ctypes.c_void_p).value,
        _DL_CUDA if cuda else _DL_CPU,
        table,
        outputs_meta,
        len(dyn_vars),
        paddle.Tensor,
        _device.raw_stream if cuda and _device.CUDA_BUILD else None,
        _cuda_place if cuda else _cpu_place,
        _C_ops.empty,
        lambda: lib.get_last_error().decode("utf-8", "replace"),
        _mismatch_error(adapter, dyn_vars),
        _device.current_device_index if cuda else _no_index,
        _device.select_gpu if cuda and _device.CUDA_BUILD else None,
        # init() sets the dynamic shared memory limit, which CUDA keeps per device: once per GPU.
        lib.init if cuda and _device.CUDA_BUILD else None,
    )
