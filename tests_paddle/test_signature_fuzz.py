"""Kernel calls are right for every signature: a seeded fuzzer over random kernel signatures.

Each random kernel (see signature_fuzz.py) runs on fresh random inputs through
the fast launcher, through upstream's launcher (the patched Cython wrapper that
``TILELANG_PADDLE_FAST_LAUNCH=0`` and every declined call use) and, for a
subset, through ``custom_op``, each against numpy. Bad calls (two inputs
disagreeing on a symbolic size) must be ValueErrors naming both on both
launchers. ``TILELANG_PADDLE_FUZZ_KERNELS=N`` runs N kernels instead of the CI
count; ``TILELANG_PADDLE_FUZZ_SEED`` moves the seed range.
"""

import os
import re
from pathlib import Path

import numpy as np
import paddle
import pytest

import tilelang
import tilelang.language as T
from tilelang.paddle import custom_op
from tilelang.paddle_runtime import signature

from conftest import run_python
from signature_fuzz import describe, load_kernel_func, random_inputs, random_sizes, random_spec, reference

CPU = dict(target="c", execution_backend="cython")
COUNT = int(os.environ.get("TILELANG_PADDLE_FUZZ_KERNELS", "24"))
SEED0 = int(os.environ.get("TILELANG_PADDLE_FUZZ_SEED", "20261203"))


def _as_list(result):
    return list(result) if isinstance(result, (list, tuple)) else [result]


def _check(spec, outs, inputs, sizes, how):
    want = reference(spec, inputs, sizes)
    assert len(outs) == len(want), f"{describe(spec)} via {how}: {len(outs)} outputs"
    for got, ref, b in zip(outs, want, spec.outputs):
        got = got.numpy()
        assert list(got.shape) == list(ref.shape), f"{describe(spec)} via {how}: {b.name} shape {got.shape}"
        np.testing.assert_array_equal(got, ref, err_msg=f"{describe(spec)} via {how}: {b.name}, sizes {sizes}")


def _upstream_launcher(kernel):
    """Upstream's Cython launcher (patches 0006, 0021, 0022), as the fast path's fallback calls it."""
    return lambda *args: kernel.adapter.cython_wrapper.forward(list(args))


def _shared_symbol(spec):
    """(symbol, two different inputs carrying it), or None."""
    for s in spec.symbols:
        carriers = [k for k, b in enumerate(spec.inputs) if s in b.dims]
        if len(carriers) >= 2:
            return s, carriers[0], carriers[1]
    return None


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    directory = tmp_path_factory.mktemp("fuzz_kernels")
    out = []
    for seed in range(SEED0, SEED0 + COUNT):
        spec = random_spec(seed)
        out.append((spec, tilelang.compile(load_kernel_func(spec, directory), out_idx=list(spec.out_idx), **CPU)))
    return out


def test_random_signatures_through_both_launchers(kernels):
    rng = np.random.default_rng(SEED0)
    fast_seen = 0
    for spec, kernel in kernels:
        fast = kernel.torch_function
        fast_seen += type(fast).__name__ == "Launcher"
        for _draw in range(2):
            sizes = random_sizes(spec, rng)
            arrays = random_inputs(spec, sizes, rng)
            tensors = [paddle.to_tensor(a) for a in arrays]
            _check(spec, _as_list(kernel(*tensors)), arrays, sizes, "the fast launcher")
            _check(spec, _as_list(_upstream_launcher(kernel)(*tensors)), arrays, sizes, "upstream's launcher")
    assert fast_seen == len(kernels), "every fuzz kernel fits the fast launcher"


def test_random_signatures_refuse_disagreeing_sizes_on_both_launchers(kernels):
    rng = np.random.default_rng(SEED0 + 1)
    checked = 0
    for spec, kernel in kernels:
        shared = _shared_symbol(spec)
        if shared is None:
            continue
        s, first, second = shared
        sizes = {k: max(v, 1) for k, v in random_sizes(spec, rng, allow_zero=False).items()}
        arrays = random_inputs(spec, sizes, rng)
        wrong = dict(sizes, **{s: sizes[s] + 1})
        b = spec.inputs[second]
        arrays[second] = random_inputs(spec, wrong, rng)[second]
        tensors = [paddle.to_tensor(a) for a in arrays]
        names = sorted({spec.inputs[first].name, b.name})
        for how, call in (("fast", kernel), ("upstream", _upstream_launcher(kernel))):
            with pytest.raises(ValueError, match=rf"symbolic {s}=") as err:
                call(*tensors)
            message = str(err.value)
            assert all(f"({n})" in message for n in names), f"{describe(spec)} via {how}: {message}"
        checked += 1
    assert checked >= 3, "the seed range gives shared symbolic sizes"


