"""The C++ (or CUDA) source of a :func:`tilelang.paddle.custom_op` operator.

``render(op, forward, backward)`` returns the whole source: ``op_runtime.h``
(the fixed part, a real file beside this one) followed by the functions that
depend on the kernels: the kernel functions, infer-shape/infer-dtype and the
``PD_BUILD_OP`` / ``PD_BUILD_GRAD_OP`` registrations. Everything here reads the
kernels' :class:`tilelang.paddle_runtime.signature.KernelSignature`.

Every user name that enters the source goes through :func:`check_names`
first (``custom_op`` calls it before rendering), so a bad name is a
``ValueError`` naming it, never a compiler error deep in the op cache.
"""

from __future__ import annotations

import json
import keyword
from dataclasses import dataclass
from pathlib import Path

RUNTIME_HEADER = Path(__file__).with_name("op_runtime.h")

# TileLang dtype name -> paddle::DataType enumerator (paddle/phi/common/data_type.h).
PD_DTYPE = {
    "float32": "FLOAT32", "float64": "FLOAT64", "float16": "FLOAT16", "bfloat16": "BFLOAT16",
    "int8": "INT8", "int16": "INT16", "int32": "INT32", "int64": "INT64", "uint8": "UINT8", "bool": "BOOL",
}

CPP_KEYWORDS = frozenset("""
alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t char16_t char32_t class
compl concept const consteval constexpr constinit const_cast continue co_await co_return co_yield decltype
default delete do double dynamic_cast else enum explicit export extern false float for friend goto if inline
int long mutable namespace new noexcept not not_eq nullptr operator or or_eq private protected public register
reinterpret_cast requires return short signed sizeof static static_assert static_cast struct switch template
this thread_local throw true try typedef typeid typename union unsigned using virtual void volatile wchar_t
while xor xor_eq restrict _Bool
""".split())
# Names the generated source itself uses at namespace scope: namespaces, types, macros.
GENERATED_NAMES = frozenset("""
paddle phi std int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t intptr_t uintptr_t size_t
ptrdiff_t NULL EOF assert errno stdin stdout stderr dladdr dlopen dlsym dlerror Dl_info main
""".split())
# Our generated names (Tlp*, tlp_*), Paddle's and our macros (PD_*, PADDLE_*, TILELANG_*), C++'s reserved ones.
RESERVED_PREFIXES = ("PD_", "PADDLE_", "TILELANG_", "__")


@dataclass(frozen=True)
class Kernel:
    """One compiled kernel of the op: its signature, its library, its role ("forward" or "backward")."""

    role: str
    library: str
    sig: object  # tilelang.paddle_runtime.signature.KernelSignature


def name_problem(name) -> str | None:
    """Why ``name`` cannot be a name in the generated source (None when it can)."""
    if not isinstance(name, str) or not name.isascii() or not name.isidentifier():
        return "is not an ASCII identifier (letters, digits and _, not starting with a digit)"
    low = name.lower()
    if name in CPP_KEYWORDS or low in CPP_KEYWORDS:
        return "is a C++ keyword" + (" once Paddle lower-cases it" if name not in CPP_KEYWORDS else "")
    if keyword.iskeyword(name) or keyword.iskeyword(low):
        return "is a Python keyword" + (" once Paddle lower-cases it" if not keyword.iskeyword(name) else "")
    if name in GENERATED_NAMES or low.startswith("tlp") or name.startswith(RESERVED_PREFIXES) or \
            (name[0] == "_" and name[1:2].isupper()):
        return "is a name the generated operator uses itself (or a reserved C++ identifier)"
    return None


def check_names(op: str, forward: Kernel, backward: Kernel | None) -> None:
    """Refuse, naming it, every buffer name that cannot enter the op's source as it stands."""
    fwd = forward.sig
    groups = [("forward", [p.name for p in fwd.inputs] + [p.name for p in fwd.outputs])]
    if backward is not None:
        groups.append(("backward", [p.name for p in fwd.inputs] + [p.name for p in fwd.outputs] +
                       [f"grad_{p.name}" for p in fwd.outputs]))
    for role, names in groups:
        for name in names:
            problem = name_problem(name)
            if problem:
                raise ValueError(f"custom_op {op}: the {role} kernel's buffer name {name!r} {problem}; rename the "
                                 "buffer in the kernel's signature")
        seen = {}
        for name in names:
            low = name.lower()  # Paddle lower-cases the op's input names in its generated API
            if low in seen:
                why = "" if seen[low] == name else " once Paddle lower-cases them"
                extra = " (the backward receives each output's gradient as grad_<output>)" if role == "backward" else ""
                raise ValueError(f"custom_op {op}: buffer names {seen[low]!r} and {name!r} collide{why}{extra}; "
                                 "give the kernel's buffers distinct names")
            seen[low] = name


def _dim_expr(d, sig, dims_var: str) -> str:
    return str(d) if isinstance(d, int) else f"{dims_var}[{sig.symbol_index(d)}]"


