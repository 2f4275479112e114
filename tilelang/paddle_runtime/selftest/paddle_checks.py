"""The checks that need Paddle itself: CPU kernels on Paddle tensors, autograd, custom ops, bundles.

Also :func:`paddle_harness`, which gives :mod:`.gpu_checks` Paddle's driver and
the product's own paths: ``tilelang.compile`` (whose kernels launch through the
runtime on Paddle's driver) and ``tilelang.profiler.do_bench``.
(No ``from __future__ import annotations``: TileLang evaluates kernel annotations.)
"""

import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

from . import kernels as K
from .gpu_checks import Compiled, Harness, assert_close
from .report import Failed, Skip

CPU = dict(target="c", execution_backend="cython")
#: What a slim serving image has on PATH: a shell and the basic tools (Paddle's import runs some), no compiler.
SLIM_TOOLS = ("sh", "cat", "grep", "ls", "uname", "env", "ldconfig", "nproc", "id")
COMPILERS = ("cc", "gcc", "g++", "c++", "clang", "clang++", "nvcc", "cmake", "ld")


def paddle_harness() -> Harness:
    import tilelang
    from tilelang.profiler import do_bench

    from ..driver import paddle_driver

    def compile_(prim_func, out_idx, backend):
        kernel = tilelang.compile(prim_func, out_idx=out_idx, target="cuda", execution_backend=backend)
        return Compiled(kernel, kernel.adapter.lib if backend == "cython" else None)

    def bench(fn, backend, index):
        return do_bench(fn, backend=backend, device=index)

    return Harness(paddle_driver(), compile_, bench)


def _cxx_or_skip() -> None:
    from tilelang.contrib.cc import get_cplus_compiler

    if get_cplus_compiler() is None:
        raise Skip("no C++ compiler ($CXX, $CC, g++, clang++ or c++ on PATH): CPU kernels and ops cannot be built here")


