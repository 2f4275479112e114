"""A kernel loaded from a bundle or the cache needs no C++ compiler; a compile without one says what is missing.

File: tilelang/jit/kernel.py. ``JITKernel.__init__`` asserts that a C++
compiler exists for the Cython backend before it checks ``from_database``, so
on a serving image with no compiler (no ``$CXX``/``$CC``, no ``g++``,
``clang++`` or ``c++`` on ``PATH``) every Cython kernel a bundle or the
writable cache holds was refused with an ``AssertionError``, though loading a
built library compiles nothing. The check now runs for compiles only and
raises ``tilelang.paddle_runtime.build_errors.no_cxx_compiler``: which
compiler, where it was looked for, and the bundles the kernel was not in.
"""

from ..patching import Edit, Patch

PATCH = Patch(
    name="0040_load_kernels_without_a_compiler",
    file="tilelang/jit/kernel.py",
    reason="a host without a C++ compiler could not load a built Cython-backend kernel from a bundle or the cache",
    edits=(
        Edit('        if self.execution_backend == "cython":\n'
             '            from tilelang.contrib.cc import get_cplus_compiler\n\n'
             '            assert get_cplus_compiler() is not None, "Cython backend requires a C++ compiler, please install '
             'or use other backends."\n\n'
             '        if from_database:\n'
             '            return\n',
             '        if from_database:\n'
             '            return\n\n'
             '        if self.execution_backend == "cython":\n'
             '            from tilelang.contrib.cc import get_cplus_compiler\n\n'
             '            if get_cplus_compiler() is None:  # tilelang-paddle patch 0040: compiles only\n'
             '                from tilelang.paddle_runtime.build_errors import no_cxx_compiler\n\n'
             '                raise no_cxx_compiler(func)\n'),
    ),
    forwarded="no",
    checked_against=("0.1.15",),
    drop_when="upstream checks for the compiler only where it compiles",
)
