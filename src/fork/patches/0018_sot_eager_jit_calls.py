"""Under ``paddle.jit.to_static``'s default SOT mode, ``@tilelang.jit`` calls and ``tilelang.compile`` run eagerly.

File: tilelang/jit/__init__.py (patch 0019 does the same for the kernel
builders). SOT simulates the bytecode of every Python function a translated
layer calls. Inside ``JITImpl.__call__`` it cannot simulate the call-form
cache (``self._call_form_cache.lookup``), so any layer that calls a
``@tilelang.jit`` factory a second time failed with ``InnerError:
HasNoAttributeError ... _call_form_cache has no attribute lookup``; inside
``tilelang.compile`` it fails on the compiler itself.
``paddle.jit.sot.psdb.fallback(recursive=True)`` as the first statement tells
SOT to run that frame, and what it calls, as plain Python: a graph break
around the call, which returns the compiled kernel as in eager mode (the
kernel call itself is a C function, which SOT already runs eagerly). Outside
SOT, ``psdb.fallback`` is an empty function. For operators that
``paddle.jit.save`` can record, see ``tilelang.paddle.custom_op``.
"""

from ..patching import Edit, Patch

CALL = "    def __call__(self, *args: _P.args, **kwargs: _P.kwargs) -> _Ret:\n"
COMPILE = '    assert isinstance(func, PrimFunc), f"target function must be a PrimFunc but got {type(func)}"\n'
FALLBACK = "_paddle_psdb.fallback(recursive=True)  # tilelang-paddle: SOT runs this eagerly (patches 0018, 0019)\n"

PATCH = Patch(
    name="0018_sot_eager_jit_calls",
    file="tilelang/jit/__init__.py",
    reason="SOT cannot simulate the JIT call-form cache or the compiler; those calls run as plain Python",
    edits=(
        Edit(CALL, CALL + "        " + FALLBACK),
        Edit(COMPILE, "    " + FALLBACK + COMPILE),
        Edit(
            "from collections.abc import Callable\n",
            "from collections.abc import Callable\n\nfrom paddle.jit.sot import psdb as _paddle_psdb\n",
        ),
    ),
    forwarded="not-needed",
    checked_against=("0.1.15",),
    drop_when="never",
)
