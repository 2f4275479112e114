"""Safe under fork, full disks, odd paths and user code (issue 27), each in a fresh process.

- a child forked while its parent holds a compile or op-build lock compiles without waiting on itself;
- a cache on a full filesystem costs the cache, not the call, and leaves no lock held (a private
  tmpfs: ``unshare -m``, root only);
- a relative ``TILELANG_CACHE_DIR`` survives ``os.chdir``; an op directory may contain a space;
- user code that tilelang calls, and the program after it, see no ``torch``.
"""

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import run_python

HERE = Path(__file__).parent

KERNEL = """
import sys
sys.path.insert(0, {here!r})
import numpy as np, paddle
import tilelang
import tilelang.language as T

def plus(n, c):
    @T.prim_func
    def main(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32")):
        with T.Kernel(1, threads=1) as bx:
            for i in T.serial(n):
                B[i] = A[i] + c
    return main

def compile_plus(n, c):
    return tilelang.compile(plus(n, c), out_idx=[1], target="c", execution_backend="cython")

def check(kernel, n, c):
    a = np.random.default_rng(n).standard_normal(n).astype("float32")
    np.testing.assert_allclose(kernel(paddle.to_tensor(a)).numpy(), a + c, rtol=1e-6)
"""


def _script(body: str, prelude: str = "") -> str:
    return KERNEL.format(here=str(HERE)) + prelude + textwrap.dedent(body)


def _env(tmp_path, **extra):
    return {"TILELANG_CACHE_DIR": str(tmp_path / "kc"), "TILELANG_PADDLE_OP_CACHE": str(tmp_path / "ops"),
            "TILELANG_PADDLE_LOCK_TIMEOUT": "40", **extra}


# ---------------------------------------------------------------- fork

FORK = """
import os, threading, time
from tilelang.paddle_runtime import file_lock

def fork_while_locked(parent_work, child_work, holds=lambda lock: True):
    # parent_work runs in a thread; the process forks while it holds a lock that `holds` picks (as a
    # DataLoader worker forks mid-compile); child_work runs in the child, whose exit status is printed.
    entered, release = threading.Event(), threading.Event()
    real_enter = file_lock.FileLock.__enter__

    def enter_and_hold(self):
        out = real_enter(self)
        if holds(self):
            entered.set()
            release.wait(5)
        return out

    file_lock.FileLock.__enter__ = enter_and_hold
    worker = threading.Thread(target=parent_work)
    worker.start()
    assert entered.wait(60), "the parent's work took its lock"
    pid = os.fork()
    if pid == 0:
        file_lock.FileLock.__enter__ = real_enter
        try:
            child_work()
            os._exit(0)
        except BaseException as exc:
            print("child failed:", repr(exc)[:500], flush=True)
            os._exit(1)
    time.sleep(1.0)
    release.set()
    worker.join()
    _, status = os.waitpid(pid, 0)
    print("child exit", os.waitstatus_to_exitcode(status))
"""


def test_a_child_forked_during_a_compile_compiles_without_waiting_on_its_parent(tmp_path):
    proc = run_python(_script(prelude=FORK, body="""
        def child():
            start = time.monotonic()
            check(compile_plus(64, 1.0), 64, 1.0)
            print("child compiled in", round(time.monotonic() - start, 1), "s", flush=True)

        fork_while_locked(lambda: check(compile_plus(64, 1.0), 64, 1.0), child)
    """), env=_env(tmp_path), timeout=240)
    assert "child exit 0" in proc.stdout, proc.stdout + proc.stderr[-3000:]


def test_a_child_forked_during_an_op_build_builds_without_waiting_on_its_parent(tmp_path):
    proc = run_python(_script(prelude=FORK, body="""
        from tilelang.paddle import custom_op

        kernel = compile_plus(32, 2.0)

        def child():
            op = custom_op(kernel, name="tl_fork_plus", directory=OPS + "-child")
            check(op, 32, 2.0)
            with file_lock.FileLock(os.path.join(OPS, ".tilelang-op-tl_fork_plus.lock"), timeout=20):
                pass
            print("child built", flush=True)

        fork_while_locked(lambda: custom_op(kernel, name="tl_fork_plus", directory=OPS), child,
                          holds=lambda lock: ".tilelang-op-" in lock.path)
    """).replace("OPS", repr(str(tmp_path / "op"))), env=_env(tmp_path), timeout=400)
    assert "child exit 0" in proc.stdout, proc.stdout + proc.stderr[-3000:]


