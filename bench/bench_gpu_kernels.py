"""The examples' CUDA kernels against Paddle's own ops, on a GPU Paddle sees.

    python bench/bench_gpu_kernels.py [--quick]

Shapes and references are those of the "GPU kernels" table in docs/performance.md:
GEMM (``examples/quickstart.py`` ``gemm_cuda``, its Hopper defaults) against
``paddle.matmul`` at 1024/2048/4096/8192 cubed in float16 and bfloat16;
flash-attention forward (``examples/flash_attention.py``) against
``paddle.nn.functional.scaled_dot_product_attention`` at b4 h16 s4096 d128 and
b2 h8 s1024 d64, causal and not; decode attention (``flash_decode_fwd``, one query
token over 4096-32768 cached keys, 8-32 heads) against the same SDPA; row softmax and RMSNorm at 16384x4096 float16
against ``paddle.nn.functional.softmax`` and the RMSNorm formula in Paddle ops,
with a device-to-device copy as the bandwidth ceiling. Each kernel is checked
for correctness first.

Timing: ``reps`` back-to-back calls between two ``paddle.device.Event``s, median
of 5 such samples (the launch is asynchronous and our launcher's host cost,
about 2 us, is below every kernel's time here).

Not run in this project's CI or by its developers: no GPU build of Paddle 3.x
could be installed where it was written. The numbers in docs/performance.md were measured
with upstream tilelang 0.1.15 on torch on an H200, the same kernels and shapes.
"""

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))

import paddle  # noqa: E402

import tilelang  # noqa: E402
from flash_attention import (  # noqa: E402
    decode_splits, flash_attention_fwd, flash_decode_fwd, reference as attention_reference, sm_count)
from quickstart import gemm_cuda  # noqa: E402
from rmsnorm import reference as rmsnorm_reference, rmsnorm_cuda  # noqa: E402
from softmax import softmax_cuda  # noqa: E402


def device_ms(fn, reps=20, samples=5) -> float:
    for _ in range(3):
        fn()
    paddle.device.synchronize()
    times = []
    for _ in range(samples):
        start, end = paddle.device.Event(enable_timing=True), paddle.device.Event(enable_timing=True)
        start.record()
        for _ in range(reps):
            fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / reps)
    return statistics.median(times)


