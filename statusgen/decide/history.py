"""Decision: the history of one service for a range, from stored buckets. Pure.

Every bucket of the range is given, in order, with ``null`` where nothing was
measured. Availability counts good answers over counted answers; results
taken during maintenance, or set aside because our own vantage point was at
fault, are not counted (they are reported as ``maintenance`` and
``excluded``). Latency p50 and p95 come from the bucket's log-scale histogram
of good answers; the summary's from the merged histograms of every bucket of
the range.

A history holds the range's closed buckets only: it ends where the bucket
in progress begins (``in_progress``, which the service's record carries). So
a history's bytes change when one of its buckets closes (every 5 minutes for
24h, every hour for 7d, every 6 hours for 30d, every UTC day for 90d), or
when what a closed bucket holds changes (a late result, an incident), never
with every result.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple

from statusgen import latency
from statusgen.model import Range
from statusgen.timeutil import floor_to, from_epoch, iso, iso_epoch, to_epoch

Point = dict[str, Any]

#: An incident as a history counts it: its start and its end (None while it is open), epoch seconds.
Span = tuple[int, "int | None"]

#: The next coarser resolution, whose buckets are sums of the finer ones (each result is
#: aggregated at every resolution).
COARSER = {300: 3600, 3600: 21600, 21600: 86400, 86400: None}


class Bucket(NamedTuple):
    """A stored bucket of one service at one resolution."""

    start: int
    up: int
    down: int
    slow: int
    maintenance: int
    excluded: int
    p50: float | None
    p95: float | None
    hist: bytes | None  # the latency histogram of its good answers (``latency.encode``)


def window(rng: Range, as_of: datetime) -> tuple[int, int]:
    """First bucket start and the end (exclusive) of the range's closed buckets at ``as_of``: the
    range ends where the bucket in progress begins."""
    end = floor_to(to_epoch(as_of), rng.resolution_s)
    return end - rng.buckets * rng.resolution_s, end


def availability(up: int, down: int) -> float | None:
    if not down:  # most buckets: every counted answer good
        return 100.0 if up else None
    return round(100.0 * up / (up + down), 3)


def incident_seconds(spans: Sequence[Span], start: int, step: int, n: int, end_open: int) -> list[int]:
    """Seconds of incident in each of n buckets from ``start`` (overlapping incidents counted
    once each); an open incident lasts until ``end_open``."""
    out = [0] * n
    for a, ended in spans:
        b = end_open if ended is None else ended
        for i in range(max(0, (a - start) // step), min(n, (b - start) // step + 1)):
            lo, hi = start + i * step, start + (i + 1) * step
            out[i] += max(0, min(b, hi) - max(a, lo))
    return out


def point(start: int, bucket: Bucket | None, incident_s: int) -> Point:
    """One point of a history: a bucket's figures, or nulls and zeros where nothing was measured."""
    minutes = round(incident_s / 60)
    if bucket is None:
        return {
            "start": iso_epoch(start),
            "availability": None,
            "latency_p50_ms": None,
            "latency_p95_ms": None,
            "checks": 0,
            "failed": 0,
            "slow": 0,
            "maintenance": 0,
            "excluded": 0,
            "incident_minutes": minutes,
        }
    _, up, down, slow, maintenance, excluded, p50, p95, _ = bucket  # unpacked once: a history has hundreds
    return {
        "start": iso_epoch(start),
        "availability": availability(up, down),
        "latency_p50_ms": p50,
        "latency_p95_ms": p95,
        "checks": up + down,
        "failed": down,
        "slow": slow,
        "maintenance": maintenance,
        "excluded": excluded,
        "incident_minutes": minutes,
    }


class Columns(NamedTuple):
    """What the charts draw of a history's points, a list per figure, in the points' order."""

    availability: list[float | None]
    p50: list[float | None]
    p95: list[float | None]
    maintenance: list[int]

    @classmethod
    def of(cls, points: Sequence[Point]) -> Columns:
        return cls(
            [p["availability"] for p in points],
            [p["latency_p50_ms"] for p in points],
            [p["latency_p95_ms"] for p in points],
            [p["maintenance"] for p in points],
        )


@dataclass(frozen=True)
class History:
    """A history answer and the columns its charts draw (in the points' order)."""

    document: dict[str, Any]
    columns: Columns

    def points(self) -> list[Point]:
        points: list[Point] = self.document["points"]
        return points

    @classmethod
    def of(cls, document: dict[str, Any]) -> History:
        """A history answer read back (the served file of a range whose buckets did not change)."""
        return cls(document, Columns.of(document["points"]))


