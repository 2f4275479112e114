"""The examples users copy: each CPU path runs and checks itself; each CUDA kernel compiles for sm_90a."""

import os
import re
import shutil

import pytest
from conftest import ROOT, run_python

import numpy as np
import paddle

import tilelang

HAS_GPU = paddle.is_compiled_with_cuda() and paddle.device.cuda.device_count() > 0
NVCC = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if os.path.exists("/usr/local/cuda/bin/nvcc") else None)
needs_nvcc = pytest.mark.skipif(NVCC is None, reason="needs nvcc (CUDA toolkit) to compile CUDA kernels")
EXAMPLES = ROOT / "examples"


def _run_example(name: str, *args: str):
    code = f"import sys\nsys.path.insert(0, {str(EXAMPLES)!r})\nsys.argv = [{name!r}, *{list(args)!r}]\n" \
           f"import runpy\nrunpy.run_path({str(EXAMPLES / name)!r}, run_name='__main__')\n"
    return run_python(code)


def test_rmsnorm_example_cpu_path_checks_itself():
    proc = _run_example("rmsnorm.py", "--rows", "96", "--hidden", "256")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "OK" in proc.stdout and "us (Paddle ops)" in proc.stdout


def test_softmax_example_cpu_path_checks_itself():
    proc = _run_example("softmax.py", "--rows", "64", "--cols", "128")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "OK" in proc.stdout and "paddle.nn.functional.softmax" in proc.stdout


def test_softmax_example_takes_an_empty_batch_and_ragged_columns():
    proc = _run_example("softmax.py", "--rows", "0", "--cols", "100")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "softmax 0x100 float32" in proc.stdout and "OK" in proc.stdout


@pytest.mark.parametrize("name", ["quickstart.py", "gemm.py", "softmax.py", "rmsnorm.py", "flash_attention.py", "train_mlp.py"])
def test_example_help_answers_before_paddle_loads(name):
    """--help prints the defaults and exits before Paddle and TileLang are imported (they take seconds)."""
    code = (f"import sys\nsys.path.insert(0, {str(EXAMPLES)!r})\nsys.argv = [{name!r}, '--help']\nimport runpy\n"
            f"try:\n    runpy.run_path({str(EXAMPLES / name)!r}, run_name='__main__')\nexcept SystemExit as e:\n"
            f"    print('EXIT', e.code, 'paddle' in sys.modules, 'tilelang' in sys.modules)\n")
    proc = run_python(code)
    assert "EXIT 0 False False" in proc.stdout, proc.stdout + proc.stderr
    assert "usage:" in proc.stdout
    assert "(default: None)" not in proc.stdout  # a default that depends on the machine is said in its own help


def test_flash_attention_help_shows_every_default():
    proc = _run_example("flash_attention.py", "--help")
    assert "batch size (default: 2)" in proc.stdout and "attention heads (default: 8)" in proc.stdout, proc.stdout


@pytest.mark.skipif(os.path.exists("/dev/nvidiactl") or os.path.exists("/dev/nvidia0"),
                    reason="an NVIDIA device is present: the CPU rules are checked after Paddle loads")
@pytest.mark.parametrize("args", [["--dtype", "float16"], ["--m", "100"]])
def test_gemm_cpu_rules_answer_before_paddle_loads(args):
    code = (f"import sys\nsys.path.insert(0, {str(EXAMPLES)!r})\nsys.argv = ['gemm.py', *{args!r}]\nimport runpy\n"
            f"try:\n    runpy.run_path({str(EXAMPLES / 'gemm.py')!r}, run_name='__main__')\nexcept SystemExit as e:\n"
            f"    print('EXIT', e.code, 'paddle' in sys.modules)\n")
    proc = run_python(code)
    assert "EXIT 2 False" in proc.stdout, proc.stdout + proc.stderr


