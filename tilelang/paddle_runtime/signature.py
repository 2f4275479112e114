"""One compiled kernel's signature: what its buffers are and what its C entry ``call`` takes.

:func:`of` computes it once per Cython-backend kernel (and caches it on the
adapter). The fast launcher (:mod:`.fast_launch`), the bad-call diagnosis
(:mod:`.arguments`) and ``tilelang.paddle.custom_op`` all read this one model;
none of them rebuilds a kernel's signature on its own.

The order of the symbolic sizes is the one thing that is easy to get wrong.
Upstream's ``adapter.dynamic_symbolic_map`` lists them inputs first, while the
generated host wrapper (``get_dynamic_symbolic_set`` in
``tilelang/jit/adapter/wrapper.py``) declares ``call``'s size parameters in
the order the PrimFunc's buffers introduce them, in parameter order: shape
variables first, then (CUDA wrapper only) stride variables, skipping names
that are scalar parameters themselves. A kernel whose output comes before the
inputs that carry its sizes (``C(M, N), A(M, K), B(K, N)`` with ``out_idx=[0]``)
differs between the two. :func:`of` applies the wrapper's rule, then reads the
``call`` definition in the generated host source and checks that both agree
(names and order), taking each size's C type (``int``/``int32_t`` or
``int64_t``) from the source.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: Largest value of each C integer type a symbolic size is declared with.
C_INT_MAX = {"int": 2**31 - 1, "int32_t": 2**31 - 1, "int64_t": 2**63 - 1, "long": 2**63 - 1,
             "unsigned int": 2**32 - 1, "uint32_t": 2**32 - 1, "uint64_t": 2**64 - 1}
_DTYPE_CTYPE = {"int32": "int32_t", "int64": "int64_t", "uint32": "uint32_t", "uint64": "uint64_t"}


class SignatureMismatch(RuntimeError):
    """Upstream's host wrapper declares ``call`` differently from the rule this module applies."""


@dataclass(frozen=True)
class Computed:
    """A dimension that is an expression of symbolic sizes (``M * 2``), not one of them."""

    text: str

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class Param:
    """One PrimFunc parameter, in parameter order.

    ``dims`` holds per axis an ``int`` (a static extent), a ``str`` (the name of
    a symbolic size) or a :class:`Computed`. ``strides`` is ``None`` for a
    compact buffer (no explicit strides). Scalar and ``T.ptr`` parameters have
    ``is_buffer`` False and no dims. ``compact`` is proven with TVM's
    arithmetic analyzer: upstream's ``static_contiguous_list`` compares stride
    expressions by identity, so ``(S1 * S1, S1, 1)`` for shape ``(S0, S1, S1)``
    counts as strided there, and such kernels would miss the fast path.
    """

    index: int
    name: str
    dtype: str
    dims: tuple
    is_output: bool
    is_buffer: bool
    type_code: int = 0
    bits: int = 0
    lanes: int = 1
    strides: tuple | None = None
    compact: bool = True  # row-major without gaps, as the kernel addresses it

    def dims_text(self) -> str:
        """``[M, 1024]``: symbolic sizes by name."""
        return "[" + ", ".join(str(d) for d in self.dims) + "]"


@dataclass(frozen=True)
class Symbol:
    """One symbolic size, as ``call`` takes it.

    ``carriers`` lists every ``(parameter index, axis)`` whose shape is this size
    (inputs and outputs); ``binder`` is the first *input* among them, which
    gives the value at call time (None when only outputs or strides carry it).
    """

    name: str
    dtype: str
    ctype: str
    carriers: tuple
    binder: tuple | None

    @property
    def max_value(self) -> int:
        return C_INT_MAX.get(self.ctype, 2**63 - 1)


@dataclass(frozen=True)
class KernelSignature:
    kernel: str
    target_kind: str
    params: tuple  # Param, in parameter order
    symbols: tuple  # Symbol, in the order `call` takes them, after the parameters
    call_has_stream: bool  # CUDA: `call` takes the stream last; the CPU wrapper's `call` takes none
    result_idx: tuple = ()  # the output parameters' indices in ``out_idx`` order (negatives resolved)

    @property
    def cuda(self) -> bool:
        return self.target_kind == "cuda"

    @property
    def inputs(self) -> tuple:
        return tuple(p for p in self.params if not p.is_output)

    @property
    def outputs(self) -> tuple:
        """The output buffers in ``out_idx`` order: the order every launcher returns them in, as upstream's does."""
        return tuple(self.params[i] for i in self.result_idx)

    def symbol_index(self, name: str) -> int:
        for k, s in enumerate(self.symbols):
            if s.name == name:
                return k
        raise KeyError(name)

    def input_position(self, param_index: int) -> int:
        """The position in the user's call (outputs are not passed) of parameter ``param_index``."""
        return sum(1 for p in self.params[:param_index] if not p.is_output)


def _is_var(x) -> bool:
    from tilelang import tvm

    return isinstance(x, tvm.tirx.Var)


def _dim(d):
    if _is_var(d):
        return str(d.name)
    if hasattr(d, "value") and not hasattr(d, "name"):  # IntImm
        return int(d.value)
    return Computed(str(d))


