"""A location's batch: what one agent run delivers to the inbox, and how the builder checks it.

A batch is one file, ``{location}/{YYYYMMDDTHHMMSSZ}-{nonce}.jsonl.gz``: gzip of JSON lines, the
first a header (format, location, its name, when it was sent, how many results), then one line
per result, then a last line holding the HMAC-SHA256 of every byte before it, keyed with the
inbox key. The builder refuses a batch, with one reason, when it is too big (compressed or
not), not gzip or not JSON lines, signed with another key or altered, from a location the
configuration does not know or under another's name, sent too long ago or from the future, or
holding more results than the location's checks, or results far from its time.
"""

from __future__ import annotations

import gzip
import hashlib
import hmac
import re
import secrets
import zlib
from dataclasses import dataclass
from datetime import datetime, timedelta

import orjson

from statusgen.model import CheckResult, Outcome
from statusgen.timeutil import iso, parse_iso

FORMAT = "statusgen-batch/1"
MAX_BYTES = 4 << 20  # a batch as stored in the inbox
MAX_INFLATED = 32 << 20  # and once inflated: a gzip bomb stops here
SKEW = timedelta(seconds=60)  # how far ahead of our clock an agent's may be
NAME = re.compile(r"^(?P<location>[a-z0-9][a-z0-9-]{0,62})/(?P<at>[0-9]{8}T[0-9]{6}Z)-[0-9a-f]{8}\.jsonl\.gz$")


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
    signature = hmac.new(key, body, hashlib.sha256).hexdigest()
    return gzip.compress(body + orjson.dumps({"hmac": signature}) + b"\n", mtime=0)


def _inflate(data: bytes) -> bytes:
    """gzip's contents, refused past MAX_INFLATED bytes without inflating more."""
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = inflater.decompress(data, MAX_INFLATED + 1)
    except zlib.error:
        raise BatchRefused("not a gzip file") from None
    if len(out) > MAX_INFLATED or inflater.unconsumed_tail:
        raise BatchRefused(f"more than {MAX_INFLATED >> 20} MiB once inflated")
    if not inflater.eof:
        raise BatchRefused("a gzip file cut short")
    return out


@dataclass(frozen=True)
class Expect:
    """What the builder takes: the locations it knows (and their checks, by service), the key,
    and the time window (``now`` less ``max_age`` to ``now`` plus ``SKEW``)."""

    key: bytes
    checks: dict[str, dict[str, int]]  # location -> service -> how many checks it runs there
    now: datetime
    max_age: timedelta
    canaries: int = 0  # how many canary checks the configuration has


def decode(name: str, data: bytes, expect: Expect) -> Batch:
    """The batch stored at ``name``, checked; ``BatchRefused`` names what is wrong with it."""
    named = NAME.fullmatch(name)
    if named is None:
        raise BatchRefused("not a batch's name")
    location = named["location"]
    if location not in expect.checks:
        raise BatchRefused(f'location "{location}" is not in the configuration')
    if len(data) > MAX_BYTES:
        raise BatchRefused(f"larger than {MAX_BYTES >> 20} MiB")
    lines = _inflate(data).split(b"\n")
    if len(lines) < 3 or lines[-1] != b"":
        raise BatchRefused("not a batch: no header, results and signature")
    body = b"".join(line + b"\n" for line in lines[:-2])
    try:
        signature = orjson.loads(lines[-2])["hmac"]
        header = orjson.loads(lines[0])
    except (orjson.JSONDecodeError, KeyError, TypeError):
        raise BatchRefused("not JSON lines") from None
    if not isinstance(signature, str) or not hmac.compare_digest(
        signature, hmac.new(expect.key, body, hashlib.sha256).hexdigest()
    ):
        raise BatchRefused("bad signature: another key, or altered")
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise BatchRefused(f"not {FORMAT}")
    if header.get("location") != location or header.get("name") != name:
        raise BatchRefused("signed for another location or name")
    sent_at = parse_iso(header.get("sent_at")) if isinstance(header.get("sent_at"), str) else None
    if sent_at is None:
        raise BatchRefused("no time")
    if sent_at > expect.now + SKEW:
        raise BatchRefused(f"from the future ({iso(sent_at)})")
    if sent_at < expect.now - expect.max_age:
        raise BatchRefused(f"too old ({iso(sent_at)})")
    if len(lines) - 3 > sum(expect.checks[location].values()):
        raise BatchRefused("more results than the location has checks")
    results = tuple(_result(line, location, sent_at, expect) for line in lines[1:-2])
    if len(results) != header.get("count"):
        raise BatchRefused("its count does not match its results")
    canaries = header.get("canaries", [])
    if not isinstance(canaries, list) or len(canaries) > expect.canaries:
        raise BatchRefused("more canary results than the configuration has canaries")
    return Batch(location, name, sent_at, results, tuple(_canary(raw, sent_at, expect) for raw in canaries))


def _canary(raw: object, sent_at: datetime, expect: Expect) -> CheckResult:
    try:
        result = _parse(raw)
    except (KeyError, TypeError, ValueError):
        raise BatchRefused("a canary result that is not one") from None
    if result.service != "" or not 0 <= result.check_index < expect.canaries:
        raise BatchRefused("a canary result of a canary the configuration does not have")
    return _near(result, sent_at, expect)


def _near(result: CheckResult, sent_at: datetime, expect: Expect) -> CheckResult:
    if not sent_at - expect.max_age <= result.ts <= sent_at + SKEW:
        raise BatchRefused("a result far from the batch's time")
    return result


def _parse(raw: object) -> CheckResult:
    """A result line, parsed; KeyError, TypeError or ValueError when it is not one."""
    if not isinstance(raw, dict):
        raise TypeError("not an object")
    ts = parse_iso(raw["ts"])
    if ts is None or not isinstance(raw["check"], int) or not isinstance(raw["service"], str):
        raise ValueError("not a result")
    return CheckResult(
        raw["service"],
        raw["check"],
        ts,
        Outcome(raw["outcome"]),
        raw["latency_ms"],
        raw["http_status"],
        bool(raw["slow"]),
        detail=raw["detail"],
    )


def _result(line: bytes, location: str, sent_at: datetime, expect: Expect) -> CheckResult:
    try:
        result = _parse(orjson.loads(line))
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
        raise BatchRefused("a result that is not one") from None
    known = expect.checks[location].get(result.service)
    if known is None or not 0 <= result.check_index < known:
        raise BatchRefused("a result of a check the configuration does not have there")
    return _near(result, sent_at, expect)
