"""One progress line for the autotuner (patch 0035).

Upstream's tuner draws two tqdm bars at once, compiling and benchmarking, from
several threads, and writes a "Tuned Latency ..." line between them for every
config: on a terminal the bars redraw over each other and the per-config lines
interleave with them. Here one bar counts benchmarked configs, its description
counts compiled ones and its postfix keeps upstream's best latency; the
per-config latencies go to the tuner's log (``autotuner.log``, upstream's file).
"""

from __future__ import annotations

from tqdm.auto import tqdm


class _CompileCount:
    """Stands in for upstream's compile bar: ``update(n)`` counts into the shared bar's description."""

    def __init__(self, bar, total: int, desc: str):
        self._bar, self._total, self._desc, self.n = bar, total, desc, 0

    def describe(self) -> str:
        return f"{self._desc} {self.n}/{self._total}, benchmarked"

    def update(self, n: int = 1) -> None:
        self.n += n
        self._bar.set_description(self.describe(), refresh=True)

    def close(self) -> None:
        pass  # the shared bar is closed by upstream's close of the benchmark bar


def bars(total: int, compile_desc: str):
    """``(compile_progress, progress_bar)`` for upstream's tuning loop, drawn as one line."""
    desc = "Tuning: compiled (grouped)" if "grouped" in compile_desc else "Tuning: compiled"
    bar = tqdm(total=total, desc=f"{desc} 0/{total}, benchmarked")
    return _CompileCount(bar, total, desc), bar
