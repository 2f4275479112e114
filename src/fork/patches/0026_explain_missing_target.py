"""Without a GPU and without ``target=``, say which target to pass.

File: tilelang/backend/target.py. A kernel compiled without ``target=`` on a
machine where no GPU toolchain is found ends in ``ValueError: No registered
target detector found an available target.``, which does not say that
``target="c"`` runs kernels on the CPU with Paddle CPU tensors, nor how to
compile for a GPU this machine lacks. The message keeps upstream's first
sentence and adds both.
"""

from ..patching import Edit, Patch

PATCH = Patch(
    name="0026_explain_missing_target",
    file="tilelang/backend/target.py",
    reason="`No registered target detector found an available target` does not say what to pass",
    edits=(
        Edit('    raise ValueError(f"No registered target detector found an available target.{details}")\n',
             '    raise ValueError(  # tilelang-paddle patch 0026\n'
             '        f"No registered target detector found an available target.{details} "\n'
             "        \"No GPU was found to compile for. To run kernels on the CPU with Paddle CPU tensors, pass \"\n"
             "        'target=\"c\" (with execution_backend=\"cython\"); to compile for a GPU this machine lacks, pass '\n"
             "        'target={\"kind\": \"cuda\", \"arch\": \"sm_90a\"} (compile only); or run where Paddle sees a GPU.'\n"
             "    )\n"),
    ),
    checked_against=("0.1.15",),
    drop_when="upstream's message names the choices",
)