def row(name, shape, ours_ms, ref_ms, unit, work, ref_name):
    """``work`` in FLOP or bytes: work / ms / 1e9 is TFLOP/s or TB/s."""
    ours, ref = work / ours_ms / 1e9, work / ref_ms / 1e9
    print(f"{name:22} {shape:26} {ours:8.1f} {unit}  {ref_name} {ref:8.1f} {unit}  ratio {ref_ms / ours_ms:5.2f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the smaller shapes only")
    args = parser.parse_args()
    if not (paddle.is_compiled_with_cuda() and paddle.device.cuda.device_count() > 0):
        print("Paddle sees no GPU (install paddlepaddle-gpu>=3.3 on a machine with one); nothing to time")
        return 0
    paddle.set_device("gpu")
    print(f"{paddle.device.cuda.get_device_name()}, Paddle {paddle.__version__}, tilelang {tilelang.__version__}; "
          "ratio = reference time / TileLang time")
    sizes = (1024, 2048) if args.quick else (1024, 2048, 4096, 8192)
    for dtype in ("float16", "bfloat16"):
        for n in sizes:
            kernel = tilelang.compile(gemm_cuda(n, n, n, dtype=dtype), out_idx=[2])
            a, b = paddle.randn([n, n]).astype(dtype), paddle.randn([n, n]).astype(dtype)
            ref = paddle.matmul(a.astype("float32"), b.astype("float32"))
            err = float((kernel(a, b).astype("float32") - ref).abs().max() / ref.abs().max())
            assert err < 2e-2, f"GEMM {dtype} {n}: relative error {err}"
            row(f"GEMM {dtype}", f"{n}^3", device_ms(lambda: kernel(a, b)), device_ms(lambda: paddle.matmul(a, b)),
                "TFLOP/s", 2 * n**3, "paddle.matmul")
    # Decode shapes (M <= 16 takes gemm_config's 16-row schedule, K split over a 2-block cluster where the
    # column panels are few: N = 2048 and 2047 here, on Hopper): time per call, B streamed once.
    decode = [(1, 4096, 4096), (16, 2048, 7168)] if args.quick else \
        [(m, n, k) for (n, k) in ((4096, 4096), (7168, 2048), (2048, 7168)) for m in (1, 2, 4, 8, 16)]
    for dtype in ("float16", "bfloat16"):
        for m, n, k in decode + [(3, 4095, 1000), (5, 2047, 7001)]:
            kernel = tilelang.compile(gemm_cuda(m, n, k, dtype=dtype), out_idx=[2])
            a, b = paddle.randn([m, k]).astype(dtype), paddle.randn([k, n]).astype(dtype)
            ref = paddle.matmul(a.astype("float32"), b.astype("float32"))
            err = float((kernel(a, b).astype("float32") - ref).abs().max() / ref.abs().max())
            assert err < 2e-2, f"decode GEMM {dtype} {(m, n, k)}: relative error {err}"
            row(f"GEMM {dtype}", f"M={m} N={n} K={k}", device_ms(lambda: kernel(a, b)),
                device_ms(lambda: paddle.matmul(a, b)), "TB/s", 2 * k * n, "paddle.matmul")
    shapes = [(2, 8, 1024, 64)] + ([] if args.quick else [(4, 16, 4096, 128)])
    sdpa = paddle.nn.functional.scaled_dot_product_attention
    for b, h, s, d in shapes:
        q, k, v = (paddle.randn([b, s, h, d]).astype("float16") for _ in range(3))
        for causal in (False, True):
            kernel = tilelang.compile(flash_attention_fwd(b, h, s, d, causal), out_idx=[3])
            err = float((kernel(q, k, v).astype("float32") - attention_reference(q, k, v, causal)).abs().max())
            assert err < 2e-2, f"attention {(b, h, s, d, causal)}: max error {err}"
            flops = 4 * b * h * s * s * d * (0.5 if causal else 1)
            row(f"attention{' causal' if causal else ''}", f"b{b} h{h} s{s} d{d}", device_ms(lambda: kernel(q, k, v)),
                device_ms(lambda: sdpa(q, k, v, is_causal=causal)), "TFLOP/s", flops, "SDPA")
    decode = [(1, 8, 4096), (4, 16, 4096)] if args.quick else \
        [(1, 8, 4096), (1, 8, 32768), (1, 32, 4096), (1, 32, 32768), (4, 16, 4096), (4, 16, 16384), (8, 32, 8192),
         (16, 8, 32768)]
    for b, h, s in decode:
        splits = decode_splits(b, h, s, sms=sm_count())
        kernel = tilelang.compile(flash_decode_fwd(b, h, s, 128, splits=splits), out_idx=[5])
        q = paddle.randn([b, h, 128]).astype("float16")
        k, v = (paddle.randn([b, s, h, 128]).astype("float16") for _ in range(2))
        lse_part, o_part = paddle.empty([b, h, splits], "float32"), paddle.empty([b, h, splits, 128], "float32")
        ref = attention_reference(q.unsqueeze(1), k, v, False).squeeze(1)
        err = float((kernel(q, k, v, lse_part, o_part).astype("float32") - ref).abs().max())
        assert err < 2e-2, f"decode attention {(b, h, s)}: max error {err}"
        q1 = q.unsqueeze(1)
        row("decode attention", f"b{b} h{h} kv{s} d128", device_ms(lambda: kernel(q, k, v, lse_part, o_part)),
            device_ms(lambda: sdpa(q1, k, v)), "TB/s", 2 * b * s * h * 128 * 2, "SDPA")
    rows, cols = (4096, 4096) if args.quick else (16384, 4096)
    x = paddle.randn([rows, cols]).astype("float16")
    w = paddle.randn([cols]).astype("float16")
    nbytes = 2 * x.numel().item() * 2  # read + write
    copy_ms = device_ms(lambda: paddle.assign(x))
    print(f"{'copy (ceiling)':22} {f'{rows}x{cols}':26} {nbytes / copy_ms / 1e9:8.2f} TB/s")
    sm = tilelang.compile(softmax_cuda(cols), out_idx=[1])
    err = float((sm(x).astype("float32") - paddle.nn.functional.softmax(x.astype("float32"), -1)).abs().max())
    assert err < 1e-2, f"softmax: max error {err}"
    row("softmax", f"{rows}x{cols}", device_ms(lambda: sm(x)), device_ms(lambda: paddle.nn.functional.softmax(x, -1)),
        "TB/s", nbytes, "paddle softmax")
    rn = tilelang.compile(rmsnorm_cuda(cols), out_idx=[2])
    err = float((rn(x, w).astype("float32") - rmsnorm_reference(x, w).astype("float32")).abs().max())
    assert err < 5e-2, f"RMSNorm: max error {err}"
    row("RMSNorm", f"{rows}x{cols}", device_ms(lambda: rn(x, w)), device_ms(lambda: rmsnorm_reference(x, w)),
        "TB/s", nbytes, "Paddle ops")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
