"""Only the driver (and the seams it reads through) asks Paddle about devices, streams, places or allocation.

The launch runtime is run on a real GPU with a stand-in driver; a Paddle call
made elsewhere would be a part of the protocol that such a run never covers.
"""

from __future__ import annotations

import ast
import pathlib

_REPO = pathlib.Path(__file__).resolve().parents[1]
_ROOT = _REPO / "tilelang"
_ALLOWED = {"paddle_runtime/driver.py", "paddle_runtime/seams.py"}

# Attribute chains (rooted at a name) that ask Paddle about devices, streams, places or memory.
_ASKS = (
    "paddle.CUDAPlace", "paddle.CPUPlace", "paddle.CUDAPinnedPlace", "paddle.is_compiled_with_cuda",
    "paddle.device", "paddle.set_device", "paddle.get_device", "paddle.empty", "paddle.zeros", "paddle.ones",
    "paddle.full", "paddle.to_tensor", "paddle.randn", "paddle.rand", "paddle.randint", "paddle.assign",
    "_C_ops.empty", "_C_ops.zeros", "_C_ops.full", "_C_ops.randint", "_C_ops.uniform", "_C_ops.gaussian",
    "core._get_current_stream", "core.get_cuda_current_device_id", "core._set_current_device",
    "paddle.base.framework._current_expected_place", "framework._current_expected_place_",
    "paddle.utils.dlpack", "paddle.base.core", "paddle.base.libpaddle", "paddle._C_ops",
    "paddle.version.cuda",  # what the build can run (the doctor's build line)
)
# Paddle's internals: a module importing one of these asks Paddle below its public API.
_INTERNAL_IMPORTS = {"_C_ops", "core", "libpaddle", "framework", "dlpack"}


def _chain(node) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def _asks(path: pathlib.Path):
    tree = ast.parse(path.read_text(), str(path))
    called = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}  # driver.place(i) is the driver's
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            chain = _chain(node)
            if chain and any(chain == a or chain.startswith(a + ".") for a in _ASKS):
                yield node.lineno, chain
            elif node.attr == "place" and isinstance(node.ctx, ast.Load) and id(node) not in called:
                yield node.lineno, f"{_chain(node) or '...'} (a tensor's place)"
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "paddle":
            names = set((node.module or "").split(".")[1:]) | {a.name for a in node.names}
            if names & _INTERNAL_IMPORTS:
                yield node.lineno, f"from {node.module} import {', '.join(a.name for a in node.names)}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "paddle" and set(alias.name.split(".")[1:]) & _INTERNAL_IMPORTS:
                    yield node.lineno, f"import {alias.name}"
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr"
              and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) and node.args[1].value == "place"):
            yield node.lineno, "getattr(..., 'place') (a tensor's place)"


def test_only_the_driver_asks_paddle():
    assert (_ROOT / "paddle_runtime" / "driver.py").is_file(), _ROOT
    found = []
    # The runtime, the public helpers and the command line (the doctor asks its build line and GPUs of the driver).
    for sub in (_ROOT / "paddle_runtime", _ROOT / "paddle", _REPO / "src" / "tilelang_paddle"):
        for path in sorted(sub.glob("*.py")):
            rel = f"{sub.name}/{path.name}"
            if rel not in _ALLOWED:
                found += [f"{rel}:{line}: {chain}" for line, chain in _asks(path)]
    assert not found, "Paddle asked outside driver.py:\n" + "\n".join(found)


def test_the_scan_sees_what_it_looks_for():
    # The check above would pass on an empty tree; the driver itself must show every kind of ask it refuses.
    seen = [chain for _, chain in _asks(_ROOT / "paddle_runtime" / "driver.py")]
    assert any(c.startswith("paddle.CUDAPlace") for c in seen), seen
    assert any(c.startswith("_C_ops.randint") for c in seen), seen
    assert any("a tensor's place" in c for c in seen), seen
    assert any(c == "from paddle import _C_ops" for c in seen), seen
    assert any(c.startswith("paddle.utils.dlpack") for c in seen), seen
    assert any(c.startswith("paddle.assign") for c in seen), seen


# What a custom operator's C++ asks Paddle about places, devices, streams and memory.
_CPP_ASKS = ("place()", "paddle::empty", "stream()", "GetDeviceId", "SetDeviceId", "GetCurrentDeviceId")


def _generated_text(path: pathlib.Path) -> str:
    """Every string literal (f-string parts included) of the module that renders an op's functions."""
    tree = ast.parse(path.read_text(), str(path))
    return "\n".join(n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str))


def test_generated_operators_ask_paddle_through_op_runtime():
    # The generated functions call the Tlp helpers of op_runtime.h, the op's one place for such questions.
    text = _generated_text(_ROOT / "paddle" / "op_codegen.py")
    found = [ask for ask in _CPP_ASKS if ask in text]
    assert not found, f"op_codegen.py renders Paddle asks itself (move them into op_runtime.h): {found}"
    header = (_ROOT / "paddle" / "op_runtime.h").read_text()
    assert all(ask in header for ask in _CPP_ASKS), [ask for ask in _CPP_ASKS if ask not in header]
    assert "TlpEmpty(" in text and "TlpStreamOf(" in text and "TlpDeviceOf(" in text
