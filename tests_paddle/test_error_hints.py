"""Errors that leave a newcomer stuck, now saying what to do next (each checked by message, in a fresh process)."""

import subprocess
import sys

from conftest import run_python


def test_a_forgotten_out_idx_is_named():
    proc = run_python("""
        import paddle, tilelang, tilelang.language as T

        @T.prim_func
        def add(A: T.Tensor((8,), "float32"), B: T.Tensor((8,), "float32"), C: T.Tensor((8,), "float32")):
            with T.Kernel(1, threads=1) as bx:
                for i in T.serial(8):
                    C[i] = A[i] + B[i]

        kernel = tilelang.compile(add, target="c", execution_backend="cython")  # out_idx forgotten
        try:
            kernel(paddle.randn([8]), paddle.randn([8]))
        except TypeError as exc:
            print("ERROR", exc)
    """)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    assert ("kernel add takes 3 argument(s) (A, B, C); got 2: tensor [8], tensor [8]. If C is an output the call "
            "should allocate and return, compile the kernel with out_idx=[2]") in proc.stdout


KERNEL_WITHOUT_FILE = """
import paddle, tilelang, tilelang.language as T

@T.prim_func
def main(A: T.Tensor((8,), "float32")):
    with T.Kernel(1, threads=1) as bx:
        A[0] = 1.0
print("built", type(main).__name__)
"""


def test_a_kernel_given_to_exec_as_a_string_says_to_use_a_file():
    proc = run_python(f"exec({KERNEL_WITHOUT_FILE!r})")
    assert proc.returncode != 0
    where = ("`exec()` of a string keeps no source" if sys.version_info >= (3, 13) else
             "`python -c`, the interactive prompt or exec keep no source")
    assert (f"OSError: TileLang compiles a kernel from its Python source, and main has none (defined in <string>: "
            f"{where}). Put the kernel in a .py file") in proc.stderr, proc.stderr[-3000:]


def test_a_kernel_in_python_dash_c_works_from_3_13_and_is_explained_before():
    proc = subprocess.run([sys.executable, "-c", KERNEL_WITHOUT_FILE], capture_output=True, text=True, timeout=300)
    if sys.version_info >= (3, 13):                   # 3.13 keeps `python -c`'s source: the README says so
        assert proc.returncode == 0 and "built PrimFunc" in proc.stdout, proc.stderr[-3000:]
    else:
        assert proc.returncode != 0
        assert ("and main has none (defined in <string>: `python -c`, the interactive prompt or exec keep no "
                "source). Put the kernel in a .py file") in proc.stderr, proc.stderr[-3000:]


def test_string_annotations_from_future_import_are_explained():
    proc = run_python("""
        from __future__ import annotations
        import paddle, tilelang, tilelang.language as T

        def make(n, dtype):
            @T.prim_func
            def main(A: T.Tensor((n,), dtype), B: T.Tensor((n,), dtype)):
                with T.Kernel(1, threads=1) as bx:
                    for i in T.serial(n):
                        B[i] = A[i]
            return main

        try:
            make(8, "float32")
        except NameError as exc:
            print("ERROR", exc)
    """)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    assert "ERROR name 'n' is not defined" in proc.stdout or "ERROR name 'dtype' is not defined" in proc.stdout
    assert "uses `from __future__ import annotations`, which turns the annotations of make.<locals>.main into " \
           "strings" in proc.stdout
    assert "Remove that import from the kernel's file" in proc.stdout


def test_no_target_and_no_gpu_says_which_target_to_pass():
    proc = run_python("""
        import paddle, tilelang, tilelang.language as T

        @T.prim_func
        def main(A: T.Tensor((8,), "float32")):
            with T.Kernel(1, threads=1) as bx:
                A[0] = 1.0

        try:
            tilelang.compile(main)
        except ValueError as exc:
            print("ERROR", exc)
    """, env={"CUDA_VISIBLE_DEVICES": ""})
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    if "ERROR" not in proc.stdout:
        import pytest

        pytest.skip("a target was detected on this machine (a GPU toolchain TileLang accepts)")
    assert "No registered target detector found an available target." in proc.stdout
    assert ('pass target="c" (with execution_backend="cython"); to compile for a GPU this machine lacks, pass '
            'target={"kind": "cuda", "arch": "sm_90a"} (compile only); or run where Paddle sees a GPU.') in proc.stdout


def test_target_cuda_without_a_gpu_names_the_arch_to_pass_and_keeps_the_source_out():
    proc = run_python("""
        import paddle, tilelang, tilelang.language as T

        @T.prim_func
        def main(A: T.Tensor((128,), "float32")):
            with T.Kernel(1, threads=128) as bx:
                for i in T.Parallel(128):
                    A[i] = 1.0

        try:
            tilelang.compile(main, target="cuda")
        except RuntimeError as exc:
            print("ERROR", exc)
    """)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    if "Unsupported gpu architecture" not in proc.stdout:
        import pytest

        pytest.skip("nvcc accepted the architecture TileLang picked here (a GPU or an older CUDA)")
    text = proc.stdout
    assert text.startswith("ERROR kernel main: nvcc failed:\nnvcc fatal   : Unsupported gpu architecture 'sm_")
    assert 'Pass the GPU\'s architecture: target={"kind": "cuda", "arch": "sm_90a"} (H100/H200)' in text
    assert "__global__" not in text  # the source is in a file, named
    source = text.split("The generated source is in ", 1)[1].split()[0]
    assert "__global__" in open(source).read()


def test_a_broken_compiler_names_the_kernel_it_was_compiling(tmp_path):
    """A host compiler that fails: the error names the factory and its values, then the compiler's output."""
    broken = tmp_path / "g++"
    broken.write_text("#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'g++ (broken) 1'; exit 0; fi\n"
                      "echo 'cc1plus: internal compiler error: Segmentation fault' >&2\nexit 1\n")
    broken.chmod(0o755)
    proc = run_python("""
        import paddle, tilelang, tilelang.language as T

        def scale_rows(n, s):
            @T.prim_func
            def main(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32")):
                with T.Kernel(1) as _:
                    for i in T.serial(n):
                        B[i] = A[i] * s
            return main

        try:
            tilelang.compile(scale_rows(16, 2.0), out_idx=[1], target="c", execution_backend="cython")
        except RuntimeError as exc:
            print("ERROR", exc)
    """, env={"CXX": str(broken), "TILELANG_CACHE_DIR": str(tmp_path / "kc")})
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    assert proc.stdout.startswith("ERROR kernel scale_rows(n=16, s=2.0): Compiling the kernel library failed:\n"), \
        proc.stdout[-3000:]
    assert "internal compiler error" in proc.stdout

