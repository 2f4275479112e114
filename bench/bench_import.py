"""Import cost of Paddle and tilelang-paddle, in fresh processes (median of N runs each).

    python bench/bench_import.py [--runs 7] [--torch-python /path/to/python]

Rows:
- ``import paddle`` as installed (Paddle 3.3 imports ``tvm_ffi`` inside
  ``import paddle`` whenever it is installed, python/paddle/base/dygraph/
  tensor_patch_methods.py, ``_get_c_dlpack_exchange_api``; tilelang needs it);
- ``import paddle`` with ``tvm_ffi`` made unimportable (what Paddle costs
  without us installed);
- ``import tilelang`` after ``import paddle``, and both together.

``--torch-python`` names an interpreter that has upstream ``tilelang`` and
``torch`` installed (this project never installs torch; make such an
environment yourself to compare) and adds the same rows for
``import torch; import tilelang``.
"""

import argparse
import statistics
import subprocess
import sys

BLOCK_TVM_FFI = """
import importlib.abc, sys
class _Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "tvm_ffi" or name.startswith("tvm_ffi."):
            raise ModuleNotFoundError(name)
sys.meta_path.insert(0, _Block())
"""

TIMED = """
import time, warnings
warnings.simplefilter("ignore")
{pre}
t0 = time.perf_counter()
import {framework}
t1 = time.perf_counter()
{second}
t2 = time.perf_counter()
print(t1 - t0, t2 - t1)
"""


def _once(python: str, framework: str, with_tilelang: bool, pre: str = "") -> tuple[float, float]:
    code = TIMED.format(pre=pre, framework=framework, second="import tilelang" if with_tilelang else "")
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    return float(out[-2]), float(out[-1])


def measure(python: str, framework: str, runs: int, with_tilelang: bool, pre: str = "") -> tuple[float, float]:
    times = [_once(python, framework, with_tilelang, pre) for _ in range(runs)]
    return statistics.median(t[0] for t in times), statistics.median(t[1] for t in times)


def measure_alternately(torch_python: str, runs: int) -> tuple[tuple[float, float], tuple[float, float]]:
    """``import paddle; import tilelang`` here and ``import torch; import tilelang`` there, one process each in
    turn, so machine load hits both alike; medians of (first import, import tilelang) for each."""
    ours, theirs = [], []
    for _ in range(runs):
        ours.append(_once(sys.executable, "paddle", True))
        theirs.append(_once(torch_python, "torch", True))
    med = lambda ts, i: statistics.median(t[i] for t in ts)  # noqa: E731
    return (med(ours, 0), med(ours, 1)), (med(theirs, 0), med(theirs, 1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="fresh processes per row")
    parser.add_argument("--torch-python", help="an interpreter with upstream tilelang and torch, for comparison")
    args = parser.parse_args()
    rows = []
    paddle_alone, _ = measure(sys.executable, "paddle", args.runs, False)
    paddle_no_ffi, _ = measure(sys.executable, "paddle", args.runs, False, pre=BLOCK_TVM_FFI)
    if args.torch_python:
        (paddle_first, tl_after_paddle), (torch_first, tl_after_torch) = measure_alternately(args.torch_python,
                                                                                             args.runs)
    else:
        paddle_first, tl_after_paddle = measure(sys.executable, "paddle", args.runs, True)
    rows += [
        ("import paddle (tvm_ffi installed, as with tilelang-paddle)", paddle_alone),
        ("import paddle with tvm_ffi unimportable (Paddle without us)", paddle_no_ffi),
        ("import tilelang after import paddle", tl_after_paddle),
        ("import paddle; import tilelang", paddle_first + tl_after_paddle),
    ]
    if args.torch_python:
        rows += [
            ("import torch (upstream's environment)", torch_first),
            ("import tilelang after import torch (upstream tilelang)", tl_after_torch),
            ("import torch; import tilelang (upstream)", torch_first + tl_after_torch),
        ]
    print(f"median of {args.runs} fresh processes each (with --torch-python, the two environments in turn); "
          f"Python {sys.version.split()[0]}")
    for name, seconds in rows:
        print(f"{seconds:8.2f} s  {name}")
    if args.torch_python:
        print(f"{tl_after_paddle / tl_after_torch:8.2f}x  import tilelang: after paddle / upstream's after torch")
        print(f"{(paddle_first + tl_after_paddle) / (torch_first + tl_after_torch):8.2f}x  "
              "framework and tilelang together: ours / upstream's")


if __name__ == "__main__":
    main()