def _merged_hist(
    start: int, last: int, res: int, fine: Sequence[Bucket], coarse: Sequence[Bucket]
) -> latency.Histogram:
    """The merged histogram of the buckets in [start, last): a coarser bucket wherever one fits
    whole (a 90-day summary merges 90 day buckets, a 24-hour one some 24 hours), the fine ones
    elsewhere."""
    c = COARSER[res]
    hist: latency.Histogram = {}
    whole = {b.start for b in coarse if c is not None and start <= b.start and b.start + c <= last}
    for b in coarse:
        if b.start in whole:
            latency.merge_encoded(hist, b.hist)
    for b in fine:
        if start <= b.start < last and b.hist and (c is None or floor_to(b.start, c) not in whole):
            latency.merge_encoded(hist, b.hist)
    return hist


def history(
    slug: str, rng: Range, as_of: datetime, spans: Sequence[Span], fine: Sequence[Bucket], coarse: Sequence[Bucket] = ()
) -> History:
    """The history of one service for one range: its buckets closed by ``as_of``. ``fine``: the
    stored buckets of the range's resolution in its window; ``coarse``: those of the next coarser
    resolution in the same span (the summary's histogram merges them where they fit)."""
    step = rng.resolution_s
    start, end = window(rng, as_of)
    rows = {b.start: b for b in fine if start <= b.start < end}
    inc_s = incident_seconds(spans, start, step, rng.buckets, end)
    points = [point(s, rows.get(s), inc_s[(s - start) // step]) for s in range(start, end, step)]
    counted = rows.values()
    sums = Sums(
        sum(b.up for b in counted),
        sum(b.down for b in counted),
        sum(b.maintenance for b in counted),
        sum(b.excluded for b in counted),
    )
    document = {
        "service": slug,
        "range": rng.name,
        "resolution": rng.resolution,
        "resolution_s": step,
        "from": iso(from_epoch(start)),
        "to": iso(from_epoch(end)),
        "as_of": iso(from_epoch(end)),
        "summary": summary(*sums, _merged_hist(start, end, step, list(counted), coarse), sum(inc_s)),
        "count": rng.buckets,
        "points": points,
    }
    return History(document, Columns.of(points))


class Sums(NamedTuple):
    """What a range's buckets add up to."""

    up: int
    down: int
    maintenance: int
    excluded: int


def edges(rng: Range, as_of: datetime) -> list[tuple[int, int]]:
    """The spans of a range's window at ``as_of`` that no bucket of the next coarser resolution
    covers whole: there, a summary merges the range's own buckets' histograms."""
    start, end = window(rng, as_of)
    c = COARSER[rng.resolution_s]
    if c is None:
        return [(start, end)]
    first, last = -(-start // c) * c, floor_to(end, c)
    return [(start, end)] if first >= last else [(start, first), (last, end)]


def day_summary(
    rng: Range,
    as_of: datetime,
    spans: Sequence[Span],
    sums: Sums,
    edge: Sequence[Bucket],
    coarse: Sequence[Bucket],
    progress: Bucket | None,
) -> dict[str, Any]:
    """The summary of a range's closed buckets and its bucket in progress (``progress``; None when
    nothing was measured in it yet): what every result from the window's first bucket to ``as_of``
    adds up to, as a service record's last day lists them. ``sums``: the closed buckets' sums;
    ``edge``: its buckets in the spans of ``edges``; ``coarse``: as for ``history``."""
    start, end = window(rng, as_of)
    now = to_epoch(as_of)
    up, down, maintenance, excluded = sums
    hist = _merged_hist(start, end, rng.resolution_s, edge, coarse)
    if progress is not None:
        up, down = up + progress.up, down + progress.down
        maintenance, excluded = maintenance + progress.maintenance, excluded + progress.excluded
        latency.merge_encoded(hist, progress.hist)
    (inc_s,) = incident_seconds(spans, start, max(1, now - start), 1, now)
    return summary(up, down, maintenance, excluded, hist, inc_s)


def in_progress(rng: Range, as_of: datetime, spans: Sequence[Span], bucket: Bucket | None) -> Point:
    """The bucket in progress of a range at ``as_of`` (the one its history stops before), as a
    point so far (``bucket``: None when nothing was measured in it yet)."""
    step = rng.resolution_s
    begun = window(rng, as_of)[1]
    (incident_s,) = incident_seconds(spans, begun, step, 1, to_epoch(as_of))
    return point(begun, bucket, incident_s)


def summary(
    up: int, down: int, maintenance: int, excluded: int, hist: latency.Histogram, incident_s: int
) -> dict[str, Any]:
    """The summary of a range from its buckets' sums and merged histogram."""
    return {
        "availability": availability(up, down),
        "latency_p50_ms": latency.percentile(hist, 0.50),
        "latency_p95_ms": latency.percentile(hist, 0.95),
        "checks": up + down,
        "failed": down,
        "maintenance": maintenance,
        "excluded": excluded,
        "incident_minutes": round(incident_s / 60),
    }
