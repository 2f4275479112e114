"""An nvcc failure shows nvcc's error, the command and a hint, with the CUDA source in a file.

File: tilelang/contrib/nvcc.py. Upstream's message starts with the whole
generated CUDA source, so ``nvcc fatal : Unsupported gpu architecture
'sm_50'`` (``target="cuda"`` on a machine without a GPU) arrives after a page
of code, with nothing saying which ``arch`` to pass.
``tilelang.paddle_runtime.build_errors.compile_failed`` writes the source to a
file, names it, and adds the hint.
"""

from ..patching import Edit, Patch

PATCH = Patch(
    name="0027_explain_nvcc_failures",
    file="tilelang/contrib/nvcc.py",
    reason="a page of generated CUDA before nvcc's one-line error, and no word on which arch to pass",
    edits=(
        Edit('        msg = f"{code}\\nCompilation error:\\n{py_str(out)}\\nCommand: {\' \'.join(cmd)}\\n"\n',
             "        from tilelang.paddle_runtime.build_errors import compile_failed as _tlp_failed\n\n"
             '        msg = str(_tlp_failed("nvcc", py_str(out), cmd, code, ".cu"))  # tilelang-paddle patch 0027\n'),
    ),
    checked_against=("0.1.15",),
    drop_when="upstream keeps the source out of the message",
)
