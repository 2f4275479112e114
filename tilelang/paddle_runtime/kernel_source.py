"""Why a kernel's Python source could not be read, said so a newcomer knows what to change.

TileLang compiles a ``@T.prim_func`` by reading the function's source
(``inspect.getsourcelines``) and evaluating its annotations
(``typing.get_type_hints``). Two ways this fails leave a newcomer with an
error about neither (patch 0025 wraps the builder in :func:`explained`):

- a kernel defined through ``exec()`` of a string (and, before Python 3.13,
  with ``python -c`` or in the REPL, which 3.13 keeps the source of) has no
  source: ``OSError: could not get source code``;
- a module with ``from __future__ import annotations`` turns every
  annotation into a string, evaluated later in the module's globals, where a
  factory's arguments (``T.Tensor((n,), dtype)`` inside ``def make(n, dtype)``)
  do not exist: ``NameError: name 'dtype' is not defined``.
"""

from __future__ import annotations

import __future__
import contextlib
import sys

#: Where Python keeps no source, as this interpreter behaves (3.13 keeps `python -c`'s and the REPL's).
NO_SOURCE = ("`exec()` of a string keeps no source" if sys.version_info >= (3, 13) else
             "`python -c`, the interactive prompt or exec keep no source")


def _where(func) -> str:
    code = getattr(func, "__code__", None)
    return code.co_filename if code is not None else "an unknown file"


def uses_future_annotations(func) -> bool:
    code = getattr(func, "__code__", None)
    return bool(code is not None and code.co_flags & __future__.annotations.compiler_flag)


@contextlib.contextmanager
def explained(func):
    """Re-raise the two failures above with what to do; anything else passes unchanged."""
    try:
        yield
    except OSError as exc:
        if "source code" not in str(exc):
            raise
        raise OSError(
            f"TileLang compiles a kernel from its Python source, and {func.__qualname__} has none "
            f"(defined in {_where(func)}: {NO_SOURCE}). "
            "Put the kernel in a .py file and run or import that file") from exc
    except NameError as exc:
        if not uses_future_annotations(func):
            raise
        raise NameError(
            f"{exc}: {_where(func)} uses `from __future__ import annotations`, which turns the annotations of "
            f"{func.__qualname__} into strings that TileLang evaluates in the module's globals, where the "
            "arguments of an enclosing factory function do not exist. Remove that import from the kernel's "
            "file (or keep kernels in a file without it)", name=exc.name) from exc
