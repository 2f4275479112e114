"""tilelang.paddle.prewarm: ranks split the compiles, each kernel is compiled once, results in order.

Real processes on one shared cache; the C++ compiler is a wrapper that logs each
call with the rank that made it, so a compile is seen where it happens.
"""

import os
import shutil
import signal
import stat
import subprocess
import sys
import textwrap
import time

import pytest

from conftest import run_python

BUILDS = """
import sys
import numpy as np, paddle
import tilelang
import tilelang.language as T
from tilelang.paddle import prewarm

def plus(c):
    @T.prim_func
    def main(A: T.Tensor((32,), "float32"), B: T.Tensor((32,), "float32")):
        with T.Kernel(1, threads=1) as _:
            for i in T.serial(32):
                B[i] = A[i] + c
    return main

def build(c):
    return lambda: tilelang.compile(plus(float(c)), out_idx=[1], target="c", execution_backend="cython")
"""

SCRIPT = BUILDS + """
COUNT = int(sys.argv[1])
TIMEOUT = float(sys.argv[2]) if len(sys.argv) > 2 else None
kernels = prewarm([build(c) for c in range(COUNT)], timeout=TIMEOUT)
a = np.random.default_rng(5).standard_normal(32).astype("float32")
for c, k in enumerate(kernels):
    np.testing.assert_allclose(k(paddle.to_tensor(a)).numpy(), a + c, rtol=1e-6)
print("prewarmed", len(kernels))
"""


def _cxx(tmp_path, log, hang_rank=None):
    real = shutil.which("g++")
    if real is None:
        pytest.skip("needs g++ on PATH")
    wrapper = tmp_path / "g++"
    hang = f'if [ "$PADDLE_TRAINER_ID" = "{hang_rank}" ]; then sleep 60; fi\n' if hang_rank is not None else ""
    wrapper.write_text(f"""#!/bin/sh
if [ "$1" = "--version" ]; then exec {real} "$@"; fi
echo "$PADDLE_TRAINER_ID" >> {log}
{hang}exec {real} "$@"
""")
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC)
    return str(wrapper)


def _ranks(tmp_path, env, world, args, timeout=300):
    script = tmp_path / "job.py"
    script.write_text(textwrap.dedent(SCRIPT))
    procs = [subprocess.Popen([sys.executable, str(script), *args], cwd=str(tmp_path), text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              env={**os.environ, **env, "PADDLE_TRAINER_ID": str(r), "PADDLE_TRAINERS_NUM": str(world)})
             for r in range(world)]
    return [(p.returncode, *p.communicate(timeout=timeout)) for p in procs]


def test_two_ranks_split_six_kernels_and_compile_each_once(tmp_path):
    log = tmp_path / "cxx.log"
    env = {"TILELANG_CACHE_DIR": str(tmp_path / "kc"), "CXX": _cxx(tmp_path, log)}
    # One kernel alone, to learn how many compiler calls one compile makes.
    single = run_python(SCRIPT.replace("sys.argv[1]", "'1'"), env={**env, "PADDLE_TRAINER_ID": "0",
                                                                  "TILELANG_CACHE_DIR": str(tmp_path / "kc1")})
    assert single.returncode == 0, single.stderr[-3000:]
    per_kernel = len(log.read_text().split())
    assert per_kernel >= 1
    log.unlink()

    results = _ranks(tmp_path, env, 2, ["6"])
    for rank, (_, out, err) in enumerate(results):
        assert "prewarmed 6" in out, f"rank {rank}:\n{out}\n{err[-3000:]}"
    calls = log.read_text().split()
    assert len(calls) == 6 * per_kernel, calls                          # each kernel compiled once
    assert calls.count("0") == calls.count("1") == 3 * per_kernel, calls  # three by each rank
    progress = [ln for ln in results[0][2].splitlines() if ln.startswith("prewarm [")]
    assert len(progress) == 6 and progress[-1].startswith("prewarm [6/6]"), results[0][2][-2000:]
    named = sorted(ln.split("] (", 1)[1].split(")", 1)[0] for ln in progress)   # each kernel by its factory and c
    assert named == [f"plus(c={float(c)!r}" for c in range(6)], progress
    assert not any(ln.startswith("prewarm [") for ln in results[1][2].splitlines())   # rank 0's console only

    log.unlink()
    again = _ranks(tmp_path, env, 2, ["6"])                              # a restart: all from the cache
    assert all("prewarmed 6" in out for _, out, _ in again)
    assert not log.exists(), log.read_text()