# ---------------------------------------------------------------- full disk


def _can_unshare() -> str | None:
    if os.geteuid() != 0:
        return "needs root for a private tmpfs (unshare -m)"
    if shutil.which("unshare") is None:
        return "needs util-linux's unshare"
    probe = subprocess.run(["unshare", "-m", "sh", "-c", "mount -t tmpfs -o size=1m tmpfs /mnt"],
                           capture_output=True, text=True)
    return None if probe.returncode == 0 else f"unshare -m / mount tmpfs refused: {probe.stderr.strip()}"


def _on_full_tmpfs(tmp_path, body: str) -> subprocess.CompletedProcess:
    """Run ``body`` with ``FULL`` a mount point of a 4 MiB tmpfs that ``fill()``/``unfill()`` fill and free."""
    mount = tmp_path / "full"
    mount.mkdir()
    script = tmp_path / "script.py"
    script.write_text(_script(f"""
        import os
        FULL = {str(mount)!r}

        def fill():
            with open(os.path.join(FULL, "filler"), "wb") as f:
                try:
                    while True:
                        f.write(b"x" * 65536)
                        f.flush()
                except OSError:
                    pass
            try:
                with open(os.path.join(FULL, "filler"), "ab") as f:
                    while True:
                        f.write(b"x")
                        f.flush()
            except OSError:
                pass

        def unfill():
            os.remove(os.path.join(FULL, "filler"))

        def no_lock_held(root):
            import fcntl
            held = []
            for dirpath, _dirs, files in os.walk(root):
                for name in files:
                    if name.endswith(".lock"):
                        fd = os.open(os.path.join(dirpath, name), os.O_RDWR)
                        try:
                            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                        except OSError:
                            held.append(name)
                        finally:
                            os.close(fd)
            assert not held, f"locks still held: {{held}}"
    """) + textwrap.dedent(body))
    return subprocess.run(["unshare", "-m", "sh", "-c",
                           f"mount -t tmpfs -o size=4m tmpfs {mount} && exec {sys.executable} {script}"],
                          capture_output=True, text=True, timeout=400, cwd=str(tmp_path),
                          env={**os.environ, **_env(tmp_path, TILELANG_CACHE_DIR=str(mount / "kc"),
                                                    TILELANG_PADDLE_LOCK_TIMEOUT="15")})


def test_a_full_kernel_cache_costs_the_cache_not_the_call(tmp_path):
    reason = _can_unshare()
    if reason:
        pytest.skip(reason)
    proc = _on_full_tmpfs(tmp_path, """
        import logging
        records = []
        logging.getLogger("tilelang").addHandler(type("H", (logging.Handler,), {"emit": lambda s, r: records.append(r)})())
        fill()
        check(compile_plus(48, 3.0), 48, 3.0)          # compiles and runs, uncached
        no_lock_held(FULL)
        warnings = [r.getMessage() for r in records if r.levelno >= logging.WARNING]
        print("WARNINGS", warnings)
        assert any("cannot write the kernel cache" in w and FULL in w for w in warnings), warnings
        unfill()
        check(compile_plus(48, 4.0), 48, 4.0)          # space again: cached, no wait on a leaked lock
        check(compile_plus(48, 3.0), 48, 3.0)
        no_lock_held(FULL)
        print("OK")
    """)
    assert proc.returncode == 0 and "OK" in proc.stdout, proc.stdout[-3000:] + proc.stderr[-3000:]


