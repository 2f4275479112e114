"""dtype mapping, the tensor-supply matrix and assert_close, on real Paddle tensors."""

import itertools

import numpy as np
import paddle
import pytest

import tilelang.language as T
from tilelang.engine.param import KernelParam
from tilelang.paddle_runtime import dtypes as pd_dtypes
from tilelang.utils.tensor import TensorSupplyType, get_tensor_supply, torch_assert_close

SUPPLY_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                 "float16", "bfloat16", "float32", "float64", "float8_e4m3fn", "float8_e5m2"]
SHAPE = [8, 64]


@pytest.mark.parametrize("name", pd_dtypes.paddle_dtypes())
def test_dtype_maps_both_ways_by_identity(name):
    pd = getattr(paddle, name)
    assert pd_dtypes.to_paddle(name) is pd
    assert pd_dtypes.from_paddle(pd) == name
    if name.startswith("complex"):
        return  # TileLang itself has no complex dtypes
    assert T.dtype(name).as_torch() is pd
    assert str(T.dtype(pd)) == name


def test_uint16_is_not_bfloat16():
    assert str(paddle.uint16) == "paddle.bfloat16"  # the trap this module exists for
    assert T.dtype("uint16").as_torch() is paddle.uint16
    assert str(T.dtype(paddle.uint16)) == "uint16" and str(T.dtype(paddle.bfloat16)) == "bfloat16"


@pytest.mark.parametrize("name", ["float8_e8m0fnu", "float4_e2m1fnx2", "float8_e4m3fnuz"])
def test_dtypes_paddle_lacks_raise_naming_the_dtype(name):
    with pytest.raises(TypeError, match=f"TileLang dtype {name} .*has no PaddlePaddle equivalent"):
        pd_dtypes.to_paddle(name)


def _values(t: paddle.Tensor) -> np.ndarray:
    return t.astype("float64").numpy()


@pytest.mark.parametrize("supply,name", list(itertools.product(TensorSupplyType, SUPPLY_DTYPES)),
                         ids=lambda v: getattr(v, "name", v))
def test_supply_matrix(supply, name):
    param = KernelParam(T.dtype(name), list(SHAPE))
    t = get_tensor_supply(supply)(param)
    assert isinstance(t, paddle.Tensor)
    assert t.dtype is getattr(paddle, name), (t.dtype, name)
    assert list(t.shape) == SHAPE and t.place.is_cpu_place()
    v = _values(t)
    assert np.isfinite(v).all()
    is_float = name.startswith(("float", "bfloat"))
    is_f8 = name.startswith("float8")
    kind = supply.name
    if kind == "Auto":
        kind = "Uniform" if name in ("float16", "float32", "bfloat16") else "Integer"
    if name == "int8" and kind in ("Uniform", "Normal"):
        kind = "One"  # upstream's rule for int8
    if kind == "Zero":
        assert (v == 0).all()
    elif kind == "One":
        assert (v == 1).all()
    elif kind == "Integer":
        # upstream: unsigned/bool in [0, 3)/[0, 2); float8 from int8 (127 rounds to 128 in e4m3); else [-2, 3)
        lo, hi = (0, 1) if name == "bool" else (0, 2) if name.startswith("uint") else (-128, 128) if is_f8 else (-2, 2)
        assert v.min() >= lo and v.max() <= hi and (v == np.round(v)).all()
        assert len(np.unique(v)) > 1  # random, not constant
    elif not is_float:
        # Uniform/Normal/Randn on integer dtypes: upstream casts float draws, truncating.
        info = np.iinfo(np.int64) if name != "bool" else None
        assert info is None or ((v >= info.min) & (v <= np.iinfo(np.uint64).max)).all()
    elif kind == "Uniform":
        assert v.min() >= -1.0 and v.max() <= 1.0 and len(np.unique(v)) > 1
    else:  # Normal / Randn on float dtypes: real draws
        assert len(np.unique(v)) > 1 and v.std() > 0.3


def test_assert_close_accepts_near_and_reports_far():
    a = paddle.randn([32, 32])
    assert torch_assert_close(a, a + 1e-6, rtol=1e-3, atol=1e-3)
    b = a.clone()
    b[3, 5] = b[3, 5] + 10.0
    torch_assert_close(a, b, rtol=1e-3, atol=1e-3, max_mismatched_ratio=0.01)  # 1 of 1024 allowed
    with pytest.raises(AssertionError, match=r"(?s)Too many mismatched elements: 1 > 0.*First mismatch at index \[3, 5\]"):
        torch_assert_close(a, b, rtol=1e-3, atol=1e-3, max_mismatched_ratio=0.0)
    with pytest.raises(AssertionError, match="attribute 'dtype'"):
        torch_assert_close(a, a.astype("float64"))
    assert torch_assert_close(a.astype("bfloat16"), a.astype("bfloat16"))


def test_testing_helpers_on_paddle():
    import tilelang.testing

    tilelang.testing.set_random_seed(1234)
    a = paddle.randn([16])
    tilelang.testing.set_random_seed(1234)
    b = paddle.randn([16])
    np.testing.assert_array_equal(a.numpy(), b.numpy())  # the seed reaches Paddle's generator
    assert tilelang.testing.torch_assert_close(a, b)
    with pytest.raises(AssertionError, match="Too many mismatched elements"):
        tilelang.testing.torch_assert_close(a, b + 1.0, max_mismatched_ratio=0.0)


@pytest.mark.parametrize("supply", ["Uniform", "Normal", "Randn", "Integer"])
def test_supply_draws_on_the_device_and_follows_paddle_seed(supply):
    """Inputs come from Paddle's own random ops on the target place: paddle.seed reproduces them."""
    from tilelang.paddle_runtime.tensors import make_tensor

    param = KernelParam(T.dtype("float32"), [64, 64])
    paddle.seed(1234)
    first = make_tensor(param, supply).numpy()
    paddle.seed(1234)
    again = make_tensor(param, supply).numpy()
    paddle.seed(4321)
    other = make_tensor(param, supply).numpy()
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)
    if supply == "Uniform":
        assert first.min() >= -1.0 and first.max() <= 1.0 and first.std() > 0.4
    if supply == "Normal":
        assert abs(first.mean() + 1.0) < 0.1 and abs(first.std() - 1.0) < 0.1
    if supply == "Randn":
        assert abs(first.mean()) < 0.1 and abs(first.std() - 1.0) < 0.1
    if supply == "Integer":
        assert set(np.unique(first)) <= {-2.0, -1.0, 0.0, 1.0, 2.0}


def test_cuda_without_a_gpu_build_is_refused_clearly():
    from tilelang.paddle_runtime import tensors
    from tilelang.paddle_runtime.device import CUDA_BUILD

    if CUDA_BUILD:
        pytest.skip("a GPU build of Paddle: covered by test_gpu.py")
    for spec in ("cuda", "cuda:1", "gpu"):
        with pytest.raises(RuntimeError, match=r"cannot create a tensor on cuda.*CPU-only build"):
            tensors.empty([2], paddle.float32, spec)
