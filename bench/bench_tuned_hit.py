"""A tuned kernel served from the writable autotune cache: the cost of the hit, by number of configs.

    python bench/bench_tuned_hit.py [--configs 1 10 100] [--repeat 3]

For each count N, one process tunes an ``@tilelang.autotune`` kernel with N
configs (a CPU kernel; the configs differ in a parameter the program does not
read, so the kernel cache compiles it once), then ``--repeat`` fresh processes
call it again and time the first call ``tuned(256)`` (the hit: key, lookup,
load) and, inside it, the key (``cache.key.tuned_key``: elaborating every
config's program). Prints medians; docs/performance.md has the numbers.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

MODEL = '''
import time
import tilelang
import tilelang.language as T
from tilelang.paddle_runtime.cache import key as cache_key

N_CONFIGS = {n}


@tilelang.autotune(configs=[{{"block": 32, "variant": v}} for v in range(N_CONFIGS)])
@tilelang.jit(out_idx=[1], target="c", execution_backend="cython")
def tuned(N, block=32, variant=0):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, block)) as bx:
            for i in T.serial(block):
                B[bx * block + i] = A[bx * block + i] * 2.0
    return main


def run():
    spent = []
    inner = cache_key.tuned_key

    def timed(*args):
        t0 = time.perf_counter()
        try:
            return inner(*args)
        finally:
            spent.append(time.perf_counter() - t0)

    cache_key.tuned_key = timed
    t0 = time.perf_counter()
    tuned(256)
    total = time.perf_counter() - t0
    print("HIT", total * 1e3, sum(spent) * 1e3)
'''


def _run(work: Path, env: dict) -> tuple:
    proc = subprocess.run([sys.executable, "-c", "import paddle, model; model.run()"], cwd=str(work), env=env,
                          capture_output=True, text=True, timeout=1800)
    if proc.returncode:
        raise SystemExit(proc.stdout + proc.stderr[-3000:])
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("HIT "))
    return tuple(float(x) for x in line.split()[1:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", type=int, nargs="+", default=[1, 10, 100])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"{'configs':>8} {'hit ms':>9} {'key ms':>9} {'key ms/config':>14}")
    for n in args.configs:
        with tempfile.TemporaryDirectory(prefix="bench-tuned-hit-") as tmp:
            work = Path(tmp)
            (work / "model.py").write_text(textwrap.dedent(MODEL.format(n=n)))
            env = {**os.environ, "TILELANG_CACHE_DIR": str(work / "cache"), "PYTHONPATH": str(work)}
            _run(work, env)  # tunes, and writes the result
            runs = [_run(work, env) for _ in range(args.repeat)]
            hit = statistics.median(r[0] for r in runs)
            key = statistics.median(r[1] for r in runs)
            print(f"{n:>8} {hit:>9.1f} {key:>9.1f} {key / n:>14.2f}")


if __name__ == "__main__":
    main()
