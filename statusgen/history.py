"""Decision: the history of one service for a range, from stored buckets. Pure.

Every bucket of the range is given, in order, with ``null`` where nothing was
measured. Availability counts good answers over counted answers; results
taken during maintenance, or set aside because our own vantage point was at
fault, are not counted (they are reported as ``maintenance`` and
``excluded``). Latency p50 and p95 come from the bucket's log-scale histogram
of good answers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson

from . import latency
from .incidents import Incident
from .store import BucketRow
from .timeutil import floor_to, from_epoch, iso, iso_epoch, to_epoch


@dataclass(frozen=True)
class Range:
    name: str
    resolution_s: int
    buckets: int

    @property
    def resolution(self) -> str:
        s = self.resolution_s
        return f"{s // 86400}d" if s % 86400 == 0 else f"{s // 3600}h" if s % 3600 == 0 else f"{s // 60}m"


RANGES: dict[str, Range] = {
    "24h": Range("24h", 300, 288),
    "7d": Range("7d", 3600, 168),
    "30d": Range("30d", 21600, 120),
    "90d": Range("90d", 86400, 90),
}
DEFAULT_RANGE = "24h"
# The summary's latency percentiles merge the histograms of these coarser buckets
# (a few dozen per range instead of hundreds); they cover the range plus at most one bucket.
SUMMARY_RESOLUTION = {"24h": 3600, "7d": 21600, "30d": 86400, "90d": 86400}


def window(rng: Range, as_of: datetime) -> tuple[int, int]:
    """First bucket start and the end (exclusive) of the range ending with as_of's bucket."""
    last = floor_to(to_epoch(as_of), rng.resolution_s)
    return last - (rng.buckets - 1) * rng.resolution_s, last + rng.resolution_s


def availability(up: int, down: int) -> float | None:
    counted = up + down
    return None if counted == 0 else round(100.0 * up / counted, 3)


def incident_seconds(incidents: Sequence[Incident], start: int, step: int, n: int, end_open: int) -> list[int]:
    """Seconds of incident in each of n buckets (overlapping incidents counted once each)."""
    out = [0] * n
    for inc in incidents:
        a = to_epoch(inc.started_at)
        b = to_epoch(inc.ended_at) if inc.ended_at else end_open
        for i in range(max(0, (a - start) // step), min(n, (b - start) // step + 1)):
            lo, hi = start + i * step, start + (i + 1) * step
            out[i] += max(0, min(b, hi) - max(a, lo))
    return out


# A bucket as the history reads it: (start, up, down, slow, maintenance, excluded, p50, p95).
Bucket = tuple[int, int, int, int, int, int, float | None, float | None]

_NULL_POINT = ('{"start":"%s","availability":null,"latency_p50_ms":null,"latency_p95_ms":null,"checks":0,'
               '"failed":0,"slow":0,"maintenance":0,"excluded":0,"incident_minutes":%d}')
_POINT = ('{"start":"%s","availability":%s,"latency_p50_ms":%s,"latency_p95_ms":%s,"checks":%d,"failed":%d,'
          '"slow":%d,"maintenance":%d,"excluded":%d,"incident_minutes":%d}')


def _num(x: float | None) -> str:
    return "null" if x is None else repr(x)


def point_json(start: int, row: Bucket | None, incident_s: int) -> str:
    """One point of a history, as JSON text (written directly: a build makes hundreds of thousands)."""
    minutes = round(incident_s / 60)
    if row is None:
        return _NULL_POINT % (iso_epoch(start), minutes)
    _, up, down, slow, maint, excl, p50, p95 = row
    return _POINT % (iso_epoch(start), _num(availability(up, down)), _num(p50), _num(p95), up + down, down, slow,
                     maint, excl, minutes)


def points_of(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The points of a history document as a list (they are kept as pre-serialized JSON)."""
    pts = doc["points"]
    return orjson.loads(orjson.dumps(pts)) if isinstance(pts, orjson.Fragment) else pts


def summary(rows: Sequence[Bucket], incident_s: int, latency_rows: Sequence[BucketRow]) -> dict[str, Any]:
    """Counts from ``rows``; latency percentiles from the histograms of ``latency_rows``."""
    up = sum(r[1] for r in rows)
    down = sum(r[2] for r in rows)
    hist: latency.Histogram = {}
    for r in latency_rows:
        latency.merge(hist, r.hist)
    return {"availability": availability(up, down),
            "latency_p50_ms": latency.percentile(hist, 0.50),
            "latency_p95_ms": latency.percentile(hist, 0.95),
            "checks": up + down, "failed": down,
            "maintenance": sum(r[4] for r in rows), "excluded": sum(r[5] for r in rows),
            "incident_minutes": round(incident_s / 60)}


def build_history(slug: str, rng: Range, rows: Sequence[Bucket], incidents: Sequence[Incident],
                  as_of: datetime, latency_rows: Sequence[BucketRow]) -> dict[str, Any]:
    """The history answer of one service for one range.

    ``rows``: the range's buckets; ``latency_rows``: coarser buckets (with histograms,
    see SUMMARY_RESOLUTION) for the summary's percentiles. The points are kept as
    pre-serialized JSON (``points_of`` reads them back).
    """
    start, end = window(rng, as_of)
    by_start = {r[0]: r for r in rows if start <= r[0] < end}
    coarse = SUMMARY_RESOLUTION[rng.name]
    latency_rows = [r for r in latency_rows if start - coarse < r.start < end]
    inc_s = incident_seconds(incidents, start, rng.resolution_s, rng.buckets, min(end, to_epoch(as_of)))
    step = rng.resolution_s
    points = ",".join(point_json(start + i * step, by_start.get(start + i * step), inc_s[i])
                      for i in range(rng.buckets))
    return {"service": slug, "range": rng.name, "resolution": rng.resolution,
            "resolution_s": rng.resolution_s, "from": iso(from_epoch(start)), "to": iso(from_epoch(end)),
            "as_of": iso(as_of), "summary": summary(list(by_start.values()), sum(inc_s), latency_rows),
            "count": rng.buckets, "points": orjson.Fragment(f"[{points}]")}
