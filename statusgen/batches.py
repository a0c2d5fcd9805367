"""A location's batch: what one agent run delivers to the inbox, and how the builder checks it.

A batch is one gzip file (RFC 1952), ``{location}/{YYYYMMDDTHHMMSSZ}-{nonce}.jsonl.gz``, of JSON
lines: a header (format, location, its name, when it was sent, how many results, the canaries'
results), then one line per result. Its signature rides in the gzip header, in an extra field
(``SG``) that every gunzip skips: the HMAC-SHA256, keyed with the location's key, of the format,
the name and every byte after the header.

Whoever writes to the inbox, a batch costs the builder little: the signature is checked before
anything is inflated (an HMAC of at most ``MAX_BYTES``), and a signed body is read a line at a
time, each line capped, their number capped by the location's checks, so memory holds one line.
Every field of every line is checked against one declared shape (``RESULT``, ``HEADER``) before
anything is taken: a batch with one field out of its shape is refused whole, with one reason.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import re
import secrets
import struct
import zlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import orjson

from statusgen.config.values import MAX_TIMEOUT
from statusgen.model import SLUG_RE, CheckResult, Outcome
from statusgen.text import without_controls
from statusgen.timeutil import iso, offset_time

FORMAT = "statusgen-batch/2"
MAX_BYTES = 4 << 20  # a batch as stored in the inbox
MAX_INFLATED = 32 << 20  # and once inflated
MAX_LINE = 64 << 10  # one line once inflated: a result is some 200 bytes
CHUNK = 64 << 10  # inflated at a time
SKEW = timedelta(seconds=60)  # how far ahead of our clock an agent's may be
NAME = re.compile(r"^(?P<location>[a-z0-9][a-z0-9-]{0,62})/(?P<at>[0-9]{8}T[0-9]{6}Z)-[0-9a-f]{8}\.jsonl\.gz$")
#: The gzip header of a batch: gzip, deflate, FEXTRA only, no time, no OS (RFC 1952, 2.3).
GZIP_HEAD = b"\x1f\x8b\x08\x04\x00\x00\x00\x00\x00\xff"
SIGNATURE_ID = b"SG"
SIGNATURE_LEN = 64  # hex digits of an HMAC-SHA256


class BatchRefused(Exception):
    """A batch the builder does not take; the message is its one reason, safe to log."""


@dataclass(frozen=True)
class Batch:
    location: str
    name: str  # its path in the inbox
    sent_at: datetime
    results: tuple[CheckResult, ...]
    canaries: tuple[CheckResult, ...] = ()  # the canary checks' results: is the agent's own path sound?


def batch_name(location: str, sent_at: datetime) -> str:
    return f"{location}/{sent_at.strftime('%Y%m%dT%H%M%SZ')}-{secrets.token_hex(4)}.jsonl.gz"


# -- the shape of a line -------------------------------------------------------------------------


@dataclass(frozen=True)
class Field:
    """A field of a line: its name, what a value must be, and those words for a refusal."""

    name: str
    fits: Callable[[object], bool]
    what: str


def _int(value: object, low: int, high: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def _time(value: object) -> bool:
    return isinstance(value, str) and len(value) <= 40 and offset_time(value) is not None


def _latency(value: object) -> bool:
    if value is None:
        return True
    if not isinstance(value, int | float) or isinstance(value, bool):
        return False
    return math.isfinite(value) and 0 <= value <= MAX_TIMEOUT * 1000


OUTCOMES = frozenset(o.value for o in Outcome)
#: A result line, as our own probe makes one; ``detail`` is the text of the check's failed
#: condition, so it must be one of that check's conditions (checked against the configuration).
RESULT = (
    Field("service", lambda v: isinstance(v, str) and (v == "" or SLUG_RE.fullmatch(v) is not None), "a slug"),
    Field("check", lambda v: _int(v, 0, 9999), "a check's index"),
    Field("ts", _time, "an RFC 3339 time"),
    Field("outcome", lambda v: isinstance(v, str) and v in OUTCOMES, "an outcome"),
    Field("latency_ms", _latency, f"null or milliseconds from 0 to {int(MAX_TIMEOUT * 1000)}"),
    Field("http_status", lambda v: v is None or _int(v, 100, 599), "null or an HTTP status"),
    Field("slow", lambda v: isinstance(v, bool), "true or false"),
    Field("detail", lambda v: v is None or isinstance(v, str), "null or a condition's text"),
)
HEADER = (
    Field("format", lambda v: v == FORMAT, FORMAT),
    Field("location", lambda v: isinstance(v, str), "a location"),
    Field("name", lambda v: isinstance(v, str), "a batch's name"),
    Field("sent_at", _time, "an RFC 3339 time"),
    Field("count", lambda v: _int(v, 0, 1 << 20), "a count"),
    Field("canaries", lambda v: isinstance(v, list), "a list of results"),
)


def _shaped(raw: object, shape: tuple[Field, ...], what: str) -> dict[str, object]:
    """``raw``, when it is an object of exactly the fields of ``shape``, each fitting it."""
    if not isinstance(raw, dict):
        raise BatchRefused(f"{what} that is not a JSON object")
    if set(raw) != {f.name for f in shape}:
        fields = ", ".join(sorted(set(raw) ^ {f.name for f in shape}))[:200]
        raise BatchRefused(f"{what} with other fields than its shape's ({without_controls(fields)})")
    for one in shape:
        if not one.fits(raw[one.name]):
            raise BatchRefused(f"{what} whose {one.name} is not {one.what}")
    return raw


def _result_line(r: CheckResult) -> dict[str, object]:
    return {
        "service": r.service,
        "check": r.check_index,
        "ts": iso(r.ts),
        "outcome": r.outcome.value,
        "latency_ms": r.latency_ms,
        "http_status": r.http_status,
        "slow": r.slow,
        "detail": r.detail,
    }


# -- writing -------------------------------------------------------------------------------------


def _signature(key: bytes, name: str, payload: bytes) -> bytes:
    signed = hmac.new(key, f"{FORMAT}\n{name}\n".encode(), hashlib.sha256)
    signed.update(payload)
    return signed.hexdigest().encode()


def encode(batch: Batch, key: bytes) -> bytes:
    """The file of ``batch``, signed with ``key``."""
    header = {
        "format": FORMAT,
        "location": batch.location,
        "name": batch.name,
        "sent_at": iso(batch.sent_at),
        "count": len(batch.results),
        "canaries": [_result_line(r) for r in batch.canaries],
    }
    body = b"".join(orjson.dumps(line) + b"\n" for line in [header, *map(_result_line, batch.results)])
    deflate = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    payload = deflate.compress(body) + deflate.flush() + struct.pack("<II", zlib.crc32(body), len(body) & 0xFFFFFFFF)
    mac = _signature(key, batch.name, payload)
    extra = SIGNATURE_ID + struct.pack("<H", len(mac)) + mac
    return GZIP_HEAD + struct.pack("<H", len(extra)) + extra + payload


# -- reading -------------------------------------------------------------------------------------


def _signed_payload(data: bytes) -> tuple[bytes, bytes]:
    """The signature a batch's header holds, and the bytes it signs."""
    if data[:3] != GZIP_HEAD[:3]:
        raise BatchRefused("not a gzip file")
    if data[3] != GZIP_HEAD[3] or len(data) < len(GZIP_HEAD) + 2:
        raise BatchRefused("not signed in its gzip header: sent by an older statusgen, or not a batch")
    (extra_len,) = struct.unpack_from("<H", data, len(GZIP_HEAD))
    start = len(GZIP_HEAD) + 2
    extra, payload = data[start : start + extra_len], data[start + extra_len :]
    if (
        len(extra) != 4 + SIGNATURE_LEN
        or extra[:2] != SIGNATURE_ID
        or struct.unpack_from("<H", extra, 2)[0] != SIGNATURE_LEN
    ):
        raise BatchRefused("not signed in its gzip header: sent by an older statusgen, or not a batch")
    return extra[4:], payload


