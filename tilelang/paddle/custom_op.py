"""TileLang kernels as real Paddle operators: eager, ``paddle.jit.to_static``, ``paddle.jit.save``, Paddle Inference.

``custom_op(forward, name=..., backward=None)`` generates a C++ operator
(``PD_BUILD_OP`` / ``PD_BUILD_GRAD_OP``) around compiled Cython-backend kernels,
builds it with Paddle's own headers (``paddle.utils.cpp_extension.load``) and
returns a callable Paddle op. Paddle records it in static programs like any
custom operator, so it survives ``to_static`` and ``jit.save``, and a serving
process needs only Paddle: it registers the op library with
``paddle.utils.cpp_extension.load_op_meta_info_and_register_op`` and loads the
model. ``save_ops`` copies op libraries beside a saved model.

The source is ``op_runtime.h`` (its fixed part) followed by what
:mod:`.op_codegen` generates from the kernels' signatures. How the generated
operator works:

- The op library finds its kernel libraries next to itself (``dladdr`` on one
  of its own functions), ``dlopen``\\ s each with ``RTLD_LOCAL`` (every TileLang
  library exports the same ``call``/``init`` names) when the op library loads,
  and prints the reason to stderr if one is missing (Paddle's predictor loses a
  failing ``PD_CHECK``'s text).
- The kernel function checks each input's place, dtype, rank and static
  extents (naming the input), binds the symbolic dimensions from the inputs
  that carry them, allocates the outputs with ``paddle::empty`` on the input's
  place and calls the kernel's ``call`` entry through its exact prototype:
  a pointer per buffer, each symbolic size in the C type ``call`` declares
  it with (checked to fit; the order and types come from the kernel's
  :mod:`tilelang.paddle_runtime.signature`), and on CUDA the stream.
- Infer-shape and infer-dtype functions come from the kernel's buffer
  signature: static extents as they are, symbolic ones from the inputs that
  carry them (-1 in a static program where the input's is -1). The grad op has
  its own (PIR requires it), giving each gradient its input's shape and dtype.

CPU kernels (``target="c"``) give a ``.cc`` operator whose kernel libraries run
``init()`` when they load. CUDA kernels give a ``.cu`` operator, which
``paddle.utils.cpp_extension`` compiles with nvcc and ``PADDLE_WITH_CUDA`` (so
it needs a CUDA build of Paddle). Its kernel function, with every input on one
GPU:

- makes that GPU current and restores the previous one afterwards, through
  Paddle's ``phi::backends::gpu::GetCurrentDeviceId`` / ``SetDeviceId``
  (``paddle/phi/backends/gpu/gpu_info.h``; ``cudaGetDevice`` / ``cudaSetDevice``
  in ``paddle/phi/backends/gpu/cuda/cuda_info.cc``), because
  ``Tensor::stream()`` (``paddle/phi/api/lib/tensor.cc``) returns the stream of
  the *current* GPU's context in ``DeviceContextPool``, not of the tensor's;
- runs each kernel library's ``init()`` once per GPU with that GPU current (it
  sets the per-device dynamic shared memory limit);
- passes that ``Tensor::stream()`` as the kernel's stream. Paddle's
  ``stream_guard`` / ``set_stream`` replace that context's stream
  (``GPUContext::SetCUDAStream``), so the op runs on the stream Paddle's own
  ops use.

The CUDA operator was compiled against Paddle 3.3.1's headers, not run: no
CUDA build of Paddle 3.x was available to the authors.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from . import op_build as _op_build
from . import op_codegen as _codegen

__all__ = ["CustomOp", "custom_op", "save_ops"]

# Ops this process registered: name -> (content digest, op). Paddle's own operator list holds them too.
_REGISTERED: dict = {}

def _kernel(kernel, role: str) -> _codegen.Kernel:
    """A compiled kernel's signature as the op needs it, or raise naming what does not fit a custom op."""
    adapter = getattr(kernel, "adapter", None)
    if adapter is None or not hasattr(adapter, "prim_func"):
        raise TypeError(f"custom_op: {role} must be a compiled TileLang kernel (tilelang.compile(...) or a "
                        f"@tilelang.jit result), got {type(kernel).__name__}")
    if kernel.execution_backend != "cython":
        raise ValueError(f"custom_op: {role} must be compiled with execution_backend=\"cython\" (its library exports "
                         f"the C entry the op calls), got {kernel.execution_backend!r}")
    kind = adapter.target.kind.name
    if kind not in ("c", "llvm", "cuda"):
        raise NotImplementedError(f"custom_op: {role} targets {kind!r}; operators are built for CPU kernels "
                                  "(target=\"c\") and CUDA kernels")
    if not adapter.result_idx:
        raise ValueError(f"custom_op: {role} needs out_idx (the op's outputs are the kernel's out_idx buffers)")
    if len(set(adapter.result_idx)) != len(adapter.result_idx):
        raise ValueError(f"custom_op: {role}'s out_idx {list(adapter.result_idx)} names a parameter twice; an op "
                         "output is one buffer")
    from tilelang.paddle_runtime import signature

    sig = signature.of(adapter)
    for p in sig.params:
        if not p.is_buffer:
            raise ValueError(f"custom_op: {role} parameter {p.index} ({p.name}) is a scalar or pointer; only tensor "
                             "parameters are supported")
        if p.dtype not in _codegen.PD_DTYPE:
            raise TypeError(f"custom_op: {role} buffer {p.name} has dtype {p.dtype}, which the op does not support "
                            f"(supported: {', '.join(_codegen.PD_DTYPE)})")
        for d in p.dims:
            if not isinstance(d, (int, str)):
                raise ValueError(f"custom_op: {role} buffer {p.name} has a computed dimension {d}; use a plain "
                                 "T.dynamic variable or a constant")
    for sym in sig.symbols:
        if sym.binder is None:
            raise ValueError(f"custom_op: {role}'s symbolic dimension {sym.name} must be carried by an input's shape")
    return _codegen.Kernel(role, str(adapter.libpath), sig)


