"""Kernels and operators in multi-process jobs, with real processes (no mocks).

- 4 processes started together build the same op and compile the same kernels into fresh shared caches:
  all succeed with numpy-checked results; each kernel is compiled once and the op built once, in all.
- a process keeps serving an op while another rebuilds and re-saves into the same directory.
- a corrupted cached op library is rebuilt; a complete read-only op cache is used without writes.
- a failed build says why (the compiler's lines) and where the full log is.
- a lock held by a hung process times out naming the lock file; a killed holder releases it.
- ``paddle.distributed.launch --nproc_per_node 2`` on the CPU runs a kernel and an op per rank.
"""

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from conftest import ROOT, run_python

TESTS = Path(__file__).resolve().parent

# One rank's work: three kernels (fuzz seeds) and one op, checked against numpy.
RANK = f"""
import os, sys, time
sys.path.insert(0, {str(TESTS)!r})
import numpy as np, paddle
import tilelang
from tilelang.paddle import custom_op
from signature_fuzz import random_spec, load_kernel_func, random_inputs, random_sizes, reference
from test_custom_op import scale_forward, scale_backward
from pathlib import Path

start = float(os.environ.get("START_AT", "0"))
while time.time() < start:
    time.sleep(0.005)
kernel_dir = Path(os.environ["KERNEL_SRC"]) / os.environ["RANK_SEED"]  # a directory per rank: no shared writes
kernel_dir.mkdir()
rng = np.random.default_rng(int(os.environ.get("RANK_SEED", "0")))
for seed in (20261203, 20261206, 20261209):
    spec = random_spec(seed)
    kernel = tilelang.compile(load_kernel_func(spec, kernel_dir), out_idx=list(spec.out_idx), target="c",
                              execution_backend="cython")
    sizes = random_sizes(spec, rng, allow_zero=False)
    arrays = random_inputs(spec, sizes, rng)
    got = kernel(*[paddle.to_tensor(a) for a in arrays])
    got = list(got) if isinstance(got, (list, tuple)) else [got]
    for g, w in zip(got, reference(spec, arrays, sizes)):
        np.testing.assert_array_equal(g.numpy(), w)
op = custom_op(scale_forward(8), name="tl_ranks_scale", backward=scale_backward(8))
x, w = rng.standard_normal((5, 8)).astype("float32"), rng.standard_normal(8).astype("float32")
np.testing.assert_allclose(op(paddle.to_tensor(x), paddle.to_tensor(w)).numpy(), x * w, rtol=1e-6)
print("RANK OK", op.library)
"""


def _count(text: str, what: str) -> int:
    return text.count(what)


def _spawn(code: str, env: dict, path: Path) -> subprocess.Popen:
    path.write_text(textwrap.dedent(code))
    return subprocess.Popen([sys.executable, str(path)], env={**os.environ, **env}, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, cwd=str(path.parent))


def test_four_processes_share_one_compile_per_kernel_and_one_op_build(tmp_path):
    kernel_src = tmp_path / "src"
    kernel_src.mkdir()
    env = {"TILELANG_CACHE_DIR": str(tmp_path / "kernels"), "TILELANG_PADDLE_OP_CACHE": str(tmp_path / "ops"),
           "TILELANG_PADDLE_LOG_LEVEL": "INFO", "KERNEL_SRC": str(kernel_src), "START_AT": str(time.time() + 8)}
    procs = [_spawn(RANK, {**env, "RANK_SEED": str(r)}, tmp_path / f"rank{r}.py") for r in range(4)]
    outs = [p.communicate(timeout=600)[0] for p in procs]
    for r, (p, out) in enumerate(zip(procs, outs)):
        assert p.returncode == 0 and "RANK OK" in out, f"rank {r}:\n{out[-4000:]}"
    everything = "\n".join(outs)
    # 3 fuzz kernels + the op's forward and backward kernels, each compiled by one process only.
    assert _count(everything, "TileLang begins to compile kernel") == 5, everything[-6000:]
    assert _count(everything, "custom_op: building operator tl_ranks_scale") == 1
    libraries = {line.split("RANK OK ", 1)[1] for line in everything.splitlines() if "RANK OK " in line}
    assert len(libraries) == 1  # one op directory shared by every rank
    op_dirs = [p for p in (tmp_path / "ops").iterdir() if p.is_dir()]
    assert len(op_dirs) == 1 and not [p for p in op_dirs[0].iterdir() if ".build-" in p.name]


SERVER = """
import os, sys, time
sys.path.insert(0, {tests!r})
import numpy as np, paddle
from tilelang.paddle import custom_op
from test_custom_op import scale_forward
op = custom_op(scale_forward(8), name="tl_served", directory={directory!r})
x, w = np.random.rand(4, 8).astype("float32"), np.random.rand(8).astype("float32")
open({ready!r}, "w").write("ready")
calls, end = 0, time.time() + {seconds}
while time.time() < end:
    np.testing.assert_allclose(op(paddle.to_tensor(x), paddle.to_tensor(w)).numpy(), x * w, rtol=1e-6)
    calls += 1
print("SERVED", calls)
"""