def test_the_seeds_cover_the_cases_that_matter(kernels):
    """Outputs before the inputs carrying their sizes, negative out_idx, shared sizes, every dtype."""
    specs = [spec for spec, _ in kernels]
    assert any(s.buffers[0].is_output and s.symbols for s in specs)
    assert any(i < 0 for s in specs for i in s.out_idx)
    resolved = [[i % len(s.buffers) for i in s.out_idx] for s in specs]
    assert any(r != sorted(r) for r in resolved), "some out_idx is not in parameter order"
    assert any(_shared_symbol(s) for s in specs)
    assert {b.dtype for s in specs for b in s.buffers} == {"float32", "float64", "int32"}


def test_signature_agrees_with_the_generated_call(kernels):
    """signature.of checks the rule against the host source; here the result is compared with it too."""
    for spec, kernel in kernels:
        sig = signature.of(kernel.adapter)
        declared = signature.declared_call(kernel.get_host_source())
        assert [n for _t, n in declared[len(sig.params):]] == [s.name for s in sig.symbols], describe(spec)
        assert [s.ctype for s in sig.symbols] == [t for t, _n in declared[len(sig.params):]]
        assert [p.name for p in sig.outputs] == [b.name for b in spec.outputs]


@pytest.mark.parametrize("pick", [0, 1])
def test_random_signatures_as_custom_ops(kernels, tmp_path, pick):
    """A subset through custom_op (each op build takes seconds): an output first, and outputs out of order."""
    if pick == 0:
        candidates = [(s, k) for s, k in kernels if s.buffers[0].is_output and s.symbols]
    else:
        candidates = [(s, k) for s, k in kernels
                      if [i % len(s.buffers) for i in s.out_idx] != sorted(i % len(s.buffers) for i in s.out_idx)]
    spec, kernel = (candidates or kernels)[0]
    op = custom_op(kernel, name=f"tl_fuzz_{spec.seed}", directory=tmp_path / "op")
    rng = np.random.default_rng(spec.seed)
    for _draw in range(3):
        sizes = random_sizes(spec, rng, allow_zero=False)
        arrays = random_inputs(spec, sizes, rng)
        _check(spec, _as_list(op(*[paddle.to_tensor(a) for a in arrays])), arrays, sizes, "custom_op")


# ---------------------------------------------------------------- the out-first GEMM of issue 20

M, N, K = T.dynamic("M"), T.dynamic("N"), T.dynamic("K")


@T.prim_func
def gemm_out_first(C: T.Tensor((M, N), "float32"), A: T.Tensor((M, K), "float32"), B: T.Tensor((K, N), "float32")):
    with T.Kernel(1, threads=1) as bx:
        for i, j in T.grid(M, N):
            C[i, j] = 0.0
            for k in T.serial(K):
                C[i, j] = C[i, j] + A[i, k] * B[k, j]


@pytest.fixture(scope="module")
def out_first():
    return tilelang.compile(gemm_out_first, out_idx=[0], **CPU)


def test_out_first_gemm_symbols_in_call_order(out_first):
    sig = signature.of(out_first.adapter)
    assert [s.name for s in sig.symbols] == ["M", "N", "K"]
    assert [(s.name, s.binder) for s in sig.symbols] == [("M", (1, 0)), ("N", (2, 1)), ("K", (1, 1))]
    # Upstream's map, reordered by patch 0021, now agrees with call().
    assert [str(v) for v in out_first.adapter.dynamic_symbolic_map] == ["M", "N", "K"]


@pytest.mark.parametrize("shape", [(16, 24, 40), (1, 7, 3), (33, 5, 64)])
def test_out_first_gemm_fast_and_upstream_launchers(out_first, shape):
    m, n, k = shape
    rng = np.random.default_rng(m * n * k)
    a, b = rng.standard_normal((m, k)).astype("float32"), rng.standard_normal((k, n)).astype("float32")
    pa, pb = paddle.to_tensor(a), paddle.to_tensor(b)
    np.testing.assert_allclose(out_first(pa, pb).numpy(), a @ b, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(_upstream_launcher(out_first)(pa, pb).numpy(), a @ b, rtol=1e-4, atol=1e-4)


def test_out_first_gemm_with_the_fast_path_off():
    """TILELANG_PADDLE_FAST_LAUNCH=0 (read per kernel): upstream's launcher alone, in a fresh process."""
    proc = run_python(f"""
        import sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        import numpy as np, paddle
        import tilelang
        from test_signature_fuzz import gemm_out_first

        kernel = tilelang.compile(gemm_out_first, out_idx=[0], target="c", execution_backend="cython")
        assert type(kernel.torch_function).__name__ != "Launcher"
        a, b = np.random.rand(16, 40).astype("float32"), np.random.rand(40, 24).astype("float32")
        err = np.abs(kernel(paddle.to_tensor(a), paddle.to_tensor(b)).numpy() - a @ b).max()
        print("max error", err)
        assert err < 1e-4
    """, env={"TILELANG_PADDLE_FAST_LAUNCH": "0"})
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]


