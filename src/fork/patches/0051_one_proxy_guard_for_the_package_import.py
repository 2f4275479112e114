"""``import tilelang`` removes the torch proxies its modules imported once, at its end.

File: tilelang/__init__.py. Paddle's scoped proxy runs each ``tilelang`` module
under a guard that scans all of ``sys.modules`` four times (finding the module
and running it, ``paddle/compat/proxy.py``), about 600 times during
``import tilelang``. While the package initialises,
``tilelang.paddle_runtime.torch_scope`` finds its modules without the guard,
flagged for the proxy before they run, and leaves the proxies they import in
``sys.modules``; this patch's call at the end of ``tilelang/__init__.py``
removes them (``torch_scope.end_package_import``), so code after
``import tilelang`` sees no ``torch``, as with the guards.
"""

from ..patching import Edit, Patch

END = ("    _install_pass_diff_hook()\n"
       "    del _install_pass_diff_hook\n")

PATCH = Patch(
    name="0051_one_proxy_guard_for_the_package_import",
    file="tilelang/__init__.py",
    reason="import tilelang paid Paddle's sys.modules scans around each of its ~600 modules",
    edits=(
        Edit(END, END + "\n"
                        "# tilelang-paddle patch 0051: the proxies this package's modules imported leave sys.modules\n"
                        "from .paddle_runtime import torch_scope as _tlp_torch_scope  # noqa: E402\n\n"
                        "_tlp_torch_scope.end_package_import()\n"
                        "del _tlp_torch_scope\n"),
    ),
    forwarded="not-needed",
    checked_against=("0.1.15",),
    drop_when="Paddle's scoped proxy stops scanning sys.modules per module",
)
