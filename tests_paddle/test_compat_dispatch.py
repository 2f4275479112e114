"""Our runtime under Paddle develop's ``enable_compat(level=2)`` dispatch gives the same results.

Paddle develop (``python/paddle/compat/api_dispatch.py``) replaces every
``paddle.*`` function with a ``paddle.compat`` twin (``max``, ``min``, ``sort``,
``split``, ``unique``, ``median``, ``equal``, ``seed``, ... and the same
``paddle.Tensor`` methods, ``paddle.nn`` classes, ``paddle.nn.functional``
functions) by a dispatcher that gives torch semantics to every caller whose
module is not ``paddle`` or ``paddle.*``: our runtime included. Paddle 3.3.1
has the compat functions but not the dispatch, so each test installs the same
dispatch from 3.3.1's real ``paddle.compat`` (same rule: the calling frame's
module name), proves it is live, and runs the runtime through it in a fresh
process, checking results against numpy.
"""

import pytest

from conftest import run_python

LEVEL2 = """
import importlib, pkgutil, sys, functools
import paddle, paddle.compat

def _external():
    name = sys._getframe(2).f_globals.get("__name__") or ""
    return not (name == "paddle" or name.startswith("paddle."))

def _dispatch(native, compat):
    if isinstance(compat, type):
        class Meta(type(compat)):
            def __call__(cls, *a, **k):
                if cls is proxy:
                    return (compat if _external_cls() else native)(*a, **k)
                return super().__call__(*a, **k)
        def _external_cls():
            name = sys._getframe(3).f_globals.get("__name__") or ""
            return not (name == "paddle" or name.startswith("paddle."))
        proxy = Meta(native.__name__, (compat,), {"__module__": native.__module__})
        return proxy
    @functools.wraps(native)
    def dispatcher(*a, **k):
        return compat(*a, **k) if _external() else native(*a, **k)
    dispatcher.__compat_fn__ = compat
    return dispatcher

modules = [paddle.compat] + [importlib.import_module(m.name) for m in
                             pkgutil.walk_packages(paddle.compat.__path__, "paddle.compat.")]
installed = []
for mod in modules:
    if not hasattr(mod, "__all__"):
        continue
    try:
        target = importlib.import_module(mod.__name__.replace("paddle.compat", "paddle", 1))
    except ModuleNotFoundError:
        continue
    for name in mod.__all__:
        compat, current = getattr(mod, name), getattr(target, name, None)
        if current is None or current is compat:
            continue
        setattr(target, name, _dispatch(current, compat))
        installed.append(f"{target.__name__}.{name}")
for name in paddle.compat.__all__:
    native = getattr(paddle.Tensor, name, None)
    if native is not None:
        compat = getattr(paddle.compat, f"_tensor_method_{name}", None) or getattr(paddle.compat, name)
        setattr(paddle.Tensor, name, _dispatch(native, compat))
        installed.append(f"Tensor.{name}")

# Live: an outside caller now gets torch's max(dim) (values and indices), Paddle's own code native max.
probe = paddle.to_tensor([[1.0, 5.0], [3.0, 2.0]])
got = paddle.max(probe, dim=1)
assert hasattr(got, "indices") and got.values.tolist() == [5.0, 3.0], got
assert probe.max(dim=1).indices.tolist() == [1, 0]
print("installed", len(installed), "dispatchers")
"""

BODY = LEVEL2 + """
import numpy as np
import tilelang
import tilelang.language as T
from tilelang.paddle import autograd_function, custom_op

n = T.dynamic("n")

@tilelang.jit(out_idx=[2, 0], target="c", execution_backend="cython")
def minmax():
    @T.prim_func
    def main(X: T.Tensor((n,), "float32"), A: T.Tensor((n,), "float32"), Y: T.Tensor((n,), "float32")):
        with T.Kernel(1, threads=1) as _:
            for i in T.serial(n):
                X[i] = T.max(A[i], 0.0)
                Y[i] = T.min(A[i], 0.0) * 2.0
    return main

rng = np.random.default_rng(SEED)
kernel = minmax()
for size in rng.integers(1, 300, size=4):
    a = rng.standard_normal(int(size)).astype("float32")
    y, x = kernel(paddle.to_tensor(a))
    np.testing.assert_allclose(x.numpy(), np.maximum(a, 0), rtol=0)
    np.testing.assert_allclose(y.numpy(), np.minimum(a, 0) * 2, rtol=0)

@tilelang.jit(out_idx=[1], target="c", execution_backend="cython")
def halve(size):
    @T.prim_func
    def main(A: T.Tensor((size,), "float32"), B: T.Tensor((size,), "float32")):
        with T.Kernel(1, threads=1) as _:
            for i in T.serial(size):
                B[i] = A[i] * 0.5
    return main

k = halve(257)
profiler = k.get_profiler()
profiler.assert_allclose(lambda a: a * 0.5, rtol=1e-6, atol=1e-6)
assert isinstance(profiler.do_bench(backend="wall", warmup=2, rep=5), float)

def forward(ctx, a):
    return k(a)

def backward(ctx, g):
    return k(g)

op = autograd_function(forward, backward, name="tl_halve")
a = paddle.to_tensor(rng.standard_normal(257).astype("float32"), stop_gradient=False)
(op(a) * 3.0).sum().backward()
np.testing.assert_allclose(a.grad.numpy(), np.full(257, 1.5, "float32"), rtol=1e-6)

cop = custom_op(k, name="tl_halve_l2", directory=OPS)
a = rng.standard_normal(257).astype("float32")
np.testing.assert_allclose(cop(paddle.to_tensor(a)).numpy(), a * 0.5, rtol=1e-6)
print("level-2 dispatch: same results")
"""


@pytest.mark.parametrize("fast", ["1", "0"])
def test_runtime_gives_the_same_results_under_level2_dispatch(tmp_path, fast):
    code = BODY.replace("SEED", "20261203" if fast == "1" else "7").replace("OPS", repr(str(tmp_path / "ops")))
    proc = run_python(code, env={"TILELANG_PADDLE_FAST_LAUNCH": fast, "TILELANG_CACHE_DIR": str(tmp_path / "kc")},
                      timeout=600)
    assert proc.returncode == 0 and "level-2 dispatch: same results" in proc.stdout, \
        proc.stdout + proc.stderr[-4000:]
    assert "installed" in proc.stdout
