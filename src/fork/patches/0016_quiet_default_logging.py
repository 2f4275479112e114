"""Start the ``tilelang`` logger at WARNING (``TILELANG_PADDLE_LOG_LEVEL`` to change it).

File: tilelang/__init__.py. Upstream's ``_init_logger`` sets INFO, so every
compile, cache hit and autotuner step of an installed package prints a log line
to stderr. We read the start level from
``tilelang.paddle_runtime.settings.log_level()`` (default WARNING; ``INFO`` or
``DEBUG`` bring upstream's logs back). ``tilelang.set_log_level`` is unchanged.
"""

from ..patching import Edit, Patch

PATCH = Patch(
    name="0016_quiet_default_logging",
    file="tilelang/__init__.py",
    reason="an installed package logs warnings and errors, not every compile; TILELANG_PADDLE_LOG_LEVEL",
    edits=(
        Edit(
            '    set_log_level("INFO")\n',
            "    from .paddle_runtime import settings as _settings\n\n"
            "    set_log_level(_settings.log_level())\n",
        ),
    ),
    checked_against=("0.1.15",),
    drop_when="upstream's default is WARNING or configurable from the environment",
)
