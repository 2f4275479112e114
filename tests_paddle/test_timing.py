"""do_bench's reductions and backends on Paddle (GPU timing itself: test_gpu.py)."""

import numpy as np
import paddle
import pytest

from tilelang.paddle_runtime import timing
from tilelang.profiler import do_bench

HAS_GPU = paddle.is_compiled_with_cuda() and paddle.device.cuda.device_count() > 0


def test_paddle_quantile_of_one_value_is_a_float():
    """Why patch 0013 exists: upstream's `len(torch.quantile(t, tensor([q])).tolist())` fails on Paddle."""
    out = paddle.quantile(paddle.to_tensor([1.0, 2.0, 3.0]), paddle.to_tensor([0.5])).tolist()
    assert isinstance(out, float)


@pytest.mark.parametrize("quantiles", [[0.5], [0.2], [0.1, 0.5, 0.9], [0.0, 1.0]])
def test_quantiles_match_numpy_linear(quantiles):
    times = list(np.random.rand(np.random.randint(5, 40)) * 3.0)
    got = timing.aggregate(times, quantiles, "mean")
    want = np.quantile(times, quantiles, method="linear")
    if len(quantiles) == 1:
        assert isinstance(got, float)
        assert got == pytest.approx(float(want[0]))
    else:
        assert got == pytest.approx(list(want))


def test_return_modes_follow_torch():
    times = list(np.random.rand(10))  # even count: torch.median takes the lower middle value
    ordered = sorted(times)
    assert timing.aggregate(times, None, "median") == ordered[4]
    assert timing.aggregate(times, None, "min") == ordered[0]
    assert timing.aggregate(times, None, "max") == ordered[-1]
    assert timing.aggregate(times, None, "mean") == pytest.approx(float(np.mean(times)))


def test_aggregate_errors_name_the_problem():
    with pytest.raises(ValueError, match="return_mode must be one of"):
        timing.aggregate([1.0], None, "p99")
    with pytest.raises(ValueError, match="quantiles must be between 0 and 1, got 1.5"):
        timing.aggregate([1.0, 2.0], [1.5], "mean")
    with pytest.raises(ValueError, match="no timings"):
        timing.aggregate([], None, "mean")


def test_cupti_backend_is_refused_naming_what_works():
    with pytest.raises(NotImplementedError, match=r'backend="cupti".*torch.profiler.*"event".*"cudagraph".*"wall"'):
        do_bench(lambda: None, backend="cupti")


@pytest.mark.skipif(HAS_GPU, reason="Paddle sees a GPU: the cudagraph backend runs (test_gpu.py)")
def test_cudagraph_without_a_gpu_is_refused_before_running_anything():
    calls = []
    with pytest.raises(RuntimeError, match=r'backend="cudagraph".*GPU build of Paddle.*backend="wall"'):
        do_bench(lambda: calls.append(1), backend="cudagraph")
    assert calls == []


def test_wall_backend_one_quantile_is_a_float():
    out = do_bench(lambda: sum(range(100)), backend="wall", quantiles=[0.5], _n_warmup=1, _n_repeat=5)
    assert isinstance(out, float) and out > 0
