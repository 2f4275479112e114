"""Bad arguments raise a Python exception naming the parameter; never a crash.

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
    "python_int": ("5, b", "TypeError", r"kernel add, argument 0 \(A\): expected a paddle.Tensor of dtype float32 and shape \[8, 16\], got int 5"),
    "numpy_array": ("a.numpy(), b", "TypeError", r"kernel add, argument 0 \(A\): expected a paddle.Tensor .* got ndarray "
                    r"of shape \[8, 16\] and dtype float32; convert it with paddle.to_tensor\(x\)"),
    "none": ("a, None", "TypeError", r"kernel add, argument 1 \(B\): expected a paddle.Tensor .* got NoneType None"),
    "wrong_dtype": ("a.astype('float64'), b", "ValueError", r"kernel add: Buffer dtype mismatch for parameter A: expected float32, got "
                    r"float64; convert it with x.astype\(\"float32\"\)"),
    "uint16_vs_bfloat16": ("a.astype('bfloat16'), b", "ValueError", r"kernel add: .*parameter A: expected float32, got bfloat16"),
    "wrong_shape": ("paddle.randn([8, 15]), b", "ValueError", r"kernel add: Static shape mismatch for parameter A: expected 16 at index 1, got "
                    r"15; if this size varies between calls, declare it T.dynamic\(\"name\"\) in the kernel"),
    "wrong_rank": ("paddle.randn([128]), b", "ValueError",
                   r"kernel add, argument 0 \(A\): expected a 2-d tensor of shape \[8, 16\], got a 1-d tensor of shape \[128\]"),
    "wrong_count": ("a", "TypeError", r"kernel add takes 2 argument\(s\) \(A, B\); C is an output \(out_idx\), "
                    r"allocated and returned by the call, not passed; got 1: tensor \[8, 16\]"),
    "non_contiguous_view": ("paddle.randn([16, 8]).transpose([1, 0]), b", "ValueError",
                            r"kernel add, argument 0 \(A\) is not contiguous \(shape \[8, 16\], strides \[1, 8\]\).*contiguous\(\)"),
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


DYNAMIC = """
import numpy as np, paddle, tilelang
import tilelang.language as T

@tilelang.jit(out_idx=[2], target="c", execution_backend="cython")
def add_row(cols: int):
    rows = T.dynamic("rows")
    @T.prim_func
    def main(X: T.Tensor((rows, cols), "float32"), W: T.Tensor((cols,), "float32"), Y: T.Tensor((rows, cols), "float32")):
        with T.Kernel(rows) as r:
            for j in T.serial(cols):
                Y[r, j] = X[r, j] + W[j]
    return main

k = add_row(4)
x, w = paddle.randn([3, 4]), paddle.randn([4])
assert np.allclose(k(x, w).numpy(), x.numpy() + w.numpy())  # the good call works
for case, call in CALLS.items():
    try:
        eval(f"k({call})")
    except Exception as exc:
        print(f"CASE {case} RAISED {type(exc).__name__} {exc}")
    else:
        print(f"CASE {case} NO ERROR")
