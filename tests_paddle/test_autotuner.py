"""Autotuning on Paddle (patch 0014): one GPU at a time; upstream's single-device fallbacks unchanged."""

from tilelang.autotuner.tuner import AutoTuner


def _tuner():
    return AutoTuner.from_kernel(kernel=lambda block: None, configs=[{"block": 32}])


def test_multi_gpu_request_on_a_cpu_target_falls_back_to_one_device():
    # Upstream warns and benchmarks on the one current device; the patch must not raise here.
    assert _tuner()._resolve_benchmark_devices(benchmark_multi_gpu=True, benchmark_devices=[0, 1], target_kind="c") \
        == (False, [0])


def test_multi_gpu_request_without_cuda_falls_back_to_one_device():
    # CPU-only Paddle: torch.cuda.is_available() is False under the proxy, so upstream's fallback applies.
    import paddle

    if paddle.is_compiled_with_cuda() and paddle.device.cuda.device_count() > 1:
        import pytest

        pytest.skip("Paddle sees several GPUs: the refusal applies (tests_paddle/test_gpu.py)")
    assert _tuner()._resolve_benchmark_devices(benchmark_multi_gpu=True, benchmark_devices=None, target_kind="cuda") \
        == (False, [0])


def test_single_gpu_resolution_is_unchanged():
    assert _tuner()._resolve_benchmark_devices(benchmark_multi_gpu=False, benchmark_devices=None, target_kind="cuda") \
        == (False, [0])