def _kernel_fn(op: str, k: Kernel, fn: str, lib_fn: str, in_names: list) -> str:
    """The PD_KERNEL function running ``k`` on tensors named ``in_names`` (the op's input names)."""
    sig = k.sig
    n_sym = len(sig.symbols)
    args = ", ".join(f"const paddle::Tensor& {n}" for n in in_names)
    first = in_names[0]
    body = [f"  TlpKernelLib& tlp_lib = {lib_fn}();",
            f"  PD_CHECK(tlp_lib.call != nullptr, \"{op}: \", tlp_lib.error);",
            "  int64_t tlp_dims[%d] = {0};" % max(1, n_sym),
            "  bool tlp_bound[%d] = {false};" % max(1, n_sym)]
    for p, n in zip(sig.inputs, in_names):
        static = ", ".join(str(d) if isinstance(d, int) else "-1" for d in p.dims)
        syms = ", ".join(str(sig.symbol_index(d)) if isinstance(d, str) else "-1" for d in p.dims)
        body.append(f"  TlpCheckInput(\"{op}\", \"{n}\", {n}, paddle::DataType::{PD_DTYPE[p.dtype]}, "
                    f"{{{static}}}, {{{syms}}}, tlp_dims, tlp_bound, \"{first}\", {first});")
    in_name_of = {p.index: n for p, n in zip(sig.inputs, in_names)}
    for j, sym in enumerate(sig.symbols):
        if sym.max_value < 2**63 - 1:
            index, axis = sym.binder
            body.append(f"  TlpCheckSize(\"{op}\", \"{in_name_of[index]}\", {axis}, \"{sym.name}\", tlp_dims[{j}], "
                        f"{sym.max_value}LL, \"{sym.ctype}\");")
    if sig.cuda:
        body.append(f"  const int tlp_device = TlpDeviceOf({first});")
        body.append("  TlpCurrentGpu tlp_current(tlp_device);  // before TlpStreamOf, which reads the current "
                    "GPU's stream")
        body.append(f"  TlpInitOnDevice(\"{op}\", tlp_lib, tlp_device);")
    outs = []
    for j, p in enumerate(sig.outputs):
        shape = ", ".join(_dim_expr(d, sig, "tlp_dims") for d in p.dims)
        body.append(f"  paddle::Tensor tlp_out{j} = TlpEmpty({{{shape}}}, paddle::DataType::{PD_DTYPE[p.dtype]}, "
                    f"{first});")
        outs.append(f"tlp_out{j}")
    # call()'s exact prototype: a pointer per buffer (void*: one representation for every data pointer),
    # each symbolic size in its declared C type, then on CUDA the stream (cudaStream_t, a pointer).
    # tlp_out<j> is the j-th output in out_idx order (the op's output order); call() takes them in place.
    out_of = {index: j for j, index in enumerate(sig.result_idx)}
    proto, call_args, i_in = [], [], 0
    for p in sig.params:
        proto.append("void*")
        if p.is_output:
            call_args.append(f"TlpPtr(tlp_out{out_of[p.index]})")
        else:
            call_args.append(f"TlpPtr({in_names[i_in]})")
            i_in += 1
    for j, sym in enumerate(sig.symbols):
        proto.append(sym.ctype)
        call_args.append(f"static_cast<{sym.ctype}>(tlp_dims[{j}])")
    if sig.call_has_stream:
        # Paddle's current stream of the inputs' GPU (now current).
        proto.append("void*")
        call_args.append(f"TlpStreamOf({first})")
    body.append(f"  using TlpCall = int32_t (*)({', '.join(proto) or 'void'});")
    body.append("  int32_t tlp_rc = reinterpret_cast<TlpCall>(tlp_lib.call)(")
    body.append("      " + ", ".join(call_args) + ");")
    tensors = ", ".join(list(in_names) + outs)
    body.append(f"  if (tlp_rc != 0) TlpKernelFailed(\"{op}\", tlp_lib, {{{tensors}}});")
    body.append(f"  return {{{', '.join(outs)}}};")
    return f"std::vector<paddle::Tensor> {fn}({args}) {{\n" + "\n".join(body) + "\n}\n"


