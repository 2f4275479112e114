"""TileLang kernels as real Paddle operators: eager, ``paddle.jit.to_static``, ``paddle.jit.save``, Paddle Inference.

``custom_op(forward, name=..., backward=None)`` generates a C++ operator
(``PD_BUILD_OP`` / ``PD_BUILD_GRAD_OP``) around compiled Cython-backend kernels,
builds it with Paddle's own headers (``paddle.utils.cpp_extension.load``) and
returns a callable Paddle op. Paddle records it in static programs like any
custom operator, so it survives ``to_static`` and ``jit.save``, and a serving
process needs only Paddle: it registers the op library with
``paddle.utils.cpp_extension.load_op_meta_info_and_register_op`` and loads the
model. ``save_ops`` copies op libraries beside a saved model.

How the generated operator works:

- The op library finds its kernel libraries next to itself (``dladdr`` on one
  of its own functions), ``dlopen``\\ s each with ``RTLD_LOCAL`` (every TileLang
  library exports the same ``call``/``init`` names) when the op library loads,
  and prints the reason to stderr if one is missing (Paddle's predictor loses a
  failing ``PD_CHECK``'s text).
- The kernel function checks each input's place, dtype, rank and static
  extents (naming the input), binds the symbolic dimensions from the inputs
  that carry them, allocates the outputs with ``paddle::empty`` on the input's
  place and calls the kernel's ``call`` entry. The entry takes only
  pointer-sized integer arguments (buffer pointers, int64 dimensions, the
  stream), passed as ``intptr_t`` the way ``tilelang/paddle_runtime/_launcher.pyx`` does.
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
import shutil
from dataclasses import dataclass
from pathlib import Path

__all__ = ["CustomOp", "custom_op", "save_ops"]

# TileLang dtype name -> paddle::DataType enumerator (paddle/phi/common/data_type.h).
_PD_DTYPE = {
    "float32": "FLOAT32", "float64": "FLOAT64", "float16": "FLOAT16", "bfloat16": "BFLOAT16",
    "int8": "INT8", "int16": "INT16", "int32": "INT32", "int64": "INT64", "uint8": "UINT8", "bool": "BOOL",
}


@dataclass(frozen=True)
class _Buffer:
    name: str
    dtype: str
    dims: tuple  # int (static) or str (the symbolic variable's name)


@dataclass(frozen=True)
class _KernelSig:
    """One compiled kernel as the op sees it: buffers in call order, symbolic dims in call order."""

    role: str
    library: str
    params: tuple  # (_Buffer, is_output) in PrimFunc parameter order
    symbols: tuple  # symbolic variable names, in the order `call` takes them
    cuda: bool  # a CUDA kernel: `call` takes the stream last and `init` runs once per GPU

    @property
    def inputs(self):
        return [b for b, out in self.params if not out]

    @property
    def outputs(self):
        return [b for b, out in self.params if out]


def _signature(kernel, role: str) -> _KernelSig:
    """Read a compiled kernel's signature, or raise naming what does not fit a custom op."""
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
    result_idx = list(adapter.result_idx or [])
    if not result_idx:
        raise ValueError(f"custom_op: {role} needs out_idx (the op's outputs are the kernel's out_idx buffers)")
    func = adapter.prim_func
    symbols = [str(v) for v in adapter.dynamic_symbolic_map]
    params = []
    for i, param in enumerate(func.params):
        if param not in func.buffer_map:
            raise ValueError(f"custom_op: {role} parameter {i} is a scalar or pointer; only tensor parameters are supported")
        buf = func.buffer_map[param]
        dtype = str(buf.dtype)
        if dtype not in _PD_DTYPE:
            raise TypeError(f"custom_op: {role} buffer {buf.name} has dtype {dtype}, which the op does not support "
                            f"(supported: {', '.join(_PD_DTYPE)})")
        dims = []
        for d in buf.shape:
            if hasattr(d, "value") and not hasattr(d, "name"):
                dims.append(int(d.value))
            elif str(d) in symbols:
                dims.append(str(d))
            else:
                raise ValueError(f"custom_op: {role} buffer {buf.name} has a computed dimension {d}; use a plain "
                                 "T.dynamic variable or a constant")
        params.append((_Buffer(buf.name, dtype, tuple(dims)), i in result_idx))
    for var, (ref_id, buffer_idx, _dim, _scale) in adapter.dynamic_symbolic_map.items():
        if ref_id != 0 or buffer_idx in result_idx:
            raise ValueError(f"custom_op: {role}'s symbolic dimension {var} must be carried by an input's shape")
    return _KernelSig(role, str(adapter.libpath), tuple(params), tuple(symbols), kind == "cuda")


