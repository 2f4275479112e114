"""The Cython-backend fast path (tilelang/paddle_runtime/fast_launch.py, _launcher.pyx), CPU target.

Results on fresh random inputs, symbolic sizes, views, errors identical to
upstream's launcher, threads, and no growth over many allocating calls.
(No `from __future__ import annotations`: TileLang evaluates kernel annotations.)
"""

import threading
from pathlib import Path

import numpy as np
import paddle
import pytest
from conftest import run_python
from test_kernels_cpu import C_DTYPES, _random, _to_paddle, elementwise_add, row_sum, sum_and_diff

import tilelang
import tilelang.language as T
from quickstart import gemm_cpu as tiled_gemm

CPU = dict(target="c", execution_backend="cython")
HERE = Path(__file__).resolve().parent


def uses_fast_path(kernel) -> bool:
    return type(kernel.torch_function).__name__ == "Launcher"


def axpy_symbolic(dtype="float32"):
    n = T.dynamic("n")

    @T.prim_func
    def main(X: T.Tensor((n,), dtype), Y: T.Tensor((n,), dtype), Z: T.Tensor((n,), dtype)):
        with T.Kernel(1) as _:
            for i in T.serial(n):
                Z[i] = X[i] * 3.0 + Y[i]

    return main


def rows_symbolic(N=16, dtype="float32"):
    m = T.dynamic("m")

    @T.prim_func
    def main(A: T.Tensor((m, N), dtype), S: T.Tensor((m,), dtype)):
        with T.Kernel(1) as _:
            for r in T.serial(m):
                S[r] = 0
                for j in T.serial(N):
                    S[r] += A[r, j]

    return main


@pytest.fixture(scope="module")
def axpy():
    return tilelang.compile(axpy_symbolic(), out_idx=[2], **CPU)


@pytest.mark.parametrize("dtype", C_DTYPES)
def test_every_c_dtype_on_the_fast_path(dtype):
    returned = tilelang.compile(elementwise_add(64, dtype), out_idx=[2], **CPU)
    in_place = tilelang.compile(elementwise_add(64, dtype), **CPU)
    assert uses_fast_path(returned) and uses_fast_path(in_place)
    a, b = _random(dtype, 64), _random(dtype, 64)
    expected = (a + b).astype(dtype)
    pa, pb = _to_paddle(a, dtype), _to_paddle(b, dtype)
    c = returned(pa, pb)
    assert c.dtype is getattr(paddle, dtype)
    out = _to_paddle(np.zeros(64, dtype), dtype)
    assert in_place(pa, pb, out) == []  # upstream's launcher returns [] without out_idx
    for got in (c, out):
        values = got.astype("float64").numpy() if dtype == "uint16" else got.numpy()
        if dtype == "float16":
            np.testing.assert_allclose(values, expected, rtol=1e-3)
        else:
            np.testing.assert_array_equal(values, expected.astype(values.dtype))


def test_gemm_and_two_outputs_on_the_fast_path():
    gemm = tilelang.compile(tiled_gemm(48, 32, 64, 16, 16, 16), out_idx=[2], **CPU)
    two = tilelang.compile(sum_and_diff(32), out_idx=[2, 3], **CPU)
    assert uses_fast_path(gemm) and uses_fast_path(two)
    a, b = paddle.randn([48, 64]), paddle.randn([64, 32])
    np.testing.assert_allclose(gemm(a, b).numpy(), a.numpy() @ b.numpy(), rtol=1e-4, atol=1e-4)
    x, y = paddle.randn([32]), paddle.randn([32])
    s, d = two(x, y)
    np.testing.assert_allclose(s.numpy(), x.numpy() + y.numpy(), rtol=1e-6)
    np.testing.assert_allclose(d.numpy(), x.numpy() - y.numpy(), rtol=1e-6)


@pytest.mark.parametrize("n", [1, 7, 64, 1000, 4097])
def test_symbolic_sizes(axpy, n):
    assert uses_fast_path(axpy)
    x, y = paddle.randn([n]), paddle.randn([n])
    z = axpy(x, y)
    assert z.shape == [n]
    np.testing.assert_allclose(z.numpy(), 3.0 * x.numpy() + y.numpy(), rtol=1e-5, atol=1e-6)


def test_symbolic_rows_with_static_columns():
    kernel = tilelang.compile(rows_symbolic(), out_idx=[1], **CPU)
    assert uses_fast_path(kernel)
    for m in (3, 50):
        a = paddle.randn([m, 16])
        np.testing.assert_allclose(kernel(a).numpy(), a.numpy().sum(axis=1), rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="shape"):  # a static extent off: upstream's message
        kernel(paddle.randn([3, 15]))


