"""Tensor creation: kernel outputs, test-input supply, and the closeness check.

Test inputs are drawn on the target device by the driver's random draws
(Paddle's ``_C_ops.randint``/``uniform``/``gaussian`` with an explicit place), in int64 or
float32, then cast there: those are the dtypes every Paddle build registers
the random kernels for (the CPU build lacks them for float16, bfloat16, int8,
bool, uint32, uint64 among others), and the cast kernel covers the rest. So
every dtype gets upstream's value rules, nothing crosses from the host, and
``paddle.seed`` makes the draws reproducible.
"""

from __future__ import annotations

import numpy as np
import paddle

from .device import CUDA_BUILD, current_device, current_device_index, device_of
from .driver import paddle_driver
from .dtypes import to_paddle

_DRIVER = paddle_driver()


def place_of(device):
    """A Paddle Place for a tensor/Device/DeviceSpec/str/int (the driver's, cached per device).

    A GPU without an index ("cuda", "gpu") means the current GPU
    (``paddle.set_device``), as torch's "cuda" means its current device; it is
    resolved per call, never cached as GPU 0.
    """
    spec = device_of(device)
    if spec.type == "cuda":
        if not CUDA_BUILD:
            raise RuntimeError(f"cannot create a tensor on {spec}: this Paddle is a CPU-only build (install "
                               "paddlepaddle-gpu)")
        return _DRIVER.place(spec.index if spec.index is not None else current_device_index())
    if spec.type == "cpu":
        return _DRIVER.place(-1)
    raise ValueError(f"tilelang-paddle cannot allocate tensors on device {spec.type!r} (supported: cpu, cuda)")


def empty(shape, dtype, device):
    """Uninitialised Paddle tensor of ``shape``/``dtype`` on ``device`` (kernel outputs)."""
    return _DRIVER.allocate(list(shape), dtype, place_of(device))


def _cast(values, dtype):
    return values if values.dtype is dtype else values.astype(dtype)


def _ints(low: int, high: int, shape, dtype, place):
    """Integers in [low, high) as ``dtype``: drawn in int64 on ``place``, cast there."""
    return _cast(_DRIVER.randint(low, high, shape, place), dtype)


def _floats(draw, shape, dtype, place):
    return _cast(draw(shape, place), dtype)


_FLOAT_DRAWS = {
    "Uniform": lambda shape, place: _DRIVER.uniform(shape, -1.0, 1.0, place),
    # Upstream draws normal_(mean=-1.0, std=1.0); kept for identical distributions.
    "Normal": lambda shape, place: _DRIVER.normal(shape, -1.0, 1.0, place),
    "Randn": lambda shape, place: _DRIVER.normal(shape, 0.0, 1.0, place),
}


def _integer_rule(param, shape, dtype, place):
    if param.is_unsigned():
        return _ints(0, 3, shape, dtype, place)
    if param.is_float8():
        return _ints(-128, 128, shape, paddle.int8, place).astype(dtype)
    if param.is_float4():
        return _ints(0, 16, shape, dtype, place)
    if param.is_boolean():
        return _ints(0, 2, shape, dtype, place)
    return _ints(-2, 3, shape, dtype, place)


def make_tensor(param, supply: str, device=None):
    """One input for ``param`` following upstream's ``TensorSupplyType`` rules (``supply`` is its name)."""
    dtype = to_paddle(param.dtype)
    place = place_of(device if device is not None else current_device())
    if not param.shape:
        raise ValueError(
            f"TensorType must have a shape, but got {type(param)}, "
            "likely you are trying to generate a random tensor with a dynamic symbolic shape."
        )
    for dim in param.shape:
        if not isinstance(dim, (int, np.integer)) and not hasattr(dim, "value"):
            raise ValueError(
                f"TensorType must have a static shape, but got {dim}, "
                "likely you are trying to generate a random tensor with a dynamic symbolic shape."
            )
    shape = [int(d) for d in param.shape]
    if supply == "Auto":
        floating = dtype in (paddle.float16, paddle.float32, paddle.bfloat16) and not param.is_float8()
        supply = "Uniform" if floating else "Integer"
    elif dtype == paddle.int8 and supply in ("Uniform", "Normal"):
        supply = "One"  # upstream's rule for int8
    if supply in _FLOAT_DRAWS:
        return _floats(_FLOAT_DRAWS[supply], shape, dtype, place)
    if supply == "Integer":
        return _integer_rule(param, shape, dtype, place)
    if supply == "Zero":
        return _ints(0, 1, shape, dtype, place)
    if supply == "One":
        return _ints(1, 2, shape, dtype, place)
    raise NotImplementedError(supply)


