"""Refuse multi-GPU autotuning on Paddle, with a reason, instead of racing.

File: tilelang/autotuner/tuner.py. With ``benchmark_multi_gpu=True`` upstream
runs one benchmark thread per GPU and binds each with
``torch.cuda.set_device(i)`` / ``with torch.cuda.device(i)``, relying on
PyTorch's *per-thread* current device. Under Paddle's proxy these are
``paddle.cuda.set_device``/``paddle.cuda.device``, which set Paddle's one
process-wide expected place (python/paddle/device/__init__.py ``set_device``
-> ``framework._set_expected_place``): the threads overwrite each other, so a
configuration can be timed on another GPU than its tensors (or fail in
Paddle's device checks). We refuse it with a ValueError that says what to do,
only where more than one GPU would really be used: upstream's own fallbacks to
one device (a CPU target, no CUDA, one visible GPU, one valid device) run as
upstream wrote them, and single-GPU tuning (the default) is unaffected.
"""

from ..patching import Edit, Patch

MULTI = "        return len(valid_devices) > 1, valid_devices\n"

PATCH = Patch(
    name="0014_refuse_multi_gpu_tuning",
    file="tilelang/autotuner/tuner.py",
    reason="Paddle's current device is process-wide: per-GPU benchmark threads would race",
    edits=(
        Edit(
            MULTI,
            "        if len(valid_devices) > 1:  # tilelang-paddle patch 0014\n"
            "            raise ValueError(\n"
            "                f\"benchmark_multi_gpu=True would benchmark on GPUs {valid_devices}, which Paddle cannot do: \"\n"
            "                \"Paddle's current device (paddle.set_device) is process-wide, so benchmark threads on \"\n"
            "                \"different GPUs would overwrite each other's device. Tune on one GPU \"\n"
            "                \"(benchmark_multi_gpu=False, the default), or run one tuning process per GPU with \"\n"
            "                \"CUDA_VISIBLE_DEVICES set.\"\n"
            "            )\n"
            "        return False, valid_devices\n",
        ),
    ),
    forwarded="not-needed",
    checked_against=("0.1.15",),
    drop_when="Paddle has a per-thread current device",
)
