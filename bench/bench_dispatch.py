"""Per-call dispatch overhead of a TileLang kernel on Paddle tensors (CPU target, Cython launcher).

    python bench/bench_dispatch.py [--iters 20000]

The kernel does almost nothing (one element), so the time per call is the
launcher's Python/Cython work: argument checks, stream lookup, output
allocation and the ctypes call. ``floor`` is the bare ctypes call of the
compiled library with prepared pointers: what no launcher can beat.
(No `from __future__ import annotations`: TileLang evaluates kernel annotations.)
"""


import argparse
import ctypes
import time

import paddle

import tilelang
import tilelang.language as T


def tiny(N=1, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype), C: T.Tensor((N,), dtype)):
        with T.Kernel(1) as _:
            C[0] = A[0] + B[0]

    return main


def per_call_us(fn, iters: int, repeats: int = 7) -> float:
    for _ in range(min(iters, 1000)):
        fn()
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(iters):
            fn()
        samples.append((time.perf_counter() - start) / iters * 1e6)
    return min(samples)  # the least-disturbed run (as timeit advises); this machine is shared


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--iters", type=int, default=20000)
    args = parser.parse_args()
    tilelang.set_log_level("WARNING")
    cpu = dict(target="c", execution_backend="cython")
    k_out = tilelang.compile(tiny(), out_idx=[2], **cpu)
    k_inplace = tilelang.compile(tiny(), **cpu)
    a, b, c = paddle.randn([1]), paddle.randn([1]), paddle.empty([1])
    lib = k_inplace.adapter.lib
    ptrs = [ctypes.c_void_p(t.data_ptr()) for t in (a, b, c)] + [ctypes.c_void_p(0)]
    rows = [
        ("floor: lib.call(*prepared ctypes pointers)", per_call_us(lambda: lib.call(*ptrs), args.iters)),
        ("kernel(a, b, c)  caller-allocated output", per_call_us(lambda: k_inplace(a, b, c), args.iters)),
        ("kernel(a, b)     output allocated (out_idx)", per_call_us(lambda: k_out(a, b), args.iters)),
        ("kernel(a, b, c, skip_tensor_validation=True)",
         per_call_us(lambda: k_inplace(a, b, c, skip_tensor_validation=True), args.iters)),
        ("paddle.empty([1]) alone (allocation cost)", per_call_us(lambda: paddle.empty([1]), args.iters)),
    ]
    print(f"tilelang-paddle {tilelang.__version__}, Paddle {paddle.__version__}, CPU target, {args.iters} calls, best of 7")
    for name, us in rows:
        print(f"{us:8.2f} us  {name}")


if __name__ == "__main__":
    main()
