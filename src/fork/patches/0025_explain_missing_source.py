"""Say why a kernel's source could not be read or its annotations not evaluated, and what to do.

File: tilelang/language/eager/builder.py. ``@T.prim_func`` reads the
function's source and evaluates its annotations. A kernel defined with
``python -c`` or in the REPL fails with ``OSError: could not get source code``;
one in a module with ``from __future__ import annotations`` whose annotations
use a factory's arguments fails with ``NameError: name 'dtype' is not
defined``. Neither says what to change. The two calls now run inside
``tilelang.paddle_runtime.kernel_source.explained``, which re-raises those two
failures (same types) with the cause and the fix, and passes any other error
unchanged.
"""

from ..patching import Edit, Patch

PATCH = Patch(
    name="0025_explain_missing_source",
    file="tilelang/language/eager/builder.py",
    reason="`could not get source code` and a NameError from string annotations leave a newcomer stuck",
    edits=(
        Edit("        ir_gen = mutate(func)\n        func_annot = get_type_hints(func)\n",
             "        from tilelang.paddle_runtime.kernel_source import explained as _tlp_explained\n\n"
             "        with _tlp_explained(func):  # tilelang-paddle patch 0025\n"
             "            ir_gen = mutate(func)\n"
             "            func_annot = get_type_hints(func)\n"),
    ),
    checked_against=("0.1.15",),
    drop_when="upstream explains both",
)
