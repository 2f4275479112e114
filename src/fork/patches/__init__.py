"""The patch series, in apply order (like Debian's ``debian/patches/series``).

Each entry is a module ``NNNN_verb_target.py`` defining ``PATCH``; its docstring
says why and what it changes in which upstream file; whether it was forwarded,
the upstream versions it was checked against and when it can be dropped are
the patch's fields only (``python -m src.fork list`` prints them). To disable a patch, comment its
line out here and say when it should come back.
"""

from __future__ import annotations

import importlib

from ..patching import Patch

SERIES = [
    # Report the fork's own distribution version as tilelang.__version__.
    "0001_rename_distribution",
    # Import Paddle, enable the torch proxy for tilelang, preload libcudart.
    "0002_bootstrap_paddle",
    # torch.device is not a type under the proxy; synchronize via the control plane.
    "0003_route_device_utils",
    # All adapters' device/stream providers come from tilelang.paddle_runtime.device.
    "0004_route_adapter_providers",
    # Expected buffer devices without torch.device().
    "0005_route_cython_adapter_devices",
    # Upstream's Cython launcher follows the kernel's launch protocol (device, switch, stream, init, restore).
    "0006_launch_protocol_in_cython_launcher",
    # dtype.as_torch yields Paddle dtypes; clear errors for dtypes Paddle lacks.
    "0007_map_dtypes_to_paddle",
    # Tensor supply and assert_close implemented with Paddle kernels that exist.
    "0008_supply_paddle_tensors",
    # do_bench: shim, wall-clock timing on CPU-only Paddle, clear errors for cupti/cudagraph.
    "0009_shim_torch_profiler_bench",
    # Profiler: synchronize/torch.device through the shim.
    "0010_shim_torch_profiler",
    # tvm_ffi adapter (CUDA default): Paddle output allocation; inputs' GPU current for callee allocation.
    "0011_shim_torch_tvm_ffi_adapter",
    # nvrtc adapter: same, import-checked only (needs cuda-python).
    "0012_shim_torch_nvrtc_adapter",
    # do_bench reductions, CUDA-graph timing and CUPTI through Paddle's own APIs.
    "0013_route_profiler_timing",
    # benchmark_multi_gpu would race on Paddle's process-wide device; refuse it.
    "0014_refuse_multi_gpu_tuning",
    # Cython-backend calls read tensors through Paddle's C exchange API and call the entry directly.
    "0015_fast_launch_cython",
    # Upstream logs every compile at INFO; an installed package starts at WARNING.
    "0016_quiet_default_logging",
    # import tilelang loads the whole carver for one function used by persistent kernels.
    "0017_defer_carver_import",
    # SOT (to_static's default) cannot simulate @tilelang.jit's call-form cache or tilelang.compile: run them eagerly.
    "0018_sot_eager_jit_calls",
    # ... nor the kernel builders (@T.prim_func, @T.macro), which rewrite the kernel's AST.
    "0019_sot_eager_kernel_builders",
    # The C++ wrapper lets every kernel start before its predecessor's writes are visible; only those that wait may.
    "0020_launch_pdl_only_when_waiting",
    # Upstream's launcher passes symbolic sizes inputs first; call() takes them in buffer order.
    "0021_order_symbolic_sizes_as_call",
    # Sizes two inputs disagree on, or beyond call()'s int, are errors on upstream's launcher too.
    "0022_check_symbolic_sizes",
    # The kernel cache key holds the fork's build id, so another build's kernels are not reused.
    "0023_key_kernel_cache_by_build",
    # Processes missing the same kernel: one compiles (under a file lock), the others load its result.
    "0024_compile_once_per_cache_key",
    # A kernel without source (python -c, REPL) or with string annotations: say why and what to do.
    "0025_explain_missing_source",
    # No GPU and no target=: say which target to pass.
    "0026_explain_missing_target",
    # nvcc's error and an arch hint instead of a page of CUDA source.
    "0027_explain_nvcc_failures",
    # The host library's compiler output (cannot find -lcuda) and a hint, the source in a file.
    "0028_explain_host_library_failures",
    # A full, over-quota or read-only kernel cache costs the cache, not the compiled kernel.
    "0029_survive_cache_write_failures",
    # GPU-target detection imports torch per compile, which left Paddle's proxy in sys.modules.
    "0030_bind_torch_in_cuda_target",
    # The rest of what upstream's Cython launcher needs on Paddle, one reason each (split from 0006):
    "0031_refuse_non_tensor_buffers",
    "0032_accept_zero_size_tensors",
    "0033_cache_cython_launcher_lookups",
    "0034_name_dtypes_in_launcher_errors",
    # The autotuner draws one progress line; per-config latencies go to its log.
    "0035_one_tuning_progress_line",
    # The kernel cache key names the toolchain: tvm-ffi, the host C++ compiler, nvcc or NVRTC.
    "0036_key_kernel_cache_by_toolchain",
    # Read-only kernel bundles (TILELANG_PADDLE_BUNDLE) before the writable cache.
    "0037_serve_kernels_from_bundles",
    # The CUDA binary cache key names nvcc too.
    "0038_key_cuda_binaries_by_nvcc",
    # Autotune results in bundles too.
    "0039_serve_autotune_results_from_bundles",
    # Loading a built kernel needs no compiler; a compile without one names it.
    "0040_load_kernels_without_a_compiler",
    # Autotune results keyed by the programs they compile, not the decorated function's text.
    "0041_key_autotune_results_by_program",
    # The tuner's compile threads honour the lock timeout; a timed-out wait stops tuning.
    "0042_bound_tuning_waits",
    # A cache directory that cannot be created: a temporary cache, one warning, not a failed import.
    "0043_survive_unusable_cache_dirs",
    # The tuner's console handler at TILELANG_PADDLE_LOG_LEVEL, not INFO.
    "0044_quiet_tuner_console",
    # Kernels named by their factory or @tilelang.jit function in argument errors.
    "0045_name_kernels_by_their_factory",
    "0046_name_rewritten_prim_funcs",
    # Tuned kernels in the kernels' entry model: tools in the entry name, re-checked in memory, locked writes.
    "0047_one_entry_model_for_tuned_kernels",
    # A kernel held in memory is rebuilt when its build tools change on disk; hits log at DEBUG.
    "0048_recheck_tools_on_memory_hits",
    # Cython-backend CUDA kernels link against a libcuda stub where the driver is absent.
    "0049_link_cuda_without_a_driver",
    # A failed compile names the kernel.
    "0050_name_kernels_in_compile_errors",
    # import tilelang: its modules run flagged for the proxy, and the proxies leave sys.modules once, at the end.
    "0051_one_proxy_guard_for_the_package_import",
]


def load_series() -> list[Patch]:
    patches = []
    for name in SERIES:
        module = importlib.import_module(f"{__name__}.{name}")
        patch = module.PATCH
        if patch.name != name:
            raise RuntimeError(f"src/fork/patches/{name}.py defines PATCH.name={patch.name!r}; they must match")
        patches.append(patch)
    return patches
