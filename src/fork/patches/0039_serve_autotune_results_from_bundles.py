"""Look up autotune results in the bundles before the writable autotune cache.

File: tilelang/autotuner/tuner.py. Upstream's tuner reads a finished result (the
picked config, the kernel and its latency) from ``<cache>/autotuner/<key>`` only,
so a serving host with a bundle and no compiler re-ran the whole tuning, compiles
included. ``AutoTuner._load_result_from_disk`` now tries each bundle's
``autotune/<key>`` whose files match the manifest
(``tilelang.paddle_runtime.bundle.autotune_dirs``) first; the writable cache is
asked as before when none has it. Where neither has the result and the host
cannot compile the configs, ``autotune_missing`` raises naming the kernel and
the key fields in which the bundles' results of that kernel differ (tuning
would only fail config by config). ``tilelang-paddle bundle`` copies the
results a run tuned into ``OUT/autotune``.
"""

from ..patching import Edit, Patch

PATCH = Patch(
    name="0039_serve_autotune_results_from_bundles",
    file="tilelang/autotuner/tuner.py",
    reason="a bundle could not carry an autotuned kernel: serving re-tuned (and compiled) it",
    edits=(
        Edit('    def _load_result_from_disk(self, key) -> AutotuneResult:\n'
             '        result = AutotuneResult.load_from_disk(self.cache_dir / key, self.compile_args)\n'
             '        return result\n',
             '    def _load_result_from_disk(self, key) -> AutotuneResult:\n'
             '        from tilelang.paddle_runtime import bundle as _tlp_bundle  # tilelang-paddle patch 0039\n\n'
             '        for path in _tlp_bundle.autotune_dirs(key):\n'
             '            result = AutotuneResult.load_from_disk(Path(path), self.compile_args)\n'
             '            if result is not None:\n'
             '                return result\n'
             '        result = AutotuneResult.load_from_disk(self.cache_dir / key, self.compile_args)\n'
             '        if result is None:\n'
             '            _tlp_bundle.autotune_missing(key)\n'
             '        return result\n'),
    ),
    forwarded="no",
    checked_against=("0.1.15",),
    drop_when="upstream's autotuner reads read-only result caches",
)