@pytest.mark.parametrize("name, args, message", [
    ("quickstart.py", ["--size", "100"], "--size must be a positive multiple of 32"),
    ("gemm.py", ["--dtype", "bfloat16"], "--dtype bfloat16 needs a GPU"),
    ("gemm.py", ["--m", "0"], "expected a positive integer, got 0"),
    ("softmax.py", ["--arch", "sm_999x"], "expected a CUDA arch such as sm_80"),
    ("flash_attention.py", ["--decode", "--causal"], "--causal: with --decode the one query token attends"),
])
def test_example_argument_errors_are_argparse_errors(name, args, message):
    if name == "gemm.py" and HAS_GPU and "--dtype" in args:
        pytest.skip("Paddle sees a GPU: bfloat16 runs there")
    proc = _run_example(name, *args)
    assert proc.returncode == 2 and message in proc.stderr, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr


@needs_nvcc
def test_unknown_arch_reports_nvccs_reason_not_the_source():
    proc = _run_example("quickstart.py", "--size", "32", "--arch", "sm_99")
    assert "nvcc could not compile for sm_99" in proc.stdout and "Unsupported gpu architecture" in proc.stdout, \
        proc.stdout + proc.stderr
    assert "__global__" not in proc.stdout + proc.stderr


def test_gemm_example_cpu_path_checks_itself():
    proc = _run_example("gemm.py", "--m", "64", "--n", "96", "--k", "32")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "(OK)" in proc.stdout and "us (paddle.matmul)" in proc.stdout


@pytest.mark.parametrize("causal", [False, True])
def test_flash_attention_reference_matches_numpy(causal):
    """The reference the GPU run is checked against is itself right (on the CPU)."""
    import sys

    import numpy as np
    import paddle

    sys.path.insert(0, str(EXAMPLES))
    from flash_attention import reference

    q, k, v = (np.random.randn(2, 16, 3, 8).astype("float32") for _ in range(3))
    scores = np.einsum("bqhd,bkhd->bhqk", q, k) / np.sqrt(8)
    if causal:
        scores = np.where(np.tril(np.ones((16, 16), bool)), scores, -np.inf)
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    expected = np.einsum("bhqk,bkhd->bqhd", weights, v)
    got = reference(*(paddle.to_tensor(x) for x in (q, k, v)), causal).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def test_export_inference_example_leaves_nothing_in_the_temporary_directory(tmp_path):
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    code = (f"import sys, tempfile\ntempfile.tempdir = {str(scratch)!r}\nsys.path.insert(0, {str(EXAMPLES)!r})\n"
            "sys.argv = ['export_inference.py', '--steps', '1']\nimport runpy\n"
            f"runpy.run_path({str(EXAMPLES / 'export_inference.py')!r}, run_name='__main__')\n")
    proc = run_python(code)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    assert "[serving] Paddle Inference, no tilelang imported (True)" in proc.stdout
    assert not [p.name for p in scratch.iterdir() if p.name.startswith("tilelang_export_")]