def _check_backward(fwd: _codegen.Kernel, bwd: _codegen.Kernel) -> None:
    """The backward takes (inputs, outputs, output gradients) and returns one gradient per input, shaped like it."""
    f, b = fwd.sig, bwd.sig
    if b.cuda != f.cuda:
        raise ValueError(f"custom_op: forward and backward must run on the same device kind, got a "
                         f"{'CUDA' if f.cuda else 'CPU'} forward and a {'CUDA' if b.cuda else 'CPU'} backward")
    # What each backward input stands for in the forward: its inputs, its outputs, then the outputs' gradients.
    stands_for = list(f.inputs) + list(f.outputs) * 2
    if len(b.inputs) != len(stands_for):
        raise ValueError(
            f"custom_op: backward must take {len(stands_for)} tensors (the forward's {len(f.inputs)} inputs, its "
            f"{len(f.outputs)} outputs, then one gradient per output), but takes {len(b.inputs)} "
            f"({', '.join(p.name for p in b.inputs)})")
    got_in, want_in = [p.dtype for p in b.inputs], [p.dtype for p in stands_for]
    if got_in != want_in:
        raise TypeError(f"custom_op: backward input dtypes {got_in} do not match the forward's (inputs, outputs, "
                        f"gradients) {want_in}")
    # Each backward symbol, in the forward's terms: the dimension of the forward tensor its binder stands for.
    as_forward = {}
    for sym in b.symbols:
        index, axis = sym.binder
        as_forward[sym.name] = stands_for[b.input_position(index)].dims[axis]
    for bp, fp in zip(b.inputs, stands_for):
        if len(bp.dims) != len(fp.dims):
            raise ValueError(f"custom_op: backward input {bp.name} is {len(bp.dims)}-d, but the forward's {fp.name} "
                             f"it receives is {len(fp.dims)}-d")
        for axis, (db, df) in enumerate(zip(bp.dims, fp.dims)):
            if isinstance(db, int) and isinstance(df, int) and db != df:
                raise ValueError(f"custom_op: backward input {bp.name} has shape {bp.dims_text()}, but the forward's "
                                 f"{fp.name} it receives has shape {fp.dims_text()} (dimension {axis})")
    expected = [(p.dtype, p.dims) for p in f.inputs]
    if len(b.outputs) != len(f.inputs) or [p.dtype for p in b.outputs] != [p.dtype for p in f.inputs]:
        raise ValueError(
            f"custom_op: backward must return one gradient per forward input, of the input's dtype and shape: "
            f"expected {[(d, list(s)) for d, s in expected]}, got {[(p.dtype, list(p.dims)) for p in b.outputs]}")
    for gp, fp in zip(b.outputs, f.inputs):
        shape = tuple(as_forward.get(d, d) if isinstance(d, str) else d for d in gp.dims)
        if shape != fp.dims:
            raise ValueError(
                f"custom_op: backward output {gp.name} is the gradient of the forward's input {fp.name} and must have "
                f"its shape {fp.dims_text()}, but has shape {gp.dims_text()}"
                + (f" (that is {[str(d) for d in shape]} in the forward's terms)" if shape != gp.dims else ""))


