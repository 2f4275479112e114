"""Compiler failures said as the cause and the next step, with the generated source in a file, not the message.

Upstream puts the whole generated CUDA/C++ source into the exception (hundreds
of lines before the one that matters). Patches 0027 (``contrib/nvcc.py``,
device code) and 0028 (``jit/adapter/libgen.py``, the Cython backend's host
library) raise :func:`compile_failed` instead: the compiler's own output, the
command, the path of a file holding the source, and a hint for the failure a
newcomer meets first on a machine without a GPU: ``nvcc fatal : Unsupported
gpu architecture 'sm_50'``, from ``target="cuda"`` with no GPU to detect the
architecture from (TileLang then falls back to an architecture CUDA 13 no
longer supports). (The Cython backend's ``-lcuda`` links without the driver:
:mod:`.cuda_link`.)
"""

from __future__ import annotations

import os
import re
import tempfile

_HINTS = (
    (re.compile(r"Unsupported gpu architecture '(sm_\w+)'"),
     "nvcc has no target {0}: TileLang picks the architecture of the GPU it sees, and without one it fell back to "
     "{0}. Pass the GPU's architecture: target={{\"kind\": \"cuda\", \"arch\": \"sm_90a\"}} (H100/H200), "
     "\"sm_80\" (A100), \"sm_89\" (L40/4090), \"sm_100a\" (B200)"),
)


def keep_source(code: str, suffix: str) -> str:
    """Write ``code`` to a file that outlives the failed build; return its path."""
    fd, path = tempfile.mkstemp(prefix="tilelang_failed_", suffix=suffix)
    with os.fdopen(fd, "w") as f:
        f.write(code or "")
    return path


def compile_failed(what: str, output: str, command, code: str, suffix: str) -> RuntimeError:
    """The error for a failed compile: the kernel (where one is being compiled), output, command, hint, and where
    the source is."""
    output = (output or "").strip() or "(the compiler printed nothing; its output went to the terminal)"
    cmd = command if isinstance(command, str) else " ".join(map(str, command))
    hints = [h.format(*m.groups()) for pattern, h in _HINTS for m in [pattern.search(output)] if m]
    path = keep_source(code, suffix)
    from .kernel_names import being_compiled

    kernel = being_compiled()
    text = (f"kernel {kernel}: " if kernel else "") + f"{what} failed:\n{output}\nCommand: {cmd}\n"
    if hints:
        text += "What to do: " + " ".join(hints) + "\n"
    return RuntimeError(text + f"The generated source is in {path}")


def no_cxx_compiler(func) -> RuntimeError:
    """A Cython-backend compile on a host without a C++ compiler (patch 0040): which one, and the bundles."""
    from .cache import bundle
    from .kernel_names import kernel_label

    roots = bundle.bundle_dirs()
    where = (f"it is in none of the bundles of {bundle.BUNDLE}={os.pathsep.join(roots)}" if roots else
             f"no bundle is set ({bundle.BUNDLE})")
    return RuntimeError(
        f"kernel {kernel_label(func)} must be compiled, and the Cython backend needs a C++ "
        f"compiler: none was found ($CXX, $CC, or g++, clang++, c++ on PATH); {where}. Install one (g++), or "
        "serve the kernel from a bundle built where one is (tilelang-paddle bundle, docs/deploying.md)")
