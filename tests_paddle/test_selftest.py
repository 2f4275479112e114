"""`tilelang-paddle selftest`: CPU checks pass here, GPU checks skip naming why, failures are reported.

The selftest runs in its own process each time (it prints, exits and may crash). A planted fault
in the launch runtime must turn its check into a FAIL with what differed, and the exit status 1.
The GPU checks' code runs on a GPU machine with a torch stand-in driver (docs/verification.md);
here their kernels are compiled for sm_90a, so a TileLang bump that breaks them fails in CI.
(No `from __future__ import annotations`: TileLang evaluates kernel annotations.)
"""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import compiler_free_env, run_python

EXE = shutil.which("tilelang-paddle") or str(Path(sys.executable).parent / "tilelang-paddle")
CPU_CHECKS = ("cpu: C kernel through the fast launcher, outputs in out_idx order",
              "cpu: C kernel through upstream's launcher, outputs in out_idx order",
              "cpu: autograd_function forward and backward",
              "cpu: custom_op built and called",
              "cpu: a bundle serves a kernel where no compiler is on PATH")
NO_GPU = "Paddle is a CPU-only build (paddle.is_compiled_with_cuda() is False)"


def _lines(stdout: str) -> dict:
    """``{check name: its result text}`` from the selftest's output."""
    out = {}
    for line in stdout.splitlines():
        name, sep, result = line.partition(" ... ")
        if sep:
            out[name] = result
    return out