REBUILD = """
import sys
sys.path.insert(0, {tests!r})
import paddle, tilelang
import tilelang.language as T
from tilelang.paddle import custom_op, save_ops

rows = T.dynamic("rows")

@T.prim_func
def doubled(X: T.Tensor((rows, 8), "float32"), W: T.Tensor((8,), "float32"), Y: T.Tensor((rows, 8), "float32")):
    with T.Kernel(rows) as r:
        for j in T.serial(8):
            Y[r, j] = X[r, j] * W[j] * 2.0

op = custom_op(tilelang.compile(doubled, out_idx=[2], target="c", execution_backend="cython"), name="tl_served",
               directory={directory!r})
print("SAVED", save_ops({directory!r} + "/model", op))
"""


def test_a_server_keeps_answering_while_its_directory_is_rebuilt_and_resaved(tmp_path):
    directory = str(tmp_path / "served")
    ready = tmp_path / "ready"
    fmt = dict(tests=str(TESTS), directory=directory, ready=str(ready), seconds=25)
    server = _spawn(SERVER.format(**fmt), {}, tmp_path / "server.py")
    deadline = time.time() + 300
    while not ready.exists():
        assert server.poll() is None, server.communicate()[0][-3000:]
        assert time.time() < deadline
        time.sleep(0.1)
    before = {p.name: p.stat().st_ino for p in (Path(directory) / "tl_served").glob("*.so")}
    rebuild = run_python(REBUILD.format(**fmt))
    assert rebuild.returncode == 0, rebuild.stdout + rebuild.stderr[-3000:]
    saved = eval(rebuild.stdout.split("SAVED ", 1)[1].strip())
    # save_ops returns every file it wrote: the op library and its kernel library.
    assert sorted(Path(p).name for p in saved) == ["tl_served_forward_kernel.so", "tl_served_package.so"]
    after = {p.name: p.stat().st_ino for p in (Path(directory) / "tl_served").glob("*.so")}
    assert before.keys() == after.keys() and all(before[k] != after[k] for k in before)  # new files, not rewritten
    out = server.communicate(timeout=300)[0]
    assert server.returncode == 0 and "SERVED" in out, out[-3000:]


BUILD_ONCE = """
import sys
sys.path.insert(0, {tests!r})
import numpy as np, paddle
from tilelang.paddle import custom_op
from test_custom_op import scale_forward
op = custom_op(scale_forward(8), name="tl_cached", directory={directory!r})
x, w = np.random.rand(3, 8).astype("float32"), np.random.rand(8).astype("float32")
np.testing.assert_allclose(op(paddle.to_tensor(x), paddle.to_tensor(w)).numpy(), x * w, rtol=1e-6)
print("OK")
"""


@pytest.fixture(scope="module")
def built_op(tmp_path_factory):
    directory = tmp_path_factory.mktemp("cached") / "op"
    proc = run_python(BUILD_ONCE.format(tests=str(TESTS), directory=str(directory)),
                      env={"TILELANG_PADDLE_LOG_LEVEL": "INFO"})
    assert proc.returncode == 0 and "OK" in proc.stdout, proc.stdout + proc.stderr[-3000:]
    assert "building operator tl_cached" in proc.stdout + proc.stderr
    return directory


def test_a_cache_hit_runs_no_build_and_prints_nothing(built_op):
    proc = run_python(BUILD_ONCE.format(tests=str(TESTS), directory=str(built_op)),
                      env={"TILELANG_PADDLE_LOG_LEVEL": "INFO"})
    assert proc.returncode == 0 and "OK" in proc.stdout, proc.stdout + proc.stderr[-3000:]
    assert "building operator" not in proc.stdout + proc.stderr
    assert "Compiling user custom op" not in proc.stdout + proc.stderr


@pytest.mark.parametrize("damage", ["truncated to 4 KiB", "emptied", "random bytes"])
def test_a_corrupted_cached_op_library_is_rebuilt(built_op, tmp_path, damage):
    import shutil

    directory = tmp_path / "op"
    shutil.copytree(built_op, directory)
    library = directory / "tl_cached" / "tl_cached.so"
    data = library.read_bytes()
    library.write_bytes({"truncated to 4 KiB": data[:4096], "emptied": b"",
                         "random bytes": np.random.default_rng(0).bytes(len(data))}[damage])
    proc = run_python(BUILD_ONCE.format(tests=str(TESTS), directory=str(directory)),
                      env={"TILELANG_PADDLE_LOG_LEVEL": "INFO"})
    assert proc.returncode == 0 and "OK" in proc.stdout, proc.stdout + proc.stderr[-3000:]
    assert "building operator tl_cached" in proc.stdout + proc.stderr
    assert library.read_bytes()[:4] == b"\x7fELF"


