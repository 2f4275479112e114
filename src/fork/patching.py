"""The patch model: named, anchored, zero-fuzz edits of one upstream file.

A patch changes one upstream file for one stated reason. Each edit names an
exact ``anchor`` that must occur exactly ``count`` times in the pristine file;
otherwise upstream drifted and the build stops with :class:`PatchDrift`
naming the patch, the file, the anchor and the upstream version. A marker line
written into the patched file makes re-applying a no-op (idempotent).
"""

from __future__ import annotations

from dataclasses import dataclass

MARKER = "tilelang-paddle patch"


class PatchDrift(RuntimeError):
    """A patch's precondition failed: upstream no longer looks as the patch expects."""


@dataclass(frozen=True)
class Edit:
    anchor: str
    replacement: str
    count: int = 1


@dataclass(frozen=True)
class Patch:
    name: str  # NNNN_verb_target, as the module is named
    file: str  # path inside the wheel, e.g. "tilelang/utils/device.py"
    reason: str  # one line: why the fork needs it
    edits: tuple[Edit, ...]
    forwarded: str = "no"  # upstream PR/issue URL, "no", or "not-needed"
    checked_against: tuple[str, ...] = ()  # upstream versions whose file it was written against
    drop_when: str = ""  # the condition under which the patch can be deleted

    @property
    def marker(self) -> str:
        comment = "//" if self.file.endswith((".cc", ".h", ".cu")) else "#"
        return f"{comment} {MARKER} {self.name}"

    def problems(self, text: str) -> list[str]:
        """Return why this patch cannot apply to ``text`` (empty when it can)."""
        out = []
        for i, edit in enumerate(self.edits, 1):
            seen = text.count(edit.anchor)
            if seen != edit.count:
                first = edit.anchor.strip().splitlines()[0] if edit.anchor.strip() else repr(edit.anchor)
                out.append(f"edit {i}: anchor {first!r} found {seen} time(s), expected {edit.count}")
        return out

    def is_applied(self, text: str) -> bool:
        return self.marker in text

    def apply(self, text: str, upstream_version: str) -> str:
        if self.is_applied(text):
            return text
        problems = self.problems(text)
        if problems:
            raise PatchDrift(
                f"patch {self.name} no longer applies to {self.file} of upstream tilelang {upstream_version}:\n  "
                + "\n  ".join(problems)
                + f"\nReason for the patch: {self.reason}\n"
                "Read the new upstream file, then update the anchors in "
                f"src/fork/patches/{self.name}.py (or drop the patch if upstream fixed it). "
                "Nothing was skipped; the staging directory is left as it was for inspection."
            )
        for edit in self.edits:
            text = text.replace(edit.anchor, edit.replacement)
        sep = "" if text.endswith("\n") else "\n"
        return f"{text}{sep}{self.marker}\n"


TORCH_IMPORT = "import torch\n"


def rebind_torch(name: str, file: str, reason: str, extra_edits: tuple[Edit, ...] = (), **kw) -> Patch:
    """A patch that makes ``torch`` in one upstream module mean Paddle's proxy plus our shim.

    The module-level ``import torch`` must occur exactly once (an indented one
    would count too, and fail the precondition: look before widening the patch).
    """
    return Patch(
        name=name,
        file=file,
        reason=reason,
        edits=(
            Edit(
                TORCH_IMPORT,
                TORCH_IMPORT + "from tilelang.paddle_runtime.torch_shim import wrap as _wrap_torch  # noqa: E402\n\n"
                "torch = _wrap_torch(torch)\n",
            ),
            *extra_edits,
        ),
        **kw,
    )
