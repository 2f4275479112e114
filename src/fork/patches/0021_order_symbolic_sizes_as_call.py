"""Pass a Cython-backend kernel's symbolic sizes in the order its ``call`` entry declares them.

File: tilelang/jit/adapter/cython/adapter.py. Upstream 0.1.15 has the bug on
the ``cython`` execution backend (CPU and CUDA targets; the ``tvm_ffi`` backend
passes packed arguments and is right). ``_process_dynamic_symbolic`` lists
the symbolic sizes inputs first (so outputs can be allocated from them), and
the launcher (``cython_wrapper.pyx``) appends their values to the call in that
order; but the generated host wrapper declares ``call``'s size parameters in
the order the PrimFunc's buffers introduce them (``get_dynamic_symbolic_set``
in ``tilelang/jit/adapter/wrapper.py``). For a kernel whose output comes first,
``C(M, N), A(M, K), B(K, N)`` with ``out_idx=[0]``, ``call(C, A, B, M, N, K)``
received ``M, K, N``: wrong results and out-of-bounds reads and writes (a heap
corruption abort on the CPU; wrong values on an H200). We keep upstream's map
(each size still owned by an input) and only reorder it by the wrapper's rule
(``tilelang.paddle_runtime.signature.call_order``), which our fast launcher and
``custom_op`` also use.
"""

from ..patching import Edit, Patch

PATCH = Patch(
    name="0021_order_symbolic_sizes_as_call",
    file="tilelang/jit/adapter/cython/adapter.py",
    reason="upstream's launcher passes symbolic sizes inputs first; call() takes them in buffer order",
    edits=(
        Edit(
            "                        dynamic_symbolic_map[stride] = (1, i, j, stride_scale)\n"
            "        return dynamic_symbolic_map\n",
            "                        dynamic_symbolic_map[stride] = (1, i, j, stride_scale)\n"
            "        # tilelang-paddle patch 0021: the order call() takes them (stride sizes after shape sizes;\n"
            "        # the CPU call() takes none, and trailing extra arguments are never read)\n"
            "        from tilelang.paddle_runtime.signature import call_order as _call_order\n\n"
            "        _rank = {v.name: k for k, v in enumerate(_call_order(func, cuda=True))}\n"
            "        return dict(sorted(dynamic_symbolic_map.items(), key=lambda kv: _rank.get(kv[0].name, len(_rank))))\n",
        ),
    ),
    checked_against=("0.1.15",),
    drop_when="upstream's map follows the wrapper's order",
)
