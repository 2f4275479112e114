"""Look up autotune results in the bundles before the writable autotune cache.

File: tilelang/autotuner/tuner.py. Upstream's tuner reads a finished result (the
picked config, the kernel and its latency) from ``<cache>/autotuner/<key>`` only,
so a serving host with a bundle and no compiler re-ran the whole tuning, compiles
included. ``AutoTuner._load_result_from_disk`` now goes through
``tilelang.paddle_runtime.cache.tuned.load``: each bundle's ``autotune/<key>``
whose files match the manifest first, then the writable entry (named as a
kernel's is, by key and build tools: patch 0047). Where neither has the result
and the host cannot compile the configs, it raises naming the kernel and the
key fields in which the bundles' results of that kernel differ (tuning would
only fail config by config). A loaded result's kernel is named by the decorated
function, as a freshly tuned one is. ``tilelang-paddle bundle`` copies the
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
             '        from tilelang.paddle_runtime.cache import tuned as _tlp_tuned  # tilelang-paddle patch 0039\n\n'
             '        return _tlp_tuned.load(key, self.cache_dir,\n'
             '                               lambda path: AutotuneResult.load_from_disk(Path(path),\n'
             '                                                                          self.compile_args))\n'),
    ),
    forwarded="no",
    checked_against=("0.1.15",),
    drop_when="upstream's autotuner reads read-only result caches",
)
