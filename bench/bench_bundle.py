"""Bundle load with no compiler: first call per kernel in a fresh serving process.

    python bench/bench_bundle.py [--kernels 8]

Builds K distinct CPU kernels into a bundle with ``tilelang-paddle bundle``,
then starts a process with ``TILELANG_PADDLE_BUNDLE`` set, an empty writable
cache and a C++ compiler that fails (as in a serving image), and times, per
kernel, ``tilelang.compile(...)`` (the lookup, the sha256 check and the load)
plus its first call. Target (issue 28): <= 50 ms per kernel.
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
        k = tilelang.compile(kernel(float(c)), out_idx=[2], target="c", execution_backend="cython")
        out = k(a, a)
        ms = 1000 * (time.perf_counter() - start)
        assert float(out.numpy()[0, 0]) == 64 + c
        print("first_call_ms", ms)
'''


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, default=8, help="distinct kernels (default: 8)")
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
        proc = subprocess.run([sys.executable, "-c", f"import sys; sys.path.insert(0, {tmp!r}); import job; job.serve()"],
                              env=env, capture_output=True, text=True)
        if proc.returncode:
            raise SystemExit(proc.stderr[-3000:])
        ms = [float(ln.split()[1]) for ln in proc.stdout.splitlines() if ln.startswith("first_call_ms")]
        print(f"{len(ms)} kernels from a bundle, no compiler: first call (lookup, sha256 check, load, call) "
              f"median {statistics.median(ms):.1f} ms, first {ms[0]:.1f} ms, max {max(ms):.1f} ms")


if __name__ == "__main__":
    main()
