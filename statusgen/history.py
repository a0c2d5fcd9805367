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


def point(start: int, row: BucketRow | None, incident_s: int) -> dict[str, Any]:
    if row is None:
        return {"start": iso_epoch(start), "availability": None, "latency_p50_ms": None,
                "latency_p95_ms": None, "checks": 0, "failed": 0, "slow": 0, "maintenance": 0,
                "excluded": 0, "incident_minutes": round(incident_s / 60)}
    return {"start": iso_epoch(start), "availability": availability(row.up, row.down),
            "latency_p50_ms": row.p50 if row.p50 is not None or not row.hist else latency.percentile(row.hist, 0.5),
            "latency_p95_ms": row.p95 if row.p95 is not None or not row.hist else latency.percentile(row.hist, 0.95),
            "checks": row.up + row.down, "failed": row.down, "slow": row.slow,
            "maintenance": row.maintenance, "excluded": row.excluded,
            "incident_minutes": round(incident_s / 60)}


def summary(rows: Sequence[BucketRow], incident_s: int, latency_rows: Sequence[BucketRow] | None = None
            ) -> dict[str, Any]:
    """Counts from ``rows``; latency percentiles from ``latency_rows`` (default: the same rows)."""
    total = BucketRow(0)
    for r in rows:
        total.up += r.up
        total.down += r.down
        total.maintenance += r.maintenance
        total.excluded += r.excluded
    hist: latency.Histogram = {}
    for r in rows if latency_rows is None else latency_rows:
        latency.merge(hist, r.hist)
    return {"availability": availability(total.up, total.down),
            "latency_p50_ms": latency.percentile(hist, 0.50),
            "latency_p95_ms": latency.percentile(hist, 0.95),
            "checks": total.up + total.down, "failed": total.down,
            "maintenance": total.maintenance, "excluded": total.excluded,
            "incident_minutes": round(incident_s / 60)}


def build_history(slug: str, rng: Range, rows: Sequence[BucketRow], incidents: Sequence[Incident],
                  as_of: datetime, latency_rows: Sequence[BucketRow] | None = None) -> dict[str, Any]:
    """The history answer of one service for one range.

    ``latency_rows``: coarser buckets (with histograms) for the summary's percentiles;
    by default the range's own buckets are used.
    """
    start, end = window(rng, as_of)
    by_start = {r.start: r for r in rows if start <= r.start < end}
    if latency_rows is not None:
        coarse = SUMMARY_RESOLUTION[rng.name]
        latency_rows = [r for r in latency_rows if start - coarse < r.start < end]
    inc_s = incident_seconds(incidents, start, rng.resolution_s, rng.buckets, min(end, to_epoch(as_of)))
    points = [point(start + i * rng.resolution_s, by_start.get(start + i * rng.resolution_s), inc_s[i])
              for i in range(rng.buckets)]
    return {"service": slug, "range": rng.name, "resolution": rng.resolution,
            "resolution_s": rng.resolution_s, "from": iso(from_epoch(start)), "to": iso(from_epoch(end)),
            "as_of": iso(as_of), "summary": summary(list(by_start.values()), sum(inc_s), latency_rows),
            "count": len(points), "points": points}