class CpuChecks:
    """Paddle CPU tensors; each check compares with numpy on fresh random inputs."""

    def __init__(self, rng: np.random.Generator, quick: bool = False):
        self.rng, self.quick = rng, quick
        self._kernel = None

    def plan(self):
        return [
            ("cpu: C kernel through the fast launcher, outputs in out_idx order", self.fast_path, ""),
            ("cpu: C kernel through upstream's launcher, outputs in out_idx order", self.upstream_launcher, ""),
            ("cpu: autograd_function forward and backward", self.autograd, ""),
            ("cpu: custom_op built and called", self.custom_op, ""),
            ("cpu: a bundle serves a kernel where no compiler is on PATH", self.bundle, ""),
        ]

    def _sum_and_product(self):
        import tilelang

        _cxx_or_skip()
        if self._kernel is None:
            self._kernel = tilelang.compile(K.sum_and_product(), out_idx=[3, 2], **CPU)
        return self._kernel

    def _ab(self):
        import paddle

        n = int(self.rng.integers(1, 4096))
        a = self.rng.standard_normal(n).astype("float32")
        b = self.rng.standard_normal(n).astype("float32")
        return n, a, b, paddle.to_tensor(a), paddle.to_tensor(b)

    @staticmethod
    def _outputs(got, a, b, n) -> str:
        if not isinstance(got, (list, tuple)) or len(got) != 2:
            raise Failed(f"expected 2 outputs (P, S), got {type(got).__name__}")
        p, s = (np.asarray(t.numpy()) for t in got)
        assert_close(p, a * b, f"first output (out_idx 3: P = A * B, n={n})", 1e-6, 1e-6, "")
        assert_close(s, a + b, f"second output (out_idx 2: S = A + B, n={n})", 1e-6, 1e-6, "")
        return f"n={n}"

    def fast_path(self) -> str:
        from .. import settings

        if not settings.fast_launch():
            raise Skip("TILELANG_PADDLE_FAST_LAUNCH=0 turns the fast launcher off")
        kernel = self._sum_and_product()
        if type(kernel.torch_function).__name__ != "Launcher":
            raise Failed(f"the kernel is served by {type(kernel.torch_function).__name__}, not the fast launcher "
                         "(tilelang.paddle_runtime._launcher); see the debug log of tilelang.paddle_runtime")
        n, a, b, ta, tb = self._ab()
        return self._outputs(kernel(ta, tb), a, b, n)

    def upstream_launcher(self) -> str:
        kernel = self._sum_and_product()
        n, a, b, ta, tb = self._ab()
        return self._outputs(kernel.adapter.cython_wrapper.forward([ta, tb]), a, b, n)

    def autograd(self) -> str:
        import paddle
        import tilelang

        from tilelang.paddle import autograd_function

        _cxx_or_skip()
        M, N, K_ = (int(v) for v in self.rng.integers(8, 40, size=3))
        kernels = {}

        def mm(x, w):
            shape = (x.shape[0], w.shape[1], x.shape[1])
            if shape not in kernels:
                kernels[shape] = tilelang.compile(K.cpu_matmul(*shape), out_idx=[2], **CPU)
            return kernels[shape](x, w)

        def forward(ctx, x, w):
            ctx.save_for_backward(x, w)
            return mm(x, w)

        def backward(ctx, gy):
            x, w = ctx.saved_tensor()
            return mm(gy, w.T.contiguous()), mm(x.T.contiguous(), gy)

        op = autograd_function(forward, backward, name="tl_selftest_matmul")
        x_np, w_np, r_np = (self.rng.standard_normal(s).astype("float32") for s in ((M, K_), (K_, N), (M, N)))
        x, w, r = paddle.to_tensor(x_np), paddle.to_tensor(w_np), paddle.to_tensor(r_np)
        x.stop_gradient = w.stop_gradient = False
        y = op(x, w)
        (y * r).sum().backward()
        assert_close(y.numpy(), x_np @ w_np, f"forward ({M}x{K_} @ {K_}x{N})", 1e-4, 1e-4, "")
        assert_close(x.grad.numpy(), r_np @ w_np.T, "gradient of x", 1e-4, 1e-4, "")
        assert_close(w.grad.numpy(), x_np.T @ r_np, "gradient of w", 1e-4, 1e-4, "")
        return f"{M}x{K_} @ {K_}x{N}"

    def custom_op(self) -> str:
        import paddle
        import tilelang

        from tilelang.paddle import custom_op

        if self.quick:
            raise Skip("--quick (building an operator takes a while)")
        _cxx_or_skip()
        cols = 32
        op = custom_op(tilelang.compile(K.row_scale(cols), out_idx=[2], **CPU), name="tl_selftest_row_scale")
        rows = int(self.rng.integers(1, 64))
        x = self.rng.standard_normal((rows, cols)).astype("float32")
        w = self.rng.standard_normal(cols).astype("float32")
        got = op(paddle.to_tensor(x), paddle.to_tensor(w))
        return assert_close(got.numpy(), x * w, f"Y = X * W ({rows} rows)", 1e-6, 1e-6, "")

    def bundle(self) -> str:
        if self.quick:
            raise Skip("--quick (builds a bundle in a fresh process)")
        _cxx_or_skip()
        with tempfile.TemporaryDirectory(prefix="tlp-selftest-") as tmp:
            out = os.path.join(tmp, "bundle")
            proc = subprocess.run([sys.executable, "-m", "tilelang_paddle", "bundle", out, "--run",
                                   "tilelang.paddle_runtime.selftest.kernels:bundle_job"],
                                  capture_output=True, text=True, timeout=600)
            if proc.returncode:
                raise Failed(f"tilelang-paddle bundle failed: {_tail(proc)}")
            env = compiler_free_env(tmp)
            env.update(TILELANG_PADDLE_BUNDLE=out, TILELANG_CACHE_DIR=os.path.join(tmp, "empty-cache"))
            proc = subprocess.run([sys.executable, "-c", _SERVE], capture_output=True, text=True, env=env,
                                  timeout=600, cwd=tmp)
            if proc.returncode or "served" not in proc.stdout:
                raise Failed(f"serving from the bundle with no compiler failed: {_tail(proc)}")
            return proc.stdout.strip().splitlines()[-1]


