"""Capability detection of the Paddle APIs whose shape differs between Paddle 3.3.1 and develop (docs/paddle-seams.md).

Each seam is checked against Paddle 3.3.1's real object and against the other shape, built from the same real
values (the exchange API's real address, Paddle's real functions) in the holder develop uses; no Paddle 3.4
build can be installed here.
"""

import ctypes
import types

import paddle
import pytest

import tilelang  # noqa: F401 - sets up the control plane
from tilelang.paddle_runtime import seams

from conftest import run_python


def test_the_exchange_api_is_found_in_every_shape():
    capsule = paddle.Tensor.__dlpack_c_exchange_api__
    address = seams.exchange_api_pointer(paddle.Tensor)
    assert address and ctypes.c_uint32.from_address(address).value == 1  # DLPackExchangeAPI header: major 1
    shapes = {
        "capsule, DLPack 1.3 name": {"__dlpack_c_exchange_api__": capsule},
        "capsule, old name": {"__c_dlpack_exchange_api__": capsule},
        "int address, old name (develop)": {"__c_dlpack_exchange_api__": address},
        "int address, DLPack 1.3 name": {"__dlpack_c_exchange_api__": address},
    }
    for name, attrs in shapes.items():
        assert seams.exchange_api_pointer(type("T", (), attrs)) == address, name
    assert seams.exchange_api_pointer(type("T", (), {})) is None
    assert seams.exchange_api_pointer(type("T", (), {"__dlpack_c_exchange_api__": object()})) is None


def test_the_fast_launcher_binds_the_address():
    from tilelang.paddle_runtime import fast_launch

    assert fast_launch._API_MAJOR == 1


def test_the_proxy_enabling_function_in_both_shapes():
    assert seams.enable_torch_proxy(paddle) is paddle.enable_compat
    old_style = types.SimpleNamespace(__version__="3.2.0",
                                      compat=types.SimpleNamespace(enable_torch_proxy=paddle.compat.enable_torch_proxy))
    assert seams.enable_torch_proxy(old_style) is paddle.compat.enable_torch_proxy
    new_style = types.SimpleNamespace(__version__="0.0.0", enable_compat=paddle.enable_compat,
                                      compat=types.SimpleNamespace())
    assert seams.enable_torch_proxy(new_style) is paddle.enable_compat
    with pytest.raises(ImportError, match=r"needs paddle.enable_compat .* Paddle 2.6.2 does not have"):
        seams.enable_torch_proxy(types.SimpleNamespace(__version__="2.6.2"))


def test_proxy_coverage_reads_the_finder_or_says_it_cannot():
    from paddle.compat import proxy

    assert seams.proxy_coverage(proxy.TORCH_PROXY_FINDER, "tilelang") is True  # imported above
    assert seams.proxy_coverage(types.SimpleNamespace(_globally_enabled=False, _local_enabled_scope={"x"}),
                                "tilelang") is False
    assert seams.proxy_coverage(types.SimpleNamespace(_globally_enabled=True, _local_enabled_scope=set()),
                                "tilelang") is True
    assert seams.proxy_coverage(object(), "tilelang") is None


def test_the_expected_place_in_both_shapes():
    assert seams.expected_place(paddle) is paddle.base.framework._current_expected_place_
    only_public = types.SimpleNamespace(framework=types.SimpleNamespace(
        _current_expected_place=paddle.framework._current_expected_place))
    assert seams.expected_place(only_public)().is_cpu_place()
    with pytest.raises(RuntimeError, match=r"Paddle 9.9 has neither paddle.base.framework._current_expected_place_ "
                                           r"nor paddle.framework._current_expected_place"):
        seams.expected_place(types.SimpleNamespace(__version__="9.9"))


def test_paddlefleets_old_style_proxy_call_then_tilelang():
    """PaddleFleet's ops/tilelang_dsv4/compat.py enables the proxy with the old name, then imports tilelang."""
    if not hasattr(paddle.compat, "enable_torch_proxy"):
        pytest.skip("this Paddle has no paddle.compat.enable_torch_proxy (removed on develop)")
    proc = run_python("""
        import numpy as np, paddle
        paddle.compat.enable_torch_proxy(scope={"tilelang", "paddlefleet.ops.tilelang_dsv4"}, silent=True)
        import tilelang, tilelang.language as T

        @T.prim_func
        def add(A: T.Tensor((8,), "float32"), B: T.Tensor((8,), "float32"), C: T.Tensor((8,), "float32")):
            with T.Kernel(1, threads=1) as bx:
                for i in T.serial(8):
                    C[i] = A[i] + B[i]

        k = tilelang.compile(add, out_idx=[2], target="c", execution_backend="cython")
        a, b = np.random.rand(8).astype("float32"), np.random.rand(8).astype("float32")
        np.testing.assert_allclose(k(paddle.to_tensor(a), paddle.to_tensor(b)).numpy(), a + b, rtol=1e-6)
        from paddle.compat import proxy
        print("scope", sorted(proxy.TORCH_PROXY_FINDER._local_enabled_scope))
    """)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    assert "scope ['paddlefleet.ops.tilelang_dsv4', 'tilelang']" in proc.stdout


def test_a_globally_enabled_proxy_stays_global_after_import():
    proc = run_python("""
        import paddle
        paddle.enable_compat(silent=True)
        import tilelang
        import torch
        from paddle.compat import proxy
        print("global", proxy.TORCH_PROXY_FINDER._globally_enabled, torch.sin is paddle.sin)
    """)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    assert "global True True" in proc.stdout
