"""Cold start of a multi-process job: 1 and 4 processes, empty caches, 3 kernels and one custom op each.

    python bench/bench_cold_start.py [--ranks 4]

Each process imports Paddle and tilelang, compiles three CPU kernels with
``T.dynamic`` sizes, checks them against numpy and builds (or loads) one
``custom_op`` with a backward, as the ranks of ``paddle.distributed.launch``
do. Both runs start from empty ``TILELANG_CACHE_DIR`` and
``TILELANG_PADDLE_OP_CACHE`` shared by their processes. Printed: wall time
from start to the last process's exit, and the compiles and op builds that ran
in all (counted from the INFO log lines of TileLang's compile and of
``custom_op``'s build). Targets: each kernel compiled once and the op built
once across the ranks; 4 ranks within 1.5x of 1 rank's wall time.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import textwrap
import time

WORKER = '''
import numpy as np, paddle
import tilelang
import tilelang.language as T
from tilelang.paddle import custom_op

rows = T.dynamic("rows")


@tilelang.jit(out_idx=[2], target="c", execution_backend="cython")
def scale(cols: int):
    @T.prim_func
    def main(X: T.Tensor((rows, cols), "float32"), W: T.Tensor((cols,), "float32"), Y: T.Tensor((rows, cols), "float32")):
        with T.Kernel(rows) as r:
            for j in T.serial(cols):
                Y[r, j] = X[r, j] * W[j]
    return main


@tilelang.jit(out_idx=[4, 5], target="c", execution_backend="cython")
def scale_backward(cols: int):
    @T.prim_func
    def main(X: T.Tensor((rows, cols), "float32"), W: T.Tensor((cols,), "float32"),
             Y: T.Tensor((rows, cols), "float32"), GY: T.Tensor((rows, cols), "float32"),
             GX: T.Tensor((rows, cols), "float32"), GW: T.Tensor((cols,), "float32")):
        with T.Kernel(1) as _:
            for j in T.serial(cols):
                GW[j] = 0.0
            for r, j in T.grid(rows, cols):
                GX[r, j] = GY[r, j] * W[j]
                GW[j] += GY[r, j] * X[r, j]
    return main


@tilelang.jit(out_idx=[1], target="c", execution_backend="cython")
def row_sum(cols: int):
    @T.prim_func
    def main(X: T.Tensor((rows, cols), "float32"), S: T.Tensor((rows,), "float32")):
        with T.Kernel(rows) as r:
            S[r] = 0.0
            for j in T.serial(cols):
                S[r] += X[r, j]
    return main


x, w = np.random.rand(5, 16).astype("float32"), np.random.rand(16).astype("float32")
np.testing.assert_allclose(scale(16)(paddle.to_tensor(x), paddle.to_tensor(w)).numpy(), x * w, rtol=1e-6)
np.testing.assert_allclose(row_sum(16)(paddle.to_tensor(x)).numpy(), x.sum(1), rtol=1e-5)
op = custom_op(scale(16), name="tl_cold_scale", backward=scale_backward(16))
np.testing.assert_allclose(op(paddle.to_tensor(x), paddle.to_tensor(w)).numpy(), x * w, rtol=1e-6)
print("WORKER OK")
'''


def run(ranks: int) -> tuple[float, int, int]:
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "worker.py")
        with open(script, "w") as f:
            f.write(textwrap.dedent(WORKER))
        env = {**os.environ, "TILELANG_CACHE_DIR": os.path.join(tmp, "kernels"),
               "TILELANG_PADDLE_OP_CACHE": os.path.join(tmp, "ops"), "TILELANG_PADDLE_LOG_LEVEL": "INFO"}
        start = time.perf_counter()
        procs = [subprocess.Popen([sys.executable, script], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  text=True, cwd=tmp) for _ in range(ranks)]
        outs = [p.communicate()[0] for p in procs]
        wall = time.perf_counter() - start
        for p, out in zip(procs, outs):
            if p.returncode != 0 or "WORKER OK" not in out:
                raise SystemExit(f"a worker failed:\n{out[-4000:]}")
        text = "\n".join(outs)
        return wall, text.count("TileLang begins to compile kernel"), text.count("custom_op: building operator")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=4, help="processes of the concurrent run (default: 4)")
    args = parser.parse_args()
    import paddle

    print(f"Paddle {paddle.__version__}, {os.cpu_count()} CPUs; empty caches; 3 kernels + 1 op (with backward) "
          "per process")
    one = run(1)
    many = run(args.ranks)
    for ranks, (wall, compiles, builds) in ((1, one), (args.ranks, many)):
        print(f"{ranks} process(es): {wall:6.1f} s wall, {compiles} kernel compiles, {builds} op build(s) in all")
    print(f"{args.ranks} ranks / 1 rank: {many[0] / one[0]:.2f}x wall time (target <= 1.5x); "
          f"compiles {'once each' if many[1] == one[1] else 'repeated'}, op built "
          f"{'once' if many[2] == 1 else f'{many[2]} times'}")


if __name__ == "__main__":
    main()
