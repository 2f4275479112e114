"""TileLang kernels as Paddle operators (tilelang.paddle.custom_op): eager, to_static, jit.save, Paddle Inference.

One operator (y = x * w per row, with a backward kernel) is built once for the module in a
temporary op cache; every test checks real results on fresh random inputs. Serving runs in a
fresh interpreter that never imports tilelang.
(No `from __future__ import annotations`: TileLang evaluates kernel annotations.)
"""

import os
import subprocess
import sys
import textwrap

import numpy as np
import paddle
import pytest

import tilelang
import tilelang.language as T
from tilelang.paddle import CustomOp, custom_op, save_ops

COLS = 8


@tilelang.jit(out_idx=[2], target="c", execution_backend="cython")
def scale_forward(cols: int):
    rows = T.dynamic("rows")

    @T.prim_func
    def main(X: T.Tensor((rows, cols), "float32"), W: T.Tensor((cols,), "float32"), Y: T.Tensor((rows, cols), "float32")):
        with T.Kernel(rows) as r:
            for j in T.serial(cols):
                Y[r, j] = X[r, j] * W[j]

    return main


@tilelang.jit(out_idx=[4, 5], target="c", execution_backend="cython")
def scale_backward(cols: int):
    rows = T.dynamic("rows")

    @T.prim_func
    def main(X: T.Tensor((rows, cols), "float32"), W: T.Tensor((cols,), "float32"),
             Y: T.Tensor((rows, cols), "float32"), GY: T.Tensor((rows, cols), "float32"),
             GX: T.Tensor((rows, cols), "float32"), GW: T.Tensor((cols,), "float32")):
        with T.Kernel(1) as _:
            for j in T.serial(cols):
                GW[j] = 0
            for r, j in T.grid(rows, cols):
                GX[r, j] = GY[r, j] * W[j]
                GW[j] += GY[r, j] * X[r, j]

    return main


def plain_scale(cols):
    @T.prim_func
    def main(X: T.Tensor((4, cols), "float32"), W: T.Tensor((cols,), "float32"), Y: T.Tensor((4, cols), "float32")):
        with T.Kernel(4) as r:
            for j in T.serial(cols):
                Y[r, j] = X[r, j] * W[j]

    return main


@pytest.fixture(scope="module")
def op(tmp_path_factory):
    os.environ["TILELANG_PADDLE_OP_CACHE"] = str(tmp_path_factory.mktemp("ops"))
    return custom_op(scale_forward(COLS), name="tl_test_scale", backward=scale_backward(COLS))


def _leaf(array):
    t = paddle.to_tensor(array)
    t.stop_gradient = False
    return t


def test_forward_serves_every_row_count(op):
    assert isinstance(op, CustomOp) and os.path.exists(op.library)
    assert all(os.path.dirname(k) == os.path.dirname(op.library) for k in op.kernel_libraries)
    rng = np.random.default_rng()
    w = rng.standard_normal(COLS).astype("float32")
    for rows in rng.choice(np.arange(1, 200), 3, replace=False):
        x = rng.standard_normal((int(rows), COLS)).astype("float32")
        np.testing.assert_allclose(op(paddle.to_tensor(x), paddle.to_tensor(w)).numpy(), x * w, rtol=1e-6)


