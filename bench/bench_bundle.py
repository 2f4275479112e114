"""Bundle load with no compiler: first call per kernel in a fresh serving process.

    python bench/bench_bundle.py [--kernels 8] [--repeat 5]

Builds K distinct CPU kernels into a bundle with ``tilelang-paddle bundle``,
then starts a process with ``TILELANG_PADDLE_BUNDLE`` set, an empty writable
cache and a C++ compiler that fails (as in a serving image), and times, per
kernel, ``tilelang.compile(program)`` (the lookup, the sha256 check and the
load) plus its first call, in ``--repeat`` fresh serving processes; and,
apart, building the program (the kernel factory's ``@T.prim_func``, TileLang's
builder: the same with or without a bundle). Targets (issue 50): the first kernel of a
process <= 20 ms (median over the processes), every later one <= 10 ms.
"""

import argparse
import os
import shutil
import stat
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

from cpu_kernels import MATMUL_PLUS_C  # bench/ is sys.path[0] when run as a script

JOB = '''
import sys, time
import numpy as np, paddle
import tilelang
import tilelang.language as T

{kernel}
K = int(__import__("os").environ["BENCH_KERNELS"])

def build():
    for c in range(K):
        tilelang.compile(kernel(float(c)), out_idx=[2], target="c", execution_backend="cython")

def serve():
    a = paddle.ones([64, 64], "float32")
    for c in range(K):
        start = time.perf_counter()
        program = kernel(float(c))
        built = time.perf_counter()
        k = tilelang.compile(program, out_idx=[2], target="c", execution_backend="cython")
        out = k(a, a)
        done = time.perf_counter()
        assert float(out.numpy()[0, 0]) == 64 + c
        print("first_call_ms", 1000 * (done - built), 1000 * (built - start))
'''


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, default=8, help="distinct kernels (default: 8)")
    parser.add_argument("--repeat", type=int, default=5, help="fresh serving processes (default: 5)")
    args = parser.parse_args()
    exe = shutil.which("tilelang-paddle") or str(Path(sys.executable).parent / "tilelang-paddle")
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "job.py").write_text(textwrap.dedent(JOB).replace("{kernel}", MATMUL_PLUS_C))
        env = {**os.environ, "BENCH_KERNELS": str(args.kernels)}
        subprocess.run([exe, "bundle", os.path.join(tmp, "out"), "--run", "job:build"], cwd=tmp, env=env, check=True,
                       stdout=subprocess.DEVNULL)
        stub = Path(tmp, "c++")
        stub.write_text("#!/bin/sh\nexit 1\n")
        stub.chmod(stub.stat().st_mode | stat.S_IEXEC)
        env.update({"TILELANG_PADDLE_BUNDLE": os.path.join(tmp, "out"), "TILELANG_CACHE_DIR": os.path.join(tmp, "empty"),
                    "CXX": str(stub), "CUDA_HOME": os.path.join(tmp, "no-cuda")})
        firsts, laters, builds = [], [], []
        for _ in range(args.repeat):
            proc = subprocess.run([sys.executable, "-c", f"import sys; sys.path.insert(0, {tmp!r}); import job; job.serve()"],
                                  env=env, capture_output=True, text=True)
            if proc.returncode:
                raise SystemExit(proc.stderr[-3000:])
            rows = [ln.split()[1:] for ln in proc.stdout.splitlines() if ln.startswith("first_call_ms")]
            ms = [float(r[0]) for r in rows]
            firsts.append(ms[0])
            laters.extend(ms[1:])
            builds.extend(float(r[1]) for r in rows)
        print(f"{args.kernels} kernels from a bundle, a failing compiler, {args.repeat} fresh processes; per kernel, "
              f"tilelang.compile(program) (lookup, sha256 check, load) and the first call:")
        print(f"  first kernel of a process: median {statistics.median(firsts):.1f} ms "
              f"(each: {', '.join(f'{m:.1f}' for m in firsts)})")
        print(f"  later kernels: median {statistics.median(laters):.1f} ms, max {max(laters):.1f} ms")
        print(f"  apart: building each program (the factory's @T.prim_func) median {statistics.median(builds):.1f} ms")


if __name__ == "__main__":
    main()
