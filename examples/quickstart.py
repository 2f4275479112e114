"""Quickstart: JIT-compile a tiled TileLang GEMM and run it on Paddle tensors.

    python examples/quickstart.py                 # GPU when Paddle sees one, else CPU
    python examples/quickstart.py --arch sm_90a   # also compile the CUDA kernel (needs nvcc)

On the CPU the kernel is compiled for TileLang's C target and launched through
the Cython backend; on a GPU it is the classic shared-memory/fragment GEMM.
The result is checked against ``paddle.matmul``.
(No `from __future__ import annotations`: TileLang evaluates kernel annotations.)
"""

import argparse
import re
import sys


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arch", help="also compile the CUDA GEMM for this arch (e.g. sm_80, sm_90a); "
                        "explicit because without a GPU TileLang would guess sm_50, which nvcc 13 rejects")
    parser.add_argument("--size", type=int, default=256, help="M = N = K; a multiple of 32 (the CPU kernel's tile) (default: 256)")
    args = parser.parse_args(argv)
    if args.size <= 0 or args.size % 32:
        parser.error(f"--size must be a positive multiple of 32 (the CPU kernel's tile), got {args.size}")
    if args.arch is not None and re.fullmatch(r"sm_[1-9][0-9]{1,2}[af]?", args.arch) is None:
        parser.error(f"--arch: expected a CUDA arch such as sm_80, sm_90a or sm_100a, got {args.arch!r}")
    return args


if __name__ == "__main__":
    parse_args()  # --help and argument errors answer before the seconds Paddle and TileLang take to import

import os  # noqa: E402
import shutil  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import paddle  # noqa: E402

import tilelang  # noqa: E402
import tilelang.language as T  # noqa: E402


# Tile configurations for Hopper (H100/H200), chosen by timing a sweep of tile
# shapes, pipeline depths, thread counts, warp policies, swizzles, persistent
# scheduling and epilogues on an H200 with upstream tilelang 0.1.15 on torch,
# against cuBLAS (docs/performance.md, "GPU kernels"). Large problems: a 128x256 tile per two
# warpgroups, 64-deep K slices, three stages, launched in panels of 8 so
# neighbours share A/B tiles in L2 (0.96-0.99x cuBLAS from 2048^3 to 8192^3,
# fp16 and bf16). Problems with too few such tiles to fill the GPU once: a
# 64x128 tile with 128-deep K slices and three stages (at 1024^3: 0.97x cuBLAS
# for the kernel alone, 1.02-1.03x back to back with pdl, see gemm_cuda).
# Shared memory per block, with the staged output tile: 208 KB (large) and
# 160 KB (small), which A100/H100/H200 have; GPUs with less (99 KB on RTX 30/40)
# need smaller tiles passed explicitly (e.g. 64x64x64 with two stages).
GEMM_LARGE = dict(block_M=128, block_N=256, block_K=64, stages=3, threads=256, swizzle=8)
GEMM_SMALL = dict(block_M=64, block_N=128, block_K=128, stages=3, threads=128, swizzle=0)


# Decode shapes (M <= 16 rows, e.g. one token per sequence): the work is streaming B once, so the tile is 16
# rows (one MMA tile, the padding is at most 15 rows of A) by a narrow column panel, for enough blocks to keep
# the whole GPU reading, with deep K slices in flight. Timed on an H200 at M = 16 (docs/performance.md,
# "Decode-shaped GEMM"): long K takes 32 columns and 512-deep slices, short K (<= 2048, few slices) 64 columns.
# Long K with at most one column panel per two SMs (N <= 2112 at 32 columns on 132 SMs) splits K in two:
# each panel is a cluster of two blocks, one per half of K, summed through distributed shared memory
# (N = 2048, K = 7168 on an H200, B in L2: bf16 0.82-0.90x -> 0.87-1.18x cuBLAS; docs/performance.md).
GEMM_DECODE_LONG_K = dict(block_M=16, block_N=32, block_K=512, stages=3, threads=128, swizzle=0)
GEMM_DECODE_SHORT_K = dict(block_M=16, block_N=64, block_K=256, stages=4, threads=128, swizzle=0)
GEMM_DECODE_SPLIT_K = dict(block_M=16, block_N=32, block_K=512, stages=4, threads=128, swizzle=0, split_k=2)


