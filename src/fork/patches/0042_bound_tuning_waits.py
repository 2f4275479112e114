"""The autotuner's compile threads honour the lock timeout, and a timed-out wait stops the tuning.

File: tilelang/autotuner/tuner.py. A config's compile waits on the kernel
cache's lock while another process compiles the same key (patch 0024). The
tuner's compile threads did not see ``prewarm(timeout=...)`` (a context
variable; the pool's threads start with an empty context), so an autotuned
build waited toward the 900 s default; and a wait that did time out
(``TILELANG_PADDLE_LOCK_TIMEOUT``) was one more failed config, so the tuner
picked among the rest. Each compile unit now runs in a copy of the caller's
context (``tilelang.paddle_runtime.tuning_waits.in_caller_context``), and a
``TimeoutError`` among the compile results raises (``stop_on_timeout``).
"""

from ..patching import Edit, Patch

PATCH = Patch(
    name="0042_bound_tuning_waits",
    file="tilelang/autotuner/tuner.py",
    reason="an autotuned build waited past prewarm's timeout, and a timed-out wait silently dropped a config",
    edits=(
        Edit('            future = pool.submit(compile_unit, unit_items, per_pc)\n',
             '            from tilelang.paddle_runtime import tuning_waits as _tlp_waits  # tilelang-paddle patch 0042\n\n'
             '            future = pool.submit(*_tlp_waits.in_caller_context(compile_unit), unit_items, per_pc)\n'),
        Edit('                        logger.debug("Compilation unit failed for indexes %s with error: %s", '
             'unit_indexes, e)\n',
             '                        from tilelang.paddle_runtime import tuning_waits as _tlp_waits\n\n'
             '                        _tlp_waits.stop_on_timeout(e, self.fn, [self.configs[i] for i in unit_indexes])\n'
             '                        logger.debug("Compilation unit failed for indexes %s with error: %s", '
             'unit_indexes, e)\n'),
        Edit('                        if error is not None:\n'
             '                            logger.debug(f"Compilation failed for config {self.configs[idx]} at index '
             '{idx} with error: {error}")\n',
             '                        if error is not None:\n'
             '                            from tilelang.paddle_runtime import tuning_waits as _tlp_waits\n\n'
             '                            _tlp_waits.stop_on_timeout(error, self.fn, self.configs[idx])\n'
             '                            logger.debug(f"Compilation failed for config {self.configs[idx]} at index '
             '{idx} with error: {error}")\n'),
    ),
    forwarded="no",
    checked_against=("0.1.15",),
    drop_when="never: the lock and its timeout are ours (patch 0024)",
)
