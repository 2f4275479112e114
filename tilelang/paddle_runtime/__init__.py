"""The Paddle control plane of tilelang-paddle.

Everything upstream TileLang asked of PyTorch at run time, answered by Paddle:
libcudart preload (:mod:`.preload`), import set-up (:mod:`.bootstrap`), device
and stream (:mod:`.device`), dtypes (:mod:`.dtypes`), tensor creation
(:mod:`.tensors`). Upstream files reach it only through the patches in
``src/fork/patches``. ``python -m tilelang.paddle_runtime doctor`` prints the
state of an install.
"""
