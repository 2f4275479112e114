"""Paddle <-> tvm-ffi tensors: zero-copy, views keep strides and offset, both ways."""

import numpy as np
import paddle
import pytest
import tvm_ffi

import tilelang  # noqa: F401
from tilelang.paddle import from_tvm, to_tvm


@pytest.mark.parametrize("view", ["whole", "transpose", "row_slice", "column_slice"])
def test_round_trip_is_zero_copy(view):
    base = paddle.randn([6, 8])
    t = {"whole": lambda b: b, "transpose": lambda b: b.transpose([1, 0]),
         "row_slice": lambda b: b[2:5], "column_slice": lambda b: b[:, 3:7]}[view](base)
    tv = to_tvm(t)
    assert tuple(tv.shape) == tuple(t.shape)
    assert list(tv.strides) == list(t.strides)
    back = from_tvm(tv)
    assert back.data_ptr() == t.data_ptr()  # same memory, offset included
    assert list(back.strides) == list(t.strides)
    np.testing.assert_array_equal(back.numpy(), t.numpy())
    base.add_(paddle.ones_like(base))  # writes through the original are visible in the round-trip view
    np.testing.assert_array_equal(back.numpy(), t.numpy())


def test_tensor_requiring_grad_is_exported_detached():
    x = paddle.randn([3, 3])
    x.stop_gradient = False
    assert from_tvm(to_tvm(x)).data_ptr() == x.data_ptr()


def test_tvm_ffi_functions_take_paddle_tensors_through_the_c_exchange_api():
    assert hasattr(paddle.Tensor, "__dlpack_c_exchange_api__")
    seen = {}

    @tvm_ffi.register_global_func("tilelang_paddle.testing.inspect", override=True)
    def _inspect(t):
        seen["shape"], seen["strides"] = tuple(t.shape), tuple(t.strides)
        return t

    x = paddle.randn([4, 5])[1:3]
    out = tvm_ffi.get_global_func("tilelang_paddle.testing.inspect")(x)
    assert seen == {"shape": (2, 5), "strides": (5, 1)}
    assert from_tvm(out).data_ptr() == x.data_ptr()


def test_helpers_name_the_bad_argument():
    with pytest.raises(TypeError, match=r"to_tvm\(tensor\): expected a paddle.Tensor, got ndarray"):
        to_tvm(np.zeros(3))
    with pytest.raises(TypeError, match=r"from_tvm\(tensor\): expected an object with __dlpack__, got int"):
        from_tvm(3)