def get_tensor_supply(supply_type=None):
    """Replacement for upstream ``tilelang.utils.tensor.get_tensor_supply`` (Paddle tensors)."""
    name = "Integer" if supply_type is None else supply_type.name

    def get_tensor(param):
        return make_tensor(param, name)

    return get_tensor


def _to_common(a, b):
    if _DRIVER.gpu_of(a) != _DRIVER.gpu_of(b):
        a, b = a.cpu(), b.cpu()
    if a.dtype != b.dtype or a.dtype not in (paddle.float32, paddle.float64):
        # Compare in float64 (covers float8/bfloat16/unsigned without Paddle's promotion gaps).
        a, b = a.astype(paddle.float64), b.astype(paddle.float64)
    return a, b


def assert_close(
    tensor_a,
    tensor_b,
    rtol=1e-2,
    atol=1e-3,
    max_mismatched_ratio=0.001,
    verbose: bool = False,
    equal_nan: bool = True,
    check_device: bool = True,
    check_dtype: bool = True,
    check_layout: bool = True,
    check_stride: bool = False,
    base_name: str = "LHS",
    ref_name: str = "RHS",
):
    """Paddle version of upstream ``torch_assert_close``: allow ``max_mismatched_ratio`` mismatches."""
    if list(tensor_a.shape) != list(tensor_b.shape):
        raise AssertionError(f"The values for attribute 'shape' do not match: {tensor_a.shape} != {tensor_b.shape}.")
    if check_device and _DRIVER.gpu_of(tensor_a) != _DRIVER.gpu_of(tensor_b):
        raise AssertionError(f"The values for attribute 'device' do not match: {_DRIVER.place_of(tensor_a)} != "
                             f"{_DRIVER.place_of(tensor_b)}.")
    if check_dtype and tensor_a.dtype != tensor_b.dtype:
        raise AssertionError(f"The values for attribute 'dtype' do not match: {tensor_a.dtype} != {tensor_b.dtype}.")
    if check_stride and tensor_a.strides != tensor_b.strides:
        raise AssertionError(f"The values for attribute 'stride()' do not match: {tensor_a.strides} != {tensor_b.strides}.")
    a, b = _to_common(tensor_a, tensor_b)
    a_np, b_np = a.numpy(), b.numpy()
    mismatched = ~np.isclose(a_np, b_np, rtol=rtol, atol=atol, equal_nan=equal_nan)
    num_mismatched = int(mismatched.sum())
    total = a_np.size
    allowed = int(total * max_mismatched_ratio)
    if verbose:
        print(f"Number of mismatched elements: {num_mismatched} / {total} (allowed: {allowed})")
    if num_mismatched > allowed:
        flat = int(np.argmax(mismatched.reshape(-1)))
        idx = [int(i) for i in np.unravel_index(flat, a_np.shape)]
        av, bv = float(a_np.reshape(-1)[flat]), float(b_np.reshape(-1)[flat])
        diff = np.abs(a_np - b_np)
        raise AssertionError(
            f"Too many mismatched elements: {num_mismatched} > {allowed} "
            f"({max_mismatched_ratio * 100:.2f}% allowed, but get {num_mismatched / total * 100:.2f}%)."
            f"\nFirst mismatch at index {idx}: lhs={av:.6f}, rhs={bv:.6f}, abs_diff={abs(av - bv):.6f}"
            f"\nGreatest absolute difference: {np.nanmax(diff)}, "
            f"Greatest relative difference: {np.nanmax(diff / (np.abs(b_np) + 1e-12))}"
            f"\n{base_name}: {tensor_a}\n{ref_name}: {tensor_b}"
        )
    return True
