"""A failed host-library build shows the compiler's output and a hint, with the source in a file.

File: tilelang/jit/adapter/libgen.py (the Cython backend's library). On Linux
upstream lets the compiler write to the terminal and raises ``Compilation
Failed!`` followed by the whole generated source; a CUDA kernel on a machine
without the NVIDIA driver fails with ``/usr/bin/ld: cannot find -lcuda`` above
it. The compiler's output is now captured (shown with ``verbose``) and the
error comes from ``tilelang.paddle_runtime.build_errors.compile_failed``.
"""

from ..patching import Edit, Patch

PATCH = Patch(
    name="0028_explain_host_library_failures",
    file="tilelang/jit/adapter/libgen.py",
    reason="the linker's `cannot find -lcuda` is lost above a page of generated source",
    edits=(
        Edit("        if is_hip_target(target):\n"
             "            run_kwargs.setdefault(\"stdout\", subprocess.PIPE)\n"
             "            run_kwargs.setdefault(\"stderr\", subprocess.STDOUT)\n",
             "        # tilelang-paddle patch 0028: capture the compiler's output for the error (and verbose)\n"
             "        run_kwargs.setdefault(\"stdout\", subprocess.PIPE)\n"
             "        run_kwargs.setdefault(\"stderr\", subprocess.STDOUT)\n"),
        Edit("        if is_hip_target(target) and ret.stdout is not None:\n",
             "        if verbose and ret.stdout and not is_hip_target(target):  # tilelang-paddle patch 0028\n"
             "            print(ret.stdout.decode(\"utf-8\", errors=\"replace\"))\n"
             "        if is_hip_target(target) and ret.stdout is not None:\n"),
        Edit('            raise RuntimeError(f"Compilation Failed! {command}\\n{captured}\\n{self.lib_code}")\n',
             "            from tilelang.paddle_runtime.build_errors import compile_failed as _tlp_failed\n\n"
             '            raise _tlp_failed("Compiling the kernel library", captured, command, self.lib_code, ".cc")\n'),
    ),
    checked_against=("0.1.15",),
    drop_when="upstream captures the output and keeps the source out of the message",
)
