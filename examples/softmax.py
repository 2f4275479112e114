"""Row softmax with TileLang, on Paddle tensors, any number of rows.

    python examples/softmax.py [--rows 4096] [--cols 1024] [--arch sm_90a]

The row count is ``T.dynamic``: one compiled kernel serves every size. Runs on
the GPU when Paddle sees one, else on the CPU through TileLang's C target (a
correctness target, not a fast CPU backend), checks against
``paddle.nn.functional.softmax`` and prints both times. ``--arch`` also
compiles the CUDA kernel for that architecture when nvcc is present.
(No `from __future__ import annotations`: TileLang evaluates kernel annotations.)
"""

from common import arch_type, non_negative_int, parser, positive_int


def parse_args(argv=None):
    p = parser(__doc__)
    p.add_argument("--rows", type=non_negative_int, default=4096, help="rows of the largest run (0: an empty batch)")
    p.add_argument("--cols", type=positive_int, default=1024, help="row length (any value)")
    p.add_argument("--arch", type=arch_type, help="also compile the CUDA kernel for this arch, e.g. sm_90a")
    return p.parse_args(argv)


if __name__ == "__main__":
    parse_args()  # --help and argument errors answer before the seconds Paddle and TileLang take to import

import paddle  # noqa: E402

import tilelang  # noqa: E402
import tilelang.language as T  # noqa: E402
from common import compile_for_arch, empty_batch_safe, paddle_sees_gpu, synchronizer, time_us  # noqa: E402

LOG2E = 1.4426950408889634  # exp(x) = exp2(x * log2(e))


@tilelang.jit(out_idx=[1], target="c", execution_backend="cython")
def softmax_cpu(cols: int, dtype: str = "float32"):
    """One program per row: the row maximum, the sum of exponentials, then the normalised row."""
    rows = T.dynamic("rows")

    @T.prim_func
    def main(X: T.Tensor((rows, cols), dtype), Y: T.Tensor((rows, cols), dtype)):
        with T.Kernel(rows) as r:
            top = T.alloc_local((1,), "float32")
            total = T.alloc_local((1,), "float32")
            top[0] = X[r, 0]
            for j in T.serial(cols):
                top[0] = T.max(top[0], X[r, j])
            total[0] = 0
            for j in T.serial(cols):
                total[0] += T.exp2((X[r, j] - top[0]) * LOG2E)
            for j in T.serial(cols):
                Y[r, j] = T.exp2((X[r, j] - top[0]) * LOG2E) / total[0]

    return main


def softmax_cuda(cols: int, dtype: str = "float16", threads: int = 128):
    """One block per row: the row in registers, block-wide max and sum reductions.

    Any column count: the row is held in a fragment padded to a multiple of
    ``threads`` (TileLang lays a fragment out over the block's threads, and finds
    no layout for a ragged one), the padding reads as -inf and is never stored.
    """
    rows = T.dynamic("rows")
    padded = -(-cols // threads) * threads
    ragged = padded != cols

    @T.prim_func
    def main(X: T.Tensor((rows, cols), dtype), Y: T.Tensor((rows, cols), dtype)):
        with T.Kernel(rows, threads=threads) as r:
            x = T.alloc_fragment((padded,), "float32")
            e = T.alloc_fragment((padded,), "float32")
            top = T.alloc_fragment((1,), "float32")
            total = T.alloc_fragment((1,), "float32")
            for j in T.Parallel(padded):
                if ragged:
                    x[j] = T.if_then_else(j < cols, X[r, j], -T.infinity("float32"))
                else:
                    x[j] = X[r, j]
            T.reduce_max(x, top, dim=0)
            for j in T.Parallel(padded):
                e[j] = T.exp2((x[j] - top[0]) * LOG2E)
            T.reduce_sum(e, total, dim=0)
            for j in T.Parallel(padded):
                if ragged:
                    if j < cols:
                        Y[r, j] = e[j] / total[0]
                else:
                    Y[r, j] = e[j] / total[0]

    return main


def main(argv=None) -> int:
    args = parse_args(argv)
    on_gpu, sync = paddle_sees_gpu(), synchronizer(paddle_sees_gpu())
    if on_gpu:
        kernel, dtype, tol = empty_batch_safe(tilelang.compile(softmax_cuda(args.cols), out_idx=[1])), "float16", 1e-2
    else:
        kernel, dtype, tol = softmax_cpu(args.cols), "float32", 1e-5
    where, ok = "GPU" if on_gpu else "CPU", True
    for rows in (1, 7, args.rows):  # one compiled kernel for every row count
        x = (paddle.randn([rows, args.cols]) * 3).astype(dtype)
        ref = paddle.nn.functional.softmax(x.astype("float32"), axis=-1)
        err = float((kernel(x).astype("float32") - ref).abs().max()) if rows else 0.0
        ok &= err < tol
        print(f"[{where}] softmax {rows}x{args.cols} {dtype}: max abs err {err:.2e}")
    tl_us = time_us(lambda: kernel(x), sync)
    pd_us = time_us(lambda: paddle.nn.functional.softmax(x, axis=-1), sync)
    print(f"[{where}] {tl_us:.1f} us per call (TileLang) vs {pd_us:.1f} us (paddle.nn.functional.softmax)"
          + ("" if on_gpu else "; the C target checks correctness, it is not a fast CPU backend"))
    ok &= compile_for_arch(softmax_cuda(args.cols), [1], args.arch, "softmax")
    print("OK" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