_SERVE = """
import numpy as np
import paddle
paddle.enable_compat(scope={"tilelang"}, silent=True)
import tilelang
from tilelang.paddle_runtime.selftest import kernels
kernel = tilelang.compile(kernels.sum_and_product(), out_idx=[3, 2], target="c", execution_backend="cython")
rng = np.random.default_rng()
n = int(rng.integers(1, 4096))
a, b = rng.standard_normal(n).astype("float32"), rng.standard_normal(n).astype("float32")
p, s = kernel(paddle.to_tensor(a), paddle.to_tensor(b))
np.testing.assert_allclose(p.numpy(), a * b, rtol=1e-6)
np.testing.assert_allclose(s.numpy(), a + b, rtol=1e-6)
print(f"served n={n} with no compiler on PATH")
"""


def compiler_free_env(directory) -> dict:
    """This environment with a PATH of basic tools only, no CC/CXX, and CUDA_HOME an empty directory.

    The PATH is a directory of links made under ``directory``; raises :class:`Failed` if a compiler is still found
    on it. (The tests' slim hosts use it too.)
    """
    bin_dir, no_cuda = os.path.join(directory, "slim-bin"), os.path.join(directory, "no-cuda")
    os.makedirs(bin_dir, exist_ok=True)
    os.makedirs(no_cuda, exist_ok=True)
    for tool in SLIM_TOOLS:
        real, link = shutil.which(tool), os.path.join(bin_dir, tool)
        if real and not os.path.lexists(link):
            os.symlink(real, link)
    env = {k: v for k, v in os.environ.items() if k not in ("CC", "CXX", "CUDA_PATH")}
    env.update(PATH=bin_dir, CUDA_HOME=no_cuda)
    found = [c for c in COMPILERS if shutil.which(c, path=bin_dir)]
    if found:
        raise Failed(f"could not hide the compilers: {found} still on the check's PATH")
    return env


def _tail(proc: subprocess.CompletedProcess) -> str:
    lines = [ln for ln in (proc.stderr or proc.stdout or "").strip().splitlines() if ln.strip()]
    return f"exit status {proc.returncode}: " + " / ".join(lines[-3:])


class CudaOpChecks:
    """The CUDA ``custom_op`` on one GPU, eagerly and under ``paddle.jit.to_static``."""

    def __init__(self, index: int, rng: np.random.Generator, quick: bool = False):
        self.index, self.rng, self.quick = index, rng, quick

    def plan(self):
        from ..driver import paddle_driver

        return [(f"gpu:{self.index} CUDA custom_op, eager and under to_static", self.run,
                 paddle_driver().RELIES_ON["custom_op"])]

    def run(self) -> str:
        import paddle
        import tilelang

        from tilelang.paddle import custom_op

        if self.quick:
            raise Skip("--quick (building an operator takes a while)")
        cols = 64
        kernel = tilelang.compile(K.row_scale(cols), out_idx=[2], target="cuda", execution_backend="cython")
        op = custom_op(kernel, name="tl_selftest_cuda_row_scale")
        rows = int(self.rng.integers(1, 300))
        x = self.rng.standard_normal((rows, cols)).astype("float32")
        w = self.rng.standard_normal(cols).astype("float32")
        place = paddle.CUDAPlace(self.index)
        tx, tw = paddle.to_tensor(x, place=place), paddle.to_tensor(w, place=place)
        eager = op(tx, tw)
        if not eager.place.is_gpu_place() or eager.place.gpu_device_id() != self.index:
            raise Failed(f"the op's output is on {eager.place}, its inputs on gpu:{self.index}")
        assert_close(eager.numpy(), x * w, "eager", 1e-6, 1e-6, "")
        static = paddle.jit.to_static(lambda a, b: op(a, b) * 2.0, full_graph=True)
        assert_close(static(tx, tw).numpy(), x * w * 2.0, "to_static (full graph), Y * 2", 1e-6, 1e-6, "")
        return f"{rows} rows"
