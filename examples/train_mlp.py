"""A training step with TileLang kernels inside a Paddle model.

    python examples/train_mlp.py [--steps 5]

A two-layer MLP whose matmuls are TileLang GEMM kernels made differentiable
with ``tilelang.paddle.autograd_function`` (forward and backward are kernel
calls), trained for a few SGD steps next to the same model on
``paddle.matmul`` from the same initial weights; the losses are printed side
by side and must agree. On the CPU the kernels run through TileLang's C target;
on a GPU (when Paddle sees one) through CUDA, in float16.
(No `from __future__ import annotations`: TileLang evaluates kernel annotations.)
"""

from common import parser, positive_int


def parse_args(argv=None):
    p = parser(__doc__)
    p.add_argument("--steps", type=positive_int, default=5, help="SGD steps")
    p.add_argument("--lr", type=float, default=0.05, help="learning rate")
    return p.parse_args(argv)


if __name__ == "__main__":
    parse_args()  # --help and argument errors answer before the seconds Paddle and TileLang take to import

import paddle  # noqa: E402

import tilelang
from common import paddle_sees_gpu
from quickstart import gemm_cpu, gemm_cuda
from tilelang.paddle import autograd_function

ON_GPU = paddle_sees_gpu()
_KERNELS = {}


def kernel_matmul(a, b):
    """a @ b with a TileLang kernel compiled once per shape (kernels take row-major tensors)."""
    (m, k), (_, n) = a.shape, b.shape
    if (m, n, k) not in _KERNELS:
        if ON_GPU:
            _KERNELS[m, n, k] = tilelang.compile(gemm_cuda(m, n, k, 64, 64, 32), out_idx=[2])
        else:
            _KERNELS[m, n, k] = tilelang.compile(gemm_cpu(m, n, k, 16, 16, 16), out_idx=[2], target="c",
                                                 execution_backend="cython")
    return _KERNELS[m, n, k](a, b)


def _forward(ctx, x, w):
    ctx.save_for_backward(x, w)
    return kernel_matmul(x, w)


def _backward(ctx, grad_out):
    x, w = ctx.saved_tensor()
    grad_x = kernel_matmul(grad_out, paddle.assign(w.T)) if ctx.needs_input_grad[0] else None
    grad_w = kernel_matmul(paddle.assign(x.T), grad_out) if ctx.needs_input_grad[1] else None
    return grad_x, grad_w


tl_matmul = autograd_function(_forward, _backward, name="tl_matmul")


def mlp(x, w1, w2, matmul):
    return matmul(paddle.nn.functional.relu(matmul(x, w1)), w2)


def train(matmul, w1, w2, batches, lr):
    w1, w2 = w1.clone(), w2.clone()
    w1.stop_gradient = w2.stop_gradient = False
    losses = []
    for x, target in batches:
        loss = ((mlp(x, w1, w2, matmul).astype("float32") - target) ** 2).mean()
        loss.backward()
        with paddle.no_grad():
            w1.set_value(w1 - lr * w1.grad)
            w2.set_value(w2 - lr * w2.grad)
        w1.clear_gradient()
        w2.clear_gradient()
        losses.append(float(loss))
    return losses


def main(argv=None) -> int:
    args = parse_args(argv)
    dtype = "float16" if ON_GPU else "float32"
    batch, d_in, hidden, d_out = 64, 64, 128, 64
    w1 = (paddle.randn([d_in, hidden]) / d_in**0.5).astype(dtype)
    w2 = (paddle.randn([hidden, d_out]) / hidden**0.5).astype(dtype)
    batches = [(paddle.randn([batch, d_in]).astype(dtype), paddle.randn([batch, d_out])) for _ in range(args.steps)]
    ours = train(tl_matmul, w1, w2, batches, args.lr)
    theirs = train(paddle.matmul, w1, w2, batches, args.lr)
    tol = 5e-2 if ON_GPU else 1e-4
    print(f"[{'GPU' if ON_GPU else 'CPU'}] step   TileLang loss   paddle.matmul loss")
    ok = True
    for step, (a, b) in enumerate(zip(ours, theirs)):
        ok &= abs(a - b) <= tol * max(1.0, abs(b))
        print(f"       {step:4d}   {a:13.6f}   {b:18.6f}")
    print("OK: the losses agree" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
