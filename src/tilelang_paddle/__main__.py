"""``python -m tilelang_paddle ...``: the same as the ``tilelang-paddle`` command."""

import sys

from .cli import main

sys.exit(main(prog="python -m tilelang_paddle"))