def test_gradients_match_the_formula_and_finite_differences(op):
    rng = np.random.default_rng()
    x0, w0 = rng.standard_normal((5, COLS)), rng.standard_normal(COLS)
    x, w = _leaf(x0.astype("float32")), _leaf(w0.astype("float32"))
    y = op(x, w)
    (y * y).sum().backward()
    gy = 2 * x0 * w0
    np.testing.assert_allclose(x.grad.numpy(), gy * w0, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(w.grad.numpy(), (gy * x0).sum(0), rtol=1e-4, atol=1e-4)
    # Central differences of the same loss, in float64 numpy, for two entries of w.
    loss = lambda wv: ((x0 * wv) ** 2).sum()  # noqa: E731
    for j in (0, COLS - 1):
        e = np.zeros(COLS)
        e[j] = 1e-3
        fd = (loss(w0 + e) - loss(w0 - e)) / 2e-3
        assert abs(fd - w.grad.numpy()[j]) <= 1e-2 * max(1.0, abs(fd))


def test_a_transposed_view_gives_the_right_result(op):
    """Paddle hands custom operators contiguous inputs; the op also checks, so a view is never misread."""
    x = paddle.randn([COLS, 5]).T
    w = paddle.randn([COLS])
    assert not x.is_contiguous()
    np.testing.assert_allclose(op(x, w).numpy(), x.numpy() * w.numpy(), rtol=1e-6)


def test_stop_gradient_inputs_get_no_gradient(op):
    rng = np.random.default_rng()
    x = _leaf(rng.standard_normal((3, COLS)).astype("float32"))
    w = paddle.to_tensor(rng.standard_normal(COLS).astype("float32"))  # stop_gradient=True
    op(x, w).sum().backward()
    assert w.grad is None
    np.testing.assert_allclose(x.grad.numpy(), np.broadcast_to(w.numpy(), (3, COLS)), rtol=1e-6)


class ScaleSum(paddle.nn.Layer):
    def __init__(self, op):
        super().__init__()
        self.op = op
        self.w = self.create_parameter([COLS])

    def forward(self, x):
        return paddle.sum(self.op(x, self.w), axis=-1)


class OpOnly(ScaleSum):
    """The op alone (what the legacy program format can hold on Paddle 3.3.1, see below)."""

    def forward(self, x):
        return self.op(x, self.w)


@pytest.mark.parametrize("full_graph", [True, False], ids=["ast", "sot"])
def test_to_static_forward_and_backward(op, full_graph):
    layer = ScaleSum(op)
    spec = [paddle.static.InputSpec([None, COLS], "float32")] if full_graph else None
    static = paddle.jit.to_static(layer, full_graph=full_graph, input_spec=spec)
    rng = np.random.default_rng()
    for rows in (4, 9):
        x0 = rng.standard_normal((rows, COLS)).astype("float32")
        layer.w.clear_gradient()
        out = static(paddle.to_tensor(x0))
        np.testing.assert_allclose(out.numpy(), (x0 * layer.w.numpy()).sum(-1), rtol=1e-5, atol=1e-5)
        out.sum().backward()
        np.testing.assert_allclose(layer.w.grad.numpy(), x0.sum(0), rtol=1e-5, atol=1e-5)


SERVE = """
import glob, os, sys, numpy as np, paddle
prefix, data = sys.argv[1], np.load(sys.argv[2])
for lib in glob.glob(os.path.join(os.path.dirname(prefix), "*_package.so")):
    paddle.utils.cpp_extension.load_op_meta_info_and_register_op(lib)
x = data["x"]
y_layer = paddle.jit.load(prefix)(paddle.to_tensor(x)).numpy()
from paddle import inference
suffix = ".json" if os.path.exists(prefix + ".json") else ".pdmodel"
config = inference.Config(prefix + suffix, prefix + ".pdiparams")
config.disable_gpu()
predictor = inference.create_predictor(config)
handle = predictor.get_input_handle(predictor.get_input_names()[0])
handle.reshape(list(x.shape))
handle.copy_from_cpu(x)
predictor.run()
y_pred = predictor.get_output_handle(predictor.get_output_names()[0]).copy_to_cpu()
np.testing.assert_allclose(y_layer, data["y"], rtol=1e-5, atol=1e-5)
np.testing.assert_allclose(y_pred, data["y"], rtol=1e-5, atol=1e-5)
print("SERVED", suffix, "tilelang imported:", any(m.split(".")[0] == "tilelang" for m in sys.modules))
"""

SAVE = """
import os, sys, numpy as np, paddle
sys.path.insert(0, {tests!r})
from test_custom_op import COLS, OpOnly, ScaleSum, scale_backward, scale_forward
from tilelang.paddle import custom_op, save_ops
op = custom_op(scale_forward(COLS), name="tl_test_scale", backward=scale_backward(COLS))
legacy = not paddle.framework.use_pir_api()
layer = OpOnly(op) if legacy else ScaleSum(op)
layer.eval()  # an inference export: the forward program only
static = paddle.jit.to_static(layer, full_graph=True, input_spec=[paddle.static.InputSpec([None, COLS], "float32")])
prefix = sys.argv[1]
paddle.jit.save(static, prefix)
save_ops(prefix, op)
x = np.random.randn(11, COLS).astype("float32")
y = x * layer.w.numpy()
np.savez(sys.argv[2], x=x, y=y if legacy else y.sum(-1))
print("SAVED", sorted(os.listdir(os.path.dirname(prefix))))
"""


def _python(code, *args, env=None, cwd=None):
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args], capture_output=True, text=True,
                          timeout=600, env={**os.environ, **(env or {})}, cwd=cwd)