def _check_backward(fwd: _KernelSig, bwd: _KernelSig) -> None:
    if bwd.cuda != fwd.cuda:
        raise ValueError(f"custom_op: forward and backward must run on the same device kind, got a "
                         f"{'CUDA' if fwd.cuda else 'CPU'} forward and a {'CUDA' if bwd.cuda else 'CPU'} backward")
    want_in = [b.dtype for b in fwd.inputs] + [b.dtype for b in fwd.outputs] * 2
    got_in = [b.dtype for b in bwd.inputs]
    if len(got_in) != len(want_in):
        raise ValueError(
            f"custom_op: backward must take {len(want_in)} tensors (the forward's {len(fwd.inputs)} inputs, its "
            f"{len(fwd.outputs)} outputs, then one gradient per output), but takes {len(got_in)} "
            f"({', '.join(b.name for b in bwd.inputs)})")
    if got_in != want_in:
        raise TypeError(f"custom_op: backward input dtypes {got_in} do not match the forward's (inputs, outputs, "
                        f"gradients) {want_in}")
    if [b.dtype for b in bwd.outputs] != [b.dtype for b in fwd.inputs] or \
            [len(b.dims) for b in bwd.outputs] != [len(b.dims) for b in fwd.inputs]:
        raise ValueError(
            f"custom_op: backward must return one gradient per forward input, of the input's dtype and rank: "
            f"expected {[(b.dtype, len(b.dims)) for b in fwd.inputs]}, got "
            f"{[(b.dtype, len(b.dims)) for b in bwd.outputs]}")


# ---------------------------------------------------------------- C++ generation


def _cpp_kernel_fn(op: str, sig: _KernelSig, fn: str, lib: str, in_names: list[str]) -> str:
    """The PD_KERNEL function running ``sig``'s kernel on tensors named ``in_names`` (the op's input names)."""
    args = ", ".join(f"const paddle::Tensor& {n}" for n in in_names)
    first = in_names[0]
    body = [f"  KernelLib& lib = {lib}();",
            f"  PD_CHECK(lib.call != nullptr, \"{op}: \", lib.error);",
            "  int64_t dims[%d] = {0};" % max(1, len(sig.symbols)),
            "  bool bound[%d] = {false};" % max(1, len(sig.symbols))]
    for buf, n in zip(sig.inputs, in_names):
        static = ", ".join(str(d) if isinstance(d, int) else "-1" for d in buf.dims) or ""
        syms = ", ".join(str(sig.symbols.index(d)) if isinstance(d, str) else "-1" for d in buf.dims) or ""
        body.append(f"  CheckInput(\"{op}\", \"{n}\", {n}, paddle::DataType::{_PD_DTYPE[buf.dtype]}, "
                    f"{{{static}}}, {{{syms}}}, dims, bound, \"{first}\", {first}.place());")
    if sig.cuda:
        body.append(f"  const int device = {first}.place().GetDeviceId();")
        body.append("  CurrentGpu current(device);  // before Tensor::stream(), which reads the current GPU's stream")
        body.append(f"  InitOnDevice(\"{op}\", lib, device);")
    outs = []
    for k, buf in enumerate(sig.outputs):
        shape = ", ".join(str(d) if isinstance(d, int) else f"dims[{sig.symbols.index(d)}]" for d in buf.dims)
        body.append(f"  paddle::Tensor out{k} = paddle::empty({{{shape}}}, paddle::DataType::{_PD_DTYPE[buf.dtype]}, "
                    f"{first}.place());")
        outs.append(f"out{k}")
    call_args, i_in, i_out = [], 0, 0
    for buf, is_out in sig.params:
        if is_out:
            call_args.append(f"Ptr(out{i_out})")
            i_out += 1
        else:
            call_args.append(f"Ptr({in_names[i_in]})")
            i_in += 1
    call_args += [f"(intptr_t)dims[{k}]" for k in range(len(sig.symbols))]
    # The stream: Paddle's current stream of the inputs' GPU (now current); 0 on the CPU.
    call_args.append(f"reinterpret_cast<intptr_t>({first}.stream())" if sig.cuda else "(intptr_t)0")
    arity = len(call_args)
    body.append(f"  int32_t rc = reinterpret_cast<int32_t (*)({', '.join(['intptr_t'] * arity)})>(lib.call)(")
    body.append("      " + ", ".join(call_args) + ");")
    tensors = ", ".join(in_names + outs)
    body.append(f"  if (rc != 0) KernelFailed(\"{op}\", lib, {{{tensors}}});")
    body.append(f"  return {{{', '.join(outs)}}};")
    return f"std::vector<paddle::Tensor> {fn}({args}) {{\n" + "\n".join(body) + "\n}\n"


