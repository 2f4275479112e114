"""Kernel outputs allocated in C through Paddle's DLPack exchange API (``managed_tensor_allocator``, issue 56).

The fast launcher allocates each output of a call with ``out_idx`` through the
exchange API and hands it to Python with ``managed_tensor_to_py_object_no_sync``;
only outputs of a dtype Paddle allocates as a same-width twin and views (the
unsigned ones), and every output where the API lacks the allocator, go through
the driver's ``empty`` from Python. Each case runs in a fresh process that counts
the driver's allocations: one from Python where C was due fails the test.
Values against numpy on seeded random inputs; every ``out_idx`` order of three
outputs; symbolic and zero sizes; the forced fallback (the API bound with its
allocator cleared).
"""

import itertools
import json

import pytest

from conftest import run_python

PROGRAM = '''
import itertools, json, random
import numpy as np, paddle
import tilelang
import tilelang.language as T
from tilelang.paddle_runtime.driver import paddle_driver

FORCE_FALLBACK = {force}
if FORCE_FALLBACK:  # the same API with its allocator cleared: a Paddle without it
    import ctypes
    from tilelang.paddle_runtime import _launcher
    source = paddle_driver().exchange_api()
    copy = (ctypes.c_void_p * 8).from_buffer_copy((ctypes.c_void_p * 8).from_address(source))
    copy[2] = None  # header (version, prev_api), then managed_tensor_allocator
    assert _launcher.bind_exchange_api(ctypes.addressof(copy)) == 1

driver = paddle_driver()
python_allocs = []
empty = driver.empty
driver.empty = lambda shape, dtype, place: (python_allocs.append(str(dtype)), empty(shape, dtype, place))[1]

n = T.dynamic("n")


def three_outputs(dtype):
    @T.prim_func
    def main(A: T.Tensor((n, 4), dtype), B: T.Tensor((n, 4), dtype), P: T.Tensor((n, 4), dtype),
             Q: T.Tensor((n, 4), dtype), R: T.Tensor((4, n), dtype)):
        with T.Kernel(1) as _:
            for i, j in T.grid(n, 4):
                P[i, j] = A[i, j] + B[i, j]
                Q[i, j] = A[i, j] - B[i, j]
                R[j, i] = A[i, j]
    return main


FLOAT = ("float16", "float32", "float64")  # the C target has no bfloat16


def values(rng, dtype, shape):
    if dtype in FLOAT:
        return rng.uniform(-4, 4, shape).astype(dtype)
    return rng.integers(0, 50, shape).astype(dtype)


def as_paddle(x, dtype):
    if dtype in FLOAT:
        return paddle.to_tensor(x)
    # to_tensor reads uint16 as bfloat16 and refuses uint32/uint64: go through int64.
    return paddle.to_tensor(x.astype("int64")).astype(getattr(paddle, dtype))


rng = np.random.default_rng({seed})
report = []
for dtype in {dtypes}:
    for out_idx in {orders}:
        kernel = tilelang.compile(three_outputs(dtype), out_idx=list(out_idx), target="c",
                                  execution_backend="cython")
        assert type(kernel.torch_function).__name__ == "Launcher", dtype
        for rows in (int(rng.integers(1, 40)), 0):
            a, b = values(rng, dtype, (rows, 4)), values(rng, dtype, (rows, 4))
            refs = {{2: a + b, 3: a - b, 4: a.T}}  # in the kernel's dtype: unsigned differences wrap as in C
            passed = [as_paddle(a, dtype), as_paddle(b, dtype)]
            for p in (2, 3, 4):
                if p not in out_idx:
                    passed.append(as_paddle(np.zeros(refs[p].shape, refs[p].dtype), dtype))
            before = len(python_allocs)
            got = kernel(*passed)
            got = [got] if len(out_idx) == 1 else got
            assert len(got) == len(out_idx)
            for p, tensor in zip(out_idx, got):
                assert tensor.dtype == getattr(paddle, dtype), (tensor.dtype, dtype)
                assert str(tensor.place) == "Place(cpu)" and list(tensor.shape) == list(refs[p].shape)
                np.testing.assert_allclose(tensor.astype("float64").numpy(), refs[p].astype("float64"),
                                           **({{"rtol": 1e-2, "atol": 0.01}} if dtype == "float16" else {{"rtol": 1e-6}}))
            report.append({{"dtype": dtype, "out_idx": list(out_idx), "rows": rows,
                           "python_allocs": len(python_allocs) - before,
                           "in_c": list(kernel.torch_function.outputs_in_c)}})
print("REPORT", json.dumps(report))
'''

ORDERS = [list(p) for k in (1, 2, 3) for p in itertools.permutations([2, 3, 4], k)]


def _run(dtypes, orders, force=False, seed=0):
    proc = run_python(PROGRAM.format(force=force, seed=seed, dtypes=dtypes, orders=orders))
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("REPORT "))
    return json.loads(line[len("REPORT "):])


def test_every_out_idx_order_is_allocated_in_c_with_the_right_values():
    report = _run(["float32"], ORDERS, seed=56)
    assert len(report) == 2 * len(ORDERS)
    for row in report:
        assert row["python_allocs"] == 0, row          # no output went through Python
        assert row["in_c"] == [True] * len(row["out_idx"]), row


@pytest.mark.parametrize("dtype", ["float16", "float64", "int8", "int32", "int64", "uint8"])  # no bfloat16 in C
def test_each_dtype_paddle_allocates_directly_is_allocated_in_c(dtype):
    report = _run([dtype], [[4, 2], [3]], seed=7)
    assert all(row["python_allocs"] == 0 and all(row["in_c"]) for row in report), report


@pytest.mark.parametrize("dtype", ["uint16", "uint64"])  # TileLang's C target has no uint32
def test_view_dtypes_fall_back_to_the_driver_one_output_each(dtype):
    report = _run([dtype], [[4, 2], [3]], seed=8)
    for row in report:
        assert row["in_c"] == [False] * len(row["out_idx"]), row
        assert row["python_allocs"] == len(row["out_idx"]), row


def test_an_api_without_the_allocator_falls_back_to_the_driver():
    report = _run(["float32", "uint16"], [[2, 3, 4], [4]], force=True, seed=9)
    for row in report:
        assert row["in_c"] == [False] * len(row["out_idx"]), row
        assert row["python_allocs"] == len(row["out_idx"]), row
