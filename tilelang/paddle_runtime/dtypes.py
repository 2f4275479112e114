"""TileLang dtype <-> Paddle dtype, by identity (never by ``str()``).

``str(paddle.uint16)`` prints ``paddle.bfloat16``, so any mapping that goes
through strings confuses the two; this module maps on dtype objects and
TileLang dtype names only.
"""

from __future__ import annotations

import paddle

# TileLang name -> Paddle dtype. Names are TileLang's (tvm) spellings.
_TO_PADDLE = {
    "bool": paddle.bool,
    "int8": paddle.int8,
    "int16": paddle.int16,
    "int32": paddle.int32,
    "int64": paddle.int64,
    "uint8": paddle.uint8,
    "uint16": paddle.uint16,
    "uint32": paddle.uint32,
    "uint64": paddle.uint64,
    "float16": paddle.float16,
    "bfloat16": paddle.bfloat16,
    "float32": paddle.float32,
    "float64": paddle.float64,
    "float8_e4m3fn": paddle.float8_e4m3fn,
    # TileLang's CUDA e4m3 is the "fn" variant (no infinities), as upstream maps it.
    "float8_e4m3": paddle.float8_e4m3fn,
    "float8_e5m2": paddle.float8_e5m2,
    "complex64": paddle.complex64,
    "complex128": paddle.complex128,
    "custom[tfloat32]": paddle.float32,
}

# Sub-byte types Paddle (like torch < 2.8) stores in a byte container, as upstream does.
_STORAGE = {"int4": paddle.int8, "uint4": paddle.uint8, "float4_e2m1fn": paddle.int8}

# TileLang types with no Paddle counterpart at all.
_MISSING = {
    "float8_e4m3fnuz": "AMD's e4m3fnuz",
    "e4m3fnuz_float8": "AMD's e4m3fnuz",
    "float8_e5m2fnuz": "AMD's e5m2fnuz",
    "float8_e8m0fnu": "the e8m0 scale type",
    "float4_e2m1fnx2": "packed float4",
}

_FROM_PADDLE = {}
for _name, _dt in _TO_PADDLE.items():
    _FROM_PADDLE.setdefault(_dt, _name)


def paddle_dtypes() -> list[str]:
    """TileLang dtype names that map to a Paddle dtype one-to-one."""
    return [n for n in _TO_PADDLE if n not in ("float8_e4m3", "custom[tfloat32]")]


def to_paddle(tl_dtype):
    """Paddle dtype for a TileLang dtype (or its name); TypeError naming the dtype if Paddle has none."""
    name = str(tl_dtype)
    if name in _TO_PADDLE:
        return _TO_PADDLE[name]
    if name in _STORAGE:
        return _STORAGE[name]
    if name == "handle":
        return None
    if name in _MISSING:
        raise TypeError(
            f"TileLang dtype {name} ({_MISSING[name]}) has no PaddlePaddle equivalent; "
            f"Paddle {paddle.__version__} tensors can be one of: {', '.join(paddle_dtypes())}"
        )
    raise TypeError(f"TileLang dtype {name!r} cannot be converted to a Paddle dtype; supported: {', '.join(paddle_dtypes())}")


def from_paddle(pd_dtype) -> str:
    """TileLang dtype name for a Paddle dtype (by identity)."""
    try:
        return _FROM_PADDLE[pd_dtype]
    except (KeyError, TypeError):
        raise TypeError(f"{pd_dtype!r} is not a Paddle dtype TileLang supports; supported: {', '.join(paddle_dtypes())}") from None


def name(pd_dtype) -> str:
    """Readable name of a Paddle dtype for messages (``uint16`` stays ``uint16``)."""
    return _FROM_PADDLE.get(pd_dtype, str(pd_dtype)) if pd_dtype is not None else "None"


def as_torch(self):
    """Replacement for upstream's ``tilelang.language.dtypes.dtype.as_torch`` (returns a Paddle dtype)."""
    return to_paddle(self)