def _cpp_infer(op: str, sig: _KernelSig, fn: str, in_names: list[str]) -> str:
    """Infer-shape and infer-dtype functions from the kernel's buffer signature."""
    shape_args = ", ".join(f"const std::vector<int64_t>& {n}_shape" for n in in_names)
    lines = ["  int64_t dims[%d];" % max(1, len(sig.symbols))] + \
            [f"  dims[{k}] = -1;" for k in range(len(sig.symbols))]
    for buf, n in zip(sig.inputs, in_names):
        lines.append(f"  PD_CHECK({n}_shape.size() == {len(buf.dims)}, \"{op}: input {n} must be {len(buf.dims)}-d, "
                     f"got \", {n}_shape.size(), \"-d\");")
        for axis, d in enumerate(buf.dims):
            if isinstance(d, int):
                lines.append(f"  PD_CHECK({n}_shape[{axis}] == -1 || {n}_shape[{axis}] == {d}, \"{op}: input {n} "
                             f"dimension {axis} must be {d}, got \", {n}_shape[{axis}]);")
            else:
                k = sig.symbols.index(d)
                lines.append(f"  if (dims[{k}] < 0) dims[{k}] = {n}_shape[{axis}];")
    outs = ", ".join("{" + ", ".join(str(d) if isinstance(d, int) else f"dims[{sig.symbols.index(d)}]"
                                    for d in buf.dims) + "}" for buf in sig.outputs)
    shape_fn = (f"std::vector<std::vector<int64_t>> {fn}InferShape({shape_args}) {{\n" + "\n".join(lines) +
                f"\n  return {{{outs}}};\n}}\n")
    dtype_args = ", ".join(f"const paddle::DataType& {n}_dtype" for n in in_names)
    dtypes = ", ".join(f"paddle::DataType::{_PD_DTYPE[b.dtype]}" for b in sig.outputs)
    dtype_fn = f"std::vector<paddle::DataType> {fn}InferDtype({dtype_args}) {{\n  return {{{dtypes}}};\n}}\n"
    return shape_fn + dtype_fn


