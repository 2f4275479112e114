"""Outputs come back in ``out_idx`` order on every launcher, as upstream's launcher returns them.

``out_idx=[2, 0]`` means "buffer 2, then buffer 0": ``y, x = kernel(a)``. The
fast launcher once returned them in parameter order (x, y), silently swapped
against upstream's documented order; the fuzzer (test_signature_fuzz.py) now
draws permuted out_idx too, these are the issue's own reproductions.
"""

from pathlib import Path

import numpy as np
import paddle
import pytest

import tilelang
import tilelang.language as T
from tilelang.paddle import custom_op

from conftest import run_python

CPU = dict(target="c", execution_backend="cython")
n = T.dynamic("n")


@T.prim_func
def two_outputs(X: T.Tensor((n,), "float32"), A: T.Tensor((n,), "float32"), Y: T.Tensor((n,), "float32")):
    with T.Kernel(1, threads=1) as bx:
        for i in T.serial(n):
            X[i] = A[i] + 1.0
            Y[i] = A[i] + 2.0


@T.prim_func
def three_outputs(X: T.Tensor((n,), "float32"), A: T.Tensor((n,), "float32"), Y: T.Tensor((n,), "float32"),
                  Z: T.Tensor((n,), "float32")):
    with T.Kernel(1, threads=1) as bx:
        for i in T.serial(n):
            X[i] = A[i] + 1.0
            Y[i] = A[i] + 2.0
            Z[i] = A[i] + 3.0


def _reference(a, params):
    offset = {"X": 1.0, "Y": 2.0, "Z": 3.0}
    return [a + offset[name] for name in params]


@pytest.mark.parametrize("out_idx, names", [([2, 0], "YX"), ([0, 2], "XY"), ([-1, 0], "YX"), ([0, -1], "XY")])
def test_fast_and_upstream_launchers_return_out_idx_order(out_idx, names):
    kernel = tilelang.compile(two_outputs, out_idx=out_idx, **CPU)
    assert type(kernel.torch_function).__name__ == "Launcher"
    a = np.random.default_rng(len(names)).standard_normal(37).astype("float32")
    pa = paddle.to_tensor(a)
    for how, outs in (("fast", kernel(pa)), ("upstream", kernel.adapter.cython_wrapper.forward([pa]))):
        assert len(outs) == 2, how
        for got, want, name in zip(outs, _reference(a, names), names):
            np.testing.assert_allclose(got.numpy(), want, err_msg=f"{how}: {name}")


def test_out_idx_order_with_the_fast_path_off():
    proc = run_python(f"""
        import sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        import numpy as np, paddle
        import tilelang
        from test_out_idx_order import two_outputs

        kernel = tilelang.compile(two_outputs, out_idx=[2, 0], target="c", execution_backend="cython")
        assert type(kernel.torch_function).__name__ != "Launcher"
        a = np.arange(5, dtype="float32")
        y, x = kernel(paddle.to_tensor(a))
        np.testing.assert_allclose(y.numpy(), a + 2)
        np.testing.assert_allclose(x.numpy(), a + 1)
        print("ok")
    """, env={"TILELANG_PADDLE_FAST_LAUNCH": "0"})
    assert proc.returncode == 0 and "ok" in proc.stdout, proc.stdout + proc.stderr[-3000:]


def test_custom_op_outputs_in_out_idx_order(tmp_path):
    kernel = tilelang.compile(three_outputs, out_idx=[3, 0, 2], **CPU)
    op = custom_op(kernel, name="tl_order_zxy", directory=tmp_path / "op")
    a = np.random.default_rng(3).standard_normal(11).astype("float32")
    outs = op(paddle.to_tensor(a))
    assert len(outs) == 3
    for got, want, name in zip(outs, _reference(a, "ZXY"), "ZXY"):
        np.testing.assert_allclose(got.numpy(), want, err_msg=name)
    # The same order in a static graph (shapes from the op's infer-shape, in out_idx order too).
    class Outputs(paddle.nn.Layer):
        def forward(self, x):
            return op(x)

    static = paddle.jit.to_static(Outputs(), input_spec=[paddle.static.InputSpec([None], "float32")],
                                  full_graph=True)
    for got, want, name in zip(static(paddle.to_tensor(a)), _reference(a, "ZXY"), "ZXY"):
        np.testing.assert_allclose(got.numpy(), want, err_msg=f"to_static {name}")


def test_custom_op_refuses_a_repeated_out_idx(tmp_path):
    kernel = tilelang.compile(two_outputs, out_idx=[0, 0], **CPU)
    with pytest.raises(ValueError, match=r"out_idx \[0, 0\] names a parameter twice"):
        custom_op(kernel, name="tl_order_twice", directory=tmp_path / "op")
