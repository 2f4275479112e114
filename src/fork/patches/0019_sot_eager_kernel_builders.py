"""Under SOT, ``@T.prim_func`` and ``@T.macro`` build their kernels as plain Python.

File: tilelang/language/eager/builder.py. A kernel factory called inside a
``paddle.jit.to_static`` layer (a new shape compiling on first use, as
``autograd_function`` ops do) runs ``T.prim_func``, which parses and rewrites
the kernel's Python AST; SOT cannot simulate that (``InnerError ...
SuperVariable ... has no attribute visit_Module``). The same
``paddle.jit.sot.psdb.fallback(recursive=True)`` as patch 0018, first in each
decorator and in its ``impl``, makes SOT run the builder eagerly. In the outer
function too: on Python 3.13, SOT simulating ``prim_func`` built ``impl``'s
closure wrong (``eager_jit`` read as true: a ``JITFunc`` came back) and went on
simulating ``mutate`` (``'PosixPath' object has no attribute '_raw_paths'``);
falling back before ``impl`` exists avoids both (3.11 passed either way).
"""

from ..patching import Edit, Patch

PRIM = "    def impl(func: Callable[_P, _T]) -> PrimFunc[_P, _T] | Callable[_P, PrimFunc[_P, _T]]:\n"
MACRO = "    def impl(func: Callable[_P, _T]) -> Macro[_P, _T]:\n"
FALLBACK = "        _paddle_psdb.fallback(recursive=True)  # tilelang-paddle: SOT runs this eagerly (patch 0019)\n"
OUTER_PRIM = ("def prim_func(func: Callable[_P, _T] = None, *, eager_jit: bool = False) -> PrimFunc[_P, _T] | "
              "JITFunc[_P, _T]:\n")
OUTER_MACRO = '    """\n\n' + MACRO

PATCH = Patch(
    name="0019_sot_eager_kernel_builders",
    file="tilelang/language/eager/builder.py",
    reason="SOT cannot simulate the kernel builders' AST rewriting; they run as plain Python",
    edits=(
        Edit(OUTER_PRIM + PRIM, OUTER_PRIM + FALLBACK[4:] + PRIM + FALLBACK),
        Edit(OUTER_MACRO, '    """\n' + FALLBACK[4:] + "\n" + MACRO + FALLBACK),
        Edit("from contextlib import contextmanager, AbstractContextManager\n",
             "from contextlib import contextmanager, AbstractContextManager\n\nfrom paddle.jit.sot import psdb as _paddle_psdb\n"),
    ),
    forwarded="not-needed",
    checked_against=("0.1.15",),
    drop_when="never",
)
