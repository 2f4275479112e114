"""Small helpers the examples share: GPU detection, timing, compile-only CUDA builds."""

import shutil
import time

import paddle

import tilelang


def paddle_sees_gpu() -> bool:
    return paddle.is_compiled_with_cuda() and paddle.device.cuda.device_count() > 0


def synchronizer(on_gpu: bool):
    """What to call before reading a clock: wait for the GPU, or nothing on the CPU."""
    return paddle.device.synchronize if on_gpu else (lambda: None)


def time_us(fn, sync, iters=20) -> float:
    """Mean microseconds per call of ``fn`` after one warm-up call, synchronised at both ends."""
    fn()
    sync()
    start = time.perf_counter()
    for _ in range(iters):
        fn()
    sync()
    return (time.perf_counter() - start) / iters * 1e6


def compile_for_arch(program, out_idx, arch: str | None, what: str) -> None:
    """With ``--arch`` and nvcc present, compile ``program`` for that CUDA arch (no GPU needed) and say so."""
    if arch and shutil.which("nvcc"):
        kernel = tilelang.compile(program, out_idx=out_idx, target={"kind": "cuda", "arch": arch})
        print(f"compiled the {what} CUDA kernel for {arch} ({len(kernel.get_kernel_source())} chars of CUDA source)")