def test_a_full_op_directory_names_it_and_frees_its_lock(tmp_path):
    reason = _can_unshare()
    if reason:
        pytest.skip(reason)
    proc = _on_full_tmpfs(tmp_path, """
        import logging
        os.environ["TILELANG_CACHE_DIR"] = os.path.join(os.path.dirname(FULL), "kc-ok")
        from tilelang.paddle import custom_op, save_ops
        records = []
        logging.getLogger("tilelang").addHandler(type("H", (logging.Handler,), {"emit": lambda s, r: records.append(r)})())
        kernel = compile_plus(16, 5.0)
        ops = os.path.join(FULL, "ops")
        fill()
        op = custom_op(kernel, name="tl_full_plus", directory=ops)   # built, registered, not saved
        check(op, 16, 5.0)
        warnings = [r.getMessage() for r in records if r.levelno >= logging.WARNING]
        print("WARNINGS", warnings)
        assert any(f"cannot be saved into {ops} (No space left on device: {ops}/" in w for w in warnings), warnings
        assert not os.path.exists(os.path.join(ops, "tl_full_plus", "tl_full_plus.so"))
        no_lock_held(FULL)
        try:                                   # a directory that cannot even take the lock file: an error
            custom_op(compile_plus(16, 9.0), name="tl_full_nine", directory=os.path.join(FULL, "more", "deeper"))
        except RuntimeError as exc:
            print("ERROR", exc)
            assert "cannot write operator tl_full_nine into " + os.path.join(FULL, "more", "deeper") in str(exc)
            assert "No space left on device" in str(exc), exc
        else:
            print("no error: the lock file fit")
        no_lock_held(FULL)
        unfill()
        written = save_ops(os.path.join(FULL, "model", "m"), op)
        assert all(os.path.getsize(p) > 0 for p in written), written
        print("OK")
    """)
    assert proc.returncode == 0 and "OK" in proc.stdout, proc.stdout[-3000:] + proc.stderr[-3000:]


def test_no_lock_stays_held_when_its_pid_cannot_be_written(tmp_path):
    """The lock's pid write (the full-disk leak) runs inside the try that releases it."""
    proc = run_python(_script(f"""
        import errno, os
        from tilelang.paddle_runtime import file_lock

        real_pwrite = os.pwrite
        def full(fd, data, offset):
            raise OSError(errno.ENOSPC, "No space left on device")
        os.pwrite = full
        path = {str(tmp_path / "x.lock")!r}
        with file_lock.FileLock(path, timeout=5):
            pass
        os.pwrite = real_pwrite
        with file_lock.FileLock(path, timeout=5):   # not held by this process any more
            print("OK")
    """))
    assert proc.returncode == 0 and "OK" in proc.stdout, proc.stdout + proc.stderr[-3000:]


# ---------------------------------------------------------------- paths


def test_a_relative_cache_dir_survives_chdir_for_custom_op(tmp_path):
    run_dir, elsewhere = tmp_path / "run", tmp_path / "elsewhere"
    run_dir.mkdir()
    elsewhere.mkdir()
    proc = run_python(_script(f"""
        import os
        from tilelang.paddle import custom_op
        assert os.environ["TILELANG_CACHE_DIR"] == {str(run_dir / "rel" / "kc")!r}, os.environ["TILELANG_CACHE_DIR"]
        os.chdir({str(elsewhere)!r})                    # a launcher's per-run directory
        kernel = compile_plus(24, 6.0)
        op = custom_op(kernel, name="tl_rel_plus", directory="ops here")
        check(op, 24, 6.0)
        assert os.path.isdir({str(elsewhere / "ops here")!r})
        print("OK")
    """), env=_env(tmp_path, TILELANG_CACHE_DIR="rel/kc"), cwd=str(run_dir))
    assert proc.returncode == 0 and "OK" in proc.stdout, proc.stdout + proc.stderr[-3000:]


def test_an_op_directory_with_a_space_builds(tmp_path):
    proc = run_python(_script(f"""
        from tilelang.paddle import custom_op
        op = custom_op(compile_plus(8, 7.0), name="tl_space_plus", directory={str(tmp_path / "my models" / "ops")!r})
        check(op, 8, 7.0)
        print("OK", op.library)
    """), env=_env(tmp_path))
    assert proc.returncode == 0 and "OK" in proc.stdout, proc.stdout + proc.stderr[-3000:]
    assert (tmp_path / "my models" / "ops" / "tl_space_plus" / "tl_space_plus.so").exists()


# ---------------------------------------------------------------- the torch proxy stays tilelang's

