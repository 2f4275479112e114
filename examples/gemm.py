"""GEMM with TileLang on Paddle tensors: float16 or bfloat16 on a GPU, float32 on the CPU.

    python examples/gemm.py [--m 1024 --n 1024 --k 1024] [--dtype float16|bfloat16] [--arch sm_90a]

Uses the quickstart's two kernels (``examples/quickstart.py``): shared-memory
tiles and tensor-core ``T.gemm`` on a GPU; one program per output tile with a
local accumulator on TileLang's C target (a correctness target, not a fast CPU
backend). Checks against ``paddle.matmul`` and prints both times. ``--arch``
also compiles the CUDA kernel in both half-precision dtypes when nvcc is
present (no GPU needed).
(No `from __future__ import annotations`: TileLang evaluates kernel annotations.)
"""

import argparse

import paddle

import tilelang
from common import compile_for_arch, paddle_sees_gpu, synchronizer, time_us
from quickstart import gemm_cpu, gemm_cuda


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--m", type=int, default=1024)
    parser.add_argument("--n", type=int, default=1024)
    parser.add_argument("--k", type=int, default=1024)
    parser.add_argument("--dtype", choices=["float16", "bfloat16"], default="float16", help="GPU dtype")
    parser.add_argument("--arch", help="also compile the CUDA kernels for this arch, e.g. sm_90a")
    args = parser.parse_args(argv)
    m, n, k = args.m, args.n, args.k
    on_gpu, sync = paddle_sees_gpu(), synchronizer(paddle_sees_gpu())
    if on_gpu:
        kernel, dtype, tol = tilelang.compile(gemm_cuda(m, n, k, dtype=args.dtype), out_idx=[2]), args.dtype, 2e-2
    else:
        if m % 32 or n % 32 or k % 32:
            parser.error("on the CPU, --m/--n/--k must be multiples of 32 (the C kernel's tile)")
        kernel = tilelang.compile(gemm_cpu(m, n, k), out_idx=[2], target="c", execution_backend="cython")
        dtype, tol = "float32", 1e-4
    where = "GPU" if on_gpu else "CPU"
    a, b = paddle.randn([m, k]).astype(dtype), paddle.randn([k, n]).astype(dtype)
    ref = paddle.matmul(a.astype("float32"), b.astype("float32"))
    err = float((kernel(a, b).astype("float32") - ref).abs().max() / (ref.abs().max() + 1e-6))
    ok = err < tol
    print(f"[{where}] C = A @ B, {m}x{k} @ {k}x{n} {dtype}: max relative err {err:.2e} ({'OK' if ok else 'MISMATCH'})")
    print(f"[{where}] {time_us(lambda: kernel(a, b), sync, iters=5):.1f} us per call (TileLang) vs "
          f"{time_us(lambda: paddle.matmul(a, b), sync, iters=5):.1f} us (paddle.matmul)"
          + ("" if on_gpu else "; the C target checks correctness, it is not a fast CPU backend"))
    for half in ("float16", "bfloat16"):
        compile_for_arch(gemm_cuda(m, n, k, dtype=half), [2], args.arch, f"{half} GEMM")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
