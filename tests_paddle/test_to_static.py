"""Plain kernel calls inside paddle.jit.to_static layers (SOT, the default mode): they run eagerly.

``@tilelang.jit`` factory calls graph-break (patch 0018) and the compiled kernel runs as in eager
mode; ``autograd_function`` ops train. Operators that ``paddle.jit.save`` can record are
``tilelang.paddle.custom_op`` (tests_paddle/test_custom_op.py).
(No `from __future__ import annotations`: TileLang evaluates kernel annotations.)
"""

import numpy as np
import paddle

import tilelang
import tilelang.language as T
from test_autograd import matmul


@tilelang.jit(out_idx=[1], target="c", execution_backend="cython")
def double(cols: int):
    rows = T.dynamic("rows")

    @T.prim_func
    def main(X: T.Tensor((rows, cols), "float32"), Y: T.Tensor((rows, cols), "float32")):
        with T.Kernel(rows) as r:
            for j in T.serial(cols):
                Y[r, j] = X[r, j] * 2.0

    return main


class DoublePlusOne(paddle.nn.Layer):
    def forward(self, x):
        return double(4)(x) + 1


def test_jit_factory_calls_run_eagerly_under_sot():
    layer = paddle.jit.to_static(DoublePlusOne())  # SOT: full_graph=False is the default
    double(4)(paddle.randn([2, 4]))  # the factory's call-form cache is warm: the case SOT could not simulate
    for rows in (3, 5, 5, 1):
        x = paddle.randn([rows, 4])
        np.testing.assert_allclose(layer(x).numpy(), x.numpy() * 2 + 1, rtol=1e-6)


class TwoLayer(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.w1 = self.create_parameter([16, 32])
        self.w2 = self.create_parameter([32, 16])

    def forward(self, x):
        return matmul(paddle.nn.functional.relu(matmul(x, self.w1)), self.w2)


def test_autograd_function_trains_under_sot():
    paddle.seed(7)
    ours, reference = TwoLayer(), TwoLayer()
    reference.set_state_dict(ours.state_dict())
    static = paddle.jit.to_static(ours)
    opt_ours = paddle.optimizer.SGD(0.05, parameters=ours.parameters())
    opt_ref = paddle.optimizer.SGD(0.05, parameters=reference.parameters())
    for _ in range(3):
        x, target = paddle.randn([16, 16]), paddle.randn([16, 16])
        loss = ((static(x) - target) ** 2).mean()
        loss.backward()
        opt_ours.step()
        opt_ours.clear_grad()
        ref = ((paddle.matmul(paddle.nn.functional.relu(paddle.matmul(x, reference.w1)), reference.w2) - target) ** 2).mean()
        ref.backward()
        opt_ref.step()
        opt_ref.clear_grad()
        np.testing.assert_allclose(float(loss), float(ref), rtol=1e-4)
    np.testing.assert_allclose(ours.w1.numpy(), reference.w1.numpy(), rtol=1e-4, atol=1e-5)
