"""Per-call costs Paddle makes visible in upstream's Cython launcher, paid once instead.

File: tilelang/jit/adapter/cython/cython_wrapper.pyx. Paddle's proxy resolves
each ``torch.X`` in Python (the caching shim reads each once); upstream
rebuilds its dtype->ctypes table on every call (~4 us hashing Paddle dtypes);
Paddle dtype equality costs ~0.9 us where identity (dtypes are singletons)
answers first; ``Tensor.device`` builds a Device from a string (~1.7 us) where
the place is enough. See bench/bench_dispatch.py.
"""

from ..patching import Edit, Patch

PATCH = Patch(
    name="0033_cache_cython_launcher_lookups",
    file="tilelang/jit/adapter/cython/cython_wrapper.pyx",
    reason="torch names, the dtype table, dtype equality and tensor devices cost microseconds per call on Paddle",
    edits=(
        Edit("import torch\n",
             "import torch\nfrom tilelang.paddle_runtime import device as _device\n"
             "from tilelang.paddle_runtime.torch_shim import wrap as _wrap_torch\n\n"
             "# Paddle's proxy resolves torch.X in Python on every access; the shim caches each name.\n"
             "torch = _wrap_torch(torch)\n"
             "_DTYPE_TO_CTYPE = None  # filled by the first forward()\n"),
        Edit("tensor.dtype != torch_dtype:", "tensor.dtype is not torch_dtype and tensor.dtype != torch_dtype:"),
        Edit("        cdef dict dtype_to_ctype = {\n",
             "        global _DTYPE_TO_CTYPE\n"
             "        cdef dict dtype_to_ctype = _DTYPE_TO_CTYPE\n"
             "        if dtype_to_ctype is None:\n"
             "            dtype_to_ctype = _DTYPE_TO_CTYPE = {\n"),
        Edit("tensor_device = tensor.device\n", "tensor_device = _device.device_of(tensor)\n"),
        Edit("                return tensor.device\n", "                return _device.device_of(tensor)\n"),
    ),
    forwarded="not-needed",
    checked_against=("0.1.15",),
    drop_when="never (Paddle-specific costs)",
)
