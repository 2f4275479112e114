"""A kernel's argument errors name it by what the user wrote, not ``main``.

File: tilelang/jit/kernel.py. The launch runtime reads a kernel's name from its
adapter's PrimFunc, whose ``global_symbol`` is ``main`` for nearly every kernel
(``kernel main takes 2 argument(s)``), through a new Python wrapper of the same
PrimFunc that has lost the function it was built from (``orig_func``).
``JITKernel.__init__`` (compiles and loads alike) now hands its PrimFunc to
``tilelang.paddle_runtime.kernel_names.remember``, which keeps the name of the
factory or ``@tilelang.jit`` function enclosing the ``@T.prim_func`` by the
PrimFunc's handle, where the adapter's wrapper finds it while the adapter is
built (the Cython fast path reads it then); and both constructors leave the
name on the adapter once built (``_tlp_name``), for the tvm_ffi backend, whose
adapter holds a rewritten PrimFunc (another handle) and reads it at the first
call.
"""

from ..patching import Edit, Patch

PATCH = Patch(
    name="0045_name_kernels_by_their_factory",
    file="tilelang/jit/kernel.py",
    reason="every kernel's argument errors said `kernel main`",
    edits=(
        Edit('        self.prim_func = func\n        self.verbose = verbose\n',
             '        self.prim_func = func\n        self.verbose = verbose\n'
             '        from tilelang.paddle_runtime.kernel_names import remember as _tlp_remember  '
             '# tilelang-paddle patch 0045\n\n'
             '        _tlp_remember(func)\n'),
        Edit('        self.adapter = adapter\n        self.torch_function = adapter.func\n',
             '        self.adapter = adapter\n        self.torch_function = adapter.func\n'
             '        adapter._tlp_name = _tlp_remember(func)\n'),
        Edit('        instance.torch_function = instance.adapter.func\n        return instance\n',
             '        instance.torch_function = instance.adapter.func\n'
             '        from tilelang.paddle_runtime.kernel_names import remember as _tlp_remember\n\n'
             '        instance.adapter._tlp_name = _tlp_remember(func)\n        return instance\n'),
    ),
    forwarded="not-needed",
    checked_against=("0.1.15",),
    drop_when="never: the name is ours (tilelang/paddle_runtime/kernel_names.py)",
)
