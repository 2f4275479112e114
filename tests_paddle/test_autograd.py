"""tilelang.paddle.autograd_function with real TileLang kernels (CPU target) on real Paddle tensors.

(No `from __future__ import annotations`: TileLang evaluates kernel annotations.)
"""

import numpy as np
import paddle
import pytest

import tilelang
from quickstart import gemm_cpu
from tilelang.paddle import autograd_function

CPU = dict(target="c", execution_backend="cython")
_KERNELS = {}


def kmatmul(a, b):
    """a @ b with a TileLang CPU kernel, compiled once per shape and dtype."""
    (m, k), (_, n) = a.shape, b.shape
    key = (m, n, k, str(a.dtype))
    if key not in _KERNELS:
        dtype = "float64" if a.dtype == paddle.float64 else "float32"
        _KERNELS[key] = tilelang.compile(gemm_cpu(m, n, k, 16, 16, 16, dtype=dtype), out_idx=[2], **CPU)
    return _KERNELS[key](a, b)


def dense(x):
    return paddle.assign(x)  # a contiguous copy (kernels take row-major tensors)


def mm_forward(ctx, x, w):
    ctx.save_for_backward(x, w)
    return kmatmul(x, w)


def mm_backward(ctx, gy):
    assert gy.is_contiguous()
    x, w = ctx.saved_tensor()
    gx = kmatmul(gy, dense(w.T)) if ctx.needs_input_grad[0] else None
    gw = kmatmul(dense(x.T), gy) if ctx.needs_input_grad[1] else None
    return gx, gw


matmul = autograd_function(mm_forward, mm_backward, name="tl_matmul")


def _leaf(shape, dtype="float32", requires_grad=True):
    t = paddle.randn(shape).astype(dtype)
    t.stop_gradient = not requires_grad
    return t


def test_gradients_match_paddle_matmul():
    x, w, r = _leaf([32, 48]), _leaf([48, 16]), paddle.randn([32, 16])
    (matmul(x, w) * r).sum().backward()
    x2, w2 = x.detach(), w.detach()
    x2.stop_gradient = w2.stop_gradient = False
    (paddle.matmul(x2, w2) * r).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), x2.grad.numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(w.grad.numpy(), w2.grad.numpy(), rtol=1e-4, atol=1e-4)


def test_gradients_match_finite_differences():
    x, w = _leaf([16, 16], "float64"), _leaf([16, 16], "float64")
    r = paddle.randn([16, 16]).astype("float64")

    def loss(xv, wv):
        return float((kmatmul(xv, wv) * r).sum())

    (matmul(x, w) * r).sum().backward()
    eps = 1e-6
    rng = np.random.default_rng()
    for target, grad in ((x, x.grad), (w, w.grad)):
        base = target.detach().numpy()
        for _ in range(5):
            i, j = rng.integers(0, 16, 2)
            plus, minus = base.copy(), base.copy()
            plus[i, j] += eps
            minus[i, j] -= eps
            args_p = (paddle.to_tensor(plus), w.detach()) if target is x else (x.detach(), paddle.to_tensor(plus))
            args_m = (paddle.to_tensor(minus), w.detach()) if target is x else (x.detach(), paddle.to_tensor(minus))
            numeric = (loss(*args_p) - loss(*args_m)) / (2 * eps)
            assert grad.numpy()[i, j] == pytest.approx(numeric, rel=1e-5, abs=1e-7)


def test_stop_gradient_inputs_get_none_without_error():
    seen = []

    def backward_all(ctx, gy):
        seen.append(ctx.needs_input_grad)
        x, w = ctx.saved_tensor()
        return kmatmul(gy, dense(w.T)), kmatmul(dense(x.T), gy)  # a gradient for w too: the helper drops it

    op = autograd_function(mm_forward, backward_all)
    x, w = _leaf([16, 32]), _leaf([32, 16], requires_grad=False)
    op(x, w).sum().backward()
    assert seen == [(True, False)]
    assert w.grad is None
    np.testing.assert_allclose(x.grad.numpy(), np.ones([16, 16]) @ w.numpy().T, rtol=1e-4, atol=1e-4)


def test_non_contiguous_incoming_gradient():
    x, w, r = _leaf([32, 16]), _leaf([16, 48]), paddle.randn([48, 32])
    (matmul(x, w).T * r).sum().backward()  # the gradient reaches the op through a transpose
    np.testing.assert_allclose(x.grad.numpy(), r.numpy().T @ w.numpy().T, rtol=1e-4, atol=1e-4)


