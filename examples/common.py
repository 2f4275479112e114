"""Small helpers the examples share: argument types, GPU detection, timing, compile-only CUDA builds.

Importing this module is cheap (Paddle and TileLang are imported inside the
functions that need them), so an example can parse its arguments, and answer
``--help``, before it pays for those imports.
"""

import argparse
import re
import time

ARCH_PATTERN = r"sm_[1-9][0-9]{1,2}[af]?"


def arch_type(text: str) -> str:
    """argparse ``type=`` for ``--arch``: a CUDA arch name (sm_80, sm_90a, sm_100a)."""
    if re.fullmatch(ARCH_PATTERN, text) is None:
        raise argparse.ArgumentTypeError(f"expected a CUDA arch such as sm_80, sm_90a or sm_100a, got {text!r}")
    return text


def positive_int(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text}")
    return value


def non_negative_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text}")
    return value


class _Defaults(argparse.ArgumentDefaultsHelpFormatter):
    """Shows real defaults; an option whose default depends on the machine says so in its own help."""

    def _get_help_string(self, action):
        if action.default is None or action.default is False:
            return action.help
        return super()._get_help_string(action)


def parser(doc: str) -> argparse.ArgumentParser:
    """An example's parser: its docstring's first line, defaults shown in ``--help``."""
    return argparse.ArgumentParser(description=doc.splitlines()[0], formatter_class=_Defaults)


def gpu_possible() -> bool:
    """False when this machine certainly has no NVIDIA GPU (no driver device files): Paddle cannot see one.

    Lets an example apply its CPU rules to its arguments before the seconds Paddle takes to import.
    """
    import os

    return os.path.exists("/dev/nvidiactl") or os.path.exists("/dev/nvidia0")


def paddle_sees_gpu() -> bool:
    import paddle

    return paddle.is_compiled_with_cuda() and paddle.device.cuda.device_count() > 0


def synchronizer(on_gpu: bool):
    """What to call before reading a clock: wait for the GPU, or nothing on the CPU."""
    import paddle

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


def empty_batch_safe(kernel):
    """``kernel`` for row-parallel CUDA kernels, answering an empty batch without a launch.

    A grid sized by a zero row count has no blocks, and CUDA refuses to launch it
    (``cudaErrorInvalidValue``); on the CPU target an empty loop just runs, so CPU
    kernels need no wrapper. The output of an empty batch is an empty tensor.
    """
    import paddle

    def call(x, *rest):
        if x.shape[0] == 0:
            return paddle.empty_like(x)
        return kernel(x, *rest)

    return call


def compile_error(exc: Exception) -> str:
    """nvcc's own error lines from a failed compile (TileLang's message starts with the whole CUDA source)."""
    lines = [ln.strip() for ln in str(exc).splitlines()
             if ("fatal" in ln or "error" in ln.lower()) and not ln.lstrip().startswith(("Command:", "Compilation error"))]
    return "; ".join(lines[-3:]) or str(exc).strip().splitlines()[-1]


def compile_for_arch(program, out_idx, arch, what: str) -> bool:
    """With ``--arch`` and nvcc present, compile ``program`` for that CUDA arch (no GPU needed) and say so.

    Returns False when nvcc refused it (after printing nvcc's reason, not the generated source).
    """
    import shutil

    import tilelang

    if not arch or not shutil.which("nvcc"):
        return True
    try:
        kernel = tilelang.compile(program, out_idx=out_idx, target={"kind": "cuda", "arch": arch})
    except Exception as exc:  # noqa: BLE001 - report nvcc's verdict in one line
        print(f"could not compile the {what} CUDA kernel for {arch}: {compile_error(exc)}")
        return False
    print(f"compiled the {what} CUDA kernel for {arch} ({len(kernel.get_kernel_source())} chars of CUDA source)")
    return True
