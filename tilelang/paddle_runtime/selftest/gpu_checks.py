"""The GPU contract, checked through a driver: what the launch runtime promises on every GPU.

Each check compiles small kernels (:mod:`.kernels`) through a :class:`Harness`
and uses only the driver interface (``driver.py``'s docstring) plus the
selftest's few extras, so the same code runs on Paddle (``tilelang-paddle
selftest``) and, on a GPU machine without Paddle, with a stand-in driver. Every
check must be able to fail: the stream check proves, on each run, that a kernel
on another stream would have read stale data; the graph check changes the
captured input before replaying.
"""

from __future__ import annotations

import ctypes
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from . import kernels as K
from .report import Failed, Skip

BACKENDS = ("tvm_ffi", "cython")
#: A shape whose edges are not multiples of the GEMM's 128x128x64 tiles.
GEMM_SHAPE = (300, 200, 96)


@dataclass
class Compiled:
    """A kernel as the checks use it: ``call`` is the launch runtime's path, ``lib`` the Cython library (or None)."""

    call: Callable
    lib: object = None


@dataclass
class Harness:
    """What the checks need beyond the driver: compiling to the runtime's callable, and ``do_bench``.

    ``compile(prim_func, out_idx, backend)`` returns a :class:`Compiled` whose
    ``call`` goes through the package's launch runtime on ``driver``;
    ``do_bench(fn, backend, index)`` times ``fn`` in milliseconds.
    """

    driver: object
    compile: Callable
    do_bench: Callable


def relied_on(driver, *topics: str) -> str:
    table = getattr(driver, "RELIES_ON", {})
    return "; ".join(table[t] for t in topics if t in table)


def _where(driver, tensor) -> str:
    index = driver.gpu_of(tensor)
    return f"gpu:{index}" if index >= 0 else "the CPU"


def assert_close(got: np.ndarray, want: np.ndarray, what: str, rtol: float, atol: float, cite: str) -> str:
    if got.shape != want.shape:
        raise Failed(f"{what}: shape {got.shape}, expected {want.shape}", cite)
    bad = ~np.isclose(got, want, rtol=rtol, atol=atol)
    if bad.any():
        first = tuple(int(i) for i in np.argwhere(bad)[0])
        raise Failed(f"{what}: {int(bad.sum())} of {bad.size} values differ; at {first} got {got[first]}, "
                     f"expected {want[first]}", cite)
    return f"max abs error {float(np.max(np.abs(got - want))):.3g}"


def launch_raw(driver, compiled: Compiled, tensors, stream: int) -> None:
    """Call a Cython-backend kernel's C entry on ``stream`` directly, bypassing the runtime's stream choice."""
    fn = ctypes.cast(compiled.lib.call, ctypes.c_void_p).value
    proto = ctypes.CFUNCTYPE(ctypes.c_int, *([ctypes.c_void_p] * (len(tensors) + 1)))
    if proto(fn)(*[driver.data_ptr(t) for t in tensors], stream) != 0:
        raise RuntimeError(f"direct launch failed: {compiled.lib.get_last_error().decode(errors='replace')}")


