"""CRC-32C (Castagnoli), the checksum of every vrlog block (docs/log-format.md).

crc32c() uses the C-backed ``crc32c`` package from PyPI (a dependency of
vrlog: SSE4.2 / ARMv8 CRC instructions, GB/s, any bytes-like object
without a copy, the GIL released) when it is installed. Without it the
checksum falls back to the code below, which is exact but slow:

Pure Python is a table loop (~15 MB/s). With numpy, a long buffer is cut
into lanes that are checksummed side by side, one numpy step per byte
column, and the lanes' CRCs are then combined exactly: a CRC register is
linear over GF(2), so the register after ``A || B`` is the register after
``A`` carried through ``len(B)`` zero bytes, xor the register of ``B`` alone.
"""

from __future__ import annotations

try:
    import numpy as _np
except ImportError:  # pragma: no cover - exercised by the no-numpy test run
    _np = None

try:
    import crc32c as _c_crc32c
except ImportError:  # pragma: no cover - exercised by the fallback test
    _c_crc32c = None

_POLY = 0x82F63B78  # reflected Castagnoli polynomial


def _make_table() -> list[int]:
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ _POLY if c & 1 else c >> 1
        t.append(c)
    return t


_TABLE = _make_table()


def _update(reg: int, data) -> int:
    """Run the register over data (no initial or final inversion)."""
    t = _TABLE
    for b in data:
        reg = t[(reg ^ b) & 0xFF] ^ (reg >> 8)
    return reg


def crc32c_py(data) -> int:
    """CRC-32C of data in pure Python."""
    return _update(0xFFFFFFFF, memoryview(data).cast("B")) ^ 0xFFFFFFFF


# ---- the numpy lanes ----

def _apply(cols: list[int], v: int) -> int:
    """Apply a GF(2) linear map, given by the images of the 32 unit vectors."""
    out = 0
    i = 0
    while v:
        if v & 1:
            out ^= cols[i]
        v >>= 1
        i += 1
    return out


def _compose(a: list[int], b: list[int]) -> list[int]:
    return [_apply(a, c) for c in b]


_ZERO1 = [_update(1 << i, b"\0") for i in range(32)]  # one zero byte
_zero_maps: dict[int, list[int]] = {}
_zero_tables: dict[int, object] = {}


def _zeros_map(n: int) -> list[int]:
    """The map that carries a register through n zero bytes."""
    m = _zero_maps.get(n)
    if m is None:
        result = [1 << i for i in range(32)]
        sq, k = _ZERO1, n
        while k:
            if k & 1:
                result = _compose(sq, result)
            k >>= 1
            if k:
                sq = _compose(sq, sq)
        _zero_maps[n] = m = result
    return m


def _zeros_tables(n: int):
    """_zeros_map(n) as four 256-entry tables, one per register byte."""
    t = _zero_tables.get(n)
    if t is None:
        cols = _zeros_map(n)
        t = _np.zeros((4, 256), dtype=_np.uint32)
        for b in range(4):
            for x in range(256):
                t[b, x] = _apply(cols, x << (8 * b))
        _zero_tables[n] = t
    return t


_WIDTH = 64  # bytes per lane: 64 numpy steps whatever the length
_NP_MIN = 4096  # below this the table loop is as fast


def crc32c_fallback(data) -> int:
    """CRC-32C of a bytes-like object without the crc32c package: numpy
    lanes for long buffers where numpy is installed, else a table loop."""
    mv = memoryview(data).cast("B")
    n = len(mv)
    if _np is None or n < _NP_MIN:
        return _update(0xFFFFFFFF, mv) ^ 0xFFFFFFFF
    used = n // _WIDTH
    lanes = 1 << (used - 1).bit_length()  # a power of two; leading zero lanes add nothing
    arr = _np.frombuffer(mv, dtype=_np.uint8)
    cols = _np.zeros((_WIDTH, lanes), dtype=_np.uint8)
    cols[:, lanes - used:] = arr[: used * _WIDTH].reshape(used, _WIDTH).T
    table = _np.array(_TABLE, dtype=_np.uint32)
    reg = _np.zeros(lanes, dtype=_np.uint32)
    reg[lanes - used] = 0xFFFFFFFF
    for row in cols:
        reg = table[(reg ^ row) & 0xFF] ^ (reg >> 8)
    # Combine neighbours pairwise: the left one is carried through the right
    # one's length of zeros.
    span = _WIDTH
    while len(reg) > 1:
        z = _zeros_tables(span)
        left, right = reg[0::2], reg[1::2]
        reg = (z[0][left & 0xFF] ^ z[1][(left >> 8) & 0xFF] ^ z[2][(left >> 16) & 0xFF] ^ z[3][left >> 24]) ^ right
        span *= 2
    r = _update(int(reg[0]), mv[used * _WIDTH:])
    return r ^ 0xFFFFFFFF


if _c_crc32c is not None:
    IMPLEMENTATION = "crc32c"

    def crc32c(data) -> int:
        """CRC-32C of a bytes-like object (the crc32c package)."""
        return _c_crc32c.crc32c(data)
else:  # pragma: no cover - exercised by the fallback test
    IMPLEMENTATION = "numpy" if _np is not None else "python"
    crc32c = crc32c_fallback