@pytest.mark.parametrize("pir", ["1", "0"], ids=["pir", "legacy"])
def test_saved_model_serves_without_tilelang(op, tmp_path, pir):
    """jit.save + save_ops, then a fresh process: register the op libraries, jit.load and create_predictor.

    The legacy format (FLAGS_enable_pir_api=0, a .pdmodel) is saved from a model that is the op
    alone: Paddle 3.3.1's to_static under that flag refuses its own ops too
    (`multiply(): argument (position 1) must be Value, but got Variable`, with no TileLang in the
    model), so a model mixing Paddle ops cannot be saved that way on this Paddle.
    """
    prefix, data = str(tmp_path / "model" / "scale"), str(tmp_path / "data.npz")
    tests = os.path.dirname(os.path.abspath(__file__))
    saved = _python(SAVE.format(tests=tests), prefix, data, env={"FLAGS_enable_pir_api": pir}, cwd=str(tmp_path))
    assert saved.returncode == 0, saved.stdout + saved.stderr[-3000:]
    assert "tl_test_scale_package.so" in saved.stdout and "tl_test_scale_forward_kernel.so" in saved.stdout
    served = _python(SERVE, prefix, data, env={"FLAGS_enable_pir_api": pir}, cwd=str(tmp_path))
    assert served.returncode == 0, served.stdout + served.stderr[-3000:]
    suffix = ".json" if pir == "1" else ".pdmodel"
    assert f"SERVED {suffix} tilelang imported: False" in served.stdout


def test_bad_inputs_name_the_input(op):
    w = paddle.randn([COLS])
    with pytest.raises(Exception, match=r"tl_test_scale: input X must have dtype float64|input X must have dtype float32"):
        op(paddle.randn([3, COLS]).astype("float64"), w)
    with pytest.raises(Exception, match=r"tl_test_scale: input W dimension 0 must be 8, got 5"):
        op(paddle.randn([3, COLS]), paddle.randn([5]))
    with pytest.raises(Exception, match=r"tl_test_scale: input X must be 2-d, got 1-d"):
        op(paddle.randn([COLS]), w)
    with pytest.raises(TypeError, match=r"missing 1 required positional argument"):
        op(w)


def test_missing_kernel_library_is_reported_with_its_path(op, tmp_path):
    """A served op library whose kernel library was not copied: the reason and the path, no crash."""
    import shutil

    lib = tmp_path / "tl_test_scale_package.so"
    shutil.copyfile(op.library, lib)
    code = f"""
import numpy as np, paddle
paddle.utils.cpp_extension.load_op_meta_info_and_register_op({str(lib)!r})
from paddle import _C_ops
try:
    _C_ops._run_custom_op("tl_test_scale", paddle.randn([2, {COLS}]), paddle.randn([{COLS}]))
except Exception as exc:
    print("RAISED", type(exc).__name__)
"""
    proc = _python(code, cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    missing = str(tmp_path / "tl_test_scale_forward_kernel.so")
    assert f"cannot load the TileLang kernel library {missing}" in proc.stderr
    assert "RAISED" in proc.stdout


def test_arguments_are_checked_before_building():
    with pytest.raises(TypeError, match="forward must be a compiled TileLang kernel"):
        custom_op(lambda x: x, name="tl_bad")
    with pytest.raises(ValueError, match=r"name 'tl-bad' is not an ASCII identifier"):
        custom_op(scale_forward(COLS), name="tl-bad")
    with pytest.raises(ValueError, match=r"backward must take 4 tensors .* but takes 2"):
        custom_op(scale_forward(COLS), name="tl_bad", backward=scale_forward(COLS))
    no_out = tilelang.compile(plain_scale(COLS), target="c", execution_backend="cython")
    with pytest.raises(ValueError, match="forward needs out_idx"):
        custom_op(no_out, name="tl_bad")


def test_save_ops_refuses_other_objects(tmp_path):
    with pytest.raises(TypeError, match="save_ops: expected ops made by tilelang.paddle.custom_op"):
        save_ops(str(tmp_path / "m"), object())
