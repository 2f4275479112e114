"""Export a model whose matmul is a TileLang kernel, and serve it with Paddle Inference (CPU).

    python examples/export_inference.py [--steps 3] [--out DIR]

1. ``tilelang.paddle.custom_op`` turns a TileLang GEMM (forward) and its two
   gradient GEMMs (backward) into a real Paddle operator.
2. A small model using it trains a few steps under ``paddle.jit.to_static``.
3. ``paddle.jit.save`` writes the model; ``tilelang.paddle.save_ops`` copies
   the op library (as ``<name>_package.so``) and its kernel libraries beside it.
4. A fresh Python process that never imports tilelang registers the op
   library, serves the model with ``paddle.inference`` and checks its output
   against the eager model's.
(No `from __future__ import annotations`: TileLang evaluates kernel annotations.)
"""

import sys

from common import parser, positive_int


def parse_args(argv=None):
    p = parser(__doc__)
    p.add_argument("--steps", type=positive_int, default=3, help="to_static training steps")
    p.add_argument("--out", help="where to write the model (default: a temporary directory)")
    return p.parse_args(argv)


if __name__ == "__main__":
    parse_args()  # --help and argument errors answer before the seconds Paddle and TileLang take to import

import os  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import warnings  # noqa: E402

# Paddle's own output, not this program's: the static executor's glog INFO lines (read when Paddle loads), and
# the warning Paddle's backward construction gives under to_static (paddle.tensor.creation.full_like).
os.environ.setdefault("GLOG_minloglevel", "1")
warnings.filterwarnings("ignore", message="Tensor do not have 'place' interface for pir graph mode")

import numpy as np  # noqa: E402
import paddle  # noqa: E402

import tilelang  # noqa: E402
import tilelang.language as T  # noqa: E402
from tilelang.paddle import custom_op, save_ops  # noqa: E402

BATCH, D_IN, D_OUT = 32, 64, 16


@tilelang.jit(out_idx=[2], target="c", execution_backend="cython")
def linear_forward(k: int, n: int):
    """Y = X @ W for any number of rows of X."""
    m = T.dynamic("m")

    @T.prim_func
    def main(X: T.Tensor((m, k), "float32"), W: T.Tensor((k, n), "float32"), Y: T.Tensor((m, n), "float32")):
        with T.Kernel(m) as i:
            for j in T.serial(n):
                Y[i, j] = 0
                for r in T.serial(k):
                    Y[i, j] += X[i, r] * W[r, j]

    return main


@tilelang.jit(out_idx=[4, 5], target="c", execution_backend="cython")
def linear_backward(k: int, n: int):
    """dX = dY @ W^T and dW = X^T @ dY (the inputs are X, W, Y, dY; Y is unused)."""
    m = T.dynamic("m")

    @T.prim_func
    def main(X: T.Tensor((m, k), "float32"), W: T.Tensor((k, n), "float32"), Y: T.Tensor((m, n), "float32"),
             GY: T.Tensor((m, n), "float32"), GX: T.Tensor((m, k), "float32"), GW: T.Tensor((k, n), "float32")):
        with T.Kernel(1) as _:
            for i, r in T.grid(m, k):
                GX[i, r] = 0
                for j in T.serial(n):
                    GX[i, r] += GY[i, j] * W[r, j]
            for r, j in T.grid(k, n):
                GW[r, j] = 0
                for i in T.serial(m):
                    GW[r, j] += X[i, r] * GY[i, j]

    return main


class Model(paddle.nn.Layer):
    def __init__(self, matmul):
        super().__init__()
        self.matmul = matmul
        self.w = self.create_parameter([D_IN, D_OUT])

    def forward(self, x):
        return paddle.nn.functional.relu(self.matmul(x, self.w))


SERVE = r"""
import glob, os, sys, numpy as np, paddle
from paddle import inference
prefix, data = sys.argv[1], np.load(sys.argv[2])
for lib in glob.glob(os.path.join(os.path.dirname(prefix), "*_package.so")):
    paddle.utils.cpp_extension.load_op_meta_info_and_register_op(lib)   # before loading the model
config = inference.Config(prefix + ".json", prefix + ".pdiparams")
config.disable_gpu()
config.disable_glog_info()   # Paddle Inference's graph-pass logs
predictor = inference.create_predictor(config)
x = data["x"]
handle = predictor.get_input_handle(predictor.get_input_names()[0])
handle.reshape(list(x.shape))
handle.copy_from_cpu(x)
predictor.run()
y = predictor.get_output_handle(predictor.get_output_names()[0]).copy_to_cpu()
err = float(np.abs(y - data["y"]).max())
print(f"[serving] Paddle Inference, no tilelang imported ({not any(m.startswith('tilelang') for m in sys.modules)}): "
      f"max abs err {err:.2e} vs the eager model")
sys.exit(0 if err < 1e-4 else 1)
"""


def main(argv=None) -> int:
    args = parse_args(argv)
    paddle.set_device("cpu")
    matmul = custom_op(linear_forward(D_IN, D_OUT), name="tl_linear", backward=linear_backward(D_IN, D_OUT))
    print(f"[build] custom op {matmul.op_name}: {matmul.library}")
    paddle.seed(0)
    model = Model(matmul)
    static = paddle.jit.to_static(model, full_graph=True, input_spec=[paddle.static.InputSpec([None, D_IN], "float32")])
    opt = paddle.optimizer.SGD(0.01, parameters=model.parameters())
    target_w = paddle.randn([D_IN, D_OUT])
    x = paddle.randn([BATCH, D_IN])  # one batch, fitted a few steps
    for step in range(args.steps):
        loss = ((static(x) - paddle.nn.functional.relu(x @ target_w)) ** 2).mean()
        loss.backward()
        opt.step()
        opt.clear_grad()
        print(f"[train] to_static step {step}: loss {float(loss):.4f}")
    model.eval()
    if args.out is None:  # a scratch directory, removed afterwards (pass --out to keep the export)
        with tempfile.TemporaryDirectory(prefix="tilelang_export_") as out:
            return export_and_serve(static, model, matmul, out)
    return export_and_serve(static, model, matmul, args.out)


def export_and_serve(static, model, matmul, out) -> int:
    """jit.save + save_ops into ``out``, then serve the model in a fresh process and compare."""
    prefix = os.path.join(out, "model")
    paddle.jit.save(static, prefix)
    saved = save_ops(prefix, matmul)
    print(f"[export] {prefix}.json + .pdiparams, and {', '.join(os.path.basename(p) for p in saved)} beside them")
    x = np.random.randn(7, D_IN).astype("float32")
    data = os.path.join(out, "check.npz")
    np.savez(data, x=x, y=model(paddle.to_tensor(x)).numpy())
    return subprocess.run([sys.executable, "-c", SERVE, prefix, data]).returncode


if __name__ == "__main__":
    raise SystemExit(main())
