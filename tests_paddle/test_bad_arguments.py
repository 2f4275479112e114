"""Bad kernel arguments raise a Python exception naming the parameter; never a crash.

Each case runs in its own interpreter, so a crash (upstream SIGSEGVs on an int
passed for a tensor) fails that case instead of killing the test run.
"""

import shutil

import pytest

from conftest import run_python

KERNEL = """
import numpy as np, paddle, tilelang
import tilelang.language as T
tilelang.set_log_level("WARNING")

def add(M, N, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(M) as i:
            for j in T.serial(N):
                C[i, j] = A[i, j] + B[i, j]
    return main

kernel = tilelang.compile(add(8, 16), out_idx=[2], target="c", execution_backend="cython")
a, b = paddle.randn([8, 16]), paddle.randn([8, 16])
assert np.allclose(kernel(a, b).numpy(), a.numpy() + b.numpy())  # the good call works
try:
    kernel({call})
except Exception as exc:
    print("RAISED", type(exc).__name__, exc)
else:
    print("NO ERROR")
"""

CASES = {
    "python_int": ("5, b", "TypeError", r"kernel argument 0 \(A\): expected a paddle.Tensor of dtype float32 and shape \[8, 16\], got int 5"),
    "numpy_array": ("a.numpy(), b", "TypeError", r"kernel argument 0 \(A\): expected a paddle.Tensor .* got ndarray"),
    "none": ("a, None", "TypeError", r"kernel argument 1 \(B\): expected a paddle.Tensor .* got NoneType None"),
    "wrong_dtype": ("a.astype('float64'), b", "ValueError", r"Buffer dtype mismatch for parameter A: expected float32, got float64"),
    "uint16_vs_bfloat16": ("a.astype('bfloat16'), b", "ValueError", r"parameter A: expected float32, got bfloat16"),
    "wrong_shape": ("paddle.randn([8, 15]), b", "ValueError", r"Static shape mismatch for parameter A: expected 16 at index 1, got 15"),
    "wrong_rank": ("paddle.randn([128]), b", "ValueError", r"Static shape mismatch for parameter A: expected 2 dimensions, got 1"),
    "wrong_count": ("a", "ValueError", r"Expected 3 inputs, got 2 with 1 inputs and 1 outputs"),
    "non_contiguous_view": ("paddle.randn([16, 8]).transpose([1, 0]), b", "ValueError",
                            r"parameter A|Static stride mismatch"),
}


@pytest.mark.parametrize("case", CASES)
def test_bad_argument(case):
    call, exc_type, pattern = CASES[case]
    proc = run_python(KERNEL.replace("{call}", call))
    assert proc.returncode == 0, f"crashed (rc={proc.returncode}):\n{proc.stderr[-3000:]}"
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith(("RAISED", "NO ERROR"))), "")
    assert line.startswith(f"RAISED {exc_type} "), proc.stdout[-2000:]
    import re

    assert re.search(pattern, line), line


@pytest.mark.skipif(shutil.which("nvcc") is None and not __import__("os").path.exists("/usr/local/cuda/bin/nvcc"),
                    reason="needs nvcc to compile a CUDA kernel")
def test_cpu_tensors_to_a_cuda_kernel_are_refused():
    """A CUDA kernel (default tvm_ffi backend) called with CPU tensors is refused before launch.

    Runs without a GPU: the device check happens in the host stub. (The Cython
    backend links -lcuda, which a machine without the NVIDIA driver lacks.)
    """
    code = KERNEL.replace('target="c", execution_backend="cython"', 'target={"kind": "cuda", "arch": "sm_80"}')
    code = code.replace("with T.Kernel(M) as i:", "with T.Kernel(M, threads=32) as i:")
    code = code.replace("assert np.allclose(kernel(a, b).numpy(), a.numpy() + b.numpy())  # the good call works", "")
    for call, expected in (("a, b", "wrong device type"), ("5, b", "kernel main input A expected pointer or tensor handle")):
        proc = run_python(code.replace("{call}", call), timeout=600)
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert "RAISED RuntimeError" in proc.stdout and expected in proc.stdout, proc.stdout[-2000:]


def test_null_buffers_opt_in_restores_upstream_none_as_null():
    """With TILELANG_PADDLE_ALLOW_NULL_BUFFERS=1, None reaches the kernel as NULL (here: an unused B)."""
    code = """
import numpy as np, paddle, tilelang
import tilelang.language as T
tilelang.set_log_level("WARNING")

def copy_a(N, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype), C: T.Tensor((N,), dtype)):
        with T.Kernel(1) as _:
            for i in T.serial(N):
                C[i] = A[i]
    return main

kernel = tilelang.compile(copy_a(16), out_idx=[2], target="c", execution_backend="cython")
a = paddle.randn([16])
try:
    c = kernel(a, None)
    print("OK", bool(np.array_equal(c.numpy(), a.numpy())))
except TypeError as exc:
    print("RAISED", exc)
"""
    refused = run_python(code)
    assert "RAISED kernel argument 1 (B): expected a paddle.Tensor" in refused.stdout, refused.stderr[-2000:]
    allowed = run_python(code, env={"TILELANG_PADDLE_ALLOW_NULL_BUFFERS": "1"})
    assert "OK True" in allowed.stdout, allowed.stderr[-2000:]
