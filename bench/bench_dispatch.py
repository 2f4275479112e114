"""Host-side cost of TileLang kernels on Paddle: per-call dispatch, import, compile, cache.

    python bench/bench_dispatch.py [--iters 20000] [--json out.json] [--allocation]

Per-call rows use kernels that do almost nothing (one element), so the time is
the launcher's own work: argument checks, stream lookup, output allocation and
the call. ``floor`` is the compiled library's entry called through ctypes with
prepared pointers. ``upstream launcher`` is upstream's Cython ``forward`` (the
path ``TILELANG_PADDLE_FAST_LAUNCH=0`` restores). Backends: ``cython`` on the
CPU target (``tvm_ffi`` cannot run the C target); with a GPU, the quickstart's
CUDA GEMM on both backends as well. Import, first-compile and cache-hit times
are measured in fresh processes (median of 5 for import).
(No `from __future__ import annotations`: TileLang evaluates kernel annotations.)
"""

import argparse
import ctypes
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import paddle

import tilelang
import tilelang.language as T

CPU = dict(target="c", execution_backend="cython")


def one(n):
    @T.prim_func
    def main(A: T.Tensor((n,), "float32")):
        with T.Kernel(1) as _:
            A[0] = A[0] + 1.0

    return main


def three(n):
    @T.prim_func
    def main(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32"), C: T.Tensor((n,), "float32")):
        with T.Kernel(1) as _:
            C[0] = A[0] + B[0]

    return main


def eight(n):
    f32 = "float32"

    @T.prim_func
    def main(A: T.Tensor((n,), f32), B: T.Tensor((n,), f32), C: T.Tensor((n,), f32), D: T.Tensor((n,), f32),
             E: T.Tensor((n,), f32), F: T.Tensor((n,), f32), G: T.Tensor((n,), f32), H: T.Tensor((n,), f32)):
        with T.Kernel(1) as _:
            H[0] = A[0] + B[0] + C[0] + D[0] + E[0] + F[0] + G[0]

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


def dispatch_rows(iters: int) -> list[tuple[str, float]]:
    rows = []
    for label, factory, count in (("1 tensor", one, 1), ("3 tensors", three, 3), ("8 tensors", eight, 8)):
        for shape_kind in ("static", "symbolic"):
            n = 1 if shape_kind == "static" else T.dynamic("n")
            in_place = tilelang.compile(factory(n), **CPU)
            tensors = [paddle.randn([1]) for _ in range(count)]
            ptrs = [ctypes.c_void_p(t.data_ptr()) for t in tensors]
            if shape_kind == "symbolic":
                ptrs.append(ctypes.c_int64(1))
            ptrs.append(ctypes.c_void_p(0))
            lib = in_place.adapter.lib
            upstream = in_place.adapter.cython_wrapper.forward
            rows.append((f"{label}, {shape_kind}: floor (ctypes call, prepared pointers)", per_call_us(lambda: lib.call(*ptrs), iters)))
            rows.append((f"{label}, {shape_kind}: kernel(...) caller-allocated", per_call_us(lambda: in_place(*tensors), iters)))
            rows.append((f"{label}, {shape_kind}: upstream launcher, caller-allocated",
                         per_call_us(lambda: upstream(tensors), iters)))
            if count > 1:
                allocating = tilelang.compile(factory(n), out_idx=[count - 1], **CPU)
                inputs = tensors[:-1]
                rows.append((f"{label}, {shape_kind}: kernel(...) out_idx (allocates)", per_call_us(lambda: allocating(*inputs), iters)))
    rows.append(("paddle.empty([1]) alone (allocation cost, public API)", per_call_us(lambda: paddle.empty([1]), iters)))
    return rows


def allocation_rows(iters: int, rounds: int = 7) -> list[tuple[str, float]]:
    """A call that allocates its output, the same call with the output passed in, and ``paddle.add`` on the same
    tensors: medians of ``rounds`` alternating rounds of ``iters`` calls in one process, so machine load hits all
    alike; the ratios are the result (issue 56).

    The kernel is built twice: as upstream builds C kernels (``g++`` without ``-O``: the 1024 additions take
    longer than Paddle's vectorised ``add``) and with ``compile_flags=["-O2"]``, where the kernel's own work is
    comparable to ``paddle.add``'s and the rows compare what surrounds it. ``_C_ops.empty`` alone is Paddle's
    cost of creating one tensor (shape, dtype, place parsed from Python; the launcher's C allocation skips that
    parsing but goes through the DLPack allocator and ``to_py_object`` instead): the floor under the difference
    between the first two rows.
    """
    from bench_custom_op import add  # bench/ is sys.path[0] when run as a script
    from paddle import _C_ops

    a, b, c = paddle.randn([1024]), paddle.randn([1024]), paddle.empty([1024])
    place = a.place
    calls = {"paddle.add(a, b)": lambda: paddle.add(a, b),
             "paddle._C_ops.empty([1024], float32, place) alone": lambda: _C_ops.empty([1024], paddle.float32, place)}
    builds = (("as upstream builds it (no -O)", None), ("compile_flags=['-O2']", ["-O2"]))
    for label, flags in builds:
        returning = tilelang.compile(add(1024), out_idx=[2], compile_flags=flags, **CPU)
        passed_in = tilelang.compile(add(1024), compile_flags=flags, **CPU)
        calls[f"kernel {label}: kernel(a, b), output allocated (out_idx)"] = lambda k=returning: k(a, b)
        calls[f"kernel {label}: kernel(a, b, c), output passed in"] = lambda k=passed_in: k(a, b, c)
    for fn in calls.values():
        for _ in range(min(iters, 2000)):
            fn()
    samples = {name: [] for name in calls}
    for _ in range(rounds):
        for name, fn in calls.items():
            start = time.perf_counter()
            for _ in range(iters):
                fn()
            samples[name].append((time.perf_counter() - start) / iters * 1e6)
    med = {name: statistics.median(v) for name, v in samples.items()}
    rows = [(f"1024 floats, median of {rounds} alternating rounds: {name}", us) for name, us in med.items()]
    for label, _flags in builds:
        allocated = med[f"kernel {label}: kernel(a, b), output allocated (out_idx)"]
        passed = med[f"kernel {label}: kernel(a, b, c), output passed in"]
        rows.append((f"ratio, kernel {label}: allocated / passed in (target <= 1.15)", allocated / passed))
        rows.append((f"ratio, kernel {label}: allocated / paddle.add (target < 1)", allocated / med["paddle.add(a, b)"]))
    return rows


def gpu_rows(iters: int) -> list[tuple[str, float]]:
    if not (paddle.is_compiled_with_cuda() and paddle.device.cuda.device_count() > 0):
        return []
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
    from quickstart import gemm_cuda

    rows = []
    a = paddle.randn([256, 128]).astype("float16").cuda()
    b = paddle.randn([128, 256]).astype("float16").cuda()
    for backend in ("tvm_ffi", "cython"):
        kernel = tilelang.compile(gemm_cuda(256, 256, 128), out_idx=[2], execution_backend=backend)

        def call_and_sync():
            for _ in range(100):
                kernel(a, b)
            paddle.device.synchronize()

        rows.append((f"CUDA GEMM 256x256x128 fp16, {backend}: per call (incl. GPU time)", per_call_us(call_and_sync, max(1, iters // 100)) / 100))
    return rows


def _fresh(code: str, env: dict | None = None) -> str:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, **(env or {})})
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-2000:])
    return out.stdout.strip().splitlines()[-1]


def process_rows() -> list[tuple[str, float]]:
    imports = [float(_fresh("import time, paddle\nt = time.perf_counter()\nimport tilelang\nprint(time.perf_counter() - t)"))
               for _ in range(5)]
    compile_code = (
        "import sys, time, paddle, tilelang\n"
        f"sys.path.insert(0, {str(Path(__file__).resolve().parent)!r})\n"
        "from bench_dispatch import three\n"
        "tilelang.set_log_level('WARNING')\n"
        "t = time.perf_counter()\n"
        "tilelang.compile(three(4096), out_idx=[2], target='c', execution_backend='cython')\n"
        "print(time.perf_counter() - t)"
    )
    with tempfile.TemporaryDirectory() as cache:
        env = {"TILELANG_CACHE_DIR": cache}
        first = float(_fresh(compile_code, env))
        hit = float(_fresh(compile_code, env))
    return [
        ("import tilelang after import paddle (fresh process, median of 5)", statistics.median(imports) * 1e6),
        ("first compile of a 3-tensor kernel (empty cache, fresh process)", first * 1e6),
        ("the same kernel from the on-disk cache (fresh process)", hit * 1e6),
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--iters", type=int, default=20000)
    parser.add_argument("--json", help="also write the rows to this file")
    parser.add_argument("--allocation", action="store_true", help="only the output-allocation ratios")
    args = parser.parse_args()
    tilelang.set_log_level("WARNING")
    rows = allocation_rows(args.iters) if args.allocation else \
        dispatch_rows(args.iters) + allocation_rows(args.iters) + gpu_rows(args.iters) + process_rows()
    print(f"tilelang-paddle {tilelang.__version__}, Paddle {paddle.__version__}, CPU target, cython backend, "
          f"{args.iters} calls per sample, best of 7; {os.cpu_count()} CPUs")
    for name, us in rows:
        if name.startswith("ratio"):
            print(f"{us:10.2f}x   {name}")
        else:
            print(f"{us / 1e3:10.1f} ms  {name}" if us >= 1e4 else f"{us:10.2f} us  {name}")
    if args.json:
        Path(args.json).write_text(json.dumps({name: us for name, us in rows}, indent=1))


if __name__ == "__main__":
    main()
