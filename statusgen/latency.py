"""A small log-scale latency histogram, compact enough to keep per bucket.

Bin 0 holds answers under 1 ms; bin i (1..MAX_BIN) holds [G**(i-1), G**i) ms
with G = 1.1, so a percentile read back is within 5% of the true value.
Encoded sparsely as (bin: 1 byte, count: LEB128 varint) pairs.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

GROWTH = 1.1
MAX_BIN = 255
_LOG_G = math.log(GROWTH)

Histogram = dict[int, int]


def bin_of(ms: float) -> int:
    if ms < 1.0:
        return 0
    return min(MAX_BIN, 1 + int(math.log(ms) / _LOG_G))


def bin_value(b: int) -> float:
    """The representative latency of a bin: its geometric midpoint."""
    if b == 0:
        return 0.5
    return float(GROWTH ** (b - 0.5))


def add(hist: Histogram, values: Iterable[float]) -> Histogram:
    for v in values:
        b = bin_of(v)
        hist[b] = hist.get(b, 0) + 1
    return hist


def merge(into: Histogram, other: Histogram) -> Histogram:
    for b, n in other.items():
        into[b] = into.get(b, 0) + n
    return into


def percentile(hist: Histogram, q: float) -> float | None:
    total = sum(hist.values())
    if not total:
        return None
    rank = q * total
    seen = 0
    for b in sorted(hist):
        seen += hist[b]
        if seen >= rank:
            return round(bin_value(b), 1)
    return round(bin_value(max(hist)), 1)


def encode(hist: Histogram) -> bytes:
    out = bytearray()
    for b in sorted(hist):
        out.append(b)
        n = hist[b]
        if n < 0:
            raise ValueError(f"latency histogram: bin {b} holds a negative count ({n})")
        while True:
            byte = n & 0x7F
            n >>= 7
            out.append(byte | (0x80 if n else 0))
            if not n:
                break
    return bytes(out)


def merge_encoded(into: Histogram, blob: bytes | None) -> Histogram:
    """``merge(into, decode(blob))`` in one pass, with a quick way for a count of one byte (most
    are): a range's summary merges the histograms of its buckets."""
    if not blob:
        return into
    i, end = 0, len(blob)
    while i < end:
        b, n = blob[i], blob[i + 1]
        i += 2
        if n & 0x80:
            n &= 0x7F
            shift = 7
            while True:
                byte = blob[i]
                i += 1
                n |= (byte & 0x7F) << shift
                shift += 7
                if not byte & 0x80:
                    break
        into[b] = into.get(b, 0) + n
    return into


def decode(blob: bytes | None) -> Histogram:
    return merge_encoded({}, blob)  # each bin is encoded once
