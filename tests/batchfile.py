"""Batch files made by hand, as docs/locations.md describes the format, for the tests to send
what no agent of ours would: any body, signed with any key. Written apart from
``statusgen.batches`` so that a change of its format shows here as a failure."""

from __future__ import annotations

import hashlib
import hmac
import struct
import zlib

import orjson

FORMAT = "statusgen-batch/2"


def signed(name: str, body: bytes, key: bytes) -> bytes:
    """A gzip file (RFC 1952) of ``body`` whose header's extra field ``SG`` holds the hex
    HMAC-SHA256 of the format, the name and every byte after the header."""
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
    payload = deflate.compress(body) + deflate.flush() + struct.pack("<II", zlib.crc32(body), len(body) & 0xFFFFFFFF)
    mac = hmac.new(key, f"{FORMAT}\n{name}\n".encode() + payload, hashlib.sha256).hexdigest().encode()
    extra = b"SG" + struct.pack("<H", len(mac)) + mac
    return b"\x1f\x8b\x08\x04" + bytes(4) + b"\x00\xff" + struct.pack("<H", len(extra)) + extra + payload


def header(location: str, name: str, sent_at: str, count: int, canaries: list[object] | None = None) -> bytes:
    line = {
        "format": FORMAT,
        "location": location,
        "name": name,
        "sent_at": sent_at,
        "count": count,
        "canaries": canaries or [],
    }
    return orjson.dumps(line) + b"\n"


def result(service: str, check: int, ts: str, /, **fields: object) -> dict[str, object]:
    line: dict[str, object] = {
        "service": service,
        "check": check,
        "ts": ts,
        "outcome": "ok",
        "latency_ms": 12.5,
        "http_status": 200,
        "slow": False,
        "detail": None,
    }
    return line | fields


def lines(*results: dict[str, object]) -> bytes:
    return b"".join(orjson.dumps(r) + b"\n" for r in results)
