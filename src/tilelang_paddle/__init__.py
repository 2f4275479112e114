"""The ``tilelang-paddle`` command (``python -m tilelang_paddle``): diagnosing an install.

It lives outside the ``tilelang`` package on purpose: importing anything under
``tilelang`` runs its set-up (Paddle, the torch proxy, the CUDA runtime), which
is exactly what may be broken when the doctor is needed. This package imports
nothing at import time.
"""