def test_out_first_gemm_as_a_custom_op(out_first, tmp_path):
    op = custom_op(out_first, name="tl_gemm_out_first", directory=tmp_path / "op")
    rng = np.random.default_rng(7)
    for m, n, k in [(16, 24, 40), (3, 1, 9)]:
        a, b = rng.standard_normal((m, k)).astype("float32"), rng.standard_normal((k, n)).astype("float32")
        np.testing.assert_allclose(op(paddle.to_tensor(a), paddle.to_tensor(b)).numpy(), a @ b, rtol=1e-4, atol=1e-4)
    source = next((tmp_path / "op").glob("*.cc")).read_text()
    # call()'s exact prototype: three pointers and the three int32 sizes, in M, N, K order, no stream on the CPU.
    assert "using TlpCall = int32_t (*)(void*, void*, void*, int32_t, int32_t, int32_t);" in source
    assert re.search(r"static_cast<int32_t>\(tlp_dims\[0\]\), static_cast<int32_t>\(tlp_dims\[1\]\), "
                     r"static_cast<int32_t>\(tlp_dims\[2\]\)\);", source)


def test_out_first_gemm_cuda_signature_matches_its_host_wrapper(tmp_path):
    """The CUDA wrapper declares `int` sizes and the stream last; the rule and the source agree (compile only)."""
    kernel = tilelang.compile(gemm_out_first_cuda(), out_idx=[0], target={"kind": "cuda", "arch": "sm_90a"},
                              execution_backend="cython")
    sig = signature.of(kernel.adapter)
    assert [(s.name, s.ctype) for s in sig.symbols] == [("M", "int"), ("N", "int"), ("K", "int64_t")]
    assert sig.call_has_stream
    assert [str(v) for v in kernel.adapter.dynamic_symbolic_map] == ["M", "N", "K"]


def gemm_out_first_cuda():
    m, n, k = T.dynamic("M"), T.dynamic("N"), T.dynamic("K", "int64")

    @T.prim_func
    def main(C: T.Tensor((m, n), "float32"), A: T.Tensor((m, k), "float32"), B: T.Tensor((k, n), "float32")):
        with T.Kernel(T.ceildiv(n, 32), T.ceildiv(m, 32), threads=128) as (bx, by):
            for i, j in T.Parallel(32, 32):
                if by * 32 + i < m and bx * 32 + j < n:
                    acc = T.alloc_var("float32")
                    acc = 0.0
                    for kk in T.serial(k):
                        acc += A[by * 32 + i, kk] * B[kk, bx * 32 + j]
                    C[by * 32 + i, bx * 32 + j] = acc

    return main


# ---------------------------------------------------------------- sizes beyond call()'s int


def _wide_free(dtype):
    r, n = T.dynamic("r"), T.dynamic("n", dtype)

    @T.prim_func
    def main(X: T.Tensor((r, n), "float32"), Y: T.Tensor((r,), "float32")):
        with T.Kernel(1, threads=1) as bx:
            for i in T.serial(r):
                Y[i] = 0.0

    return main


@pytest.mark.parametrize("launcher", ["fast", "upstream"])
def test_int32_size_limit(launcher):
    kernel = tilelang.compile(_wide_free("int32"), out_idx=[1], **CPU)
    call = kernel if launcher == "fast" else _upstream_launcher(kernel)
    x = paddle.empty([0, 2**31], dtype="float32")
    with pytest.raises(ValueError, match=r"argument 0 \(X\), dimension 1: the symbolic n=2147483648 does not "
                                         r"fit the kernel's int32_t parameter \(at most 2147483647\); declare it "
                                         r"T.dynamic\(\"n\", \"int64\"\)"):
        call(x)
    assert call(paddle.empty([0, 2**31 - 1], dtype="float32")).shape == [0]
    wide = tilelang.compile(_wide_free("int64"), out_idx=[1], **CPU)
    assert [s.ctype for s in signature.of(wide.adapter).symbols] == ["int32_t", "int64_t"]
    call = wide if launcher == "fast" else _upstream_launcher(wide)
    assert call(x).shape == [0]
