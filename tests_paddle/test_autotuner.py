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


def test_tuning_shows_one_progress_line_and_logs_each_config(tmp_path):
    """Patch 0035: one bar (no second "Bench configurations" bar), per-config times in autotuner.log."""
    from conftest import run_python

    proc = run_python("""
        import tilelang
        import tilelang.language as T

        @tilelang.autotune(configs=[{"block": b} for b in (32, 64, 128)])
        @tilelang.jit(out_idx=[1], target="c", execution_backend="cython")
        def double(N, block=32):
            @T.prim_func
            def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
                with T.Kernel(T.ceildiv(N, block)) as bx:
                    for i in T.serial(block):
                        B[bx * block + i] = A[bx * block + i] * 2.0
            return main

        print("picked", double(1024).config)
    """, cwd=str(tmp_path), env={"TILELANG_CACHE_DIR": str(tmp_path / "kc")})
    assert proc.returncode == 0, proc.stderr[-3000:]
    shown = proc.stdout + proc.stderr
    assert "picked {'block':" in proc.stdout
    assert "Tuning: compiled 3/3, benchmarked" in shown, shown[-3000:]
    assert "Bench configurations" not in shown and "Compiling configurations" not in shown, shown[-3000:]
    assert "Tuned Latency" not in shown and "Benchmark timeout is enforced" not in shown, shown[-3000:]
    assert "Auto-tuning with" not in shown and " INFO:" not in shown, shown[-3000:]    # patch 0044
    log = (tmp_path / "autotuner.log").read_text()
    assert log.count("Tuned Latency") == 3, log
