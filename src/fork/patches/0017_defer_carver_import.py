"""Load the carver (TileLang's schedule-template package) on first use, not in ``import tilelang``.

File: tilelang/language/tile_schedule.py. Its only use of the carver is
``driver.get_num_sms()`` inside persistent-kernel helpers, but the module-level
``from tilelang.carver.arch import driver`` imports the whole ``tilelang.carver``
package (roller policies, common schedules) on every ``import tilelang``: about
0.19 s of 1.5 s on our 2-core machine (``python -X importtime``, bench/bench_import.py).
A module-level proxy imports it at the first attribute access instead.
"""

from ..patching import Edit, Patch

PATCH = Patch(
    name="0017_defer_carver_import",
    file="tilelang/language/tile_schedule.py",
    reason="import tilelang pays ~0.2 s for a package only persistent-kernel helpers use",
    edits=(
        Edit(
            "from tilelang.carver.arch import driver\n",
            "class _LazyCarverDriver:  # tilelang-paddle patch 0017: the carver loads on first use\n"
            "    def __getattr__(self, name):\n"
            "        from tilelang.carver.arch import driver as _driver\n\n"
            "        return getattr(_driver, name)\n\n\n"
            "driver = _LazyCarverDriver()\n",
        ),
    ),
    checked_against=("0.1.15",),
    drop_when="upstream imports the carver lazily",
)
