"""Running checks and reporting them: one line each, and the JSON a bug report attaches.

A check is a function of no arguments that returns a short detail (or None)
when the contract held. It raises :class:`Skip` when it cannot run here (the
reason is printed), and :class:`Failed` (or any other exception) when the
contract broke: the line then says what differed and the API relied on.
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import asdict, dataclass, field


class Skip(Exception):
    """The check cannot run here; the message says why."""


class Failed(AssertionError):
    """The contract broke: ``what`` differed; ``relied_on`` names the framework API the check exercised."""

    def __init__(self, what: str, relied_on: str = ""):
        super().__init__(what)
        self.what, self.relied_on = what, relied_on


@dataclass
class Result:
    name: str
    status: str  # PASS, FAIL or SKIP
    seconds: float
    detail: str = ""
    relied_on: str = ""


@dataclass
class Report:
    """Every check's result, and the facts they ran on; written to ``json_path`` after each check."""

    facts: dict = field(default_factory=dict)
    results: list[Result] = field(default_factory=list)
    json_path: str | None = None
    stream: object = None

    def run(self, name: str, check: Callable[[], str | None], relied_on: str = "") -> Result:
        """Run one check, print its line and save the report (a crash later still leaves this line on disk)."""
        out = self.stream or sys.stdout
        print(f"{name} ...", end=" ", file=out, flush=True)
        self._save(running=name)
        start = time.perf_counter()
        try:
            detail = check() or ""
            result = Result(name, "PASS", 0.0, detail)
        except Skip as exc:
            result = Result(name, "SKIP", 0.0, str(exc))
        except Failed as exc:
            result = Result(name, "FAIL", 0.0, exc.what, exc.relied_on or relied_on)
        except Exception as exc:  # noqa: BLE001 - a check's error is its failure, reported with where it came from
            where = traceback.extract_tb(exc.__traceback__)[-1]
            result = Result(name, "FAIL", 0.0, f"{type(exc).__name__}: {_first_lines(exc)} "
                                               f"(at {os.path.basename(where.filename)}:{where.lineno})", relied_on)
        result.seconds = round(time.perf_counter() - start, 3)
        self.results.append(result)
        line = f"{result.status} ({result.seconds:.1f} s)"
        if result.detail:
            line += f" {result.detail}"
        if result.status == "FAIL" and result.relied_on:
            line += f"\n    relied on: {result.relied_on}"
        print(line, file=out, flush=True)
        self._save()
        return result

    @property
    def failed(self) -> list[Result]:
        return [r for r in self.results if r.status == "FAIL"]

    def summary(self) -> str:
        counts = {s: sum(r.status == s for r in self.results) for s in ("PASS", "FAIL", "SKIP")}
        return f"{counts['PASS']} passed, {counts['FAIL']} failed, {counts['SKIP']} skipped"

    def _save(self, running: str | None = None) -> None:
        if not self.json_path:
            return
        data = {"ok": not self.failed and running is None, "facts": self.facts,
                "checks": [asdict(r) for r in self.results]}
        if running is not None:
            data["running"] = running  # left in the file only if the process died inside this check
        tmp = self.json_path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(data, f, indent=2)
        os.replace(tmp, self.json_path)


def _first_lines(exc: BaseException, limit: int = 3) -> str:
    lines = [ln for ln in str(exc).strip().splitlines() if ln.strip()]
    return " / ".join(lines[:limit]) + (" ..." if len(lines) > limit else "")
