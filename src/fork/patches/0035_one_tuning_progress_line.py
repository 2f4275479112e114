"""The autotuner shows one progress line, not two bars redrawn over each other.

File: tilelang/autotuner/tuner.py. Upstream's tuning loop draws a compile bar
and a benchmark bar from several threads and ``tqdm.write``s a line per
config between them; on a terminal (and in a job's log) they tangle. Both bars
now come from ``tilelang.paddle_runtime.tuning_progress.bars``: one bar, the
compile count in its description; the per-config latencies and the note on how
benchmark timeouts are enforced (a WARNING on every run, though nothing is
wrong) go to the tuner's log file at DEBUG, where upstream already writes them.
"""

from ..patching import Edit, Patch

PATCH = Patch(
    name="0035_one_tuning_progress_line",
    file="tilelang/autotuner/tuner.py",
    reason="two tqdm bars from several threads and a line per config tangled the autotuner's output",
    edits=(
        Edit('        compile_progress = tqdm(total=len(config_args), desc=compile_desc)\n'
             '        progress_bar = tqdm(total=len(config_args), desc="Bench configurations")\n',
             '        from tilelang.paddle_runtime.tuning_progress import bars as _tlp_bars\n\n'
             '        compile_progress, progress_bar = _tlp_bars(len(config_args), compile_desc)\n'),
        Edit('            tqdm.write(f"Tuned Latency {latency} with config {self.configs[idx]} at index {idx}")\n',
             '            logger.debug(f"Tuned Latency {latency} with config {self.configs[idx]} at index {idx}")\n'),
        Edit('            logger.warning(\n'
             '                "Benchmark timeout is enforced in benchmark workers',
             '            logger.debug(\n'
             '                "Benchmark timeout is enforced in benchmark workers'),
    ),
    forwarded="no",
    checked_against=("0.1.15",),
    drop_when="upstream's tuner draws one progress display",
)