def test_a_complete_read_only_op_cache_is_used_without_writing(built_op, tmp_path):
    import shutil

    directory = tmp_path / "op"
    shutil.copytree(built_op, directory)
    snapshot = {p: (p.stat().st_mtime_ns, p.stat().st_size) for p in directory.rglob("*")}
    for p in [directory, *directory.rglob("*")]:
        p.chmod(0o555 if p.is_dir() else 0o444)
    try:
        proc = run_python(BUILD_ONCE.format(tests=str(TESTS), directory=str(directory)))
    finally:
        for p in [directory, *directory.rglob("*")]:
            p.chmod(0o755 if p.is_dir() else 0o644)
    assert proc.returncode == 0 and "OK" in proc.stdout, proc.stdout + proc.stderr[-3000:]
    assert {p: (p.stat().st_mtime_ns, p.stat().st_size) for p in directory.rglob("*")} == snapshot


def test_a_failed_build_gives_the_compilers_error_and_the_log(tmp_path):
    from tilelang.paddle import op_build

    with pytest.raises(RuntimeError) as err:
        op_build.build_or_load(tmp_path / "op", "tl_broken", "this is not C++;\n", False, [], "digest")
    message = str(err.value)
    assert "custom_op: building operator tl_broken failed:" in message
    assert "error" in message and "this is not C++" not in message.splitlines()[0]
    log = Path(message.rsplit("full build log: ", 1)[1].strip())
    assert log.exists() and "error" in log.read_text()
    assert not [p for p in (tmp_path / "op").iterdir() if ".build-" in p.name and p.is_dir()]  # no temporary directory


HOLD = """
import sys, time
from tilelang.paddle_runtime.file_lock import FileLock
with FileLock(sys.argv[1]):
    print("HELD", flush=True)
    time.sleep(600)
"""


def test_a_lock_held_by_a_hung_process_times_out_and_a_killed_holder_releases_it(tmp_path):
    from tilelang.paddle_runtime.file_lock import FileLock

    lock = tmp_path / "op.lock"
    script = tmp_path / "hold.py"
    script.write_text(HOLD)
    holder = subprocess.Popen([sys.executable, str(script), str(lock)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "HELD"
        with pytest.raises(TimeoutError, match=rf"waited 1 s for the lock {lock} \(a test\), held by process "
                                               rf"{holder.pid}"):
            with FileLock(lock, timeout=1, what="a test"):
                pass
        holder.send_signal(signal.SIGKILL)
        holder.wait()
        t0 = time.monotonic()
        with FileLock(lock, timeout=10):
            assert time.monotonic() - t0 < 2
    finally:
        if holder.poll() is None:
            holder.kill()


LAUNCHED = """
import os, sys
sys.path.insert(0, {tests!r})
import numpy as np, paddle
import paddle.distributed as dist
import tilelang
from tilelang.paddle import custom_op
from test_custom_op import scale_forward

dist.init_parallel_env()
rank = dist.get_rank()
kernel = scale_forward(8)
x = np.full((2, 8), rank + 1, dtype="float32"); w = np.arange(8, dtype="float32")
y = kernel(paddle.to_tensor(x), paddle.to_tensor(w))
op = custom_op(kernel, name="tl_launched")
z = op(paddle.to_tensor(x), paddle.to_tensor(w))
total = y + z
dist.all_reduce(total)
np.testing.assert_allclose(total.numpy(), 2 * (1 + 2) * np.tile(w, (2, 1)), rtol=1e-6)
print("LAUNCHED RANK", rank, "OK")
"""


def test_paddle_distributed_launch_two_cpu_ranks(tmp_path):
    """Paddle 3.3.1's CPU launcher fails (IndexError in collective.py) when CUDA_VISIBLE_DEVICES is set at all."""
    script = tmp_path / "launched.py"
    script.write_text(LAUNCHED.format(tests=str(TESTS)))
    env = {k: v for k, v in os.environ.items() if k != "CUDA_VISIBLE_DEVICES"}
    env.update(TILELANG_CACHE_DIR=str(tmp_path / "kernels"), TILELANG_PADDLE_OP_CACHE=str(tmp_path / "ops"))
    proc = subprocess.run([sys.executable, "-m", "paddle.distributed.launch", "--nproc_per_node", "2",
                           "--log_dir", str(tmp_path / "log"), str(script)], env=env, capture_output=True, text=True,
                          timeout=600, cwd=str(tmp_path))
    logs = "\n".join(p.read_text(errors="replace") for p in sorted((tmp_path / "log").glob("workerlog.*")))
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:] + logs[-4000:]
    assert "LAUNCHED RANK 0 OK" in logs and "LAUNCHED RANK 1 OK" in logs, logs[-4000:]
