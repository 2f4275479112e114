"""The Paddle control plane of tilelang-paddle.

Everything upstream TileLang asked of PyTorch at run time, answered by Paddle,
one module per concern:

- :mod:`.bootstrap`  import set-up: Paddle version check, torch-proxy scope, preload
- :mod:`.torch_scope` the torch proxy for upstream's imports only, never the user's
- :mod:`.cache_paths` the cache directory variables, absolute and checked at import
- :mod:`.preload`    libcudart into the global symbol namespace
- :mod:`.driver`     the only module asking Paddle for devices, streams, places and memory
- :mod:`.launch`     one kernel's launch protocol (device, switch, allocation, init, stream, restore, errors)
- :mod:`.device`     devices and streams as upstream's patched code asks for them (from the driver)
- :mod:`.dtypes`     TileLang <-> Paddle dtypes, by identity
- :mod:`.tensors`    output allocation, test-input supply, assert_close
- :mod:`.timing`     do_bench reductions and CUDA-graph timing on Paddle
- :mod:`.fast_launch` the Cython-backend launch fast path (hot loop in ``_launcher.pyx``)
- :mod:`.tvm_ffi_call` the tvm_ffi backend's call with callee-allocated outputs
- :mod:`.signature`  one kernel's buffers, outputs and the sizes ``call`` takes
- :mod:`.arguments`  errors for bad kernel arguments
- :mod:`.cache`      one entry model for kernels and tuned kernels: keys, build tools, writable entries, bundles
- :mod:`.cuda_link`  Cython-backend CUDA kernels link where the NVIDIA driver is absent
- :mod:`.kernel_names` kernels named by the function the user wrote around them
- :mod:`.tuning_waits` the tuner's compile threads within the lock timeout
- :mod:`.file_lock`  cross-process locks a forked child does not hold
- :mod:`.torch_shim` the torch names Paddle's proxy lacks, for patched modules
- :mod:`.settings`   the ``TILELANG_PADDLE_*`` variables read at run time
- :mod:`.selftest`   ``tilelang-paddle selftest``: CPU checks, and GPU checks written against the driver

(``tilelang-paddle doctor`` and the tvm-ffi version check live in the
``tilelang_paddle`` package beside this one: they must work without Paddle.)

Upstream files reach it only through the patches in ``src/fork/patches``.
"""