def test_unused_output_gradient_arrives_as_zeros():
    got = {}

    def fwd(ctx, x, w):
        ctx.save_for_backward(x, w)
        y = kmatmul(x, w)
        return y, y * 2.0

    def bwd(ctx, gy, gz):
        got["gz"] = gz.numpy()
        x, w = ctx.saved_tensor()
        g = gy + gz * 2.0
        return kmatmul(g, dense(w.T)), kmatmul(dense(x.T), g)

    op = autograd_function(fwd, bwd)
    x, w = _leaf([16, 16]), _leaf([16, 16])
    y, _unused = op(x, w)
    y.sum().backward()
    assert got["gz"].shape == (16, 16) and not got["gz"].any()
    np.testing.assert_allclose(x.grad.numpy(), np.ones([16, 16]) @ w.numpy().T, rtol=1e-4, atol=1e-4)


def test_integer_outputs_are_not_differentiable():
    def fwd(ctx, x, w):
        y = kmatmul(x, w)
        return y, paddle.argmax(y, axis=1)

    op = autograd_function(fwd, lambda ctx, gy, gi: (gy[:, :16], None))
    y, idx = op(_leaf([16, 16]), _leaf([16, 16]))
    assert idx.dtype == paddle.int64 and idx.stop_gradient and not y.stop_gradient


@pytest.mark.parametrize("bad,message", [
    (lambda gy: (gy,), r"backward of 'tl_bad' returned 1 gradient\(s\); expected 2, one per tensor argument \(x, w\)"),
    (lambda gy: (gy[:, :8], None), r"backward of 'tl_bad': gradient for x has shape \[16, 8\], expected \[16, 32\]"),
    (lambda gy: (paddle.zeros([16, 32], "float64"), None), r"gradient for x has dtype .*float64, expected .*float32"),
])
def test_wrong_gradients_are_reported_naming_the_input(bad, message):
    op = autograd_function(mm_forward, lambda ctx, gy: bad(gy), name="tl_bad")
    x, w = _leaf([16, 32]), _leaf([32, 16], requires_grad=False)
    with pytest.raises(OSError, match=message):  # Paddle re-raises backward errors as OSError (External)
        op(x, w).sum().backward()


def test_op_without_backward_refuses_clearly():
    op = autograd_function(mm_forward, name="fwd_only")
    x, w = _leaf([16, 16]), _leaf([16, 16])
    y = op(x, w)
    np.testing.assert_allclose(y.numpy(), x.numpy() @ w.numpy(), rtol=1e-4, atol=1e-4)
    with pytest.raises(OSError, match=r"RuntimeError: tilelang.paddle op 'fwd_only' is not differentiable.*without a backward"):
        y.sum().backward()
    frozen = op(x.detach(), w.detach())  # fine when nothing needs a gradient
    assert frozen.stop_gradient


def test_keyword_tensors_are_inputs_like_positional_ones():
    """op(x, w=w): both get gradients, as paddle.autograd.PyLayer gives them (issue 27, item 5)."""
    x, w, r = _leaf([16, 32]), _leaf([32, 16]), paddle.randn([16, 16])
    (matmul(x, w=w) * r).sum().backward()
    x2, w2 = x.detach(), w.detach()
    x2.stop_gradient = w2.stop_gradient = False
    (paddle.matmul(x2, w2) * r).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), x2.grad.numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(w.grad.numpy(), w2.grad.numpy(), rtol=1e-4, atol=1e-4)


def test_keyword_tensors_in_call_order_with_needs_input_grad_and_names():
    """Keyword tensors count in the order the call passes them; needs_input_grad and errors follow it."""
    seen = {}

    def fwd(ctx, x, a=None, z=None):
        seen["needs"] = ctx.needs_input_grad
        return x.sum() + 2 * a.sum() + 3 * z.sum()

    def bwd(ctx, g):  # gradients for x, then z, then a: the call below passes z before a
        return paddle.full([2], 1.0) * g, paddle.full([4], 3.0) * g, paddle.full([3], 2.0) * g

    op = autograd_function(fwd, bwd, name="kw_order")
    x, a, z = _leaf([2]), _leaf([3], requires_grad=False), _leaf([4])
    a.stop_gradient = True
    op(x, z=z, a=a).backward()
    assert seen["needs"] == (True, True, False)
    np.testing.assert_allclose(z.grad.numpy(), np.full([4], 3.0))
    assert a.grad is None

    short = autograd_function(fwd, lambda ctx, g: (g, g), name="kw_short")
    with pytest.raises(Exception, match=r"returned 2 gradient\(s\); expected 3, one per tensor argument \(x, z, a\)"):
        short(_leaf([2]), z=_leaf([4]), a=_leaf([3])).backward()
