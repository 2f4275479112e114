"""Cython-backend kernel calls take the Paddle fast path when the kernel fits.

File: tilelang/jit/adapter/cython/adapter.py. Upstream's launcher
(``cython_wrapper.pyx``, patched by 0006) reads each tensor's metadata through
a dozen Python accessors and calls the kernel through ctypes: ~12 us per
3-tensor call on Paddle against a 0.4 us floor. ``_convert_torch_func`` now
returns ``tilelang.paddle_runtime.fast_launch.prepare(self, lambda_forward)``:
a launcher that reads every tensor with one C call of Paddle's DLPack exchange
API and calls the compiled entry directly, handing everything off its happy
path (and every error) to upstream's ``lambda_forward``.
``TILELANG_PADDLE_FAST_LAUNCH=0`` restores upstream's path.
"""

from ..patching import Edit, Patch

PATCH = Patch(
    name="0015_fast_launch_cython",
    file="tilelang/jit/adapter/cython/adapter.py",
    reason="per-call metadata through Paddle's C exchange API instead of Python accessors and ctypes",
    edits=(
        Edit("        return lambda_forward\n",
             "        from tilelang.paddle_runtime import fast_launch as _fast_launch\n\n"
             "        return _fast_launch.prepare(self, lambda_forward)\n"),
    ),
    forwarded="not-needed",
    checked_against=("0.1.15",),
    drop_when="never",
)