_PRELUDE = r'''// Generated by tilelang.paddle.custom_op: do not edit.
// The op needs no Python bindings (Paddle generates the op's Python API itself). Skipping them
// (paddle/extension.h includes paddle/utils/pybind.h only without PADDLE_NO_PYTHON) keeps Python.h
// and Paddle's ATen compatibility headers out, which on CUDA builds pull in cuBLAS and cuDNN headers.
#define PADDLE_NO_PYTHON
#include <dlfcn.h>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <mutex>
#include <string>
#include <vector>

#include "paddle/extension.h"

#if TILELANG_OP_CUDA
#if !defined(PADDLE_WITH_CUDA)
#error "a CUDA TileLang operator is compiled as CUDA source with PADDLE_WITH_CUDA (paddle.utils.cpp_extension does both for .cu files)"
#endif
// Paddle's own current-device getter and setter, declared PADDLE_API in paddle/phi/backends/gpu/gpu_info.h
// and defined in paddle/phi/backends/gpu/cuda/cuda_info.cc (cudaGetDevice / cudaSetDevice in Paddle's CUDA
// runtime). Declared here rather than included: that header includes cuBLAS and cuDNN headers, which
// are not part of every CUDA install, and the op needs neither.
namespace phi {
namespace backends {
namespace gpu {
int GetCurrentDeviceId();
void SetDeviceId(int device_id);
}  // namespace gpu
}  // namespace backends
}  // namespace phi
#endif

namespace {

constexpr int kMaxDevices = 256;

// One TileLang kernel library, loaded with dlopen(RTLD_LOCAL): every TileLang library exports the same
// call/init names, so each keeps its own namespace.
struct KernelLib {
  KernelLib(const char* op, const char* file);
  std::string path;
  void* call = nullptr;
  int32_t (*init)() = nullptr;
  const char* (*last_error)() = nullptr;
  std::string error;
#if TILELANG_OP_CUDA
  // init() sets per-device function attributes (the dynamic shared memory limit): once per GPU.
  std::atomic<bool> ready[kMaxDevices] = {};
  std::mutex init_mutex;
#endif
};

std::string OwnDirectory() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&OwnDirectory), &info) == 0 || info.dli_fname == nullptr) return ".";
  std::string path(info.dli_fname);
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

KernelLib::KernelLib(const char* op, const char* file) : path(OwnDirectory() + "/" + file) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    error = std::string("cannot load the TileLang kernel library ") + path + ": " + (why ? why : "unknown error");
  } else {
    init = reinterpret_cast<int32_t (*)()>(dlsym(handle, "init"));
    last_error = reinterpret_cast<const char* (*)()>(dlsym(handle, "get_last_error"));
    call = dlsym(handle, "call");
    if (call == nullptr) {
      error = std::string("the TileLang kernel library ") + path + " has no `call` entry";
#if !TILELANG_OP_CUDA
    } else if (init != nullptr && init() != 0) {  // a CPU library initialises once, at load
      error = std::string("the TileLang kernel library ") + path + " failed to initialise: " +
              (last_error ? last_error() : "");
      call = nullptr;
#endif
    }
  }
  // Paddle's predictor reports a failing PD_CHECK as a bare std::exception: say why here too.
  if (!error.empty()) std::fprintf(stderr, "%s: %s\n", op, error.c_str());
}

intptr_t Ptr(const paddle::Tensor& t) { return reinterpret_cast<intptr_t>(t.data()); }

void CheckInput(const char* op, const char* name, const paddle::Tensor& t, paddle::DataType dtype,
                const std::vector<int64_t>& statics, const std::vector<int>& symbols, int64_t* dims, bool* bound,
                const char* first, const phi::Place& place) {
#if TILELANG_OP_CUDA
  PD_CHECK(t.is_gpu(), op, ": input ", name, " must be a GPU tensor (this operator runs a CUDA kernel), got ",
           t.place().DebugString());
  PD_CHECK(t.place() == place, op, ": input ", name, " is on ", t.place().DebugString(), " but input ", first,
           " is on ", place.DebugString(), "; put every input on one GPU");
#else
  PD_CHECK(t.is_cpu(), op, ": input ", name, " must be a CPU tensor (this operator runs a CPU kernel), got ",
           t.place().DebugString());
#endif
  PD_CHECK(t.dtype() == dtype, op, ": input ", name, " must have dtype ", phi::DataTypeToString(dtype), ", got ",
           phi::DataTypeToString(t.dtype()));
  // Kernels read row-major memory; a strided view would be read as if it were compact.
  PD_CHECK(t.numel() == 0 || t.is_contiguous(), op, ": input ", name,
           " is not contiguous; pass a contiguous tensor (tensor.contiguous())");
  const std::vector<int64_t> shape = t.shape();
  PD_CHECK(shape.size() == statics.size(), op, ": input ", name, " must be ", statics.size(), "-d, got ",
           shape.size(), "-d");
  for (size_t i = 0; i < shape.size(); ++i) {
    if (symbols[i] < 0) {
      PD_CHECK(shape[i] == statics[i], op, ": input ", name, " dimension ", i, " must be ", statics[i], ", got ",
               shape[i]);
    } else if (bound[symbols[i]]) {
      PD_CHECK(shape[i] == dims[symbols[i]], op, ": input ", name, " dimension ", i, " is ", shape[i],
               ", but another input gave that symbolic dimension ", dims[symbols[i]]);
    } else {
      dims[symbols[i]] = shape[i];
      bound[symbols[i]] = true;
    }
  }
}

void KernelFailed(const char* op, const KernelLib& lib, std::initializer_list<paddle::Tensor> tensors) {
  std::string why = lib.last_error ? lib.last_error() : "";
#if TILELANG_OP_CUDA
  for (const paddle::Tensor& t : tensors) {
    if (t.numel() == 0) {
      why += " (a zero-size tensor was passed: a grid computed from it has no blocks, which CUDA cannot launch; "
             "skip the call for an empty batch)";
      break;
    }
  }
#endif
  PD_THROW(op, ": the TileLang kernel failed: ", why);
}

#if TILELANG_OP_CUDA
// Makes a GPU current for the kernel call and restores the previous one afterwards, as Paddle's own
// phi::backends::gpu::GPUDeviceGuard (paddle/phi/backends/gpu/gpu_info.h) does with the same two calls.
class CurrentGpu {
 public:
  explicit CurrentGpu(int device) : previous_(phi::backends::gpu::GetCurrentDeviceId()) {
    if (previous_ == device) {
      previous_ = -1;
    } else {
      phi::backends::gpu::SetDeviceId(device);
    }
  }
  ~CurrentGpu() {
    if (previous_ >= 0) phi::backends::gpu::SetDeviceId(previous_);
  }
  CurrentGpu(const CurrentGpu&) = delete;
  CurrentGpu& operator=(const CurrentGpu&) = delete;

 private:
  int previous_;
};

// Runs the library's init() once per GPU, with that GPU current.
void InitOnDevice(const char* op, KernelLib& lib, int device) {
  PD_CHECK(device >= 0 && device < kMaxDevices, op, ": GPU index ", device, " is beyond the ", kMaxDevices,
           " this operator supports");
  if (lib.init == nullptr || lib.ready[device].load(std::memory_order_acquire)) return;
  std::lock_guard<std::mutex> hold(lib.init_mutex);
  if (lib.ready[device].load(std::memory_order_relaxed)) return;
  PD_CHECK(lib.init() == 0, op, ": the TileLang kernel library ", lib.path, " failed to initialise on gpu:", device,
           ": ", lib.last_error ? lib.last_error() : "");
  lib.ready[device].store(true, std::memory_order_release);
}
#endif

'''