def test_a_rank_waiting_too_long_names_the_kernel_and_its_owner(tmp_path):
    log = tmp_path / "cxx.log"
    env = {"TILELANG_CACHE_DIR": str(tmp_path / "kc"), "CXX": _cxx(tmp_path, log, hang_rank=0)}
    script = tmp_path / "job.py"
    script.write_text(textwrap.dedent(SCRIPT))
    # Rank 0's compiler hangs inside its first compile (builds[0]); rank 1 does its share, then waits for it.
    hung = subprocess.Popen([sys.executable, str(script), "2"], cwd=str(tmp_path), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True,
                            env={**os.environ, **env, "PADDLE_TRAINER_ID": "0", "PADDLE_TRAINERS_NUM": "2"})
    try:
        deadline = time.monotonic() + 120
        while not (log.exists() and "0" in log.read_text().split()):   # rank 0 is in its compile, holding the lock
            assert hung.poll() is None and time.monotonic() < deadline, "rank 0 never reached its compile"
            time.sleep(0.2)
        proc = subprocess.run([sys.executable, str(script), "2", "4"], cwd=str(tmp_path), capture_output=True,
                              text=True, timeout=300,
                              env={**os.environ, **env, "PADDLE_TRAINER_ID": "1", "PADDLE_TRAINERS_NUM": "2"})
    finally:
        os.killpg(hung.pid, signal.SIGKILL)   # rank 0 and its sleeping compiler
        hung.wait()
    assert proc.returncode != 0, proc.stdout
    assert "TimeoutError: prewarm: rank 1 waited too long for builds[0]" in proc.stderr, proc.stderr[-3000:]
    assert "which rank 0 of 2 compiles" in proc.stderr and "held by process" in proc.stderr, proc.stderr[-3000:]


@pytest.mark.parametrize("kwargs, message", [
    ({"rank": 2, "world_size": 2}, "prewarm: rank must be an int in [0, 2), got 2"),
    ({"rank": 0, "world_size": 0}, "prewarm: world_size must be an int >= 1, got 0"),
    ({"timeout": -1}, "prewarm: timeout must be a number of seconds > 0, got -1"),
])
def test_bad_arguments_are_named(tilelang_mod, kwargs, message):
    from tilelang.paddle import prewarm

    with pytest.raises(ValueError) as info:
        prewarm([lambda: None], **kwargs)
    assert str(info.value) == message


def test_a_build_that_is_not_callable_is_named(tilelang_mod):
    from tilelang.paddle import prewarm

    with pytest.raises(TypeError, match=r"prewarm: builds\[1\] must be a callable that compiles one kernel, got int"):
        prewarm([lambda: None, 3])


TUNED = """
import sys
import numpy as np, paddle
import tilelang
import tilelang.language as T
from tilelang.paddle import prewarm

@tilelang.autotune(configs=[{"block": b} for b in (32, 64)])
@tilelang.jit(out_idx=[1], target="c", execution_backend="cython")
def tuned(N, block=32):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, block)) as bx:
            for i in T.serial(block):
                B[bx * block + i] = A[bx * block + i] * 3.0
    return main

if sys.argv[1] == "prewarm":
    (kernel,) = prewarm([lambda: tuned(256)], rank=1, world_size=2, timeout=4)
else:
    kernel = tuned(256)
print("tuned", kernel.config)
"""


def _hanging_cxx(tmp_path, log):
    """A g++ that logs each compile and, in a process started with HANG=1, sleeps in it holding the lock."""
    real = shutil.which("g++")
    if real is None:
        pytest.skip("needs g++ on PATH")
    wrapper = tmp_path / "g++"
    wrapper.write_text(f"""#!/bin/sh
if [ "$1" = "--version" ]; then exec {real} "$@"; fi
echo "$HANG" >> {log}
if [ "$HANG" = "1" ]; then sleep 120; fi
exec {real} "$@"
""")
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC)
    return str(wrapper)


@pytest.mark.parametrize("how", ["prewarm-timeout", "lock-timeout-variable"])
def test_an_autotuned_build_stops_at_the_timeout_naming_kernel_and_config(tmp_path, how):
    log = tmp_path / "cxx.log"
    env = {**os.environ, "TILELANG_CACHE_DIR": str(tmp_path / "kc"), "CXX": _hanging_cxx(tmp_path, log)}
    script = tmp_path / "tuned.py"
    script.write_text(textwrap.dedent(TUNED))
    hung = subprocess.Popen([sys.executable, str(script), "plain"], cwd=str(tmp_path), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True, env={**env, "HANG": "1"})
    try:
        deadline = time.monotonic() + 120
        while not (log.exists() and "1" in log.read_text().split()):   # in its first config's compile
            assert hung.poll() is None and time.monotonic() < deadline, "the hung tuner never reached a compile"
            time.sleep(0.2)
        extra = {} if how == "prewarm-timeout" else {"TILELANG_PADDLE_LOCK_TIMEOUT": "4"}
        start = time.monotonic()
        proc = subprocess.run([sys.executable, str(script), "prewarm" if how == "prewarm-timeout" else "plain"],
                              cwd=str(tmp_path), capture_output=True, text=True, timeout=300,
                              env={**env, "HANG": "0", **extra})
        took = time.monotonic() - start
    finally:
        os.killpg(hung.pid, signal.SIGKILL)
        hung.wait()
    assert proc.returncode != 0 and "tuned {" not in proc.stdout, proc.stdout + proc.stderr[-3000:]
    assert "TimeoutError: autotuning tuned: the compile of config {'block': 32} waited 4 s for the lock" \
        in proc.stderr, proc.stderr[-3000:]
    assert "tuning stopped instead of picking among the other configs" in proc.stderr, proc.stderr[-3000:]
    if how == "prewarm-timeout":
        assert "prewarm: rank 1 waited too long for builds[0]" in proc.stderr, proc.stderr[-3000:]
    assert took < 60, f"{took:.0f} s: the wait was not bounded by the 4 s timeout"