_OP_NAME_HINT = "a name such as 'tl_matmul'"


def check_op_name(name) -> None:
    """Refuse an op name Paddle would mangle, reject or confuse with one of its own operators."""
    problem = _codegen.name_problem(name) if isinstance(name, str) else "is not a string"
    if problem is None and "_grad" in name:
        problem = "contains '_grad', which Paddle reserves for gradient operators (it strips that suffix)"
    if problem is None and name != name.lower():
        problem = "has upper-case letters; Paddle lower-cases operator names"
    if problem is None and name not in _REGISTERED:
        from tilelang.paddle_runtime.driver import paddle_driver

        if paddle_driver().has_operator(name):
            problem = "is an operator Paddle already has (a custom op of that name would override it)"
    if problem:
        raise ValueError(f"custom_op: name {name!r} {problem}; choose {_OP_NAME_HINT}")


def _op_source(forward, *, name: str, backward=None):
    """The checked kernels and the generated C++ (or CUDA) source of the operator."""
    check_op_name(name)
    fwd = _kernel(forward, "forward")
    bwd = _kernel(backward, "backward") if backward is not None else None
    _codegen.check_names(name, fwd, bwd)  # before the backward's shapes: a name error is the clearer one
    if bwd is not None:
        _check_backward(fwd, bwd)
    return fwd, bwd, _codegen.render(name, fwd, bwd)


# ---------------------------------------------------------------- build and load


def _default_directory(op: str, digest: str, cuda: bool, kernel_files: list) -> Path:
    """The op's directory: a complete one in a bundle's ``ops/`` (``TILELANG_PADDLE_BUNDLE``), loaded without
    writing, else the writable op cache's."""
    from tilelang.paddle_runtime import settings
    from tilelang.paddle_runtime.cache import bundle

    sub = f"{op}-{digest[:16]}"
    for root in bundle.bundle_dirs():
        candidate = Path(root) / "ops" / sub
        if _op_build.is_complete(candidate, op, digest, _op_build.op_files(op, cuda, kernel_files)):
            return candidate
    return Path(settings.op_cache()) / sub


class _CustomOpMeta(type):
    def __instancecheck__(cls, obj) -> bool:
        return bool(getattr(obj, "_tilelang_custom_op", False))


class CustomOp(metaclass=_CustomOpMeta):
    """What :func:`custom_op` returns: Paddle's own generated Python API of the operator.

    Not a wrapper: ``paddle.jit.to_static`` translates a callable object's
    ``__call__`` (and its legacy, non-PIR translator loses the return value),
    while Paddle's generated function is marked ``paddle.jit.marker.unified``
    and recorded as the operator in every mode. :func:`custom_op` sets these
    attributes on it, and ``isinstance(op, CustomOp)`` is true for it.

    Attributes
    ----------
    op_name : str
        The operator's name in Paddle programs.
    library : str
        The op's shared library (register it with
        ``paddle.utils.cpp_extension.load_op_meta_info_and_register_op``).
    kernel_libraries : list of str
        The TileLang kernel libraries beside it, which it loads.
    """


