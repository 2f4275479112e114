"""Kernels named by what the user wrote, not by their ``@T.prim_func``'s name (which is nearly always ``main``).

A kernel's PrimFunc keeps the Python function it was built from (``orig_func``,
set by TileLang's builder). Its qualified name tells the enclosing function:
the factory (``scale_rows`` for ``def scale_rows(n, s): @T.prim_func def main``)
or the ``@tilelang.jit`` function, which builds its PrimFunc the same way. The
values of plain types the kernel captured from it (``n=1024, s=2.0``) are the
call's arguments, as far as the kernel depends on them. Used wherever a message
or a progress line names a kernel: argument errors, bundles, prewarm, a compile
without a compiler.

A kernel's adapter holds another Python wrapper of the same PrimFunc (or, for
tvm_ffi, a rewritten one), without ``orig_func``; :func:`remember` (patch 0045,
as each ``JITKernel`` is made) keeps the name by the PrimFunc's handle for the
first, and the kernel leaves it on its adapter for both. A handle reused by a
later PrimFunc is overwritten when that one's kernel is made, before anything
reads it. A tuned kernel loaded from a cache or a bundle is built from a
pickled PrimFunc without ``orig_func``; it is made inside :func:`named`, with
the decorated function's name.
"""

from __future__ import annotations

import contextlib
import contextvars

_PLAIN = (bool, int, float, str)
_BY_HANDLE: dict = {}   # PrimFunc handle -> kernel_name, for wrappers without orig_func
_NAMED: contextvars.ContextVar[str | None] = contextvars.ContextVar("tlp_kernel_named", default=None)
_COMPILING: contextvars.ContextVar[str | None] = contextvars.ContextVar("tlp_kernel_compiling", default=None)


@contextlib.contextmanager
def compiling(func):
    """While the block runs, :func:`being_compiled` is ``func``'s label, for a compiler's error (patch 0050)."""
    token = _COMPILING.set(kernel_label(func))
    try:
        yield
    finally:
        _COMPILING.reset(token)


def being_compiled() -> str | None:
    """The label of the kernel this context is compiling, else None."""
    return _COMPILING.get()


@contextlib.contextmanager
def named(name: str | None):
    """Kernels made in this block from PrimFuncs that lost their function are called ``name`` (None: unchanged)."""
    token = _NAMED.set(name)
    try:
        yield
    finally:
        _NAMED.reset(token)


def _handle(func):
    chandle = getattr(func, "__chandle__", None)
    return chandle() if chandle is not None else None


def same_kernel(derived, original):
    """``derived`` (a PrimFunc rewritten from ``original``), known by ``original``'s name (patch 0046)."""
    if derived is not original:
        _BY_HANDLE[_handle(derived)] = kernel_name(original)
    return derived


def remember(func) -> str:
    """Keep ``func``'s name for other wrappers of the same PrimFunc (patch 0045); return it."""
    name = kernel_name(func)
    if getattr(func, "orig_func", None) is not None or _NAMED.get():
        _BY_HANDLE[_handle(func)] = name
    return name


def kernel_name(func) -> str:
    """The enclosing factory's (or ``@tilelang.jit`` function's) name, else the PrimFunc's own name."""
    orig = getattr(func, "orig_func", None)
    if orig is not None:
        parts = getattr(orig, "__qualname__", "").split(".<locals>.")
        if len(parts) > 1:
            return parts[-2].rsplit(".", 1)[-1]
        return getattr(orig, "__name__", None) or "<unknown>"
    known = _BY_HANDLE.get(_handle(func)) or _NAMED.get()
    if known is not None:
        return known
    from tilelang.utils.language import get_prim_func_name

    return get_prim_func_name(func, "<unknown>")


def kernel_label(func) -> str:
    """``kernel_name(func)`` with the plain values the kernel captured from it: ``scale_rows(n=1024, s=2.0)``."""
    name = kernel_name(func)
    orig = getattr(func, "orig_func", None)
    cells = getattr(orig, "__closure__", None) or ()
    names = getattr(getattr(orig, "__code__", None), "co_freevars", ())
    args = []
    for var, cell in zip(names, cells):
        try:
            value = cell.cell_contents
        except ValueError:  # an empty cell
            continue
        if isinstance(value, _PLAIN):
            args.append(f"{var}={value!r}")
    return f"{name}({', '.join(args)})" if args else name