NODES = BUILDS + """
kernels = prewarm([build(c) for c in range(4)], scope=sys.argv[1], progress=True, workers=1)
print("prewarmed", len(kernels))
"""


@pytest.mark.parametrize("scope", ["node", "job"])
def test_each_node_compiles_every_kernel_once_split_by_its_own_ranks(tmp_path, scope):
    """Two simulated nodes of two ranks, the variables as paddle.distributed.launch sets them. scope="node": a
    kernel cache per node, each node's ranks split all four kernels; scope="job": one cache shared by the nodes,
    the job's four ranks split them."""
    real = shutil.which("g++")
    if real is None:
        pytest.skip("needs g++ on PATH")
    script = tmp_path / "nodes.py"
    script.write_text(textwrap.dedent(NODES))
    procs = []
    for node in range(2):
        log = tmp_path / (f"node{node}.log" if scope == "node" else "job.log")
        wrapper = tmp_path / f"g++-{node}"
        wrapper.write_text(f"#!/bin/sh\nif [ \"$1\" != \"--version\" ]; then echo \"$PADDLE_TRAINER_ID\" >> {log}; fi\n"
                           f"exec {real} \"$@\"\n")
        wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC)
        cache = tmp_path / (f"cache-node{node}" if scope == "node" else "cache-shared")
        for local in range(2):
            env = {**os.environ, "TILELANG_CACHE_DIR": str(cache), "CXX": str(wrapper),
                   "PADDLE_TRAINER_ID": str(2 * node + local), "PADDLE_TRAINERS_NUM": "4",
                   "PADDLE_LOCAL_RANK": str(local), "PADDLE_LOCAL_SIZE": "2", "PADDLE_NNODES": "2"}
            procs.append(subprocess.Popen([sys.executable, str(script), scope], cwd=str(tmp_path), text=True,
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env))
    results = [(p.wait(timeout=300), *p.communicate()) for p in procs]
    for job_rank, (rc, out, err) in enumerate(results):
        assert rc == 0 and "prewarmed 4" in out, f"rank {job_rank}:\n{out}\n{err[-3000:]}"
        own = sorted(int(line.split("builds[")[1].split("]")[0]) for line in err.splitlines()
                     if line.startswith("prewarm [") and "(this rank's share)" in line)
        local = job_rank % 2
        assert own == (list(range(local, 4, 2)) if scope == "node" else [job_rank]), (job_rank, own, err[-2000:])
    if scope == "node":
        counts = [len((tmp_path / f"node{n}.log").read_text().split()) for n in range(2)]
        assert counts[0] == counts[1] and counts[0] % 4 == 0, counts        # each node compiled all four, once
        assert len(list((tmp_path / "cache-node0").rglob("kernel_lib.so"))) == 4
    else:
        calls = (tmp_path / "job.log").read_text().split()
        assert len(calls) % 4 == 0 and len(set(calls)) == 4, calls          # once in the job, one by each rank


def test_workers_compile_a_ranks_share_at_once(tmp_path):
    """One process, workers=2: two compiles overlap in time (a compiler that takes a second makes it visible)."""
    real = shutil.which("g++")
    if real is None:
        pytest.skip("needs g++ on PATH")
    log = tmp_path / "spans.log"
    wrapper = tmp_path / "g++"
    wrapper.write_text(f"#!/bin/sh\nif [ \"$1\" = \"--version\" ]; then exec {real} \"$@\"; fi\n"
                       f"start=$(date +%s.%N); sleep 1; {real} \"$@\"; rc=$?\n"
                       f"echo \"$start $(date +%s.%N)\" >> {log}; exit $rc\n")
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC)
    code = textwrap.dedent(NODES).replace("workers=1", "workers=2").replace("scope=sys.argv[1]", 'scope="node"')
    proc = run_python(code, env={"TILELANG_CACHE_DIR": str(tmp_path / "kc"), "CXX": str(wrapper)}, timeout=300)
    assert proc.returncode == 0 and "prewarmed 4" in proc.stdout, proc.stderr[-3000:]
    spans = sorted(tuple(map(float, line.split())) for line in log.read_text().splitlines())
    assert any(b[0] < a[1] for a, b in zip(spans, spans[1:])), spans        # some compile began before one ended


@pytest.mark.parametrize("kwargs, message", [
    ({"scope": "world"}, "prewarm: scope must be one of 'node', 'job', got 'world'"),
    ({"workers": 0}, "prewarm: workers must be an int >= 1, got 0"),
])
def test_bad_scope_and_workers_are_named(tilelang_mod, kwargs, message):
    from tilelang.paddle import prewarm

    with pytest.raises(ValueError) as info:
        prewarm([lambda: None], **kwargs)
    assert str(info.value) == message