def _generate(op: str, fwd: _KernelSig, bwd: _KernelSig | None) -> str:
    ins = [b.name for b in fwd.inputs]
    outs = [b.name for b in fwd.outputs]
    if len(set(ins + outs)) != len(ins + outs):
        raise ValueError(f"custom_op: the forward kernel's buffer names must be distinct, got {ins + outs}")
    parts = [f"#define TILELANG_OP_CUDA {int(fwd.cuda)}\n", _PRELUDE]
    parts.append(f"KernelLib& ForwardLib() {{ static KernelLib lib(\"{op}\", \"{op}_forward_kernel.so\"); "
                 "return lib; }\n")
    if bwd is not None:
        parts.append(f"KernelLib& BackwardLib() {{ static KernelLib lib(\"{op}\", \"{op}_backward_kernel.so\"); "
                     "return lib; }\n")
    parts.append("// Resolve the kernel libraries when the op library loads: a missing one is reported at once.\n"
                 "struct LoadAtStart { LoadAtStart() { ForwardLib();" + (" BackwardLib();" if bwd else "") +
                 " } } load_at_start;\n\n}  // namespace\n\n")
    parts.append(_cpp_kernel_fn(op, fwd, "TlForward", "ForwardLib", ins))
    parts.append(_cpp_infer(op, fwd, "TlForward", ins))
    parts.append(f'PD_BUILD_OP({op})\n    .Inputs({{{", ".join(f"{chr(34)}{n}{chr(34)}" for n in ins)}}})\n'
                 f'    .Outputs({{{", ".join(f"{chr(34)}{n}{chr(34)}" for n in outs)}}})\n'
                 "    .SetKernelFn(PD_KERNEL(TlForward))\n"
                 "    .SetInferShapeFn(PD_INFER_SHAPE(TlForwardInferShape))\n"
                 "    .SetInferDtypeFn(PD_INFER_DTYPE(TlForwardInferDtype));\n\n")
    if bwd is not None:
        c_names = ins + outs + [f"grad_{n}" for n in outs]
        parts.append(_cpp_kernel_fn(op, bwd, "TlBackward", "BackwardLib", c_names))
        # Each input's gradient has the input's shape and dtype.
        shape_args = ", ".join(f"const std::vector<int64_t>& {n}_shape" for n in c_names)
        dtype_args = ", ".join(f"const paddle::DataType& {n}_dtype" for n in c_names)
        parts.append(f"std::vector<std::vector<int64_t>> TlBackwardInferShape({shape_args}) {{\n"
                     f"  return {{{', '.join(f'{n}_shape' for n in ins)}}};\n}}\n")
        parts.append(f"std::vector<paddle::DataType> TlBackwardInferDtype({dtype_args}) {{\n"
                     f"  return {{{', '.join(f'{n}_dtype' for n in ins)}}};\n}}\n")
        grad_inputs = ", ".join(f'"{n}"' for n in ins + outs) + ", " + ", ".join(f'paddle::Grad("{n}")' for n in outs)
        grad_outputs = ", ".join(f'paddle::Grad("{n}")' for n in ins)
        parts.append(f"PD_BUILD_GRAD_OP({op})\n    .Inputs({{{grad_inputs}}})\n    .Outputs({{{grad_outputs}}})\n"
                     "    .SetKernelFn(PD_KERNEL(TlBackward))\n"
                     "    .SetInferShapeFn(PD_INFER_SHAPE(TlBackwardInferShape))\n"
                     "    .SetInferDtypeFn(PD_INFER_DTYPE(TlBackwardInferDtype));\n")
    return "".join(parts)