def _lines(data: bytes, most: int) -> Iterator[bytes]:
    """The lines of a gzip file, inflated a chunk at a time: at most ``most`` lines, none blank or
    longer than ``MAX_LINE``, all of them ended by a newline."""
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    pending, tail, inflated, count = b"", data, 0, 0
    while not inflater.eof:
        try:
            chunk = inflater.decompress(tail, CHUNK)
        except zlib.error:
            raise BatchRefused("a damaged gzip file") from None
        tail = inflater.unconsumed_tail
        if not chunk and not tail:
            raise BatchRefused("a gzip file cut short")
        inflated += len(chunk)
        if inflated > MAX_INFLATED:
            raise BatchRefused(f"more than {MAX_INFLATED >> 20} MiB once inflated")
        *lines, pending = (pending + chunk).split(b"\n")
        for line in lines:
            count += 1
            if not line:
                raise BatchRefused("a blank line")
            if count > most:
                raise BatchRefused("more lines than the location has checks")
            yield line
        if len(pending) > MAX_LINE:
            raise BatchRefused(f"a line longer than {MAX_LINE >> 10} KiB")
    if pending or inflater.unused_data:
        raise BatchRefused("bytes after its last line")


#: A check as an agent's result may name it: its index, and the texts of its conditions.
Checks = Mapping[int, frozenset[str]]


