"""Launch a CUDA kernel as a programmatic dependent only when it waits for its predecessor.

File: tilelang/jit/adapter/wrapper.py (the C++ host wrapper of the cython
backend, which ``tilelang.paddle.custom_op`` and our fast launcher also call).
Upstream launches *every* kernel with
``cudaLaunchAttributeProgrammaticStreamSerialization`` allowed. Such a launch
may start as soon as the previous kernel in the stream has triggered its
dependents (``griddepcontrol.launch_dependents``, ``T.pdl_trigger()``, or the
same in a library kernel), and only ``griddepcontrol.wait`` (``T.pdl_sync()``)
makes that kernel's writes visible (CUDA Programming Guide, "Programmatic
Dependent Launch and Synchronization"). A kernel without ``T.pdl_sync()`` then
reads stale memory: on an H200, a cython-backend reader after a TileLang GEMM
that calls ``T.pdl_trigger()`` before its epilogue saw 47.9 M stale elements in
400 runs at 1024^3 (README, "GPU kernels"). Upstream's own nvrtc and cutedsl
wrappers set the attribute only for kernels in ``pdl_sync_map`` (those that
call ``T.pdl_sync()``); we make this one do the same. The attribute is the
last in both launch templates, so a launch without it uses one attribute fewer.
"""

from ..patching import Edit, Patch

PATCH = Patch(
    name="0020_launch_pdl_only_when_waiting",
    file="tilelang/jit/adapter/wrapper.py",
    reason="a kernel that never waits (no T.pdl_sync) must not start before its predecessor's writes are visible",
    edits=(
        Edit("\\t\\tconfig.numAttrs = 1;\n", "\\t\\tconfig.numAttrs = {5};\n"),
        Edit("\\t\\tconfig.numAttrs = 2;\n", "\\t\\tconfig.numAttrs = {8};\n"),
        Edit(
            "        if cluster_dims is None:\n"
            "            return KERNEL_LAUNCH_FUNC_CODE.format(grid_str, block_str, smem_str, call_args, function_name)\n"
            "        else:\n"
            "            return KERNEL_CLUSTER_LAUNCH_FUNC_CODE.format(grid_str, block_str, smem_str, call_args, "
            "function_name, *cluster_dims)\n",
            "        # tilelang-paddle patch 0020: programmatic serialization only for kernels that call T.pdl_sync()\n"
            "        pdl = 1 if function_name in self.pdl_sync_map else 0\n"
            "        if cluster_dims is None:\n"
            "            return KERNEL_LAUNCH_FUNC_CODE.format(grid_str, block_str, smem_str, call_args, function_name, "
            "pdl)\n"
            "        else:\n"
            "            return KERNEL_CLUSTER_LAUNCH_FUNC_CODE.format(grid_str, block_str, smem_str, call_args, "
            "function_name, *cluster_dims, 1 + pdl)\n",
        ),
    ),
    checked_against=("0.1.15",),
    drop_when="upstream's C++ wrapper consults ``pdl_sync_map``",
)
