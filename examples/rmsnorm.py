"""RMSNorm over the last dimension with TileLang, on Paddle tensors, any number of rows.

    python examples/rmsnorm.py [--rows 4096] [--hidden 1024] [--arch sm_90a]

One kernel serves every row count: the row dimension is ``T.dynamic``, so the
first call compiles (or loads from TileLang's on-disk cache) and every later
size reuses it. Runs on the GPU when Paddle sees one, else on the CPU through
TileLang's C target (a correctness target, not a fast CPU backend), checks
against the same formula in plain Paddle ops, and prints both times. ``--arch`` also compiles
the CUDA kernel for that architecture when nvcc is present (no GPU needed).
(No `from __future__ import annotations`: TileLang evaluates kernel annotations.)
"""

from common import arch_type, non_negative_int, parser, positive_int


def parse_args(argv=None):
    p = parser(__doc__)
    p.add_argument("--rows", type=non_negative_int, default=4096, help="rows of the largest run (0: an empty batch)")
    p.add_argument("--hidden", type=positive_int, default=1024, help="row length (any value)")
    p.add_argument("--arch", type=arch_type, help="also compile the CUDA kernel for this arch, e.g. sm_90a")
    return p.parse_args(argv)


if __name__ == "__main__":
    parse_args()  # --help and argument errors answer before the seconds Paddle and TileLang take to import

import paddle  # noqa: E402

import tilelang  # noqa: E402
import tilelang.language as T  # noqa: E402
from common import compile_for_arch, empty_batch_safe, paddle_sees_gpu, synchronizer, time_us  # noqa: E402

EPS = 1e-6


@tilelang.jit(out_idx=[2], target="c", execution_backend="cython")
def rmsnorm_cpu(hidden: int, dtype: str = "float32"):
    """One program per row: sum of squares in a local accumulator, then the scaled row."""
    rows = T.dynamic("rows")

    @T.prim_func
    def main(X: T.Tensor((rows, hidden), dtype), W: T.Tensor((hidden,), dtype), Y: T.Tensor((rows, hidden), dtype)):
        with T.Kernel(rows) as r:
            acc = T.alloc_local((1,), "float32")
            acc[0] = 0
            for j in T.serial(hidden):
                acc[0] += X[r, j] * X[r, j]
            for j in T.serial(hidden):
                Y[r, j] = X[r, j] * T.rsqrt(acc[0] / hidden + EPS) * W[j]

    return main


def rmsnorm_cuda(hidden: int, dtype: str = "float16", threads: int = 128):
    """One block per row: the row in registers, a block-wide sum of squares, the scaled row back.

    Any ``hidden``: the row's fragment is padded to a multiple of ``threads``
    (TileLang finds no thread layout for a ragged one); the padding reads as 0
    and is never stored.
    """
    rows = T.dynamic("rows")
    padded = -(-hidden // threads) * threads
    ragged = padded != hidden

    @T.prim_func
    def main(X: T.Tensor((rows, hidden), dtype), W: T.Tensor((hidden,), dtype), Y: T.Tensor((rows, hidden), dtype)):
        with T.Kernel(rows, threads=threads) as r:
            x = T.alloc_fragment((padded,), "float32")
            sq = T.alloc_fragment((padded,), "float32")
            total = T.alloc_fragment((1,), "float32")
            for j in T.Parallel(padded):
                if ragged:
                    x[j] = T.if_then_else(j < hidden, X[r, j], 0)
                else:
                    x[j] = X[r, j]
                sq[j] = x[j] * x[j]
            T.reduce_sum(sq, total, dim=0)
            for j in T.Parallel(padded):
                if ragged:
                    if j < hidden:
                        Y[r, j] = x[j] * T.rsqrt(total[0] / hidden + EPS) * W[j]
                else:
                    Y[r, j] = x[j] * T.rsqrt(total[0] / hidden + EPS) * W[j]

    return main


def reference(x, w):
    xf = x.astype("float32")
    return (xf * paddle.rsqrt((xf * xf).mean(axis=-1, keepdim=True) + EPS) * w.astype("float32")).astype(x.dtype)


def main(argv=None) -> int:
    args = parse_args(argv)
    on_gpu, sync = paddle_sees_gpu(), synchronizer(paddle_sees_gpu())
    if on_gpu:
        kernel, dtype, tol = empty_batch_safe(tilelang.compile(rmsnorm_cuda(args.hidden), out_idx=[2])), "float16", 2e-2
    else:
        kernel, dtype, tol = rmsnorm_cpu(args.hidden), "float32", 1e-4
    ok = True
    for rows in (1, 7, args.rows):  # one compiled kernel for every row count
        x = paddle.randn([rows, args.hidden]).astype(dtype)
        w = paddle.randn([args.hidden]).astype(dtype)
        y = kernel(x, w)
        err = float((y.astype("float32") - reference(x, w).astype("float32")).abs().max()) if rows else 0.0
        ok &= err < tol * 10
        print(f"[{'GPU' if on_gpu else 'CPU'}] RMSNorm {rows}x{args.hidden} {dtype}: max abs err {err:.2e}")
    tl_us, pd_us = time_us(lambda: kernel(x, w), sync), time_us(lambda: reference(x, w), sync)
    print(f"[{'GPU' if on_gpu else 'CPU'}] {tl_us:.1f} us per call (TileLang) vs {pd_us:.1f} us (Paddle ops)"
          + ("" if on_gpu else "; the C target checks correctness, it is not a fast CPU backend"))
    ok &= compile_for_arch(rmsnorm_cuda(args.hidden), [2], args.arch, "RMSNorm")
    print("OK" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