def custom_op(forward, *, name: str, backward=None, directory: str | os.PathLike | None = None):
    """A Paddle operator running the compiled TileLang kernel ``forward`` (and ``backward``).

    Parameters
    ----------
    forward : JITKernel
        ``tilelang.compile(..., out_idx=..., execution_backend="cython")`` for
        ``target="c"`` (a CPU operator) or a CUDA target (a GPU operator, which
        needs a CUDA build of Paddle), or such a ``@tilelang.jit`` result. The
        op's inputs are the kernel's non-output buffers, in order; its outputs
        are the ``out_idx`` buffers, in ``out_idx`` order (as the kernel itself
        returns them: ``out_idx=[2, 0]`` gives buffer 2, then buffer 0). Static or ``T.dynamic`` shapes; an output's
        symbolic dimensions come from the inputs.
    name : str
        The operator's name in Paddle programs: a lower-case ASCII identifier, not a
        keyword, without ``_grad``, not one of Paddle's own operators. Calling
        ``custom_op`` again with the same name and the same kernels returns the
        op already registered; other kernels under a registered name are refused.
    backward : JITKernel, optional
        Its inputs: the forward's inputs (in order), the forward's outputs, then one
        gradient per forward output, both in the forward's ``out_idx`` order; its
        outputs, in its own ``out_idx`` order: one gradient per forward input.
    directory : path, optional
        Where the op library and its kernel libraries go. Default: a directory
        under ``$TILELANG_PADDLE_OP_CACHE`` (``~/.cache/tilelang-paddle/ops``)
        named by the op's content hash, so an unchanged op is not rebuilt. Many
        processes may ask for the same op at once (the ranks of a
        ``paddle.distributed.launch`` job): one builds it, the others wait and
        load it (see :mod:`.op_build`); a complete directory is loaded without
        building or writing, so it may be read-only.

    Returns
    -------
    CustomOp
        Paddle's generated API of the operator (a function taking the input
        tensors in order), with ``op_name``, ``library`` and ``kernel_libraries``.

    Examples
    --------
    >>> add = custom_op(add_kernel, name="tl_add")      # doctest: +SKIP
    >>> y = add(x, w)                                    # eager, to_static, jit.save alike
    """
    fwd, bwd, source = _op_source(forward, name=name, backward=backward)
    import paddle

    from tilelang.paddle_runtime.driver import paddle_driver

    if fwd.sig.cuda and not paddle_driver().cuda:
        raise RuntimeError(f"custom_op: {name}'s kernels target CUDA, but this Paddle build has no CUDA "
                           f"(paddle.is_compiled_with_cuda() is False); install paddlepaddle-gpu>=3.3, or compile "
                           f"the kernels with target=\"c\" for a CPU operator")
    from tilelang.paddle_runtime import _build_id

    # The op's identity: what determines its libraries (sources, flags, Paddle, this fork's build), so
    # ranks and restarts compiling the same kernels share one op.
    digest = hashlib.sha256("\n".join([source, paddle.__version__, paddle.version.commit, _build_id.BUILD_ID,
                                       _op_build.kernel_identity(forward),
                                       _op_build.kernel_identity(backward) if bwd else ""]).encode()).hexdigest()
    if name in _REGISTERED:  # Paddle cannot register an op name twice in one process
        known_digest, known_op = _REGISTERED[name]
        if known_digest == digest:
            return known_op
        raise ValueError(f"custom_op: an operator named {name!r} with other kernels is already registered in this "
                         "process, and Paddle cannot replace it; give this one another name (or restart the process)")
    kernels = [(fwd.library, f"{name}_forward_kernel.so")]
    if bwd is not None:
        kernels.append((bwd.library, f"{name}_backward_kernel.so"))
    out = Path(directory) if directory is not None else \
        _default_directory(name, digest, fwd.sig.cuda, [k for _s, k in kernels])
    module, library, kernel_paths = _op_build.build_or_load(out, name, source, fwd.sig.cuda, kernels, digest)
    op = getattr(module, name)
    op._tilelang_custom_op = True
    op.op_name, op.library, op.kernel_libraries = name, library, kernel_paths
    _REGISTERED[name] = (digest, op)
    return op


def save_ops(model_prefix: str | os.PathLike, *ops: CustomOp) -> list[str]:
    """Copy op libraries (as ``<name>_package.so``) and their kernel libraries beside a saved model.

    ``model_prefix`` is what was given to ``paddle.jit.save``. A serving process
    then needs no tilelang::

        import glob, os, paddle
        for lib in glob.glob(os.path.join(model_dir, "*_package.so")):
            paddle.utils.cpp_extension.load_op_meta_info_and_register_op(lib)
        layer = paddle.jit.load(model_prefix)          # or paddle.inference.create_predictor(...)

    Every file is written as a new file (``os.replace``), so a process serving the
    previous libraries from that directory keeps running them. Returns the paths
    of every file written: op libraries and their kernel libraries (copy all of
    them to deploy the model).
    """
    target = Path(model_prefix).parent
    target.mkdir(parents=True, exist_ok=True)
    written = []
    for op in ops:
        if not isinstance(op, CustomOp):
            raise TypeError(f"save_ops: expected ops made by tilelang.paddle.custom_op, got {type(op).__name__}")
        written.append(_op_build.copy_beside(op.library, target / f"{op.op_name}_package.so"))
        for lib in op.kernel_libraries:
            written.append(_op_build.copy_beside(lib, target / Path(lib).name))
    return written