def test_selftest_passes_on_the_cpu_and_skips_each_gpu_check_naming_why(tmp_path):
    import paddle

    if paddle.is_compiled_with_cuda():
        pytest.skip("this Paddle has CUDA: the GPU checks would run (see .ci/gpu)")
    report = tmp_path / "report.json"
    proc = subprocess.run([EXE, "selftest", "--json", str(report)], capture_output=True, text=True, timeout=900,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    lines = _lines(proc.stdout)
    for name in CPU_CHECKS:
        assert lines[name].startswith("PASS"), (name, lines.get(name))
    from tilelang.paddle_runtime.selftest import GPU_CHECK_NAMES

    for name in GPU_CHECK_NAMES:
        assert lines[name].startswith("SKIP") and NO_GPU in lines[name], (name, lines.get(name))
    assert "5 passed, 0 failed, 7 skipped" in proc.stdout
    data = json.loads(report.read_text())
    assert data["ok"] is True and "running" not in data
    assert "CPU-only build" in data["facts"]["doctor"]["Paddle"] and data["facts"]["gpus"] == []
    assert [c["name"] for c in data["checks"]] == [*CPU_CHECKS, *GPU_CHECK_NAMES]
    assert {c["status"] for c in data["checks"][:5]} == {"PASS"}
    assert "served n=" in data["checks"][4]["detail"]


def test_a_planted_fault_fails_its_check_by_message_and_exits_1(tmp_path):
    """The fast launcher returning its outputs in reverse order: its check names both outputs, upstream's passes."""
    report = tmp_path / "report.json"
    proc = run_python(f"""
        import sys
        import paddle
        paddle.enable_compat(scope={{"tilelang"}}, silent=True)
        import tilelang
        from tilelang.paddle_runtime import launch, selftest

        real = launch.KernelRuntime.fast_table

        def reversed_outputs(self):
            fn, table, outputs, dyn_max = real(self)
            return fn, table, outputs[::-1], dyn_max

        launch.KernelRuntime.fast_table = reversed_outputs
        sys.exit(selftest.run({str(report)!r}, quick=True))
    """, timeout=600)
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    lines = _lines(proc.stdout)
    fast = lines[CPU_CHECKS[0]]
    assert fast.startswith("FAIL"), fast
    assert "first output (out_idx 3: P = A * B" in fast and "values differ" in fast and "expected" in fast
    assert lines[CPU_CHECKS[1]].startswith("PASS")
    for name in CPU_CHECKS[3:]:
        assert lines[name].startswith("SKIP") and "--quick" in lines[name]
    assert f"please open an issue with this output, attaching {report}" in proc.stdout
    data = json.loads(report.read_text())
    assert data["ok"] is False
    assert [c["name"] for c in data["checks"] if c["status"] == "FAIL"] == [CPU_CHECKS[0]]


def test_a_crash_inside_a_check_leaves_that_check_in_the_report(tmp_path):
    report = tmp_path / "report.json"
    proc = run_python(f"""
        import ctypes
        import paddle
        paddle.enable_compat(scope={{"tilelang"}}, silent=True)
        import tilelang
        from tilelang.paddle_runtime import selftest
        from tilelang.paddle_runtime.selftest import paddle_checks

        paddle_checks.CpuChecks.autograd = lambda self: ctypes.string_at(0)  # a segmentation fault
        selftest.run({str(report)!r}, quick=True)
    """, timeout=600)
    assert proc.returncode < 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    data = json.loads(report.read_text())
    assert data["running"] == CPU_CHECKS[2] and data["ok"] is False
    assert [c["status"] for c in data["checks"]] == ["PASS", "PASS"]


def test_without_a_compiler_the_build_checks_skip_naming_it(tmp_path):
    env = compiler_free_env(tmp_path)
    proc = subprocess.run([sys.executable, "-m", "tilelang_paddle", "selftest", "--quick"], capture_output=True,
                          text=True, env=env, timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    lines = _lines(proc.stdout)
    for name in CPU_CHECKS[:3]:
        assert lines[name].startswith("SKIP") and "no C++ compiler ($CXX, $CC, g++, clang++ or c++ on PATH)" \
            in lines[name], (name, lines[name])


def test_the_gpu_checks_kernels_compile_for_sm90a():
    """Every kernel the GPU checks launch, as they compile it (here for Hopper, without a GPU)."""
    import tilelang
    from tilelang.paddle_runtime.selftest import gpu_checks, kernels as K

    n = 16384
    builds = [(K.gemm(*gpu_checks.GEMM_SHAPE), None),
              (K.negate_in_place(gpu_checks.GEMM_SHAPE[0], gpu_checks.GEMM_SHAPE[2]), None),
              (K.spin_then_write(n), f"< {K.SPIN_ITERS}"), (K.plus_one(n), None),
              (K.spin_then_write(n, 1 << 16, True), "cudaTriggerProgrammaticLaunchCompletion"), (K.row_scale(64), None)]
    for prim_func, marker in builds:
        source = tilelang.compile(prim_func, target={"kind": "cuda", "arch": "sm_90a"},
                                  execution_backend="tvm_ffi").get_kernel_source()
        assert "__global__" in source
        if marker:
            assert marker in source, (prim_func, marker)


def test_the_doctor_points_to_the_readme_section_that_explains_the_selftest():
    from tilelang_paddle.facts import report

    rows = dict(report()[0])
    assert rows["next"].startswith("`tilelang-paddle selftest`") and '"Check your install"' in rows["next"]
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    section = readme.split("## Check your install\n", 1)[1].split("\n## ", 1)[0]
    assert "tilelang-paddle selftest --json" in section and "--quick" in section


def test_the_gpu_job_installs_gpu_paddle_without_the_cpu_build_and_runs_the_selftest():
    """.ci/gpu is for a GPU runner (not run here): its shell parses, and it never installs the CPU Paddle."""
    script = Path(__file__).resolve().parents[1] / ".ci" / "gpu"
    assert subprocess.run(["bash", "-n", str(script)], capture_output=True).returncode == 0
    text = script.read_text()
    assert '"paddlepaddle-gpu>=3.3"' in text and ".[test]" not in text and ".[cpu" not in text
    assert "tilelang-paddle selftest --json selftest.json" in text
    for test_file in ("test_gpu.py", "test_custom_op_cuda.py", "test_pdl_launch.py"):
        assert f"tests_paddle/{test_file}" in text and (script.parents[1] / "tests_paddle" / test_file).exists()


def test_the_paddle_driver_answers_everything_the_gpu_checks_ask():
    """The GPU checks cannot run here: every driver method they call, and every topic they cite, must exist."""
    import re

    from tilelang.paddle_runtime import driver
    from tilelang.paddle_runtime.selftest import gpu_checks

    source = Path(gpu_checks.__file__).read_text()
    called = set(re.findall(r"\b(?:d|self\.d|driver)\.(\w+)\(", source))
    assert {"stream", "current_gpu", "set_gpu", "new_stream", "stream_guard", "cuda_graph"} <= called
    instance = driver.paddle_driver()  # some methods are bound per build in __init__
    missing = sorted(name for name in called if not callable(getattr(instance, name, None)))
    assert not missing, f"the GPU checks call driver methods PaddleDriver lacks: {missing}"
    cited = " ".join(re.findall(r"relied_on\(d, ([^)]*)\)", source))
    topics = set(re.findall(r'(?<!== )"(\w+)"', cited))  # not the operand of a comparison (backend == "event")
    assert topics and topics <= set(driver.PaddleDriver.RELIES_ON), topics - set(driver.PaddleDriver.RELIES_ON)


def test_the_drivers_selftest_extras_on_the_cpu():
    """The extras a CPU build can answer: a numpy array in and out, unchanged, and its address."""
    import numpy as np

    from tilelang.paddle_runtime.driver import paddle_driver

    d = paddle_driver()
    array = np.random.default_rng().standard_normal((3, 5)).astype("float32")
    tensor = d.from_numpy(array, -1)
    assert d.gpu_of(tensor) == -1
    np.testing.assert_array_equal(d.to_numpy(tensor), array)
    assert d.data_ptr(tensor) == tensor.data_ptr() != 0


@pytest.mark.parametrize("what", ["missing-parent", "a-directory", "read-only-directory"])
def test_a_json_path_that_cannot_be_written_is_one_line_naming_it(tmp_path, what):
    import os

    if what == "missing-parent":
        path, why = tmp_path / "no-such-dir" / "report.json", f"its directory {tmp_path / 'no-such-dir'} does not exist"
    elif what == "a-directory":
        path, why = tmp_path / "a-directory", "it is a directory; name a file"
        path.mkdir()
    else:
        if os.geteuid() == 0:
            pytest.skip("root writes into a directory without write permission")
        (tmp_path / "ro").mkdir(mode=0o500)
        path, why = tmp_path / "ro" / "report.json", "it cannot be written (Permission denied)"
    before = sorted(p.name for p in tmp_path.rglob("*"))
    proc = subprocess.run([EXE, "selftest", "--quick", "--json", str(path)], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 2, proc.stdout + proc.stderr[-2000:]
    assert proc.stderr == f"tilelang-paddle selftest: --json {path}: {why}\n" and proc.stdout == ""
    assert sorted(p.name for p in tmp_path.rglob("*")) == before                  # nothing left behind
