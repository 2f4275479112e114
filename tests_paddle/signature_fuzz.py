"""Seeded random kernel signatures and their numpy reference (used by test_signature_fuzz.py and bench/).

``random_spec(rng)`` draws a kernel signature: 2 to 6 buffers, outputs at any
positions (``out_idx`` shuffled, with negative indices at random), 0 to 3
symbolic sizes shared between buffers at various axes, static extents, and
float32/float64/int32 dtypes. Every symbolic size is carried by at least one
input (outputs are allocated from the inputs). ``kernel_source(spec)`` writes
a CPU kernel for it whose every output element is

    sum over inputs k of (k + 1) * sum(input k)  +  the element's row-major index
                                                  +  1000 * the output's parameter position

so a wrong size anywhere changes a result, and outputs returned in another order
than ``out_idx`` (even two of one shape and dtype) differ: an input read over the wrong
extent changes the sum (or reads out of bounds), an output written over the
wrong extent leaves elements unset or overflows. ``reference(spec, inputs)``
is the same in numpy. Inputs hold small integers so every dtype sums exactly.
"""

from __future__ import annotations

import importlib.util
import random
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

DTYPES = ("float32", "float64", "int32")


@dataclass
class Buffer:
    name: str
    dtype: str
    dims: list  # int or symbol name
    is_output: bool


@dataclass
class Spec:
    seed: int
    buffers: list
    symbols: list
    out_idx: list  # as given to tilelang.compile (any order, some negative)

    @property
    def inputs(self):
        return [b for b in self.buffers if not b.is_output]

    @property
    def outputs(self):
        """In ``out_idx`` order: the order a kernel returns them in."""
        return [self.buffers[i % len(self.buffers)] for i in self.out_idx]


def random_spec(seed: int) -> Spec:
    rng = random.Random(seed)
    n = rng.randint(2, 6)
    n_out = rng.randint(1, n - 1)
    out_pos = sorted(rng.sample(range(n), n_out))
    symbols = [f"S{k}" for k in range(rng.randint(0, 3))]
    buffers = []
    for i in range(n):
        rank = rng.randint(1, 3)
        dims = [rng.choice(symbols) if symbols and rng.random() < 0.6 else rng.randint(1, 5) for _ in range(rank)]
        buffers.append(Buffer(f"B{i}", rng.choice(DTYPES), dims, i in out_pos))
    inputs = [b for b in buffers if not b.is_output]
    def input_carriers(sym):
        return sum(b.dims.count(sym) for b in inputs)

    for s in symbols:  # every symbol carried by an input, at a random axis no other symbol depends on
        if any(s in b.dims for b in buffers) and not input_carriers(s):
            free = [(b, a) for b in inputs for a, d in enumerate(b.dims)
                    if isinstance(d, int) or input_carriers(d) >= 2]
            if free:
                b, a = rng.choice(free)
                b.dims[a] = s
            else:
                rng.choice(inputs).dims.append(s)
    used = [s for s in symbols if any(s in b.dims for b in buffers)]
    out_idx = [i - n if rng.random() < 0.5 else i for i in out_pos]
    rng.shuffle(out_idx)  # any order: the outputs come back in this order, not in parameter order
    return Spec(seed, buffers, used, out_idx)


def _linear(idx: list, dims: list) -> str:
    expr = idx[0]
    for i, d in zip(idx[1:], dims[1:]):
        expr = f"({expr}) * {d} + {i}"
    return expr


def kernel_source(spec: Spec) -> str:
    lines = ["import tilelang.language as T", ""]
    for s in spec.symbols:
        lines.append(f'{s} = T.dynamic("{s}")')
    params = ", ".join(f'{b.name}: T.Tensor(({", ".join(map(str, b.dims))},), "{b.dtype}")' for b in spec.buffers)
    lines += ["", "", "@T.prim_func", f"def main({params}):",
              "    with T.Kernel(1, threads=1) as bx:",
              '        acc = T.alloc_local((1,), "float64")',
              "        acc[0] = 0.0"]
    for k, b in enumerate(spec.inputs):
        idx = [f"i{a}" for a in range(len(b.dims))]
        lines.append(f"        for {', '.join(idx)} in T.grid({', '.join(map(str, b.dims))}):")
        lines.append(f'            acc[0] = acc[0] + T.cast({b.name}[{", ".join(idx)}], "float64") * {k + 1}.0')
    for b in spec.outputs:
        idx = [f"j{a}" for a in range(len(b.dims))]
        lines.append(f"        for {', '.join(idx)} in T.grid({', '.join(map(str, b.dims))}):")
        lines.append(f'            {b.name}[{", ".join(idx)}] = T.cast(acc[0] + T.cast({_linear(idx, b.dims)}, '
                     f'"float64") + {1000.0 * spec.buffers.index(b)}, "{b.dtype}")')
    return "\n".join(lines) + "\n"


def load_kernel_func(spec: Spec, directory: Path):
    """The spec's PrimFunc, from a real file (TileLang reads kernel sources)."""
    path = Path(directory) / f"fuzz_kernel_{spec.seed}.py"
    path.write_text(kernel_source(spec))
    name = f"fuzz_kernel_{spec.seed}"
    module_spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module
    module_spec.loader.exec_module(module)
    return module.main


def random_sizes(spec: Spec, rng: np.random.Generator, allow_zero: bool = True) -> dict:
    low = 0 if allow_zero and rng.random() < 0.1 else 1
    return {s: int(rng.integers(low, 8)) for s in spec.symbols}


def shape_of(b: Buffer, sizes: dict) -> list:
    return [sizes[d] if isinstance(d, str) else d for d in b.dims]


def random_inputs(spec: Spec, sizes: dict, rng: np.random.Generator) -> list:
    return [rng.integers(-3, 4, size=shape_of(b, sizes)).astype(b.dtype) for b in spec.inputs]


def reference(spec: Spec, inputs: list, sizes: dict) -> list:
    total = sum((k + 1) * float(np.asarray(x, dtype=np.float64).sum()) for k, x in enumerate(inputs))
    outs = []
    for b in spec.outputs:
        shape = shape_of(b, sizes)
        tag = 1000.0 * spec.buffers.index(b)
        outs.append((total + tag + np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)).astype(b.dtype))
    return outs


def describe(spec: Spec) -> str:
    params = ", ".join(f"{b.name}{'*' if b.is_output else ''}({', '.join(map(str, b.dims))}):{b.dtype}"
                       for b in spec.buffers)
    return f"seed {spec.seed}: main({params}) out_idx={spec.out_idx}"
