"""Map TileLang dtypes to Paddle dtypes by identity, with clear errors for missing ones.

File: tilelang/language/dtypes.py. Upstream's ``dtype.as_torch`` returns torch
dtypes and, for types the framework lacks (float8_e8m0fnu, float8_e4m3fnuz,
packed float4), fails with an assertion telling the user to upgrade torch. We
rebind ``as_torch`` to ``tilelang.paddle_runtime.dtypes.as_torch``: the same
names map to Paddle's dtype objects, sub-byte types keep upstream's byte storage,
and missing types raise a TypeError naming the dtype. Kernel parameters
(``KernelParam.torch_dtype``), the Cython launcher and output allocation all go
through ``as_torch``. (Paddle -> TileLang already works: upstream's table is
keyed by dtype objects, which the proxy hands out as Paddle's.)
"""

from ..patching import Edit, Patch

PATCH = Patch(
    name="0007_map_dtypes_to_paddle",
    file="tilelang/language/dtypes.py",
    reason="dtype.as_torch must yield Paddle dtypes and name the dtype when Paddle has none",
    edits=(
        Edit(
            "dtype.as_torch = __dtype_as_torch__\n",
            "from tilelang.paddle_runtime.dtypes import as_torch as _paddle_as_torch  # noqa: E402\n\n"
            "dtype.as_torch = _paddle_as_torch\n",
        ),
    ),
    forwarded="not-needed",
    checked_against=("0.1.14", "0.1.15"),
    drop_when="never",
)
