"""Supply and compare Paddle tensors in ``tilelang.utils.tensor``.

File: tilelang/utils/tensor.py. Upstream's ``get_tensor_supply`` calls torch
``randint``/``uniform_``/``normal_`` with the target dtype, which Paddle's CPU
build lacks for float16, bfloat16, int8, bool and more; ``torch_assert_close``
(used by ``Profiler.assert_allclose``) reads ``Tensor.is_quantized`` and
``torch.strided``, which Paddle has no notion of. Both names now come from
``tilelang.paddle_runtime.tensors``; upstream's functions stay, renamed.
"""

from ..patching import Edit, Patch

SUPPLY = "def get_tensor_supply(supply_type: TensorSupplyType = TensorSupplyType.Integer):\n"

PATCH = Patch(
    name="0008_supply_paddle_tensors",
    file="tilelang/utils/tensor.py",
    reason="tensor supply and closeness checks must use Paddle kernels that exist for every dtype",
    edits=(
        Edit(
            SUPPLY,
            "from tilelang.paddle_runtime.tensors import (  # noqa: E402\n"
            "    assert_close as torch_assert_close,\n"
            "    get_tensor_supply,\n"
            ")\n\n\n"
            "def _upstream_get_tensor_supply(supply_type: TensorSupplyType = TensorSupplyType.Integer):\n",
        ),
        Edit("def torch_assert_close(\n", "def _upstream_torch_assert_close(\n"),
    ),
    forwarded="not-needed",
    checked_against=("0.1.14", "0.1.15"),
    drop_when="never",
)
