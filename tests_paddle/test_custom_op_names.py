"""custom_op: every name that enters the generated C++ is checked first; backward shapes checked at definition.

Buffer names that once collided with the generated code's own locals (``lib``, ``dims``, ``rc``, ``out0``)
now build and run; names the source cannot hold are ValueErrors naming the name, raised before any build.
"""

import importlib.util
import sys

import numpy as np
import paddle
import pytest

import tilelang
from tilelang.paddle import custom_op

from test_custom_op import COLS, scale_backward, scale_forward

CPU = dict(target="c", execution_backend="cython")


def _axpy_named(tmp_path, a: str, b: str, out: str, n: int = 6, b_len: int | None = None):
    """A kernel out = a * 2 + b whose buffers carry the given names (from a real file: TileLang reads sources)."""
    path = tmp_path / f"named_{a}_{b}_{out}_{n}_{b_len}.py"
    path.write_text(
        "import tilelang.language as T\n\n\n@T.prim_func\n"
        f"def main({a}: T.Tensor(({n},), \"float32\"), {b}: T.Tensor(({b_len or n},), \"float32\"), "
        f"{out}: T.Tensor(({n},), \"float32\")):\n"
        "    with T.Kernel(1, threads=1) as bx:\n"
        f"        for i in T.serial({n}):\n"
        f"            {out}[i] = {a}[i] * 2.0 + {b}[i % {b_len or n}]\n")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    return tilelang.compile(module.main, out_idx=[2], **CPU)


def test_names_the_generated_code_once_used_build_and_run(tmp_path):
    kernel = _axpy_named(tmp_path, "lib", "dims", "rc")
    op = custom_op(kernel, name="tl_named_locals", directory=tmp_path / "op")
    x, y = np.random.rand(6).astype("float32"), np.random.rand(6).astype("float32")
    np.testing.assert_allclose(op(paddle.to_tensor(x), paddle.to_tensor(y)).numpy(), x * 2 + y, rtol=1e-6)


@pytest.mark.parametrize("names, message", [
    (("If", "B", "C"), r"buffer name 'If' is a C\+\+ keyword once Paddle lower-cases it"),
    (("Lambda", "B", "C"), r"buffer name 'Lambda' is a Python keyword once Paddle lower-cases it"),
    (("tlp_x", "B", "C"), r"buffer name 'tlp_x' is a name the generated operator uses itself"),
    (("paddle", "B", "C"), r"buffer name 'paddle' is a name the generated operator uses itself"),
    (("A", "a", "C"), r"buffer names 'A' and 'a' collide once Paddle lower-cases them"),
])
def test_bad_buffer_names_are_refused_before_building(tmp_path, names, message):
    kernel = _axpy_named(tmp_path, *names)
    with pytest.raises(ValueError, match=message):
        custom_op(kernel, name="tl_bad_names", directory=tmp_path / "op")
    assert not (tmp_path / "op").exists()  # nothing was built


def test_a_backward_input_named_like_a_gradient_is_refused(tmp_path):
    """The backward receives grad_<output>: an input named grad_C beside the output C collides with it."""
    fwd = _axpy_named(tmp_path, "grad_C", "B", "C")
    with pytest.raises(ValueError, match=r"buffer names 'grad_C' and 'grad_C' collide .*grad_<output>"):
        custom_op(fwd, name="tl_bad_gname", backward=scale_backward(COLS), directory=tmp_path / "op")


@pytest.mark.parametrize("name, message", [
    ("relu", "is an operator Paddle already has"),
    ("matmul", "is an operator Paddle already has"),
    ("if", "is a C\\+\\+ keyword"),
    ("tl_scale_grad", "contains '_grad'"),
    ("Tl_Scale", "has upper-case letters"),
    ("tl-scale", "is not an ASCII identifier"),
    ("tl_sc\u00e4le", "is not an ASCII identifier"),
])
def test_bad_op_names_are_refused_before_building(name, message):
    with pytest.raises(ValueError, match=rf"custom_op: name {name!r} {message}"):
        custom_op(scale_forward(COLS), name=name)


def test_a_gradient_of_the_wrong_shape_is_refused_at_definition(tmp_path):
    """W is (8,): a backward whose dW is (5,) would give W.grad the shape [5]."""
    from test_custom_op import T

    rows = T.dynamic("rows")

    @T.prim_func
    def short_grad(X: T.Tensor((rows, COLS), "float32"), W: T.Tensor((COLS,), "float32"),
                   Y: T.Tensor((rows, COLS), "float32"), GY: T.Tensor((rows, COLS), "float32"),
                   GX: T.Tensor((rows, COLS), "float32"), GW: T.Tensor((5,), "float32")):
        with T.Kernel(1) as _:
            for j in T.serial(5):
                GW[j] = 0.0
            for r, j in T.grid(rows, COLS):
                GX[r, j] = GY[r, j] * W[j]

    bwd = tilelang.compile(short_grad, out_idx=[4, 5], **CPU)
    with pytest.raises(ValueError, match=r"backward output GW is the gradient of the forward's input W and must have "
                                         r"its shape \[8\], but has shape \[5\]"):
        custom_op(scale_forward(COLS), name="tl_short_dw", backward=bwd, directory=tmp_path / "op")


def test_a_gradient_with_another_symbolic_size_is_refused(tmp_path):
    """dX must follow X's rows: a gradient sized by another symbol of the backward's is a different shape."""
    from test_custom_op import T

    rows, other = T.dynamic("rows"), T.dynamic("other")

    @T.prim_func
    def skewed(X: T.Tensor((rows, COLS), "float32"), W: T.Tensor((COLS,), "float32"),
               Y: T.Tensor((other, COLS), "float32"), GY: T.Tensor((other, COLS), "float32"),
               GX: T.Tensor((other, COLS), "float32"), GW: T.Tensor((COLS,), "float32")):
        with T.Kernel(1) as _:
            for j in T.serial(COLS):
                GW[j] = 0.0

    bwd = tilelang.compile(skewed, out_idx=[4, 5], **CPU)
    # other is bound by Y, the forward's output Y of shape [rows, 8]: in the forward's terms that is rows, so
    # this one is accepted; the check compares shapes in the forward's terms, not by symbol names.
    op = custom_op(scale_forward(COLS), name="tl_skewed_ok", backward=bwd, directory=tmp_path / "op")
    assert op.op_name == "tl_skewed_ok"


def test_the_same_op_twice_returns_the_registered_one_and_other_kernels_are_refused(tmp_path):
    first = custom_op(scale_forward(COLS), name="tl_twice", directory=tmp_path / "a")
    assert custom_op(scale_forward(COLS), name="tl_twice", directory=tmp_path / "a") is first
    with pytest.raises(ValueError, match=r"an operator named 'tl_twice' with other kernels is already registered"):
        custom_op(scale_forward(COLS + 1), name="tl_twice", directory=tmp_path / "b")
