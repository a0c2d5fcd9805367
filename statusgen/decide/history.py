"""Decision: the history of one service for a range, from stored buckets. Pure.

Every bucket of the range is given, in order, with ``null`` where nothing was
measured. Availability counts good answers over counted answers; results
taken during maintenance, or set aside because our own vantage point was at
fault, are not counted (they are reported as ``maintenance`` and
``excluded``). Latency p50 and p95 come from the bucket's log-scale histogram
of good answers; the summary's from the merged histograms of every bucket of
the range.

A build is incremental: the points of buckets that have closed are kept
(``Closed``, in the store's history_cache) and carried to the next build,
which adds the buckets that closed since, drops those that left the range
and keeps the summary's sums rolling; only the bucket in progress is made
each time. The chart columns of the points (``Series``) are carried the
same way, and so is what the pages drew of them (``Closed.drawn``, filled by
``charts``).
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import orjson

from statusgen import latency
from statusgen.decide.incidents import Incident
from statusgen.model import Range
from statusgen.timeutil import floor_to, from_epoch, iso, iso_epoch, to_epoch


def window(rng: Range, as_of: datetime) -> tuple[int, int]:
    """First bucket start and the end (exclusive) of the range ending with as_of's bucket."""
    last = floor_to(to_epoch(as_of), rng.resolution_s)
    return last - (rng.buckets - 1) * rng.resolution_s, last + rng.resolution_s


def availability(up: int, down: int) -> float | None:
    counted = up + down
    return None if counted == 0 else round(100.0 * up / counted, 3)


#: An incident as a history counts it: its start and its end (None while it is open), epoch seconds.
Span = tuple[int, "int | None"]


def spans_of(incidents: Iterable[Incident]) -> list[Span]:
    """The spans of ``incidents`` (a build reads them from the store's columns: ``sitedata.Incidents``)."""
    return [(to_epoch(i.started_at), to_epoch(i.ended_at) if i.ended_at else None) for i in incidents]


