"""Prewarm across ranks and threads: K kernels on R processes, compiled in turn vs tilelang.paddle.prewarm.

    python bench/bench_prewarm.py [--kernels 8] [--ranks 1 2 4] [--workers 1 2] [--repeat 3]

Every run starts R processes at once on one empty ``TILELANG_CACHE_DIR`` (as
the ranks of ``paddle.distributed.launch`` on one node), each importing Paddle
and tilelang and then getting the same K distinct CPU kernels:

- ``serial``: each rank calls the K builds in the same order (what a job does
  without prewarm; the cache's lock makes each kernel compile once, but the
  ranks wait for each other kernel by kernel);
- ``prewarm wW``: ``prewarm(builds, workers=W)``, rank r compiling ``builds[r::R]`` first, W at a time.

Printed: wall time from the start to the last process's exit, the same with
every kernel already cached (``warm``), and per kernel of a warm prewarm; each
the median of ``--repeat`` runs on fresh caches, after one unreported run that
warms the file system's caches (the compiler, the headers, the Python packages),
which the first run would otherwise pay alone.
Targets: 2 ranks' prewarm <= 0.6x of one process compiling all (issue 28); 1 process with 2 workers
<= 0.6x of serial in the kernel phase, and 2 ranks x 1 worker still <= 0.6x (issue 50).
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time

from cpu_kernels import MATMUL_PLUS_C  # bench/ is sys.path[0] when run as a script

WORKER = '''
import sys, time
import numpy as np, paddle
import tilelang
import tilelang.language as T
from tilelang.paddle import prewarm

{kernel}
builds = [lambda c=c: tilelang.compile(kernel(float(c)), out_idx=[2], target="c", execution_backend="cython")
          for c in range(int(sys.argv[1]))]
start = time.perf_counter()
mode = sys.argv[2]
kernels = [b() for b in builds] if mode == "serial" else prewarm(builds, progress=False, workers=int(mode[1:]))
print("kernels_s", time.perf_counter() - start)
a = np.ones((64, 64), "float32")
for c, k in enumerate(kernels):
    assert float(k(paddle.to_tensor(a), paddle.to_tensor(a)).numpy()[0, 0]) == 64 + c
'''


def run(script, cache, kernels, ranks, mode):
    env = {**os.environ, "TILELANG_CACHE_DIR": cache, "PADDLE_TRAINERS_NUM": str(ranks)}
    start = time.perf_counter()
    procs = [subprocess.Popen([sys.executable, script, str(kernels), mode], env={**env, "PADDLE_TRAINER_ID": str(r)},
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for r in range(ranks)]
    outs = [p.communicate() for p in procs]
    wall = time.perf_counter() - start
    for p, (out, err) in zip(procs, outs):
        if p.returncode:
            raise SystemExit(f"a rank failed:\n{out}\n{err[-3000:]}")
    return wall, max(float(ln.split()[1]) for out, _ in outs for ln in out.splitlines() if ln.startswith("kernels_s"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, default=8, help="distinct kernels (default: 8)")
    parser.add_argument("--ranks", type=int, nargs="+", default=[1, 2, 4], help="process counts (default: 1 2 4)")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="prewarm threads per rank (default: 1 2)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per row, the median printed (default: 3)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "worker.py")
        with open(script, "w") as f:
            f.write(textwrap.dedent(WORKER).replace("{kernel}", MATMUL_PLUS_C))
        print(f"{args.kernels} kernels; wall s from start to the last exit (kernel phase s in brackets)")
        print(f"{'ranks':>5} {'mode':>10} {'cold':>14} {'warm':>14} {'warm per kernel':>16}")
        run(script, os.path.join(tmp, "kc-warm-up"), args.kernels, 1, "serial")
        base = base_k = None
        for ranks in args.ranks:
            for mode in ("serial", *(f"w{w}" for w in args.workers)):
                runs = []
                for rep in range(args.repeat):
                    cache = os.path.join(tmp, f"kc-{ranks}-{mode}-{rep}")
                    runs.append(run(script, cache, args.kernels, ranks, mode) + run(script, cache, args.kernels, ranks, mode))
                cold, cold_k, warm, warm_k = (statistics.median(r[i] for r in runs) for i in range(4))
                base, base_k = (cold, cold_k) if base is None else (base, base_k)
                shown = mode if mode == "serial" else f"prewarm {mode}"
                print(f"{ranks:>5} {shown:>10} {cold:>7.1f} ({cold_k:4.1f}) {warm:>7.1f} ({warm_k:4.1f}) "
                      f"{1000 * warm_k / args.kernels:>13.1f} ms   cold {cold / base:.2f}x wall, "
                      f"{cold_k / base_k:.2f}x kernel phase of 1 rank serial")


if __name__ == "__main__":
    main()