def gemm_config(M, N, K=None, sms=132) -> dict:
    """The Hopper tile configuration for an M x N (x K) output.

    M <= 16 (a static int): the decode schedule, split over K when its column panels would leave half of the
    ``sms`` SMs (132 on an H100/H200 SXM) idle; otherwise large tiles once there are >= 128 of them (~1 wave).
    """
    if isinstance(M, int) and M <= 16 and K is not None:
        if K <= 2048:
            return GEMM_DECODE_SHORT_K
        panels = -(-N // GEMM_DECODE_LONG_K["block_N"])
        return GEMM_DECODE_SPLIT_K if 2 * panels <= sms else GEMM_DECODE_LONG_K
    tiles = -(-M // GEMM_LARGE["block_M"]) * -(-N // GEMM_LARGE["block_N"])
    return GEMM_LARGE if tiles >= 128 else GEMM_SMALL


def paddle_sees_gpu() -> bool:
    """Whether this Paddle is a CUDA build that sees a GPU (the CPU build, or no device: False)."""
    return paddle.is_compiled_with_cuda() and paddle.device.cuda.device_count() > 0


def compute_capability(arch=None) -> int | None:
    """The compute capability of ``arch`` ("sm_90a" -> 90) or, for None, of Paddle's current GPU (None: no GPU)."""
    if arch is not None:
        match = re.fullmatch(r"sm_(\d+)[af]?", arch)
        if match is None:
            raise ValueError(f"arch: expected a CUDA arch such as sm_80 or sm_90a, got {arch!r}")
        return int(match.group(1))
    if not paddle_sees_gpu():
        return None
    # python/paddle/device/cuda/__init__.py get_device_capability: cudaDeviceProp (major, minor) of the current GPU
    major, minor = paddle.device.cuda.get_device_capability()
    return major * 10 + minor


def has_pdl(arch=None) -> bool:
    """Whether kernels for ``arch`` (e.g. "sm_90a"; None: Paddle's current GPU) can wait with T.pdl_sync().

    Programmatic dependent launch needs compute capability 9.0 or newer; TileLang refuses
    ``T.pdl_sync()`` for older targets ("PDL is not supported").
    """
    capability = compute_capability(arch)
    return capability is not None and capability >= 90


def gemm_cuda(M, N, K, block_M=None, block_N=None, block_K=None, dtype="float16", accum_dtype="float32",
              stages=None, threads=None, swizzle=None, pdl=None, split_k=None):
    """Tiled GEMM for NVIDIA GPUs: tiles staged in shared memory, accumulated in registers.

    Tile parameters left as None come from :func:`gemm_config` (Hopper-tuned; a 16-row
    decode schedule for M <= 16).
    ``swizzle`` > 0 launches the tiles in panels of that many columns
    (``T.use_swizzle``), so neighbouring blocks share their A and B tiles in L2.
    The finished tile goes through shared memory on its way out, so it leaves in
    wide, coalesced stores (TMA on Hopper) instead of each thread writing its
    scattered accumulator fragments: worth 0.87x -> 0.97x cuBLAS at 4096^3 on an H200.
    With ``pdl`` (default: :func:`has_pdl` for Paddle's current GPU; pass it when compiling
    for another arch), ``T.pdl_sync()`` waits for the previous kernel in the stream before
    the first load (``griddepcontrol.wait``). That lets the kernel launch as a programmatic
    dependent on Hopper: its set-up overlaps the end of the kernel before it, as cuBLAS's
    does (0.95-0.96x -> 1.02-1.03x cuBLAS at 1024^3 back to back on an H200).
    ``split_k`` 2 (default: from :func:`gemm_config`, where ``pdl`` holds, since it needs Hopper's thread-block
    clusters) gives each column panel two blocks, one per half of K, in a cluster: the second stores its
    float32 partial tile into the first's shared memory and arrives at the cluster barrier, the first waits
    there, adds and stores. That fills the GPU where a decode GEMM has few column panels (docs/performance.md).
    Any M, N, K: ``T.copy`` masks the partial tiles at the edges.
    """
    config = gemm_config(M, N, K)
    block_M = config["block_M"] if block_M is None else block_M
    block_N = config["block_N"] if block_N is None else block_N
    block_K = config["block_K"] if block_K is None else block_K
    stages = config["stages"] if stages is None else stages
    threads = config["threads"] if threads is None else threads
    swizzle = config["swizzle"] if swizzle is None else swizzle
    pdl = has_pdl() if pdl is None else pdl
    split_k = (config.get("split_k", 1) if pdl else 1) if split_k is None else split_k
    if split_k not in (1, 2):
        raise ValueError(f"split_k: expected 1 or 2 (blocks per column panel over K), got {split_k!r}")
    if split_k == 2:
        return _gemm_split_k(M, N, K, block_M, block_N, block_K, dtype, accum_dtype, stages, threads, pdl)

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            C_shared = T.alloc_shared((block_M, block_N), dtype)
            T.use_swizzle(panel_size=max(swizzle, 1), enable=swizzle > 0)
            if pdl:
                T.pdl_sync()
            T.clear(C_local)
            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=stages):
                T.copy(A[by * block_M, ko * block_K], A_shared)
                T.copy(B[ko * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            if block_M <= 16:  # a decode tile's few rows go straight out: staging them costs more than it saves
                T.copy(C_local, C[by * block_M, bx * block_N])
            else:
                T.copy(C_local, C_shared)
                T.copy(C_shared, C[by * block_M, bx * block_N])

    return main


def _gemm_split_k(M, N, K, block_M, block_N, block_K, dtype, accum_dtype, stages, threads, pdl):
    """:func:`gemm_cuda` with K split between the two blocks of a cluster (``split_k=2``)."""

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N) * 2, T.ceildiv(M, block_M), threads=threads,
                      cluster_dims=(2, 1, 1)) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            partial = T.alloc_shared((block_M, block_N), accum_dtype)  # the second block's, staged to send
            received = T.alloc_shared((block_M, block_N), accum_dtype)  # the first block's copy of it
            half, col = bx % 2, bx // 2  # the two blocks of a cluster are neighbours in x
            slices = T.ceildiv(T.ceildiv(K, block_K), 2)
            # Two phases of the cluster barrier: the first says both blocks have started (distributed shared
            # memory may be written only then), the second hands block 1's partial tile to block 0.
            T.cluster_arrive_relaxed()
            if pdl:
                T.pdl_sync()
            T.clear(C_local)
            for ko in T.Pipelined(slices, num_stages=stages):
                T.copy(A[by * block_M, (half * slices + ko) * block_K], A_shared)
                T.copy(B[(half * slices + ko) * block_K, col * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.cluster_wait()
            if half == 1:
                T.copy(C_local, partial)
                T.copy_cluster(partial, received, dst_block=0)  # stores into block 0's shared memory
                T.cluster_arrive()  # release: the stores are visible to a block that has waited
            else:
                T.cluster_arrive()
                T.cluster_wait()  # acquire: block 1's stores have landed
                for i, j in T.Parallel(block_M, block_N):
                    C_local[i, j] += received[i, j]
                T.copy(C_local, C[by * block_M, col * block_N])

    # Block 1 may store into `received` while block 0 is still in its loop, so it must not share memory
    # with the pipeline's buffers (TileLang reuses shared memory by liveness unless told not to).
    return main.with_attr("tilelang_pass_configs", {"tl.disable_shared_memory_reuse": True})


def gemm_cpu(M, N, K, block_M=32, block_N=32, block_K=32, dtype="float32"):
    """The same tiling for TileLang's C target: one program per output tile, a local accumulator.

    The loops do no bounds checks, so the sizes must be multiples of the blocks.
    """
    for name, size, block in (("M", M, block_M), ("N", N, block_N), ("K", K, block_K)):
        if size % block:
            raise ValueError(f"gemm_cpu: {name}={size} must be a multiple of its block size {block}")

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M)) as (bx, by):
            acc = T.alloc_local((block_M, block_N), dtype)
            for i, j in T.grid(block_M, block_N):
                acc[i, j] = 0
            for ko in T.serial(T.ceildiv(K, block_K)):
                for i, k, j in T.grid(block_M, block_K, block_N):
                    acc[i, j] += A[by * block_M + i, ko * block_K + k] * B[ko * block_K + k, bx * block_N + j]
            for i, j in T.grid(block_M, block_N):
                C[by * block_M + i, bx * block_N + j] = acc[i, j]

    return main


def time_per_call(fn, *args, warmup=3, iters=20, sync=lambda: None) -> float:
    for _ in range(warmup):
        fn(*args)
    sync()
    start = time.perf_counter()
    for _ in range(iters):
        fn(*args)
    sync()
    return (time.perf_counter() - start) / iters


def run(on_gpu: bool, M: int, N: int, K: int) -> bool:
    if on_gpu:
        paddle.set_device("gpu")
        kernel = tilelang.compile(gemm_cuda(M, N, K), out_idx=[2])
        dtype, rtol, atol = "float16", 1e-2, 1e-2
        sync = paddle.device.synchronize
    else:
        paddle.set_device("cpu")
        kernel = tilelang.compile(gemm_cpu(M, N, K), out_idx=[2], target="c", execution_backend="cython")
        dtype, rtol, atol = "float32", 1e-4, 1e-4
        sync = lambda: None  # noqa: E731
    a = paddle.randn([M, K]).astype(dtype)
    b = paddle.randn([K, N]).astype(dtype)
    c = kernel(a, b)
    ref = paddle.matmul(a.astype("float32"), b.astype("float32"))
    ok = np.allclose(c.astype("float32").numpy(), ref.numpy(), rtol=rtol, atol=atol * K ** 0.5)
    err = float((c.astype("float32") - ref).abs().max())
    where = "GPU" if on_gpu else "CPU"
    print(f"[{where}] C = A @ B, {M}x{K} @ {K}x{N} {dtype}: {'OK' if ok else 'MISMATCH'} vs paddle.matmul (max abs err {err:.2e})")
    tl_us = time_per_call(kernel, a, b, sync=sync) * 1e6
    pd_us = time_per_call(paddle.matmul, a, b, sync=sync) * 1e6
    print(f"[{where}] {tl_us:.1f} us per call (TileLang) vs {pd_us:.1f} us (paddle.matmul)")
    if not on_gpu:
        print(f"[{where}] TileLang's C target is a correctness target (plain loops, no SIMD or threads), "
              "not a fast CPU backend; its speed is for GPUs")
    return ok


def compile_error(exc: Exception) -> str:
    """nvcc's own error lines from a failed compile (TileLang's message starts with the whole CUDA source)."""
    lines = [ln.strip() for ln in str(exc).splitlines()
             if ("fatal" in ln or "error" in ln.lower()) and not ln.lstrip().startswith(("Command:", "Compilation error"))]
    return "; ".join(lines[-3:]) or str(exc).splitlines()[-1]


def compile_cuda_only(arch: str, M: int, N: int, K: int) -> None:
    if shutil.which("nvcc") is None and not os.path.exists(os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin", "nvcc")):
        print(f"[CUDA {arch}] skipped: nvcc not found (set CUDA_HOME or install the CUDA toolkit)")
        return
    try:
        kernel = tilelang.compile(gemm_cuda(M, N, K, pdl=has_pdl(arch)), out_idx=[2],
                                  target={"kind": "cuda", "arch": arch})
    except Exception as exc:  # noqa: BLE001 - nvcc's verdict, without the generated source TileLang prepends
        print(f"[CUDA {arch}] nvcc could not compile for {arch}: {compile_error(exc)}")
        return
    path = os.path.join(tempfile.gettempdir(), f"tilelang_paddle_quickstart_gemm_{arch}.cu")
    with open(path, "w") as f:
        f.write(kernel.get_kernel_source())
    print(f"[CUDA {arch}] compiled; generated CUDA source written to {path}")


def main(argv=None) -> int:
    args = parse_args(argv)
    on_gpu = paddle_sees_gpu()
    print(f"tilelang-paddle {tilelang.__version__}, Paddle {paddle.__version__}, "
          f"{'GPU' if on_gpu else 'CPU (Paddle sees no GPU)'}")
    ok = run(on_gpu, args.size, args.size, args.size)
    if args.arch:
        compile_cuda_only(args.arch, 1024, 1024, 1024)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
