"""Eager per-call cost of a tilelang.paddle.custom_op, next to the same kernel called directly and paddle.add.

    python bench/bench_custom_op.py [--n 1024] [--iters 5000]

All three add two float32 vectors of ``n`` elements on the CPU (Paddle CPU
build, TileLang's C target): ``custom_op`` goes through Paddle's custom-operator
dispatch (``_C_ops._run_custom_op``, the generated C++ kernel function, output
allocation with ``paddle::empty``); the direct call is the compiled kernel with
``out_idx`` through our launch fast path; ``paddle.add`` is Paddle's own op.
Best of 7 samples of ``iters`` calls each. Target: custom_op <= paddle.add + 5 us.
(No `from __future__ import annotations`: TileLang evaluates kernel annotations.)
"""

import argparse
import time

import paddle

import tilelang
import tilelang.language as T
from tilelang.paddle import custom_op


def add(n):
    @T.prim_func
    def main(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32"), C: T.Tensor((n,), "float32")):
        with T.Kernel(1) as _:
            for i in T.serial(n):
                C[i] = A[i] + B[i]

    return main


def best_us(fn, iters):
    for _ in range(100):
        fn()
    samples = []
    for _ in range(7):
        start = time.perf_counter()
        for _ in range(iters):
            fn()
        samples.append((time.perf_counter() - start) / iters * 1e6)
    return min(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1024)
    parser.add_argument("--iters", type=int, default=5000)
    args = parser.parse_args()
    paddle.set_device("cpu")
    kernel = tilelang.compile(add(args.n), out_idx=[2], target="c", execution_backend="cython")
    op = custom_op(kernel, name=f"tl_bench_add_{args.n}")
    a, b = paddle.randn([args.n]), paddle.randn([args.n])
    assert paddle.allclose(op(a, b), a + b) and paddle.allclose(kernel(a, b), a + b)
    rows = [
        ("custom_op (Paddle custom-operator dispatch)", best_us(lambda: op(a, b), args.iters)),
        ("the compiled kernel called directly (fast launch, out_idx)", best_us(lambda: kernel(a, b), args.iters)),
        ("paddle.add", best_us(lambda: paddle.add(a, b), args.iters)),
    ]
    print(f"Paddle {paddle.__version__}, CPU, float32[{args.n}] + float32[{args.n}]; best of 7 x {args.iters} calls")
    for name, us in rows:
        print(f"{us:8.2f} us  {name}")
    print(f"custom_op - paddle.add = {rows[0][1] - rows[2][1]:+.2f} us (target: <= +5 us)")


if __name__ == "__main__":
    main()