def test_inputs_disagreeing_on_a_symbolic_dimension_are_refused(axpy):
    with pytest.raises(ValueError, match=r"argument 1 \(Y\): dimension 0 is the symbolic n=16, but argument 0 \(X\) gave n=8"):
        axpy(paddle.randn([8]), paddle.randn([16]))


def test_views_with_offsets_and_non_contiguous_views():
    kernel = tilelang.compile(row_sum(4, 16), out_idx=[1], **CPU)
    base = paddle.randn([10, 16])
    rows = base[3:7]  # contiguous view that starts 48 floats into its storage
    assert rows.is_contiguous() and rows.data_ptr() != base.data_ptr()
    np.testing.assert_allclose(kernel(rows).numpy(), base.numpy()[3:7].sum(axis=1), rtol=1e-5, atol=1e-5)
    columns = paddle.randn([16, 4]).T  # non-contiguous: refused, saying so
    with pytest.raises(ValueError, match=r"argument 0 \(A\) is not contiguous \(shape \[4, 16\], strides \[1, 4\]\)"):
        kernel(columns)


def test_concurrent_calls_from_four_threads(axpy):
    errors = []

    def worker(seed):
        rng = np.random.default_rng(seed)
        try:
            for step in range(200):
                n = int(rng.integers(1, 300))
                x = paddle.to_tensor(rng.standard_normal(n).astype("float32"))
                y = paddle.to_tensor(rng.standard_normal(n).astype("float32"))
                np.testing.assert_allclose(axpy(x, y).numpy(), 3.0 * x.numpy() + y.numpy(), rtol=1e-5, atol=1e-6)
        except Exception as exc:  # reported below, with the thread's seed
            errors.append((seed, repr(exc)))

    threads = [threading.Thread(target=worker, args=(seed,)) for seed in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2**20


def test_no_growth_over_many_allocating_calls(axpy):
    x, y = paddle.randn([4096]), paddle.randn([4096])
    for _ in range(2000):
        axpy(x, y)
    before = _rss_mb()
    for _ in range(20000):  # 16 KiB per output: a leak would add ~320 MB
        axpy(x, y)
    assert _rss_mb() - before < 64


def test_every_bad_argument_gets_the_same_message_on_both_launchers():
    """Each bad call through the fast path raises what the regular launcher raises (one process, no crash).

    The regular launcher is upstream's, behind :func:`arguments.diagnosed` (which rewords the
    messages that would mislead: rank, non-contiguous, count); the fast path hands every bad call to it.
    """
    proc = run_python(
        """
        import numpy as np, paddle, tilelang
        import tilelang.language as T

        def add(N=8, dtype="float32"):
            @T.prim_func
            def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype), C: T.Tensor((N,), dtype)):
                with T.Kernel(1) as _:
                    for i in T.serial(N):
                        C[i] = A[i] + B[i]
            return main

        kernel = tilelang.compile(add(), **dict(target="c", execution_backend="cython"))
        assert type(kernel.torch_function).__name__ == "Launcher"
        from tilelang.paddle_runtime import signature
        from tilelang.paddle_runtime.arguments import diagnosed
        forward = kernel.adapter.cython_wrapper.forward
        regular = diagnosed(lambda: signature.of(kernel.adapter), lambda *a: forward(list(a)), paddle.Tensor)
        a, b, c = paddle.randn([8]), paddle.randn([8]), paddle.zeros([8])
        cases = {
            "int": (5, b, c), "none": (None, b, c), "ndarray": (np.zeros(8, "float32"), b, c),
            "dtype": (a.astype("float64"), b, c), "shape": (paddle.randn([9]), b, c),
            "rank": (paddle.randn([2, 4]), b, c), "strided": (paddle.as_strided(paddle.randn([16]), [8], [2]), b, c),
            "count": (a, b), "too_many": (a, b, c, c),
        }
        for name, args in cases.items():
            got = want = None
            try:
                kernel(*args)
            except Exception as exc:
                got = (type(exc).__name__, str(exc))
            try:
                regular(*args)
            except Exception as exc:
                want = (type(exc).__name__, str(exc))
            assert got is not None and got == want, (name, got, want)
            print("ok", name, got[0])
        """
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("ok ") == 9


def test_env_switch_restores_upstream_launcher():
    proc = run_python(
        """
        import paddle, tilelang
        from test_kernels_cpu import elementwise_add
        k = tilelang.compile(elementwise_add(16, "float32"), out_idx=[2], target="c", execution_backend="cython")
        print(type(k.torch_function).__name__, k.torch_function.__wrapped__.__name__)
        a, b = paddle.randn([16]), paddle.randn([16])
        assert paddle.allclose(k(a, b), a + b)
        """,
        env={"TILELANG_PADDLE_FAST_LAUNCH": "0", "PYTHONPATH": f"{HERE}:{HERE.parent / 'examples'}"},
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.split()[-2:] == ["function", "lambda_forward"]


def widest_kernel():
    """24 buffers and 8 symbolic sizes: the most the fast launcher admits (33 call arguments with the stream)."""
    n0, n1, n2, n3, n4, n5, n6, n7 = (T.dynamic(f"n{i}") for i in range(8))

    @T.prim_func
    def main(X0: T.Tensor((n0,), "float32"),
             Y0: T.Tensor((n0,), "float32"),
             Z0: T.Tensor((n0,), "float32"),
             X1: T.Tensor((n1,), "float32"),
             Y1: T.Tensor((n1,), "float32"),
             Z1: T.Tensor((n1,), "float32"),
             X2: T.Tensor((n2,), "float32"),
             Y2: T.Tensor((n2,), "float32"),
             Z2: T.Tensor((n2,), "float32"),
             X3: T.Tensor((n3,), "float32"),
             Y3: T.Tensor((n3,), "float32"),
             Z3: T.Tensor((n3,), "float32"),
             X4: T.Tensor((n4,), "float32"),
             Y4: T.Tensor((n4,), "float32"),
             Z4: T.Tensor((n4,), "float32"),
             X5: T.Tensor((n5,), "float32"),
             Y5: T.Tensor((n5,), "float32"),
             Z5: T.Tensor((n5,), "float32"),
             X6: T.Tensor((n6,), "float32"),
             Y6: T.Tensor((n6,), "float32"),
             Z6: T.Tensor((n6,), "float32"),
             X7: T.Tensor((n7,), "float32"),
             Y7: T.Tensor((n7,), "float32"),
             Z7: T.Tensor((n7,), "float32")):
        with T.Kernel(1) as _:
            for i in T.serial(n0):
                Z0[i] = X0[i] * 1.0 + Y0[i]
            for i in T.serial(n1):
                Z1[i] = X1[i] * 2.0 + Y1[i]
            for i in T.serial(n2):
                Z2[i] = X2[i] * 3.0 + Y2[i]
            for i in T.serial(n3):
                Z3[i] = X3[i] * 4.0 + Y3[i]
            for i in T.serial(n4):
                Z4[i] = X4[i] * 5.0 + Y4[i]
            for i in T.serial(n5):
                Z5[i] = X5[i] * 6.0 + Y5[i]
            for i in T.serial(n6):
                Z6[i] = X6[i] * 7.0 + Y6[i]
            for i in T.serial(n7):
                Z7[i] = X7[i] * 8.0 + Y7[i]

    return main


def test_the_largest_admitted_kernel_runs_on_the_fast_path():
    from tilelang.paddle_runtime import _launcher

    max_params, _, max_dyn = _launcher.LIMITS
    assert (max_params, max_dyn) == (24, 8) and _launcher.MAX_CALL_ARGS == 33
    kernel = tilelang.compile(widest_kernel(), **CPU)
    assert uses_fast_path(kernel)
    rng = np.random.default_rng()
    sizes = [int(s) for s in rng.integers(1, 50, size=8)]
    xs = [rng.standard_normal(n).astype("float32") for n in sizes]
    ys = [rng.standard_normal(n).astype("float32") for n in sizes]
    zs = [paddle.zeros([n]) for n in sizes]
    args = []
    for x, y, z in zip(xs, ys, zs):
        args += [paddle.to_tensor(x), paddle.to_tensor(y), z]
    assert kernel(*args) == []
    for i, (x, y, z) in enumerate(zip(xs, ys, zs)):
        np.testing.assert_allclose(z.numpy(), x * (i + 1) + y, rtol=1e-6)


def test_an_adapter_holding_its_target_as_a_string_gets_the_same_signature(axpy):
    """Upstream's adapters may hold the target as a string (TVMFFIKernelAdapter's class default is "cuda"; its
    own tests build adapters that way); the signature is read from either form (issue 48, item 7)."""
    from tilelang.paddle_runtime import signature

    adapter = axpy.adapter
    built = signature.of(adapter)
    try:
        adapter._tlp_signature, target = None, adapter.target
        adapter.target = "c"
        assert signature.of(adapter) == built and built.target_kind == "c"
    finally:
        adapter.target, adapter._tlp_signature = target, built
