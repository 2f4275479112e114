"""The Paddle control plane of tilelang-paddle.

Everything upstream TileLang asked of PyTorch at run time, answered by Paddle,
one module per concern:

- :mod:`.bootstrap`  import set-up: Paddle version check, torch-proxy scope, preload
- :mod:`.preload`    libcudart into the global symbol namespace
- :mod:`.device`     current device and stream (the only module asking Paddle)
- :mod:`.dtypes`     TileLang <-> Paddle dtypes, by identity
- :mod:`.tensors`    output allocation, test-input supply, assert_close
- :mod:`.timing`     do_bench reductions and CUDA-graph timing on Paddle
- :mod:`.fast_launch` the Cython-backend launch fast path (hot loop in ``_launcher.pyx``)
- :mod:`.tvm_ffi_call` the tvm_ffi backend's call with callee-allocated outputs
- :mod:`.arguments`  errors for bad kernel arguments
- :mod:`.torch_shim` the torch names Paddle's proxy lacks, for patched modules
- :mod:`.dlpack`     zero-copy Paddle <-> tvm-ffi tensors for user code
- :mod:`.settings`   the ``TILELANG_PADDLE_*`` variables read at run time

(``tilelang-paddle doctor`` and the tvm-ffi version check live in the
``tilelang_paddle`` package beside this one: they must work without Paddle.)

Upstream files reach it only through the patches in ``src/fork/patches``.
"""
