"""Cython-backend CUDA kernels link where the NVIDIA driver is absent (bundles built on CPU-only CI).

File: tilelang/jit/adapter/libgen.py. ``LibraryGenerator.compile_lib`` links a
CUDA kernel library with ``-lcuda`` and the toolkit's library directories,
which hold no ``libcuda.so`` (the driver's): on a machine with the toolkit and
no driver the link failed (``cannot find -lcuda``), so only tvm_ffi bundles
could be built there. ``tilelang.paddle_runtime.cuda_link.link_flags`` adds,
only where the linker would not find ``libcuda.so``, the toolkit's
``lib64/stubs`` or else an empty stub library with the driver's soname. The
kernel library is unchanged by it: it reaches the driver through the CUDA
runtime's entry points, not by symbol.
"""

from ..patching import Edit, Patch

PATCH = Patch(
    name="0049_link_cuda_without_a_driver",
    file="tilelang/jit/adapter/libgen.py",
    reason="Cython-backend CUDA kernels could not be built for a bundle on a machine without the NVIDIA driver",
    edits=(
        Edit('            cuda_library_flags = [f"-L{lib_dir}" for lib_dir in get_cuda_library_dirs()]\n',
             '            cuda_library_flags = [f"-L{lib_dir}" for lib_dir in get_cuda_library_dirs()]\n'
             '            from tilelang.paddle_runtime.cuda_link import link_flags as _tlp_link_flags  '
             '# tilelang-paddle patch 0049\n\n'
             '            cuda_library_flags += _tlp_link_flags(get_cuda_library_dirs())\n'),
    ),
    forwarded="no",
    checked_against=("0.1.15",),
    drop_when="upstream links against the toolkit's stubs where the driver is absent",
)