def _infer(op: str, k: Kernel, fn: str, in_names: list) -> str:
    """Infer-shape and infer-dtype functions from the kernel's buffer signature."""
    sig = k.sig
    shape_args = ", ".join(f"const std::vector<int64_t>& {n}_shape" for n in in_names)
    lines = ["  int64_t tlp_dims[%d];" % max(1, len(sig.symbols))] + \
            [f"  tlp_dims[{j}] = -1;" for j in range(len(sig.symbols))]
    for p, n in zip(sig.inputs, in_names):
        lines.append(f"  PD_CHECK({n}_shape.size() == {len(p.dims)}, \"{op}: input {n} must be {len(p.dims)}-d, "
                     f"got \", {n}_shape.size(), \"-d\");")
        for axis, d in enumerate(p.dims):
            if isinstance(d, int):
                lines.append(f"  PD_CHECK({n}_shape[{axis}] == -1 || {n}_shape[{axis}] == {d}, \"{op}: input {n} "
                             f"dimension {axis} must be {d}, got \", {n}_shape[{axis}]);")
            else:
                j = sig.symbol_index(d)
                lines.append(f"  if (tlp_dims[{j}] < 0) tlp_dims[{j}] = {n}_shape[{axis}];")
    outs = ", ".join("{" + ", ".join(_dim_expr(d, sig, "tlp_dims") for d in p.dims) + "}" for p in sig.outputs)
    shape_fn = (f"std::vector<std::vector<int64_t>> {fn}InferShape({shape_args}) {{\n" + "\n".join(lines) +
                f"\n  return {{{outs}}};\n}}\n")
    dtype_args = ", ".join(f"const paddle::DataType& {n}_dtype" for n in in_names)
    dtypes = ", ".join(f"paddle::DataType::{PD_DTYPE[p.dtype]}" for p in sig.outputs)
    dtype_fn = f"std::vector<paddle::DataType> {fn}InferDtype({dtype_args}) {{\n  return {{{dtypes}}};\n}}\n"
    return shape_fn + dtype_fn


def _quoted(names) -> str:
    return ", ".join(f'"{n}"' for n in names)


def render(op: str, forward: Kernel, backward: Kernel | None) -> str:
    """The operator's whole source (see module docstring). ``custom_op`` has checked the names (:func:`check_names`)."""
    fwd = forward.sig
    ins = [p.name for p in fwd.inputs]
    outs = [p.name for p in fwd.outputs]
    from tilelang.paddle_runtime.launch import ZERO_SIZE_HINT

    parts = ["// Generated by tilelang.paddle.custom_op: do not edit.\n",
             f"#define TILELANG_OP_CUDA {int(fwd.cuda)}\n",
             f"#define TLP_ZERO_SIZE_HINT {json.dumps(ZERO_SIZE_HINT)}\n", RUNTIME_HEADER.read_text(),
             "\nnamespace {\n\n"]
    parts.append(f"TlpKernelLib& TlpForwardLib() {{ static TlpKernelLib lib(\"{op}\", \"{op}_forward_kernel.so\"); "
                 "return lib; }\n")
    if backward is not None:
        parts.append(f"TlpKernelLib& TlpBackwardLib() {{ static TlpKernelLib lib(\"{op}\", "
                     f"\"{op}_backward_kernel.so\"); return lib; }}\n")
    parts.append("// Resolve the kernel libraries when the op library loads: a missing one is reported at once.\n"
                 "struct TlpLoadAtStart { TlpLoadAtStart() { TlpForwardLib();" +
                 (" TlpBackwardLib();" if backward is not None else "") +
                 " } } tlp_load_at_start;\n\n}  // namespace\n\n")
    parts.append(_kernel_fn(op, forward, "TlpForward", "TlpForwardLib", ins))
    parts.append(_infer(op, forward, "TlpForward", ins))
    parts.append(f"PD_BUILD_OP({op})\n    .Inputs({{{_quoted(ins)}}})\n    .Outputs({{{_quoted(outs)}}})\n"
                 "    .SetKernelFn(PD_KERNEL(TlpForward))\n"
                 "    .SetInferShapeFn(PD_INFER_SHAPE(TlpForwardInferShape))\n"
                 "    .SetInferDtypeFn(PD_INFER_DTYPE(TlpForwardInferDtype));\n\n")
    if backward is not None:
        c_names = ins + outs + [f"grad_{n}" for n in outs]
        parts.append(_kernel_fn(op, backward, "TlpBackward", "TlpBackwardLib", c_names))
        # Each input's gradient has the input's shape and dtype.
        shape_args = ", ".join(f"const std::vector<int64_t>& {n}_shape" for n in c_names)
        dtype_args = ", ".join(f"const paddle::DataType& {n}_dtype" for n in c_names)
        parts.append(f"std::vector<std::vector<int64_t>> TlpBackwardInferShape({shape_args}) {{\n"
                     f"  return {{{', '.join(f'{n}_shape' for n in ins)}}};\n}}\n")
        parts.append(f"std::vector<paddle::DataType> TlpBackwardInferDtype({dtype_args}) {{\n"
                     f"  return {{{', '.join(f'{n}_dtype' for n in ins)}}};\n}}\n")
        grad_inputs = _quoted(ins + outs) + ", " + ", ".join(f'paddle::Grad("{n}")' for n in outs)
        grad_outputs = ", ".join(f'paddle::Grad("{n}")' for n in ins)
        parts.append(f"PD_BUILD_GRAD_OP({op})\n    .Inputs({{{grad_inputs}}})\n    .Outputs({{{grad_outputs}}})\n"
                     "    .SetKernelFn(PD_KERNEL(TlpBackward))\n"
                     "    .SetInferShapeFn(PD_INFER_SHAPE(TlpBackwardInferShape))\n"
                     "    .SetInferDtypeFn(PD_INFER_DTYPE(TlpBackwardInferDtype));\n")
    return "".join(parts)