@dataclass(frozen=True)
class Expect:
    """What the builder takes: each location it knows, with its key and the checks it runs there
    (by service), the canaries, and the time window (``now`` less ``max_age`` to ``now`` plus
    ``SKEW``)."""

    keys: Mapping[str, bytes]  # location -> the key its batches are signed with
    checks: Mapping[str, Mapping[str, Checks]]  # location -> service -> the checks it runs there
    now: datetime
    max_age: timedelta
    canaries: Checks = field(default_factory=dict)  # the canary checks (their service is "")


def decode(name: str, data: bytes, expect: Expect) -> Batch:
    """The batch stored at ``name``, checked; ``BatchRefused`` names what is wrong with it."""
    named = NAME.fullmatch(name)
    if named is None:
        raise BatchRefused("not a batch's name")
    location = named["location"]
    if location not in expect.keys:
        raise BatchRefused(f'location "{location}" is not in the configuration')
    if len(data) > MAX_BYTES:
        raise BatchRefused(f"larger than {MAX_BYTES >> 20} MiB")
    signature, payload = _signed_payload(data)
    if not hmac.compare_digest(signature, _signature(expect.keys[location], name, payload)):
        raise BatchRefused("bad signature: another key, or altered")
    checks = expect.checks[location]
    lines = _lines(data, 1 + sum(len(c) for c in checks.values()))
    header = _shaped(_json(next(lines, b"")), HEADER, "a header")
    if header["location"] != location or header["name"] != name:
        raise BatchRefused("signed for another location or name")
    sent_at = offset_time(header["sent_at"])
    assert sent_at is not None  # its shape says so
    if sent_at > expect.now + SKEW:
        raise BatchRefused(f"from the future ({iso(sent_at)})")
    if sent_at < expect.now - expect.max_age:
        raise BatchRefused(f"too old ({iso(sent_at)})")
    canaries = header["canaries"]
    assert isinstance(canaries, list)
    if len(canaries) > len(expect.canaries):
        raise BatchRefused("more canary results than the configuration has canaries")
    told = tuple(_result(raw, {"": expect.canaries}, sent_at, expect, "a canary result") for raw in canaries)
    results = tuple(_result(_json(line), checks, sent_at, expect, "a result") for line in lines)
    if len(results) != header["count"]:
        raise BatchRefused("its count does not match its results")
    return Batch(location, name, sent_at, results, told)


def _json(line: bytes) -> object:
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        raise BatchRefused("a line that is not JSON") from None


def _result(raw: object, checks: Mapping[str, Checks], sent_at: datetime, expect: Expect, what: str) -> CheckResult:
    line = _shaped(raw, RESULT, what)
    service, index, detail, latency, status = (
        line[k] for k in ("service", "check", "detail", "latency_ms", "http_status")
    )
    # the shape has said what each is
    assert isinstance(service, str) and isinstance(index, int) and (detail is None or isinstance(detail, str))
    assert (latency is None or isinstance(latency, int | float)) and (status is None or isinstance(status, int))
    conditions = checks.get(service, {}).get(index)
    if conditions is None:
        raise BatchRefused(f"{what} of a check the configuration does not run there")
    if detail is not None and (line["outcome"] != Outcome.CONDITION.value or detail not in conditions):
        raise BatchRefused(f"{what} whose detail is not one of its check's conditions")
    ts = offset_time(line["ts"])
    assert ts is not None
    if not sent_at - expect.max_age <= ts <= sent_at + SKEW:
        raise BatchRefused(f"{what} far from the batch's time")
    return CheckResult(
        service, index, ts, Outcome(str(line["outcome"])), latency, status, line["slow"] is True, detail=detail
    )