class GpuChecks:
    """The checks of one GPU ``index`` (see module docstring); :meth:`plan` lists them."""

    def __init__(self, harness: Harness, index: int, rng: np.random.Generator):
        self.h, self.d, self.index, self.rng = harness, harness.driver, index, rng
        self._kernels: dict = {}

    # ------------------------------------------------------------------ helpers
    def kernel(self, factory, args: tuple, out_idx, backend: str) -> Compiled:
        key = (factory.__name__, args, tuple(out_idx or ()), backend)
        if key not in self._kernels:
            self._kernels[key] = self.h.compile(factory(*args), out_idx, backend)
        return self._kernels[key]

    def tensor(self, array: np.ndarray):
        return self.d.from_numpy(np.ascontiguousarray(array), self.index)

    def host(self, tensor) -> np.ndarray:
        self.d.synchronize(self.index)
        return np.asarray(self.d.to_numpy(tensor))

    def gemm_inputs(self):
        M, N, K_ = GEMM_SHAPE
        a = (self.rng.standard_normal((M, K_)) / 4).astype("float16")
        b = (self.rng.standard_normal((K_, N)) / 4).astype("float16")
        return a, b

    # ------------------------------------------------------------------ the checks
    def plan(self, quick: bool = False) -> list[tuple[str, Callable[[], str | None], str]]:
        i, d = self.index, self.d
        backends = BACKENDS[:1] if quick else BACKENDS
        allocation = relied_on(d, "allocate", "allocate_c", "switch", "exchange_api")
        plan = [(f"gpu:{i} GEMM ({b}) against numpy, output on gpu:{i}, current GPU kept",
                 lambda b=b: self.gemm(b), allocation) for b in backends]
        plan += [(f"gpu:{i} GEMM ({b}) with gpu:0 current", lambda b=b: self.other_gpu_current(b),
                  relied_on(d, "switch", "allocate", "allocate_c")) for b in backends] if i > 0 else []
        plan += [(f"gpu:{i} stream_guard: a kernel ({b}) runs after the guarded stream's work",
                  lambda b=b: self.stream_order(b), relied_on(d, "stream")) for b in backends]
        plan += [(f"gpu:{i} CUDA graph: a kernel ({b}) captured and replayed on new input",
                  lambda b=b: self.graph_replay(b), relied_on(d, "graph", "stream")) for b in backends]
        plan += [(f"gpu:{i} do_bench (backend={m}) times a known kernel",
                  lambda m=m: self.bench(m), relied_on(d, "events" if m == "event" else "graph"))
                 for m in ("event", "cudagraph")]
        plan.append((f"gpu:{i} PDL: a kernel without T.pdl_sync() after one that triggers early sees its writes",
                     self.pdl, relied_on(d, "stream")))
        return plan

    def gemm(self, backend: str) -> str:
        d, i = self.d, self.index
        k = self.kernel(K.gemm, GEMM_SHAPE, [2], backend)
        a_np, b_np = self.gemm_inputs()
        a, b = self.tensor(a_np), self.tensor(b_np)
        before = d.current_gpu()
        c = k.call(a, b)
        after = d.current_gpu()
        if d.gpu_of(c) != i:
            raise Failed(f"the output is on {_where(d, c)}, the inputs on gpu:{i}", relied_on(d, "allocate"))
        if after != before:
            raise Failed(f"gpu:{before} was current before the call, gpu:{after} after it", relied_on(d, "switch"))
        want = a_np.astype("float32") @ b_np.astype("float32")
        return assert_close(self.host(c).astype("float32"), want, f"C = A @ B {GEMM_SHAPE}", 2e-2, 5e-2,
                      relied_on(d, "stream", "allocate"))

    def other_gpu_current(self, backend: str) -> str:
        d, i = self.d, self.index
        k = self.kernel(K.gemm, GEMM_SHAPE, [2], backend)
        a_np, b_np = self.gemm_inputs()
        a, b = self.tensor(a_np), self.tensor(b_np)
        d.set_gpu(0)
        if d.current_gpu() != 0:
            raise Failed(f"set_gpu(0) left gpu:{d.current_gpu()} current", relied_on(d, "switch"))
        c = k.call(a, b)
        if d.current_gpu() != 0:
            raise Failed(f"a call on gpu:{i} tensors left gpu:{d.current_gpu()} current instead of gpu:0",
                         relied_on(d, "switch"))
        if d.gpu_of(c) != i:
            raise Failed(f"the output is on {_where(d, c)}, the inputs on gpu:{i}", relied_on(d, "allocate"))
        want = a_np.astype("float32") @ b_np.astype("float32")
        return assert_close(self.host(c).astype("float32"), want, f"C = A @ B on gpu:{i}", 2e-2, 5e-2,
                      relied_on(d, "switch", "stream"))

    def stream_order(self, backend: str) -> str:
        """A long kernel writes B on the guard's stream; ``plus_one`` (through the runtime) must read it after.

        The long kernel is launched on the guard's stream directly, so only the runtime's stream choice is
        tested. A control launches the reader on another stream and must see stale values, proving the long
        kernel is long enough for a wrong stream to show.
        """
        d, i, n = self.d, self.index, 16384
        spin = self.kernel(K.spin_then_write, (n,), None, "cython")
        reader = self.kernel(K.plus_one, (n,), [1], backend)
        raw_reader = self.kernel(K.plus_one, (n,), [1], "cython")
        a = self.tensor(self.rng.random(n, dtype=np.float32))
        side, other = d.new_stream(i), d.new_stream(i)
        side_raw, other_raw = d.raw_stream(side), d.raw_stream(other)
        b = self.tensor(np.zeros(n, np.float32))
        # Every kernel launched once first: a first launch loads its module, which can wait for the whole GPU
        # and would order the launches below whatever stream they went to.
        launch_raw(d, spin, [a, b], side_raw)
        launch_raw(d, raw_reader, [b, self.tensor(np.zeros(n, np.float32))], other_raw)
        reader.call(b)
        b = self.tensor(np.zeros(n, np.float32))
        d.synchronize(i)
        with d.stream_guard(side):
            seen = d.stream(i)
            launch_raw(d, spin, [a, b], side_raw)
            c = reader.call(b)
        got = self.host(c)
        if seen != side_raw:
            raise Failed(f"inside stream_guard the driver's stream of gpu:{i} is {seen:#x}, the guard's stream is "
                         f"{side_raw:#x}", relied_on(d, "stream"))
        stale = int(np.count_nonzero(got != 3.0))
        if stale:
            raise Failed(f"{stale} of {n} values were read before the guarded stream's long kernel wrote them "
                         "(the kernel ran on another stream)", relied_on(d, "stream"))
        b2, c2 = self.tensor(np.zeros(n, np.float32)), self.tensor(np.zeros(n, np.float32))
        d.synchronize(i)
        launch_raw(d, spin, [a, b2], side_raw)
        launch_raw(d, raw_reader, [b2, c2], other_raw)
        control = int(np.count_nonzero(self.host(c2) != 3.0))
        if not control:
            raise Skip("inconclusive: the long kernel finished before a kernel on another stream started, so a "
                       "wrong stream would not show here")
        return f"a reader on another stream saw {control} of {n} stale values; on the guarded stream, none"

    def graph_replay(self, backend: str) -> str:
        d, i = self.d, self.index
        M, N, K_ = GEMM_SHAPE
        k = self.kernel(K.gemm, GEMM_SHAPE, [2], backend)
        negate = self.kernel(K.negate_in_place, (M, K_), None, "cython")
        a_np, b_np = self.gemm_inputs()
        a, b = self.tensor(a_np), self.tensor(b_np)
        k.call(a, b)  # loaded and initialised outside the capture
        side = d.new_stream(i)
        d.synchronize(i)
        graph = d.cuda_graph(i)
        with d.stream_guard(side):
            graph.capture_begin()
            try:
                c = k.call(a, b)
            finally:
                graph.capture_end()
        negate.call(a)  # the captured input changes; only a replay of the captured kernel updates C
        d.synchronize(i)
        with d.stream_guard(side):
            graph.replay()
        got = self.host(c).astype("float32")
        graph.reset()
        want = -(a_np.astype("float32") @ b_np.astype("float32"))
        if np.allclose(got, -want, rtol=2e-2, atol=5e-2) and not np.allclose(got, want, rtol=2e-2, atol=5e-2):
            raise Failed("the replay left C at the product of the input as captured: the kernel ran outside the "
                         "capture (on a stream that was not capturing)", relied_on(d, "graph", "stream"))
        return assert_close(got, want, "C after replay with A negated", 2e-2, 5e-2, relied_on(d, "graph", "stream"))

    def bench(self, backend: str) -> str:
        d, i, n = self.d, self.index, 16384
        spin = self.kernel(K.spin_then_write, (n,), None, "cython")
        a, b = self.tensor(self.rng.random(n, dtype=np.float32)), self.tensor(np.zeros(n, np.float32))
        spin.call(a, b)
        d.synchronize(i)
        start = time.perf_counter()
        for _ in range(3):
            spin.call(a, b)
        d.synchronize(i)
        wall = (time.perf_counter() - start) / 3 * 1e3
        measured = float(self.h.do_bench(lambda: spin.call(a, b), backend, i))
        if not 0.7 * wall <= measured <= 1.3 * wall:
            raise Failed(f"do_bench measured {measured:.3f} ms for a kernel that takes {wall:.3f} ms by the host "
                         "clock (expected within 30%)", relied_on(d, "events" if backend == "event" else "graph"))
        return f"{measured:.2f} ms against {wall:.2f} ms by the host clock"

    def pdl(self) -> str:
        d, i = self.d, self.index
        major = d.gpu_facts(i)["capability"][0]
        if major < 9:
            raise Skip(f"programmatic dependent launch needs compute capability 9.0 or newer; gpu:{i} has {major}.x")
        n = 16384
        producer = self.kernel(K.spin_then_write, (n, 1 << 16, True), None, "cython")
        reader = self.kernel(K.plus_one, (n,), [1], "cython")
        a = self.tensor(self.rng.random(n, dtype=np.float32))
        producer.call(a, self.tensor(np.zeros(n, np.float32)))  # loaded outside the runs below
        runs, stale = 20, 0
        for _ in range(runs):
            b = self.tensor(np.zeros(n, np.float32))
            producer.call(a, b)
            stale += int(np.count_nonzero(self.host(reader.call(b)) != 3.0))
        if stale:
            raise Failed(f"{stale} of {runs * n} values were read before the kernel ahead of the reader wrote them: "
                         "the reader, which does not call T.pdl_sync(), was launched as a programmatic dependent",
                         relied_on(d, "stream"))
        return f"{runs} runs, every value seen"
