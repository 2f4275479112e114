"""``tilelang-paddle selftest``: the product's contract, run on this install and whatever Paddle it has.

One line per check (``PASS`` / ``FAIL`` / ``SKIP <reason>`` and its time); the
exit status is 1 when any check fails. On the CPU (:mod:`.paddle_checks`): a C
kernel through the fast launcher and upstream's, ``autograd_function``,
``custom_op``, a bundle served where no compiler is on PATH. On every GPU Paddle
sees (:mod:`.gpu_checks`, written against the driver so that a stand-in driver
runs the same code where there is no Paddle): GEMMs on both backends, the
current GPU kept, another GPU's tensors, ``stream_guard``, CUDA graphs,
``do_bench``, PDL, and the CUDA ``custom_op``. ``--json FILE`` writes the
doctor's facts and every result (rewritten after each check, so a crash leaves
the check it died in).
"""

from __future__ import annotations

import ctypes
import os
import sys

import numpy as np

from .report import Report, Skip

GPU_CHECK_NAMES = (
    "gpu: GEMM (tvm_ffi and cython) against numpy, output on the inputs' GPU, current GPU kept",
    "gpu: tensors on gpu:1 while gpu:0 is current",
    "gpu: stream_guard: a kernel runs after the guarded stream's work",
    "gpu: CUDA graph capture and replay of a kernel",
    "gpu: do_bench with events and with CUDA graphs",
    "gpu: PDL: a kernel without T.pdl_sync() after one that triggers early sees its writes",
    "gpu: CUDA custom_op, eager and under to_static",
)


def cuda_driver_version() -> str | None:
    """The NVIDIA driver's CUDA version (``cuDriverGetVersion``), or None where no driver library loads."""
    try:
        lib = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return None
    version = ctypes.c_int(0)
    if lib.cuDriverGetVersion(ctypes.byref(version)) != 0:
        return None
    return f"{version.value // 1000}.{version.value % 1000 // 10}"


def facts(driver) -> dict:
    from tilelang_paddle.facts import report as doctor_report

    rows, _ok = doctor_report()
    gpus = [driver.gpu_facts(i) for i in range(driver.device_count())] if driver.cuda else []
    return {"doctor": dict(rows), "gpus": gpus, "cuda_driver": cuda_driver_version(), "python": sys.version.split()[0]}


def _no_gpu_reason(driver) -> str | None:
    if not driver.cuda:
        return "Paddle is a CPU-only build (paddle.is_compiled_with_cuda() is False); install paddlepaddle-gpu>=3.3"
    if driver.device_count() == 0:
        return ("this GPU build of Paddle sees no GPU (paddle.device.cuda.device_count() is 0; check "
                "CUDA_VISIBLE_DEVICES and the NVIDIA driver)")
    return None


def _no_compiler_reason() -> str | None:
    """Why the GPU checks cannot compile their kernels here (no nvcc, no C++ compiler), or None."""
    import shutil

    from tilelang.contrib.cc import get_cplus_compiler
    from tilelang.env import env

    nvcc = shutil.which("nvcc") or (os.path.join(env.CUDA_HOME, "bin", "nvcc") if env.CUDA_HOME else None)
    if not nvcc or not os.path.exists(nvcc):
        return ("no nvcc on PATH or under CUDA_HOME: the GPU checks compile their kernels; install the CUDA "
                "toolkit or set CUDA_HOME")
    if get_cplus_compiler() is None:
        return "no C++ compiler ($CXX, $CC, g++, clang++ or c++ on PATH): the GPU checks compile host code"
    return None


def run(json_path: str | None = None, quick: bool = False, stream=None) -> int:
    """Run every check (see module docstring); 0 when none failed, else 1."""
    from ..driver import paddle_driver
    from .gpu_checks import GpuChecks
    from .paddle_checks import CpuChecks, CudaOpChecks, paddle_harness

    driver = paddle_driver()
    report = Report(json_path=os.path.abspath(json_path) if json_path else None, stream=stream)
    report.facts = facts(driver)
    out = stream or sys.stdout
    gpus = report.facts["gpus"]
    print(f"tilelang-paddle selftest: {report.facts['doctor'].get('tilelang-paddle')}, Paddle "
          f"{report.facts['doctor'].get('Paddle')}, {len(gpus)} GPU(s)" + (" (--quick)" if quick else ""),
          file=out, flush=True)
    rng = np.random.default_rng()
    for name, check, cite in CpuChecks(rng, quick).plan():
        report.run(name, check, cite)
    reason = _no_gpu_reason(driver) or _no_compiler_reason()
    if reason is not None:
        for name in GPU_CHECK_NAMES:
            report.run(name, _skip(reason))
    else:
        harness, count = paddle_harness(), driver.device_count()
        for index in range(1 if quick else count):
            plan = GpuChecks(harness, index, rng).plan(quick) + CudaOpChecks(index, rng, quick).plan()
            for name, check, cite in plan:
                report.run(name, check, cite)
        if count < 2 or quick:
            report.run(GPU_CHECK_NAMES[1], _skip(f"needs two GPUs; Paddle sees {count}" if count < 2
                                                 else "--quick runs the GPU checks on gpu:0 only"))
    print(f"{report.summary()}" + (f"; report written to {report.json_path}" if report.json_path else ""),
          file=out, flush=True)
    if report.failed:
        attach = report.json_path or "the file `tilelang-paddle selftest --json report.json` writes"
        print(f"A check failed: please open an issue with this output, attaching {attach}.", file=out, flush=True)
    return 1 if report.failed else 0


def _skip(reason: str):
    def check():
        raise Skip(reason)

    return check