def call_order(prim_func, cuda: bool) -> list:
    """Symbolic size variables in the order the host wrapper declares them (see module docstring)."""
    seen: dict = {}
    scalar_names = {str(p.name) for p in prim_func.params if p not in prim_func.buffer_map}
    buffers = [prim_func.buffer_map[p] for p in prim_func.params if p in prim_func.buffer_map]
    for buf in buffers:
        for d in buf.shape:
            if _is_var(d) and d.name not in seen:
                seen[d.name] = d
    if cuda:  # the CUDA wrapper appends stride variables; the CPU wrapper declares none
        for buf in buffers:
            for s in buf.strides:
                if _is_var(s) and s.name not in seen:
                    seen[s.name] = s
        for name in scalar_names:
            seen.pop(name, None)
    return list(seen.values())


_CALL_DEF = re.compile(r"\bcall\(([^)]*)\)\s*\{")


def declared_call(host_source: str) -> list | None:
    """``[(ctype, name), ...]`` of the ``call`` definition in a host wrapper's source, or None if absent."""
    m = _CALL_DEF.search(host_source or "")
    if m is None:
        return None
    out = []
    for part in m.group(1).split(","):
        part = part.split("=")[0].replace("__restrict__", " ").strip()
        if not part:
            continue
        ctype, _, name = part.rpartition(" ")
        ctype = ctype.strip()
        if name.startswith("*"):
            ctype, name = ctype + "*", name.lstrip("*")
        out.append((" ".join(ctype.split()), name))
    return out


def _compact(buf) -> bool:
    if not len(buf.strides):
        return True
    from tilelang import tvm

    analyzer, expected = tvm.arith.Analyzer(), 1
    for dim, stride in reversed(list(zip(buf.shape, buf.strides))):
        if not analyzer.can_prove_equal(stride, expected):
            return False
        expected = expected * dim
    return True


def build(prim_func, result_idx, target_kind: str, host_source: str | None, name: str | None = None) -> KernelSignature:
    """The signature of a kernel from its PrimFunc, ``out_idx`` and generated host source; ``name``: what the user
    calls it where the caller knows (patch 0045), else read from the PrimFunc (.kernel_names)."""
    name = name or _kernel_name(prim_func)
    result_idx = tuple(int(i) for i in (result_idx or ()))
    outputs = set(result_idx)
    cuda = target_kind == "cuda"
    buffer_map = prim_func.buffer_map
    params = []
    for i, p in enumerate(prim_func.params):
        if p in buffer_map:
            buf = buffer_map[p]
            dt = buf.dtype
            strides = tuple(_dim(s) for s in buf.strides) if len(buf.strides) else None
            params.append(Param(i, str(buf.name), str(dt), tuple(_dim(d) for d in buf.shape), i in outputs,
                                True, int(dt.type_code), int(dt.bits), int(dt.lanes), strides, _compact(buf)))
        else:
            params.append(Param(i, str(p.name), str(p.dtype), (), i in outputs, False))
    order = call_order(prim_func, cuda)
    declared = declared_call(host_source) if host_source else None
    ctypes_by_name = {}
    if declared is not None:
        tail = declared[len(params):]
        if cuda and tail and tail[-1][1] == "stream":
            tail = tail[:-1]
        names = [n for _t, n in tail]
        if names != [v.name for v in order]:
            raise SignatureMismatch(
                f"kernel {name}: the generated host wrapper's call() takes the symbolic sizes "
                f"{names}, but tilelang-paddle expected {[v.name for v in order]} (upstream changed "
                "get_dynamic_symbolic_set in tilelang/jit/adapter/wrapper.py; update tilelang/paddle_runtime/signature.py)")
        ctypes_by_name = {n: t for t, n in tail}
    symbols = []
    for v in order:
        carriers = tuple((p.index, axis) for p in params for axis, d in enumerate(p.dims) if d == v.name)
        binder = next(((i, a) for i, a in carriers if i not in outputs), None)
        dtype = str(v.dtype)
        ctype = ctypes_by_name.get(v.name) or _DTYPE_CTYPE.get(dtype, "int64_t")
        symbols.append(Symbol(v.name, dtype, ctype, carriers, binder))
    return KernelSignature(name, target_kind, tuple(params), tuple(symbols), cuda, result_idx)


def _kernel_name(prim_func) -> str:
    from .kernel_names import kernel_name

    return kernel_name(prim_func)


def of(adapter, *, host_call: bool = True) -> KernelSignature:
    """The signature of a kernel's adapter, computed once.

    ``host_call``: the adapter's host source defines the C entry ``call`` (the
    Cython backend); its declaration is then checked against the rule. The
    tvm_ffi backend has no such entry: pass False.
    """
    sig = getattr(adapter, "_tlp_signature", None)
    if sig is None:
        host = adapter.get_host_source() if host_call else None
        from .cache.toolchain import target_kind  # upstream's adapters may hold the target as a string

        sig = build(adapter.prim_func, adapter.result_idx, target_kind(adapter.target), host,
                    getattr(adapter, "_tlp_name", None))
        adapter._tlp_signature = sig
    return sig
