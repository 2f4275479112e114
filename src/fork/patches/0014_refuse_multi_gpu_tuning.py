"""Refuse multi-GPU autotuning on Paddle, with a reason, instead of racing.

File: tilelang/autotuner/tuner.py. With ``benchmark_multi_gpu=True`` upstream
runs one benchmark thread per GPU and binds each with
``torch.cuda.set_device(i)`` / ``with torch.cuda.device(i)``, relying on
PyTorch's *per-thread* current device. Under Paddle's proxy these are
``paddle.cuda.set_device``/``paddle.cuda.device``, which set Paddle's one
process-wide expected place (python/paddle/device/__init__.py ``set_device``
-> ``framework._set_expected_place``): the threads overwrite each other, so a
configuration can be timed on another GPU than its tensors (or fail in
Paddle's device checks). We refuse the mode with a ValueError that says what
to do; single-GPU tuning (the default) is unaffected, its compile workers all
set the same device.
Forwarded: not-needed (Paddle's device model). Checked against: 0.1.15.
Drop when: Paddle offers a per-thread current device.
"""

from ..patching import Edit, Patch

SINGLE = "        if not benchmark_multi_gpu:\n            return False, single_device\n"

PATCH = Patch(
    name="0014_refuse_multi_gpu_tuning",
    file="tilelang/autotuner/tuner.py",
    reason="Paddle's current device is process-wide: per-GPU benchmark threads would race",
    edits=(
        Edit(
            SINGLE,
            SINGLE + "        raise ValueError(  # tilelang-paddle patch 0014\n"
            "            \"benchmark_multi_gpu=True is not supported on Paddle: Paddle's current device \"\n"
            "            \"(paddle.set_device) is process-wide, so benchmark threads on different GPUs would \"\n"
            "            \"overwrite each other's device. Tune on one GPU (benchmark_multi_gpu=False, the default), \"\n"
            "            \"or run one tuning process per GPU with CUDA_VISIBLE_DEVICES set.\"\n"
            "        )\n",
        ),
    ),
    forwarded="not-needed",
    checked_against=("0.1.15",),
    drop_when="Paddle has a per-thread current device",
)