def _op_source(forward, *, name: str, backward=None):
    """The checked kernel signatures and the generated C++ (or CUDA) source of the operator."""
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"custom_op: name must be a C identifier such as 'tl_matmul', got {name!r}")
    fwd = _signature(forward, "forward")
    bwd = _signature(backward, "backward") if backward is not None else None
    if bwd is not None:
        _check_backward(fwd, bwd)
    return fwd, bwd, _generate(name, fwd, bwd)


# ---------------------------------------------------------------- build and load


def _default_directory(op: str, digest: str) -> Path:
    from tilelang.paddle_runtime import settings

    return Path(settings.op_cache()) / f"{op}-{digest[:16]}"


def _sha256(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


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
        are the ``out_idx`` buffers. Static or ``T.dynamic`` shapes; an output's
        symbolic dimensions come from the inputs.
    name : str
        The operator's name in Paddle programs (a C identifier, unique in the process).
    backward : JITKernel, optional
        Its inputs: the forward's inputs, the forward's outputs, then one gradient
        per forward output; its outputs: one gradient per forward input.
    directory : path, optional
        Where the op library and its kernel libraries go. Default: a directory
        under ``$TILELANG_PADDLE_OP_CACHE`` (``~/.cache/tilelang-paddle/ops``)
        named by the op's content hash, so an unchanged op is not rebuilt.

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

    if fwd.cuda and not paddle.is_compiled_with_cuda():
        raise RuntimeError(f"custom_op: {name}'s kernels target CUDA, but this Paddle build has no CUDA "
                           f"(paddle.is_compiled_with_cuda() is False); install paddlepaddle-gpu>=3.3, or compile "
                           f"the kernels with target=\"c\" for a CPU operator")
    digest = hashlib.sha256("\n".join([source, paddle.__version__, paddle.version.commit, _sha256(fwd.library),
                                       _sha256(bwd.library) if bwd else ""]).encode()).hexdigest()
    out = Path(directory) if directory is not None else _default_directory(name, digest)
    # paddle.utils.cpp_extension.load writes the op library to <build_directory>/<name>/<name>.so, and the op
    # library loads its kernels from its own directory when it is loaded: put them there first.
    lib_dir = out / name
    lib_dir.mkdir(parents=True, exist_ok=True)
    kernels = [(fwd.library, lib_dir / f"{name}_forward_kernel.so")]
    if bwd is not None:
        kernels.append((bwd.library, lib_dir / f"{name}_backward_kernel.so"))
    for src, dst in kernels:
        if not dst.exists() or _sha256(str(dst)) != _sha256(src):
            shutil.copyfile(src, dst)
    # A .cu source is compiled by nvcc with PADDLE_WITH_CUDA (paddle/utils/cpp_extension: prepare_unix_cudaflags),
    # which the CUDA operator needs for Tensor::stream(); a .cc source by the C++ compiler.
    cpp = out / f"{name}{'.cu' if fwd.cuda else '.cc'}"
    if not cpp.exists() or cpp.read_text() != source:
        cpp.write_text(source)
    from paddle.utils import cpp_extension

    module = cpp_extension.load(name=name, sources=[str(cpp)], extra_ldflags=["-ldl"],
                                build_directory=str(out), verbose=False)
    library = lib_dir / f"{name}.so"
    if not library.exists():
        raise RuntimeError(f"custom_op: expected Paddle to build {library}; found "
                           f"{sorted(str(p) for p in out.rglob('*.so'))} (a new Paddle build layout?)")
    op = getattr(module, name)
    op._tilelang_custom_op = True
    op.op_name, op.library, op.kernel_libraries = name, str(library), [str(dst) for _s, dst in kernels]
    return op


def save_ops(model_prefix: str | os.PathLike, *ops: CustomOp) -> list[str]:
    """Copy op libraries (as ``<name>_package.so``) and their kernel libraries beside a saved model.

    ``model_prefix`` is what was given to ``paddle.jit.save``. A serving process
    then needs no tilelang::

        import glob, os, paddle
        for lib in glob.glob(os.path.join(model_dir, "*_package.so")):
            paddle.utils.cpp_extension.load_op_meta_info_and_register_op(lib)
        layer = paddle.jit.load(model_prefix)          # or paddle.inference.create_predictor(...)

    Returns the paths of the copied op libraries.
    """
    target = Path(model_prefix).parent
    target.mkdir(parents=True, exist_ok=True)
    written = []
    for op in ops:
        if not isinstance(op, CustomOp):
            raise TypeError(f"save_ops: expected ops made by tilelang.paddle.custom_op, got {type(op).__name__}")
        dst = target / f"{op.op_name}_package.so"
        shutil.copyfile(op.library, dst)
        for lib in op.kernel_libraries:
            shutil.copyfile(lib, target / Path(lib).name)
        written.append(str(dst))
    return written