NO_TORCH = """
import importlib.util

def sees_no_torch(where):
    assert importlib.util.find_spec("torch") is None, where + ": find_spec('torch') is not None"
    try:
        import torch
    except ModuleNotFoundError:
        return
    raise AssertionError(where + f": import torch gave {torch!r}")
"""


def _script_no_torch(body: str) -> str:
    return _script(NO_TORCH) + textwrap.dedent(body)


def test_user_code_called_by_tilelang_and_after_it_sees_no_torch(tmp_path):
    proc = run_python(_script_no_torch("""
        from tilelang.paddle import autograd_function

        sees_no_torch("after import tilelang")

        @tilelang.jit(out_idx=[1], target="c", execution_backend="cython")
        def factory(n):
            sees_no_torch("in a @tilelang.jit factory")
            return plus(n, 1.0)

        check(factory(40), 40, 1.0)
        sees_no_torch("after a @tilelang.jit call")

        kernel = compile_plus(16, 2.0)

        def fwd(ctx, x):
            sees_no_torch("in an autograd_function forward")
            return kernel(x)

        def bwd(ctx, g):
            sees_no_torch("in an autograd_function backward")
            return g

        op = autograd_function(fwd, bwd)
        x = paddle.randn([16])
        x.stop_gradient = False
        op(x).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), np.ones(16))

        from tilelang.profiler import do_bench
        def bench_me():
            sees_no_torch("in a do_bench function")
            kernel(x.detach())
        do_bench(bench_me, backend="wall", warmup=1, rep=2)
        sees_no_torch("after do_bench")
        print("OK")
    """), env=_env(tmp_path))
    assert proc.returncode == 0 and "OK" in proc.stdout, proc.stdout + proc.stderr[-3000:]


def test_a_global_proxy_the_user_enabled_stays_theirs(tmp_path):
    """PaddleFleet's pattern: paddle.enable_compat() globally, then import tilelang: torch is Paddle everywhere."""
    proc = run_python("""
        import paddle
        paddle.enable_compat()
        import tilelang
        import torch
        assert torch.sin is paddle.sin
        print("OK")
    """, env=_env(tmp_path))
    assert proc.returncode == 0 and "OK" in proc.stdout, proc.stdout + proc.stderr[-3000:]


def test_a_scope_of_the_users_keeps_its_proxy(tmp_path):
    """The user's own enable_compat(scope={"mylib"}): mylib's functions get the proxy, the rest do not."""
    lib = tmp_path / "mylib.py"
    lib.write_text("def get_torch():\n    import torch\n    return torch\n")
    proc = run_python(_script_no_torch(f"""
        sys.path.insert(0, {str(tmp_path)!r})
        paddle.enable_compat(scope={{"mylib"}})
        import mylib
        assert mylib.get_torch().sin is paddle.sin

        @tilelang.jit(out_idx=[1], target="c", execution_backend="cython")
        def factory(n):
            assert mylib.get_torch().sin is paddle.sin
            return plus(n, 1.0)

        check(factory(8), 8, 1.0)
        print("OK")
    """), env=_env(tmp_path))
    assert proc.returncode == 0 and "OK" in proc.stdout, proc.stdout + proc.stderr[-3000:]


# ---------------------------------------------------------------- cache paths at import (issue 29, item 1)


@pytest.mark.parametrize("value, expect", [
    ("afile", r"TILELANG_CACHE_DIR='.*afile' cannot be used as a cache directory: .*afile is a file, not a "
              r"directory\. Set TILELANG_CACHE_DIR to a directory you can write"),
    ("afile/sub", r"TILELANG_CACHE_DIR='.*afile/sub' cannot be used as a cache directory: .*afile is a file"),
])
def test_a_bad_cache_dir_is_named_at_import(tmp_path, value, expect):
    (tmp_path / "afile").write_text("x")
    proc = run_python("import tilelang", env={"TILELANG_CACHE_DIR": str(tmp_path / value)})
    assert proc.returncode != 0
    import re

    assert re.search(expect, proc.stderr), proc.stderr[-2000:]


