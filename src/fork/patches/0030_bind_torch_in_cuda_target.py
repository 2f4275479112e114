"""Bind ``torch`` in tilelang/cuda/target.py when the module loads, not in the functions that detect the GPU.

File: tilelang/cuda/target.py. ``_detect_torch_cuda_arch`` and
``_detect_cuda_target`` run ``import torch`` on every compile without
``target=``. Run from a function, that import goes through Paddle's finder at
kernel time and leaves Paddle's proxy in ``sys.modules``, where any later
``import torch`` in the program finds it (see
``tilelang.paddle_runtime.torch_scope``). At module level the import runs once,
inside the scope guard Paddle puts around a scoped module's execution, which
removes its proxies afterwards; the functions read the module's ``torch``.
"""

from ..patching import Edit, Patch

PATCH = Patch(
    name="0030_bind_torch_in_cuda_target",
    file="tilelang/cuda/target.py",
    reason="a GPU-target detection at kernel time left Paddle's torch proxy in sys.modules for the whole program",
    edits=(
        Edit("from tvm.target import Target\n",
             "import torch  # tilelang-paddle patch 0030: bound at load, not per detection\n"
             "from tvm.target import Target\n"),
        Edit('    """Return the CUDA SM architecture detected from PyTorch, if available."""\n    import torch\n\n',
             '    """Return the CUDA SM architecture detected from PyTorch, if available."""\n'),
        Edit("def _detect_cuda_target() -> Target | str | None:\n    import torch\n\n",
             "def _detect_cuda_target() -> Target | str | None:\n"),
    ),
    forwarded="not-needed",
    checked_against=("0.1.15",),
    drop_when="never (Paddle's proxy leaves function-level torch imports in sys.modules)",
)