def test_export_inference_example_serves_without_tilelang(tmp_path):
    proc = _run_example("export_inference.py", "--steps", "2", "--out", str(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    assert "[serving] Paddle Inference, no tilelang imported (True)" in proc.stdout
    assert (tmp_path / "tl_linear_package.so").exists() and (tmp_path / "tl_linear_forward_kernel.so").exists()
    shown = proc.stdout + proc.stderr                      # Paddle's log lines and warning, silenced by the example
    for noise in ("pir_interpreter", "Running PIR pass", "do not have 'place' interface", "analysis_predictor"):
        assert noise not in shown, shown[-3000:]


def test_train_mlp_example_losses_agree():
    proc = _run_example("train_mlp.py", "--steps", "3")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "OK: the losses agree" in proc.stdout


def _cuda_programs():
    import sys

    sys.path.insert(0, str(EXAMPLES))
    from flash_attention import flash_attention_fwd, flash_decode_fwd
    from quickstart import gemm_cuda
    from rmsnorm import rmsnorm_cuda
    from softmax import softmax_cuda

    return {
        "rmsnorm": (rmsnorm_cuda(1024), [2]),
        "softmax": (softmax_cuda(1024), [1]),
        "gemm fp16": (gemm_cuda(1024, 1024, 1024, dtype="float16"), [2]),
        "gemm bf16": (gemm_cuda(1024, 1024, 1024, dtype="bfloat16"), [2]),
        "train_mlp gemm": (gemm_cuda(64, 128, 64, 64, 64, 32), [2]),
        "flash-attention": (flash_attention_fwd(2, 8, 1024, 64, arch="sm_90a"), [3]),
        "flash-attention causal": (flash_attention_fwd(2, 8, 1024, 64, causal=True, arch="sm_90a"), [3]),
        # Unaligned shapes: the partial tiles at the edges (checked for correctness on an H200, docs/performance.md).
        "gemm fp16 1000x1030x999": (gemm_cuda(1000, 1030, 999, dtype="float16"), [2]),
        "gemm bf16 4095x4097x4093": (gemm_cuda(4095, 4097, 4093, dtype="bfloat16"), [2]),
        "flash-attention seq 77": (flash_attention_fwd(1, 2, 77, 64, arch="sm_90a"), [3]),
        "flash-attention causal seq 1000 d128": (flash_attention_fwd(2, 3, 1000, 128, causal=True,
                                                                     arch="sm_90a"), [3]),
        "softmax cols 1000": (softmax_cuda(1000), [1]),
        "rmsnorm hidden 4097": (rmsnorm_cuda(4097), [2]),
        # Decode shapes (M <= 16): the 16-row schedule, long K and short K, and an odd size.
        "gemm decode fp16 1x4096x4096": (gemm_cuda(1, 4096, 4096, dtype="float16", pdl=True), [2]),
        "gemm decode split-K bf16 16x2048x7168": (gemm_cuda(16, 2048, 7168, dtype="bfloat16", pdl=True), [2]),
        "gemm decode fp16 8x7168x2048": (gemm_cuda(8, 7168, 2048, dtype="float16", pdl=True), [2]),
        "gemm decode bf16 3x4095x1000": (gemm_cuda(3, 4095, 1000, dtype="bfloat16", pdl=True), [2]),
        # Long K over few column panels: split over K between the two blocks of a cluster; an odd size too.
        "gemm decode split-K fp16 1x2048x7168": (gemm_cuda(1, 2048, 7168, dtype="float16", pdl=True), [2]),
        "gemm decode split-K bf16 8x2048x7168": (gemm_cuda(8, 2048, 7168, dtype="bfloat16", pdl=True), [2]),
        "gemm decode split-K fp16 5x2047x7001": (gemm_cuda(5, 2047, 7001, dtype="float16", pdl=True), [2]),
        # The measured flash-attention shape: the defaults (non-causal: the ping-pong with its own TMA producer;
        # causal: ping-pong, both with 128-key tiles) and the previous defaults (non-causal ping-pong with 128 and
        # 192-key tiles; serial with 176-key tiles causal).
        "flash-attention producer pingpong b4 h16 s4096 d128": (flash_attention_fwd(4, 16, 4096, 128, arch="sm_90a"),
                                                                [3]),
        "flash-attention pingpong b4 h16 s4096 d128": (flash_attention_fwd(4, 16, 4096, 128, schedule="pingpong",
                                                                           arch="sm_90a"), [3]),
        "flash-attention pingpong causal b4 h16 s4096 d128": (flash_attention_fwd(4, 16, 4096, 128, causal=True,
                                                                                  arch="sm_90a"), [3]),
        "flash-attention pingpong 192 keys b4 h16 s4096 d128": (flash_attention_fwd(4, 16, 4096, 128, block_N=192,
                                                                                    schedule="pingpong",
                                                                                    arch="sm_90a"), [3]),
        "flash-attention causal serial b4 h16 s4096 d128": (flash_attention_fwd(4, 16, 4096, 128, causal=True,
                                                                                block_N=176, schedule="serial",
                                                                                arch="sm_90a"), [3]),
        "flash-attention pingpong causal seq 1000": (flash_attention_fwd(1, 2, 1000, 64, causal=True,
                                                                         schedule="pingpong", arch="sm_90a"), [3]),
        # Ping-pong over one K/V buffer (the default has two), and the default at a ragged length.
        "flash-attention pingpong one buffer b4 h16 s4096 d128": (flash_attention_fwd(4, 16, 4096, 128, stages=1,
                                                                                      schedule="pingpong",
                                                                                      arch="sm_90a"), [3]),
        "flash-attention pingpong seq 1000 d128": (flash_attention_fwd(1, 2, 1000, 128, schedule="pingpong",
                                                                       arch="sm_90a"), [3]),
        # The producer schedule at ragged lengths of an even and an odd number of tiles (its loop ends differently
        # for each; other ends spilled or serialized the WGMMAs), and at one tile.
        "flash-attention producer pingpong seq 1000 d128": (flash_attention_fwd(1, 2, 1000, 128, arch="sm_90a"), [3]),
        "flash-attention producer pingpong seq 4097 d128": (flash_attention_fwd(1, 2, 4097, 128, arch="sm_90a"), [3]),
        "flash-attention producer pingpong seq 300 d128": (flash_attention_fwd(2, 3, 300, 128, arch="sm_90a"), [3]),
        # An odd number of key tiles (43 of 192 keys; 33 of 128), where the two-buffer loop spilled (580 bytes at
        # 192 keys) until it was given an idle pair at its end.
        "flash-attention pingpong 192 keys seq 8192 d128": (flash_attention_fwd(1, 2, 8192, 128, block_N=192,
                                                                                schedule="pingpong",
                                                                                arch="sm_90a"), [3]),
        "flash-attention pingpong seq 4097 d128": (flash_attention_fwd(1, 2, 4097, 128, schedule="pingpong",
                                                                       arch="sm_90a"), [3]),
        # Decode attention (one query token): KV split over the SMs, then merged; ragged and long KV.
        "flash-decode b4 h16 kv4096 d128": (flash_decode_fwd(4, 16, 4096, 128), [5]),
        "flash-decode b1 h8 kv1000 d128": (flash_decode_fwd(1, 8, 1000, 128), [5]),
        "flash-decode b2 h32 kv32768 d128 splits 3": (flash_decode_fwd(2, 32, 32768, 128, splits=3), [5]),
    }


CUDA_PROGRAMS = ["rmsnorm", "softmax", "gemm fp16", "gemm bf16", "train_mlp gemm", "flash-attention",
                 "flash-attention causal", "gemm fp16 1000x1030x999", "gemm bf16 4095x4097x4093",
                 "flash-attention seq 77", "flash-attention causal seq 1000 d128", "softmax cols 1000",
                 "rmsnorm hidden 4097", "gemm decode fp16 1x4096x4096", "gemm decode split-K bf16 16x2048x7168",
                 "gemm decode fp16 8x7168x2048", "gemm decode bf16 3x4095x1000",
                 "gemm decode split-K fp16 1x2048x7168", "gemm decode split-K bf16 8x2048x7168",
                 "gemm decode split-K fp16 5x2047x7001", "flash-attention pingpong b4 h16 s4096 d128",
                 "flash-attention pingpong causal b4 h16 s4096 d128",
                 "flash-attention pingpong 192 keys b4 h16 s4096 d128",
                 "flash-attention causal serial b4 h16 s4096 d128", "flash-attention pingpong causal seq 1000",
                 "flash-attention pingpong one buffer b4 h16 s4096 d128",
                 "flash-attention pingpong seq 1000 d128", "flash-attention pingpong 192 keys seq 8192 d128",
                 "flash-attention pingpong seq 4097 d128", "flash-attention producer pingpong b4 h16 s4096 d128",
                 "flash-attention producer pingpong seq 1000 d128", "flash-attention producer pingpong seq 4097 d128",
                 "flash-attention producer pingpong seq 300 d128",
                 "flash-decode b4 h16 kv4096 d128",
                 "flash-decode b1 h8 kv1000 d128", "flash-decode b2 h32 kv32768 d128 splits 3"]


def _ptxas_report(source: str, fast_math: bool, where) -> str:
    """ptxas's verbose report on a kernel's generated CUDA, built for sm_90a with the flags TileLang's
    CUDA backend gives nvcc (tilelang/cuda/backend.py, tilelang_callback_cuda_compile)."""
    import subprocess

    from tilelang.env import CUTLASS_INCLUDE_DIR, TILELANG_TEMPLATE_PATH

    cu = where / "kernel.cu"
    cu.write_text(source)
    cmd = [NVCC, "--cubin", "-O3", "-std=c++20", "-gencode", "arch=compute_90a,code=sm_90a",
           f"-I{TILELANG_TEMPLATE_PATH}", f"-I{CUTLASS_INCLUDE_DIR}", "--ptxas-options=--verbose",
           *(["--use_fast_math"] if fast_math else []), "-o", str(where / "kernel.cubin"), str(cu)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout + proc.stderr


@needs_nvcc
@pytest.mark.parametrize("name", CUDA_PROGRAMS)
def test_example_cuda_kernels_compile_for_sm_90a(name, tmp_path):
    program, out_idx = _cuda_programs()[name]
    kernel = tilelang.compile(program, out_idx=out_idx, target={"kind": "cuda", "arch": "sm_90a"})
    source = kernel.get_kernel_source()
    assert "__global__" in source
    if name.startswith(("gemm", "flash")):
        assert "wgmma" in source or "mma" in source  # tensor cores
    if name.startswith("flash-decode"):
        kernels = set(re.findall(r"__global__ void (?:__launch_bounds__\([^)]*\) )?(\w+)\(", source))
        assert kernels == {"main_kernel", "main_kernel_1"}, kernels      # the split kernel and the merge
    # The split-K GEMM's second block stores into the first's shared memory and both meet at the cluster
    # barrier; every other decode GEMM is one block per column panel.
    split_k = "map_shared_rank" in source and "cluster_arrive" in source
    if name.startswith("gemm decode"):
        assert split_k == ("split-K" in name), name
        if split_k:  # two blocks per cluster
            assert '"cluster_dims": [2, 1, 1]' in program.script(), name
    # The ping-pong schedule's warpgroups take turns at named barriers 5 and 6; the serial one has none.
    if name.startswith("flash-attention"):
        pingpong = "__named_barrier_arrive" in source
        assert pingpong == ("pingpong" in name or name in ("flash-attention", "flash-attention seq 77",
                                                            "flash-attention causal",
                                                            "flash-attention causal seq 1000 d128")), name
        # Ping-pong stages its output through Q's shared buffer (32 KB less at d128) and, by default, has two
        # K and two V buffers; serial has an output buffer of its own.
        shared = re.findall(r'(\w+) = T\.sblock_alloc_buffer\([^\n]*scope="shared\.dyn"', program.script())
        expected = (["k", "q", "v"] if "one buffer" in name else ["k", "k2", "q", "v", "v2"]) if pingpong \
            else ["k", "o", "q", "v"]
        assert sorted(shared) == expected, (name, shared)
    if "wgmma" in source:
        # Registers of an asynchronous WGMMA's accumulator written while it may be in flight make ptxas
        # serialize every WGMMA of the kernel (C7515, "Potential Performance Loss"): the causal ping-pong
        # did so when it masked its scores before Q K^T, and ran at 0.85-0.87x SDPA on an H200. C7514 is the
        # same loss for accumulators read in flight: a P V WGMMA under `if t > 0` drew it; C7512 for too few
        # registers: a loop shape of the producer schedule drew it (with spills) at 4096 keys.
        configs = program.attrs["tilelang_pass_configs"] if "tilelang_pass_configs" in program.attrs else {}
        report = _ptxas_report(source, bool(configs.get("tl.enable_fast_math", False)), tmp_path)
        assert re.search(r"Used \d+ registers", report), report
        assert not re.search(r"C751[245]", report), report
        if "__named_barrier_arrive" in source:  # ping-pong; its two-buffer loop spilled until the extra turn
            # was skipped (up to 284 bytes at 128-key tiles) and, at odd tile counts, until the loop ended on
            # an idle iteration
            assert re.search(r"\b0 bytes spill stores", report), report


@pytest.mark.skipif(HAS_GPU, reason="Paddle sees a GPU: the example runs (test_gpu.py)")
@pytest.mark.parametrize("args, what", [(["--seq", "256"], "flash-attention forward"),
                                        (["--decode", "--seq", "1000", "--dim", "128"], "flash-decode")])
def test_flash_attention_example_without_gpu_compiles_only(args, what):
    proc = _run_example("flash_attention.py", *args, *(["--arch", "sm_90a"] if NVCC else []))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (f"[compile only] {what} compiled for sm_90a" if NVCC else "Paddle sees no GPU") in proc.stdout


def test_decode_gemm_splits_k_exactly_where_its_column_panels_leave_half_the_sms_idle():
    """Seeded shapes: split-K (two blocks per panel) never launches more than one wave of panels, and a long-K
    decode GEMM without it has more panels than half the SMs; no split before Hopper (no clusters)."""
    import random
    import sys

    sys.path.insert(0, str(EXAMPLES))
    from quickstart import GEMM_DECODE_LONG_K, GEMM_DECODE_SHORT_K, gemm_config, gemm_cuda

    rng = random.Random(30)
    for _ in range(300):
        M, N, K, sms = rng.randint(1, 16), rng.randint(1, 8192), rng.randint(1, 16384), rng.choice([78, 108, 132])
        config = gemm_config(M, N, K, sms=sms)
        panels = -(-N // config["block_N"])
        if K <= 2048:
            assert config is GEMM_DECODE_SHORT_K, (M, N, K)
        elif config.get("split_k") == 2:
            assert 2 * panels <= sms, (M, N, K, sms)
        else:
            assert config is GEMM_DECODE_LONG_K and 2 * panels > sms, (M, N, K, sms)
    assert gemm_config(17, 2048, 7168).get("split_k") is None  # M > 16 is not a decode shape
    # pdl=False stands for a GPU older than Hopper: the same shape takes one block per panel.
    assert "cluster_dims" not in gemm_cuda(1, 2048, 7168, pdl=False).script()
    assert "cluster_dims" in gemm_cuda(1, 2048, 7168, pdl=True).script()
    # Four blocks per panel was built and measured (slower, docs/performance.md), then removed: refused.
    for bad in (4, 3, 0, "2"):
        with pytest.raises(ValueError, match=r"split_k: expected 1 or 2 \(blocks per column panel over K\), "
                                             r"got " + re.escape(repr(bad))):
            gemm_cuda(1, 2048, 7168, pdl=True, split_k=bad)


def test_flash_attention_schedule_follows_the_arch_and_is_checked():
    """Ping-pong (WGMMA issued by the kernel) is the default on Hopper only, causal or not (non-causal as the
    written-out "producer"); other archs get the serial schedule, which compiles anywhere; a ping-pong without
    two warpgroups is refused, not hung, and so is a producer schedule it cannot run."""
    import sys

    sys.path.insert(0, str(EXAMPLES))
    from flash_attention import flash_attention_fwd, has_wgmma

    assert [has_wgmma(a) for a in ("sm_80", "sm_89", "sm_90", "sm_90a", "sm_100a", "sm_120")] == \
        [False, False, True, True, False, False]
    with pytest.raises(ValueError, match=r"arch: expected a CUDA arch such as sm_80 or sm_90a, got 'hopper'"):
        has_wgmma("hopper")
    for arch, causal, turns in (("sm_90a", False, True), ("sm_90a", True, True), ("sm_80", False, False),
                                ("sm_80", True, False), ("sm_100a", False, False)):
        script = flash_attention_fwd(1, 2, 1000, 64, causal=causal, arch=arch).script()
        assert ("named_barrier_arrive" in script) == turns, (arch, causal)
    with pytest.raises(ValueError, match=r"schedule: expected 'serial', 'pingpong' or 'producer', got 'fa3'"):
        flash_attention_fwd(1, 2, 128, 64, schedule="fa3")
    with pytest.raises(ValueError, match=r"schedule='pingpong': needs threads=256 and block_M=128 \(two warpgroups "
                                         r"taking turns\), got threads=128, block_M=64"):
        flash_attention_fwd(1, 2, 128, 64, schedule="pingpong", threads=128, block_M=64)
    # Two K/V buffers where they fit in shared memory (head dim 128 at 128-key tiles: 160 KB), else one.
    for dim, buffers in ((64, 2), (128, 2), (192, 1), (256, 1)):
        script = flash_attention_fwd(1, 2, 1000, dim, arch="sm_90a").script()
        assert ("k2 = T.sblock_alloc_buffer" in script) == (buffers == 2), dim
    for kw, message in ((dict(causal=True), r"schedule='producer': non-causal only .*got causal=True; use 'pingpong'"),
                        (dict(stages=1), r"schedule='producer': needs threads=256, block_M=128 and two K/V buffers "
                                         r"\(stages=2\), got threads=256, block_M=128, stages=1"),
                        (dict(dim=192), r"schedule='producer': Q and two K and two V tiles of block_N=128 keys at "
                                        r"dim=192 need 245760 bytes of shared memory, more than 231424")):
        args = dict(batch=1, heads=2, seq=128, dim=64, schedule="producer", arch="sm_90a") | kw
        with pytest.raises(ValueError, match=message):
            flash_attention_fwd(**args)
    # The default falls back to "pingpong" where the producer schedule cannot run (one buffer asked for).
    assert "k2 = T.sblock_alloc_buffer" not in flash_attention_fwd(1, 2, 1000, 128, stages=1, arch="sm_90a").script()
    for bad in (3, 0):
        with pytest.raises(ValueError, match=r"schedule='pingpong': stages: expected 1 or 2 \(K/V buffers\), "
                                             r"got " + str(bad)):
            flash_attention_fwd(1, 2, 128, 64, stages=bad, arch="sm_90a")


@needs_nvcc
def test_flash_attention_for_an_older_arch_compiles_with_the_serial_schedule():
    import sys

    sys.path.insert(0, str(EXAMPLES))
    from flash_attention import flash_attention_fwd

    kernel = tilelang.compile(flash_attention_fwd(1, 2, 300, 64, arch="sm_80"), out_idx=[3],
                              target={"kind": "cuda", "arch": "sm_80"})
    source = kernel.get_kernel_source()
    assert "mma" in source and "wgmma" not in source and "__named_barrier_arrive" not in source


def test_decode_splits_fill_one_wave_and_never_exceed_the_tiles():
    import sys

    sys.path.insert(0, str(EXAMPLES))
    from flash_attention import decode_splits, flash_decode_fwd

    rng = np.random.default_rng(30)
    for _ in range(200):
        b, h, s, sms = (int(x) for x in (rng.integers(1, 65), rng.integers(1, 65), rng.integers(1, 70000),
                                         rng.integers(1, 200)))
        splits = decode_splits(b, h, s, sms=sms)
        tiles = -(-s // 128)
        assert 1 <= splits <= tiles, (b, h, s, sms, splits)
        assert b * h * splits <= max(sms, b * h), (b, h, s, sms, splits)          # at most one wave
        assert splits == tiles or b * h * (splits + 1) > sms, (b, h, s, sms, splits)  # and no fewer
    for bad in (0, -2, 1.5, True):
        with pytest.raises(ValueError, match=r"splits: expected a positive int .*got " + re.escape(repr(bad))):
            flash_decode_fwd(1, 2, 100, 64, splits=bad)
