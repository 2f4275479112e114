"""GEMM with TileLang on Paddle tensors: float16 or bfloat16 on a GPU, float32 on the CPU.

    python examples/gemm.py [--m M --n N --k K] [--dtype float16|bfloat16|float32] [--arch sm_90a]

Uses the quickstart's two kernels (``examples/quickstart.py``): shared-memory
tiles and tensor-core ``T.gemm`` on a GPU; one program per output tile with a
local accumulator on TileLang's C target (a correctness target, not a fast CPU
backend). Checks against ``paddle.matmul`` and prints both times. Sizes
default to 4096 on a GPU and 256 on the CPU (plain C loops: 1024^3 takes
about 40 s there). ``--arch`` also compiles the CUDA kernel in both
half-precision dtypes when nvcc is present (no GPU needed).
(No `from __future__ import annotations`: TileLang evaluates kernel annotations.)
"""

from common import arch_type, gpu_possible, parser, positive_int


def cpu_rules(parser_, args) -> None:
    """The CPU kernel's limits on the arguments (on the CPU, or before Paddle loads where no GPU can exist)."""
    if args.dtype not in (None, "float32"):
        parser_.error(f"--dtype {args.dtype} needs a GPU: the CPU kernel computes in float32 (no GPU here)")
    m = args.m or 256
    if m % 32 or (args.n or m) % 32 or (args.k or m) % 32:
        parser_.error("on the CPU, --m/--n/--k must be multiples of 32 (the C kernel's tile)")


def parse_args(argv=None):
    p = parser(__doc__)
    p.add_argument("--m", type=positive_int, help="rows of A and C (default: 4096 on a GPU, 256 on the CPU)")
    p.add_argument("--n", type=positive_int, help="columns of B and C (default: as --m)")
    p.add_argument("--k", type=positive_int, help="columns of A, rows of B (default: as --m)")
    p.add_argument("--dtype", choices=["float16", "bfloat16", "float32"],
                   help="float16 or bfloat16 on a GPU (default float16); the CPU kernel computes in float32 only")
    p.add_argument("--arch", type=arch_type, help="also compile the CUDA kernels for this arch, e.g. sm_90a")
    args = p.parse_args(argv)
    if not gpu_possible():  # no NVIDIA device here: the CPU rules apply, checked before Paddle loads
        cpu_rules(p, args)
    return p, args


if __name__ == "__main__":
    parse_args()  # --help and argument errors answer before the seconds Paddle and TileLang take to import

import paddle  # noqa: E402

import tilelang  # noqa: E402
from common import compile_for_arch, paddle_sees_gpu, synchronizer, time_us  # noqa: E402
from quickstart import gemm_cpu, gemm_cuda, has_pdl  # noqa: E402


def main(argv=None) -> int:
    parser_, args = parse_args(argv)
    on_gpu = paddle_sees_gpu()
    sync = synchronizer(on_gpu)
    default = 4096 if on_gpu else 256
    m = args.m or default
    n, k = args.n or m, args.k or m
    if on_gpu:
        dtype = args.dtype or "float16"
        if dtype == "float32":
            parser_.error("--dtype float32: the CUDA kernel uses tensor cores in float16 or bfloat16")
        kernel, tol = tilelang.compile(gemm_cuda(m, n, k, dtype=dtype), out_idx=[2]), 2e-2
    else:
        cpu_rules(parser_, args)
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
    pdl = has_pdl(args.arch) if args.arch else False
    for half in ("float16", "bfloat16"):
        ok &= compile_for_arch(gemm_cuda(m, n, k, dtype=half, pdl=pdl), [2], args.arch, f"{half} GEMM")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
