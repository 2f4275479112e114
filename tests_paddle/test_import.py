"""Importing tilelang under Paddle: the two documented ways, and the errors without a usable Paddle."""

from __future__ import annotations

from conftest import run_python

BLOCK_PADDLE = """
import sys
class _NoPaddle:
    def find_spec(self, name, path=None, target=None):
        if name == "paddle" or name.startswith("paddle."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, _NoPaddle())
"""


def test_without_paddle_one_clear_import_error():
    proc = run_python(BLOCK_PADDLE + "import tilelang\n")
    assert proc.returncode == 1
    err = proc.stderr
    assert "ImportError: tilelang-paddle needs PaddlePaddle, which is not installed" in err
    assert "pip install 'paddlepaddle>=3.3'" in err and "paddlepaddle-gpu>=3.3" in err
    # Raised at the boundary: the traceback does not wander into upstream modules.
    assert "tilelang/jit" not in err and "torch" not in err


def test_paddle_too_old_names_both_versions():
    proc = run_python("import paddle\npaddle.__version__ = '3.2.2'\nimport tilelang\n")
    assert proc.returncode == 1
    assert "needs PaddlePaddle >= 3.3 (for paddle.enable_compat), found 3.2.2" in proc.stderr


def test_documented_import_and_plain_import_both_work_and_hide_torch():
    for prelude in ("import paddle; paddle.enable_compat(scope={'tilelang'})", ""):
        proc = run_python(f"""
            {prelude}
            import tilelang, sys
            print("version", tilelang.__version__)
            try:
                import torch
            except ModuleNotFoundError:
                print("user torch: absent")
            else:
                print("user torch:", torch.__name__, getattr(torch, "__file__", None))
            """)
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert "version 0.1.15.post" in proc.stdout
        assert "user torch: absent" in proc.stdout, proc.stdout
