"""A failed compile names the kernel it was compiling.

File: tilelang/jit/kernel.py. Patches 0027 and 0028 turn nvcc's and the host
compiler's failures into an error with the compiler's output, the command and
the source's file, but the compilers know no kernel: in a model with twenty
kernels, ``Compiling the kernel library failed`` left the user to guess which.
``JITKernel.__init__`` now compiles inside
``tilelang.paddle_runtime.kernel_names.compiling(func)``, and the error starts
with ``kernel <factory>(<captured values>):``, as argument errors do.
"""

from ..patching import Edit, Patch

PATCH = Patch(
    name="0050_name_kernels_in_compile_errors",
    file="tilelang/jit/kernel.py",
    reason="a failed compile did not say which kernel",
    edits=(
        Edit('        adapter = self._compile_and_create_adapter(func, out_idx)\n',
             '        from tilelang.paddle_runtime.kernel_names import compiling as _tlp_compiling  '
             '# tilelang-paddle patch 0050\n\n'
             '        with _tlp_compiling(func):\n'
             '            adapter = self._compile_and_create_adapter(func, out_idx)\n'),
    ),
    forwarded="no",
    checked_against=("0.1.15",),
    drop_when="never: the name is ours (tilelang/paddle_runtime/kernel_names.py)",
)
