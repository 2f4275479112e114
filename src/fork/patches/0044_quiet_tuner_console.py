"""The autotuner's console log follows ``TILELANG_PADDLE_LOG_LEVEL`` (WARNING by default), not INFO.

File: tilelang/autotuner/tuner.py. The tuner's logger does not propagate to
the ``tilelang`` logger (patch 0016's level): ``_init_logger_handlers`` gives it
a console handler of its own at INFO, so every tuning printed
``Auto-tuning with 0.9 CPU utilizations, 2 CPUs available, 1 CPUs will be used``
beside the one progress line (patch 0035). The console handler now starts at
``tilelang.paddle_runtime.settings.log_level()``; ``autotuner.log`` still gets
everything (DEBUG), as upstream writes it.
"""

from ..patching import Edit, Patch

PATCH = Patch(
    name="0044_quiet_tuner_console",
    file="tilelang/autotuner/tuner.py",
    reason="every tuning printed upstream's INFO records beside the progress line",
    edits=(
        Edit('    console_handler.setLevel(logging.INFO)\n',
             '    from tilelang.paddle_runtime import settings as _tlp_settings  # tilelang-paddle patch 0044\n\n'
             '    console_handler.setLevel(_tlp_settings.log_level())\n'),
    ),
    forwarded="not-needed",
    checked_against=("0.1.15",),
    drop_when="upstream's tuner logs to the console at the tilelang logger's level",
)
