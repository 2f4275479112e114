"""What patched upstream modules call ``torch``: Paddle's proxy plus the names it lacks.

Paddle's torch proxy (``paddle.enable_compat``) maps ``torch.X`` to ``paddle.X``.
A few names upstream TileLang relies on do not survive that mapping in Paddle
3.3: ``torch.device`` is a module (neither callable nor a type), and
``torch.cuda.synchronize``/``torch.cuda.device`` fail on a CPU-only build
where upstream expects them to be harmless. Patches rebind ``torch`` in
selected upstream modules to :func:`wrap` of the proxy; every other attribute
passes through unchanged, and nothing outside those modules is affected.
"""

from __future__ import annotations

import contextlib

import paddle

from . import device as _device
from .device import DeviceSpec
from .driver import paddle_driver
from .tensors import empty as _empty


class _DeviceMeta(type):
    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, (DeviceSpec, _DRIVER.device_type))


class device(metaclass=_DeviceMeta):  # noqa: N801 - mirrors torch.device
    """``torch.device(spec[, index])`` -> :class:`DeviceSpec`; ``isinstance`` accepts Paddle devices too."""

    def __new__(cls, spec, index: int | None = None) -> DeviceSpec:  # type: ignore[misc]
        if isinstance(spec, DeviceSpec):
            return spec
        if isinstance(spec, int):
            return DeviceSpec("cuda", spec)
        return _device.expected_device(str(spec), index)


_DRIVER = paddle_driver()


def _gpu_count() -> int:
    return _DRIVER.device_count()


@contextlib.contextmanager
def _on_gpu(index: int):
    """``torch.cuda.device(i)``: GPU ``index`` current inside, the previous one restored after."""
    previous = _DRIVER.current_gpu()
    if previous != index:
        _DRIVER.set_gpu(index)
    try:
        yield
    finally:
        if previous != index and previous >= 0:
            _DRIVER.set_gpu(previous)


class _Cached:
    """Attribute pass-through that remembers each lookup.

    Paddle's proxy resolves every ``torch.X`` in Python (microseconds each);
    the launcher touches ``torch.Tensor`` and a dozen dtypes per call, so each
    name is resolved once and then read from the instance dict.
    """

    def __init__(self, proxy):
        self._proxy = proxy

    def __getattr__(self, name):
        value = getattr(self._proxy, name)
        setattr(self, name, value)
        return value


class _Cuda(_Cached):
    """``torch.cuda`` with CPU-safe synchronize/device and the private names upstream probes."""

    @staticmethod
    def is_available() -> bool:
        return _gpu_count() > 0

    @staticmethod
    def synchronize(device=None) -> None:
        # A CPU kernel is synchronous: nothing to wait for without a GPU.
        if _gpu_count() > 0:
            _device.synchronize(device)

    @staticmethod
    def device(dev):
        if _gpu_count() == 0:
            return contextlib.nullcontext()
        spec = _device.device_of(dev)
        return _on_gpu(spec.index if spec.index is not None else _device.current_device_index())

    @staticmethod
    def current_device() -> int:
        return _device.current_device_index()

    @staticmethod
    def _lazy_init() -> None:
        pass  # Paddle initialises CUDA itself


def empty(*size, dtype=None, device=None, **_ignored):
    """``torch.empty(*size, dtype=, device=)`` on the given device; every Paddle dtype (see tensors.empty)."""
    shape = list(size[0]) if len(size) == 1 and isinstance(size[0], (list, tuple)) else list(size)
    return _empty(shape, dtype if dtype is not None else paddle.float32, device if device is not None else "cpu")


class _Torch(_Cached):
    def __init__(self, proxy):
        super().__init__(proxy)
        self.device = device
        self.empty = empty
        self.cuda = _Cuda(proxy.cuda)


def wrap(proxy):
    """Return ``proxy`` (Paddle's ``torch``) with the names above fixed; idempotent."""
    return proxy if isinstance(proxy, _Torch) else _Torch(proxy)
