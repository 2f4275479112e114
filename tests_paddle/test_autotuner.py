"""Autotuning on Paddle: one GPU only (patch 0014)."""

import pytest

from tilelang.autotuner.tuner import AutoTuner


def test_multi_gpu_benchmarking_is_refused_with_a_reason():
    tuner = AutoTuner.from_kernel(kernel=lambda block: None, configs=[{"block": 32}])
    with pytest.raises(ValueError, match=r"benchmark_multi_gpu=True is not supported on Paddle.*process-wide.*CUDA_VISIBLE_DEVICES"):
        tuner._resolve_benchmark_devices(benchmark_multi_gpu=True, benchmark_devices=[0, 1], target_kind="cuda")


def test_single_gpu_resolution_is_unchanged():
    tuner = AutoTuner.from_kernel(kernel=lambda block: None, configs=[{"block": 32}])
    assert tuner._resolve_benchmark_devices(benchmark_multi_gpu=False, benchmark_devices=None, target_kind="cuda") == (False, [0])
