"""`@tilelang.jit` kernels with `T.dynamic` dimensions on Paddle tensors: one compile serves every size.

The pattern is examples/rmsnorm.py's ``rmsnorm_cpu``: the decorated factory
returns the same compiled kernel for the same static arguments, the row count
is symbolic, and TileLang's on-disk cache serves a fresh process.
"""

import tempfile

from conftest import ROOT, run_python

SCRIPT = f"""
import sys
sys.path.insert(0, {str(ROOT / "examples")!r})
import numpy as np, paddle
from rmsnorm import rmsnorm_cpu, reference

kernel = rmsnorm_cpu(64)
assert rmsnorm_cpu(64) is kernel  # same static arguments: the same kernel object
assert type(kernel.torch_function).__name__ == "Launcher"
for rows in np.random.default_rng().choice(np.arange(1, 300), 4, replace=False):
    x, w = paddle.randn([int(rows), 64]), paddle.randn([64])
    np.testing.assert_allclose(kernel(x, w).numpy(), reference(x, w).numpy(), rtol=1e-5, atol=1e-5)
    print("size", int(rows))
"""


def _compiles(proc) -> int:
    return (proc.stdout + proc.stderr).count("TileLang begins to compile kernel")


def test_one_compile_for_every_size_and_a_cache_hit_in_a_fresh_process():
    with tempfile.TemporaryDirectory() as cache:
        env = {"TILELANG_CACHE_DIR": cache, "TILELANG_PADDLE_LOG_LEVEL": "INFO"}  # upstream logs each compile at INFO
        first = run_python(SCRIPT, env=env)
        assert first.returncode == 0, first.stdout + first.stderr
        assert first.stdout.count("size") == 4
        assert _compiles(first) == 1  # four sizes, one compile
        second = run_python(SCRIPT, env=env)
        assert second.returncode == 0, second.stdout + second.stderr
        assert _compiles(second) == 0  # served from the on-disk cache


def test_compile_logs_are_off_by_default():
    """An installed package logs warnings, not every compile (patch 0016); the env variable brings INFO back."""
    with tempfile.TemporaryDirectory() as cache:
        quiet = run_python(SCRIPT, env={"TILELANG_CACHE_DIR": cache})
        assert quiet.returncode == 0, quiet.stdout + quiet.stderr
        assert "[TileLang:" not in quiet.stdout + quiet.stderr


def test_kernels_cached_by_another_build_of_the_fork_are_not_reused():
    """The cache key holds the build id (patch 0023): same version, other patches -> compiled again."""
    other_build = "import tilelang.paddle_runtime._build_id as b; b.BUILD_ID = 'another-build'\n"
    with tempfile.TemporaryDirectory() as cache:
        env = {"TILELANG_CACHE_DIR": cache, "TILELANG_PADDLE_LOG_LEVEL": "INFO"}
        first = run_python(SCRIPT, env=env)
        assert first.returncode == 0, first.stdout + first.stderr
        assert _compiles(first) == 1
        same = run_python(SCRIPT, env=env)
        assert _compiles(same) == 0, same.stdout + same.stderr
        other = run_python(SCRIPT.replace("import numpy as np, paddle\n", "import numpy as np, paddle\n" + other_build),
                           env=env)
        assert other.returncode == 0, other.stdout + other.stderr
        assert _compiles(other) == 1  # not the first build's kernel


def test_the_build_id_is_a_digest_of_the_pin_patches_and_overlay():
    import tilelang.paddle_runtime._build_id as installed
    from src.fork.pin import Pin
    from src.fork.stage import build_id

    assert installed.BUILD_ID == build_id(Pin.load()), "the installed tilelang-paddle is not built from this checkout (pip install . again)"