"""

# A T.dynamic kernel with out_idx (the style the README recommends): upstream fails on these
# with AttributeError/IndexError from its output allocation before any check names the argument.
DYNAMIC_CASES = {
    "none": ("None, w", "TypeError", r"kernel add_row, argument 0 \(X\): expected a paddle.Tensor of dtype float32 and shape "
                                     r"\[rows, 4\], got NoneType None"),
    "int": ("5, w", "TypeError", r"kernel add_row, argument 0 \(X\): .* got int 5"),
    "list": ("[1.0, 2.0], w", "TypeError", r"kernel add_row, argument 0 \(X\): .* got list \[1.0, 2.0\]"),
    "string": ("'x', w", "TypeError", r"kernel add_row, argument 0 \(X\): .* got str 'x'"),
    "numpy": ("np.ones((3, 4), 'float32'), w", "TypeError",
              r"kernel add_row, argument 0 \(X\): .* got ndarray of shape \[3, 4\] and dtype float32; convert it with paddle.to_tensor\(x\)$"),
    "zero_d": ("paddle.to_tensor(1.0), w", "ValueError",
               r"kernel add_row, argument 0 \(X\): expected a 2-d tensor of shape \[rows, 4\], got a 0-d tensor of shape \[\]"),
    "too_few": ("x", "TypeError", r"kernel add_row takes 2 argument\(s\) \(X, W\); Y is an output .*; got 1: tensor \[3, 4\]"),
    "too_many": ("x, w, w", "TypeError", r"kernel add_row takes 2 argument\(s\) \(X, W\).*; got 3:"),
    "keywords": ("X=x, W=w", "TypeError", r"kernel add_row takes 2 argument\(s\).*pass tensors by position, "
                                          r"got keyword argument\(s\) 'W', 'X'"),
    "non_contiguous": ("paddle.randn([4, 3]).transpose([1, 0]), w", "ValueError",
                       r"kernel add_row, argument 0 \(X\) is not contiguous .*contiguous\(\)"),
    "wrong_dtype": ("x.astype('float64'), w", "ValueError", r"kernel add_row: Buffer dtype mismatch for parameter X: expected float32, got float64"),
    "wrong_extent": ("paddle.randn([3, 5]), w", "ValueError", r"kernel add_row: Static shape mismatch for parameter X: expected 4 at index 1, got 5"),
}


@pytest.mark.parametrize("fast_launch", ["1", "0"])
def test_dynamic_kernel_bad_arguments_name_the_argument(fast_launch):
    """All cases in one interpreter per launcher (each prints its own line; a crash fails the run)."""
    import re

    calls = {case: call for case, (call, _, _) in DYNAMIC_CASES.items()}
    proc = run_python(f"CALLS = {calls!r}\n" + DYNAMIC, env={"TILELANG_PADDLE_FAST_LAUNCH": fast_launch})
    assert proc.returncode == 0, f"crashed (rc={proc.returncode}):\n{proc.stderr[-3000:]}"
    lines = {ln.split()[1]: ln for ln in proc.stdout.splitlines() if ln.startswith("CASE ")}
    for case, (_, exc_type, pattern) in DYNAMIC_CASES.items():
        line = lines.get(case, "")
        assert line.startswith(f"CASE {case} RAISED {exc_type} "), (case, line)
        assert re.search(pattern, line), (case, line)


def test_zero_size_tensors_run():
    """An empty batch: Paddle reports strides of 0 for shape [0, n]; both launchers accept it."""
    code = DYNAMIC.split("for case, call")[0] + """
y = k(paddle.zeros([0, 4]), w)
print("SHAPE", list(y.shape), "STRIDES", list(paddle.zeros([0, 4]).strides))
"""
    for fast in ("1", "0"):
        proc = run_python("CALLS = {}\n" + code, env={"TILELANG_PADDLE_FAST_LAUNCH": fast})
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert "SHAPE [0, 4]" in proc.stdout, proc.stdout


@pytest.mark.skipif(shutil.which("nvcc") is None and not __import__("os").path.exists("/usr/local/cuda/bin/nvcc"),
                    reason="needs nvcc to compile a CUDA kernel")
def test_cpu_tensors_to_a_cuda_kernel_are_refused():
    """A CUDA kernel (default tvm_ffi backend) called with CPU tensors is refused before launch, in our words.

    Runs without a GPU: the check runs before the executable (tvm-ffi's own message was
    `allocator anchor has the wrong device type; expected: 1, got: 2`). (The Cython backend
    links -lcuda, which a machine without the NVIDIA driver lacks.)
    """
    code = KERNEL.replace('target="c", execution_backend="cython"', 'target={"kind": "cuda", "arch": "sm_80"}')
    code = code.replace("with T.Kernel(M) as i:", "with T.Kernel(M, threads=32) as i:")
    code = code.replace("assert np.allclose(kernel(a, b).numpy(), a.numpy() + b.numpy())  # the good call works", "")
    for call, expected in (
        ("a, b", "RAISED ValueError kernel add, argument 0 (A) is on cpu, but the kernel was compiled for CUDA"),
        ("5, b", "RAISED TypeError kernel add, argument 0 (A): expected a paddle.Tensor of dtype float32"),
    ):
        proc = run_python(code.replace("{call}", call), timeout=600)
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert expected in proc.stdout, proc.stdout[-2000:]


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
    assert "RAISED kernel copy_a, argument 1 (B): expected a paddle.Tensor" in refused.stdout, refused.stderr[-2000:]
    allowed = run_python(code, env={"TILELANG_PADDLE_ALLOW_NULL_BUFFERS": "1"})
    assert "OK True" in allowed.stdout, allowed.stderr[-2000:]