UNCACHED_CALL = """
import numpy as np, paddle
import tilelang
import tilelang.language as T

@T.prim_func
def main(A: T.Tensor((16,), "float32"), B: T.Tensor((16,), "float32")):
    with T.Kernel(1, threads=1) as _:
        for i in T.serial(16):
            B[i] = A[i] * 3.0

k = tilelang.compile(main, out_idx=[1], target="c", execution_backend="cython")
a = np.random.default_rng(1).standard_normal(16).astype("float32")
np.testing.assert_allclose(k(paddle.to_tensor(a)).numpy(), a * 3, rtol=1e-6)
print("OK")
"""


def _one_cache_warning(proc, where: str) -> None:
    assert proc.returncode == 0 and "OK" in proc.stdout, proc.stdout[-2000:] + proc.stderr[-3000:]
    shown = proc.stdout + proc.stderr                # TileLang's log handler writes to stdout
    lines = [ln for ln in shown.splitlines() if "cannot be used (" in ln]
    assert len(lines) == 1 and f"TILELANG_CACHE_DIR={where} cannot be used" in lines[0], shown[-3000:]
    assert "removed at exit, so each process compiles them again" in lines[0], lines


def test_a_cache_dir_that_cannot_be_created_costs_the_cache_not_the_import(tmp_path):
    where = "/proc/tilelang-cache-test"
    proc = run_python(UNCACHED_CALL, env={"TILELANG_CACHE_DIR": where})
    _one_cache_warning(proc, where)


def test_a_fresh_read_only_mount_as_cache_costs_the_cache_not_the_import(tmp_path):
    reason = _can_unshare()
    if reason:
        pytest.skip(reason)
    mount = tmp_path / "ro"
    mount.mkdir()
    script = tmp_path / "call.py"
    script.write_text(textwrap.dedent(UNCACHED_CALL))
    proc = subprocess.run(["unshare", "-m", "sh", "-c",
                           f"mount -t tmpfs -o ro,size=1m tmpfs {mount} && exec {sys.executable} {script}"],
                          capture_output=True, text=True, timeout=300, cwd=str(tmp_path),
                          env={**os.environ, "TILELANG_CACHE_DIR": str(mount)})
    _one_cache_warning(proc, str(mount))
    assert "Read-only file system" in proc.stdout + proc.stderr, proc.stdout[-2000:]


def test_an_empty_or_quoted_cache_dir_means_what_the_user_meant(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    proc = run_python("""
        import os, tilelang
        print("CACHE", os.environ.get("TILELANG_CACHE_DIR"), tilelang.env.TILELANG_CACHE_DIR)
    """, env={"TILELANG_CACHE_DIR": '"~/kc"', "HOME": str(home)}, cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert f"CACHE {home}/kc {home}/kc" in proc.stdout
    assert not (tmp_path / "~").exists() and not (tmp_path / '"~').exists()
    proc = run_python("""
        import os, tilelang
        print("CACHE", os.environ.get("TILELANG_CACHE_DIR"), tilelang.env.TILELANG_CACHE_DIR)
    """, env={"TILELANG_CACHE_DIR": "", "HOME": str(home)}, cwd=str(tmp_path))
    assert proc.returncode == 0 and f"{home}/.tilelang/cache" in proc.stdout, proc.stdout + proc.stderr[-2000:]


def test_tilelang_declares_itself_paddle_compatible():
    """PFCCLab's convention for Paddle builds of torch libraries (issue 29, item 7)."""
    proc = run_python("import tilelang; print(getattr(tilelang, '__is_paddle_compatible_library__', None))")
    assert proc.returncode == 0 and proc.stdout.strip().endswith("True"), proc.stdout + proc.stderr[-2000:]


def test_a_kernel_call_in_a_full_graph_says_to_use_custom_op(tmp_path):
    proc = run_python(_script("""
        kernel = compile_plus(8, 1.0)

        class Net(paddle.nn.Layer):
            def forward(self, x):
                return kernel(x)

        static = paddle.jit.to_static(Net(), input_spec=[paddle.static.InputSpec([8], "float32")], full_graph=True)
        try:
            static(paddle.randn([8]))
        except Exception as exc:
            print("ERROR", exc)
    """), env=_env(tmp_path))
    assert "static-graph value" in proc.stdout and "tilelang.paddle.custom_op" in proc.stdout, \
        proc.stdout[-2000:] + proc.stderr[-2000:]