def incident_seconds(spans: Sequence[Span], start: int, step: int, n: int, end_open: int) -> list[int]:
    """Seconds of incident in each of n buckets (overlapping incidents counted once each)."""
    out = [0] * n
    for a, ended in spans:
        b = end_open if ended is None else ended
        for i in range(max(0, (a - start) // step), min(n, (b - start) // step + 1)):
            lo, hi = start + i * step, start + (i + 1) * step
            out[i] += max(0, min(b, hi) - max(a, lo))
    return out


# A bucket as the history reads it:
# (start, up, down, slow, maintenance, excluded, p50, p95, latency histogram as stored).
Bucket = tuple[int, int, int, int, int, int, "float | None", "float | None", "bytes | None"]

# The next coarser resolution, whose buckets are sums of the finer ones (each result is
# aggregated at every resolution): a cold summary merges those where they fit whole.
COARSER = {300: 3600, 3600: 21600, 21600: 86400, 86400: None}
CACHE_VERSION = "1"   # bump when a point's or a summary's meaning changes: every cache is then remade

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
    up, down, slow, maint, excl, p50, p95 = row[1:8]
    return _POINT % (iso_epoch(start), _num(availability(up, down)), _num(p50), _num(p95), up + down, down, slow,
                     maint, excl, minutes)


def points_of(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The points of a history document as a list (they are kept as pre-serialized JSON)."""
    pts = doc["points"]
    return orjson.loads(orjson.dumps(pts)) if isinstance(pts, orjson.Fragment) else pts


Number = float | None


#: None as ``Series.pack`` writes it (NaN), and NaN with its sign bit set, as doubles' bytes.
_NANS = tuple(array("d", [nan]).tobytes() for nan in (math.nan, -math.nan))


def _floats(blob: bytes) -> list[Number]:
    """Packed doubles as a list, NaN read as None. The NaNs are found in the bytes (only
    where a double starts: one ending where the next begins may hold the same bytes), so a
    column costs one ``tolist`` and a write per gap, not a test of every value."""
    values = array("d")
    values.frombytes(blob)
    out: list[Number] = values.tolist()   # type: ignore[assignment]
    size = values.itemsize
    for nan in _NANS:
        at = blob.find(nan)
        while at >= 0:
            if at % size:
                at = blob.find(nan, at + 1)
            else:
                out[at // size] = None
                at = blob.find(nan, at + size)
    return out


@dataclass(frozen=True)
class Series:
    """What the charts draw of a range's points, as columns (the same values as the points'
    ``availability``, ``latency_p50_ms``, ``latency_p95_ms`` and ``maintenance``), and the
    starts of its first and last buckets. Carried with the closed points between builds, so
    that a page draws its charts without reading the points' JSON back."""

    availability: list[Number]
    p50: list[Number]
    p95: list[Number]
    maintenance: list[int]
    first: str = ""
    last: str = ""

    @classmethod
    def of_points(cls, points: Sequence[dict[str, Any]]) -> Series:
        return cls([p["availability"] for p in points], [p["latency_p50_ms"] for p in points],
                   [p["latency_p95_ms"] for p in points], [p.get("maintenance") or 0 for p in points],
                   points[0]["start"] if points else "", points[-1]["start"] if points else "")

    def __len__(self) -> int:
        return len(self.availability)

    def after(self, n: int) -> Series:
        """Without its first ``n`` buckets."""
        return Series(self.availability[n:], self.p50[n:], self.p95[n:], self.maintenance[n:])

    def then(self, other: Series, first: str = "", last: str = "") -> Series:
        """This series followed by ``other``."""
        return Series(self.availability + other.availability, self.p50 + other.p50, self.p95 + other.p95,
                      self.maintenance + other.maintenance, first, last)

    def pack(self) -> bytes:
        """As the store keeps it: the three columns as doubles (NaN for None), then maintenance
        counts as 64-bit integers, all in the machine's byte order."""
        nan = math.nan
        floats = array("d", [nan if v is None else v for v in (*self.availability, *self.p50, *self.p95)])
        return floats.tobytes() + array("q", self.maintenance).tobytes()

    @classmethod
    def unpack(cls, blob: bytes) -> Series:
        counts = array("q")
        width = 8 * (len(blob) // (3 * 8 + counts.itemsize))     # bytes of one column of doubles
        counts.frombytes(blob[3 * width:])
        return cls(_floats(blob[:width]), _floats(blob[width:2 * width]), _floats(blob[2 * width:3 * width]),
                   counts.tolist())


def _series_of(rows: list[Bucket | None]) -> Series:
    """The chart columns of points made from these buckets (None: nothing measured)."""
    return Series([None if r is None else availability(r[1], r[2]) for r in rows],
                  [None if r is None else r[6] for r in rows], [None if r is None else r[7] for r in rows],
                  [0 if r is None else r[4] for r in rows])


class HistoryDocument(dict):  # type: ignore[type-arg]
    """A history answer (a dict, written as JSON like any other), with the ``Series`` of its
    points, its last point (the bucket in progress) as JSON text, and what the charts drew of
    its closed points (``Closed.drawn``)."""

    series: Series
    open_point: str
    drawn: dict[str, Any]


def series_of(doc: dict[str, Any]) -> Series:
    """What the charts draw of a history document: its ``Series`` as made, else read off its points."""
    return doc.series if isinstance(doc, HistoryDocument) else Series.of_points(points_of(doc))


@dataclass(frozen=True)
class Closed:
    """The closed buckets of one service's history for one range, kept between builds.

    Points of buckets that ended before the one in progress never change (a result
    written into one of them deletes this record, see ``Store``), so a build reuses
    their JSON text, adds the buckets that closed since, drops those that left the
    range, and keeps the summary's sums rolling the same way.
    """

    first: int                 # start of the first point held
    upto: int                  # start of the first bucket not held
    key: str                   # the incidents the points' incident minutes were made from
    points: str                # the points' JSON, comma-joined ("" for none)
    counts: tuple[int, int, int, int]   # up, down, maintenance, excluded over those buckets
    hist: latency.Histogram    # their merged latency histogram
    series: Series             # what the charts draw of them
    # What the pages drew of them (``charts``: entries keyed by the range's first bucket when
    # drawn), carried with them. Filled by the pages; entries are replaced, not
    # changed in place, so that the store can tell which changed since it read them.
    drawn: dict[str, Any] = field(default_factory=dict, compare=False)


class Unbalanced(Exception):
    """Carried sums went negative: the kept points do not match the buckets (recompute them)."""


def incidents_key(spans: Sequence[Span]) -> str:
    """What a service's closed points depend on besides their buckets: its incidents' spans."""
    text = ";".join([f"{a}-{'' if b is None else b}" for a, b in spans])
    return f"{CACHE_VERSION}:{text}"


def reusable(closed: Closed | None, rng: Range, as_of: datetime, key: str) -> bool:
    """Whether ``closed`` can be carried forward to the range ending with as_of's bucket."""
    if closed is None or closed.key != key:
        return False
    start, end = window(rng, as_of)
    return closed.first <= start <= closed.upto <= end - rng.resolution_s


def _drop_points(points: str, n: int) -> str:
    """The points text without its first n points (a point holds no nested object: '},{' splits them)."""
    at = -2
    for _ in range(n):
        at = points.find("},{", at + 2)
        if at < 0:
            return ""
    return points[at + 2:]


def _add(counts: list[int], hist: latency.Histogram, row: Bucket, sign: int) -> None:
    counts[0] += sign * row[1]
    counts[1] += sign * row[2]
    counts[2] += sign * row[4]
    counts[3] += sign * row[5]
    if row[8]:
        for b, n in latency.decode(row[8]).items():
            left = hist.get(b, 0) + sign * n
            if left:
                hist[b] = left
            else:
                hist.pop(b, None)


def _cold_hist(start: int, last: int, res: int, fine: dict[int, Bucket], coarse: Sequence[Bucket]) -> latency.Histogram:
    """The merged histogram of the buckets in [start, last): from coarser buckets where they fit whole."""
    c = COARSER[res]
    hist: latency.Histogram = {}

    def whole(s: int) -> bool:
        return c is not None and s >= start and s + c <= last

    for row in coarse:
        if whole(row[0]) and row[8]:
            latency.merge(hist, latency.decode(row[8]))
    for s, row in fine.items():
        if start <= s < last and row[8] and not (c is not None and whole(floor_to(s, c))):
            latency.merge(hist, latency.decode(row[8]))
    return hist


def build_history(slug: str, rng: Range, as_of: datetime, spans: Sequence[Span], key: str,
                  closed: Closed | None, fine: Sequence[Bucket], coarse: Sequence[Bucket] = ()
                  ) -> tuple[HistoryDocument, Closed]:
    """The history answer of one service for one range, and its closed part for the next build.

    With a ``closed`` part that is ``reusable``, ``fine`` holds the range's buckets that
    left the range since, and those from ``closed.upto`` on; without, every bucket of the
    range, and ``coarse`` the next coarser resolution's buckets (for the summary's
    histogram). The points are kept as pre-serialized JSON (``points_of`` reads them back);
    the answer's ``series`` holds what the charts draw of them.
    """
    step = rng.resolution_s
    start, end = window(rng, as_of)
    last = end - step                                  # the bucket in progress
    rows = {r[0]: r for r in fine}
    inc_s = incident_seconds(spans, start, step, rng.buckets, min(end, to_epoch(as_of)))
    if closed is not None:             # carried forward: drop what left the range, add what closed since
        gone = (start - closed.first) // step
        points, counts, hist = _drop_points(closed.points, gone), list(closed.counts), dict(closed.hist)
        series = closed.series.after(gone)
        for s in range(closed.first, start, step):
            if s in rows:
                _add(counts, hist, rows[s], -1)
        first_new = closed.upto
        for s in range(first_new, last, step):
            if s in rows:
                _add(counts, hist, rows[s], 1)
        if min(counts) < 0 or any(n < 0 for n in hist.values()):
            raise Unbalanced(f"{slug} {rng.name}: kept sums no longer match the buckets")
    else:                              # made anew: the histogram from coarser buckets where they fit
        points, counts, first_new = "", [0, 0, 0, 0], start
        hist = _cold_hist(start, last, step, rows, coarse)
        series = Series([], [], [], [])
        for s in range(start, last, step):
            if s in rows:
                _add(counts, {}, rows[s][:8] + (None,), 1)
    new = [point_json(s, rows.get(s), inc_s[(s - start) // step]) for s in range(first_new, last, step)]
    points = ",".join(([points] if points else []) + new)
    series = series.then(_series_of([rows.get(s) for s in range(first_new, last, step)]))
    kept = Closed(start, last, key, points, (counts[0], counts[1], counts[2], counts[3]), hist, series,
                  closed.drawn if closed is not None else {})
    now_row = rows.get(last)
    total, total_hist = list(counts), dict(hist)
    if now_row is not None:
        _add(total, total_hist, now_row, 1)
    open_point = point_json(last, now_row, inc_s[-1])
    doc = HistoryDocument({"service": slug, "range": rng.name, "resolution": rng.resolution,
           "resolution_s": step, "from": iso(from_epoch(start)), "to": iso(from_epoch(end)),
           "as_of": iso(as_of), "summary": summary(total, total_hist, sum(inc_s)),
           "count": rng.buckets, "points": orjson.Fragment(f"[{points},{open_point}]" if points else f"[{open_point}]")})
    doc.series = series.then(_series_of([now_row]), iso_epoch(start), iso_epoch(last))
    doc.open_point, doc.drawn = open_point, kept.drawn
    return doc, kept


def summary(counts: Sequence[int], hist: latency.Histogram, incident_s: int) -> dict[str, Any]:
    """The summary of a range from its buckets' sums (up, down, maintenance, excluded) and merged histogram."""
    up, down, maintenance, excluded = counts
    return {"availability": availability(up, down),
            "latency_p50_ms": latency.percentile(hist, 0.50),
            "latency_p95_ms": latency.percentile(hist, 0.95),
            "checks": up + down, "failed": down, "maintenance": maintenance, "excluded": excluded,
            "incident_minutes": round(incident_s / 60)}
