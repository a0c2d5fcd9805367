"""``statusgen simulate``: fill a store quickly with realistic synthetic history.

For N services over D days it writes a matching configuration and a store
holding what D days of one check per minute would have left: raw results for
the retention window, buckets at every published resolution for its range,
incidents for the outages, the current states, and the runs. Each service has
its own seeded profile: a typical latency, outages (a few a month, minutes to
hours), slow spells, and maintenance windows. Buckets are computed from the
profile's timeline directly, not from millions of individual results, so a
90-day store for 1,000 services fills in seconds.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from statusgen import latency
from statusgen.decide.health import RunRecord
from statusgen.decide.incidents import SEVERITY, Incident, IncidentUpdate, incident_id, title_for
from statusgen.decide.reports import Credits, Tally, month_bounds, split_by_month
from statusgen.decide.state import ServiceState
from statusgen.i18n import Said, said, said_duration, said_plural, said_time
from statusgen.model import Status
from statusgen.store import RAW_RETENTION_S, RESOLUTIONS, Store
from statusgen.timeutil import floor_to, from_epoch, to_epoch

CATEGORIES = {
    "cloud": "Cloud",
    "developer-tools": "Developer tools",
    "payments": "Payments",
    "communication": "Communication",
    "data": "Data and storage",
}
MINUTE = 60
#: The simulated checks as a reader sees them: every one is on loopback (``config_text``'s and the
#: demo's targets), timed out after 10 s when down, after the site's default of failed cycles.
CHECK_LABEL = "127.0.0.1"
TIMEOUT_S = 10
FAILURES_TO_OPEN = 3


@dataclass
class Profile:
    """One service's synthetic behaviour: periods as (start, end) epoch seconds."""

    slug: str
    median_ms: float
    outages: list[tuple[int, int]] = field(default_factory=list)
    slow: list[tuple[int, int]] = field(default_factory=list)
    maintenance: list[tuple[int, int]] = field(default_factory=list)


def _periods(
    rng: random.Random, start: int, end: int, per_day: float, lo_min: int, hi_min: int
) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    t = start
    while True:
        t += int(rng.expovariate(per_day / 86400.0))
        if t >= end:
            return out
        length = rng.randint(lo_min, hi_min) * MINUTE
        out.append((floor_to(t, MINUTE), floor_to(t, MINUTE) + length))
        t += length


@dataclass(frozen=True)
class Simulated:
    """A service to simulate: its slug and name; its typical latency (drawn when None); how
    often it has an outage."""

    slug: str
    name: str
    median_ms: float | None = None
    outages_per_day: float = 1 / 12


def numbered(n: int) -> list[Simulated]:
    """The services of ``config_text``: service-0000, service-0001..."""
    return [Simulated(f"service-{i:04d}", f"Service {i:04d}") for i in range(n)]


def profile(service: Simulated, start: int, end: int, seed: int) -> Profile:
    rng = random.Random(f"{seed}:{service.slug}")
    median = rng.uniform(25, 250)
    # An outage still going on at the end is cut there: its incident is then open, never
    # resolved at a time still to come.
    outages = [(s, min(e, end)) for s, e in _periods(rng, start, end, service.outages_per_day, 3, 150)]
    return Profile(
        service.slug,
        median if service.median_ms is None else service.median_ms,
        outages=outages,
        slow=_periods(rng, start, end, 1 / 10, 30, 360),
        maintenance=_periods(rng, start, end, 1 / 30, 30, 120),
    )


def overlap(periods: list[tuple[int, int]], a: int, b: int, step: int = MINUTE) -> int:
    """How many checks ``step`` seconds apart in [a, b) fall in ``periods``."""
    return sum(max(0, min(b, e) - max(a, s)) for s, e in periods if s < b and e > a) // step


# -- latency histograms from a log-normal, cached per (median, count) ---------------

SIGMA = 0.35


def _weights(median: float) -> list[tuple[int, float]]:
    """Share of answers per histogram bin for a log-normal around ``median``."""
    lo, hi = latency.bin_of(median * math.exp(-4 * SIGMA)), latency.bin_of(median * math.exp(4 * SIGMA))
    cdf = [
        0.5 * (1 + math.erf((math.log(latency.GROWTH**b) - math.log(median)) / (SIGMA * math.sqrt(2))))
        for b in range(lo, hi + 2)
    ]
    return [(b, cdf[i + 1] - cdf[i]) for i, b in enumerate(range(lo, hi + 1)) if cdf[i + 1] > cdf[i]]


class HistCache:
    def __init__(self) -> None:
        self.weights: dict[int, list[tuple[int, float]]] = {}
        self.blobs: dict[tuple[int, int], bytes] = {}
        self._decoded: dict[bytes, latency.Histogram] = {}

    def decoded(self, blob: bytes) -> latency.Histogram:
        if blob not in self._decoded:
            self._decoded[blob] = latency.decode(blob)
        return self._decoded[blob]

    def blob(self, median: float, count: int) -> bytes:
        key = (round(median), count)
        if key not in self.blobs:
            w = self.weights.setdefault(key[0], _weights(max(1.0, key[0])))
            hist = {b: n for b, share in w if (n := round(share * count)) > 0}
            if not hist and count:
                hist = {latency.bin_of(median): count}
            self.blobs[key] = latency.encode(hist)
        return self.blobs[key]


# -- what the store gets --------------------------------------------------------------


def bucket_rows(
    p: Profile, res: int, start: int, now: int, cache: HistCache, step: int = MINUTE
) -> Iterator[tuple[Any, ...]]:
    for b in range(floor_to(start, res), now, res):
        a, e = max(b, start), min(b + res, now)
        checks = (e - a) // step
        if checks <= 0:
            continue
        maint = min(checks, overlap(p.maintenance, a, e, step))
        down = max(0, min(checks - maint, overlap(p.outages, a, e, step)))
        up = checks - maint - down
        slow = min(up, overlap(p.slow, a, e, step))
        median = p.median_ms * (4 if slow * 2 > up else 1)
        yield (res, b, p.slug, up, down, slow, maint, 0, cache.blob(median, up), None, None)


def consistent_rows(p: Profile, start: int, end: int, cache: HistCache, step: int = MINUTE) -> list[tuple[Any, ...]]:
    """Buckets at every resolution, each kept for its retention, and each coarser one the sum
    of the finer ones it holds, as the store's own aggregation makes them: 5-minute buckets
    for their retention, hours before that, and 6-hour and day buckets summed from hours."""
    fine_from = max(start, floor_to(end - RESOLUTIONS[300], 3600))
    five = list(bucket_rows(p, 300, fine_from, end, cache, step))
    hours = list(bucket_rows(p, 3600, start, fine_from, cache, step)) + _summed(five, 3600, cache)
    rows = five + hours + _summed(hours, 21600, cache) + _summed(hours, 86400, cache)
    return [r for r in rows if r[1] >= end - RESOLUTIONS[r[0]]]


def _summed(rows: list[tuple[Any, ...]], res: int, cache: HistCache) -> list[tuple[Any, ...]]:
    groups: dict[int, list[tuple[Any, ...]]] = {}
    for r in rows:
        groups.setdefault(floor_to(r[1], res), []).append(r)
    out = []
    for b, members in groups.items():
        hist: latency.Histogram = {}
        for r in members:
            latency.merge(hist, cache.decoded(r[8]))
        out.append(
            (
                res,
                b,
                members[0][2],
                *(sum(r[i] for r in members) for i in range(3, 8)),
                latency.encode(hist),
                None,
                None,
            )
        )
    return out


def raw_rows(p: Profile, start: int, now: int, rng: random.Random, step: int = MINUTE) -> Iterator[tuple[Any, ...]]:
    for t in range(floor_to(start, step), now, step):
        flag = "maintenance" if overlap(p.maintenance, t, t + step, step) else None
        if overlap(p.outages, t, t + step, step) and flag is None:
            yield (p.slug, 0, t, "timeout", None, None, 0, None, None)
            continue
        slow = overlap(p.slow, t, t + step, step) > 0
        ms = round(p.median_ms * (4 if slow else 1) * math.exp(rng.gauss(0, SIGMA)), 1)
        yield (p.slug, 0, t, "ok", ms, 200, int(ms > 2000), flag, None)


def _timed_out() -> Said:
    return said("%(check)s timed out after %(seconds)s s", check=CHECK_LABEL, seconds=str(TIMEOUT_S))


def incidents_of(p: Profile, name: str, now: int) -> list[Incident]:
    """An incident for each outage: resolved where it ended, open where it lasts until ``now``.
    Its title and updates are the sentences the live decisions make (``decide.incidents``), so
    that every language of the site says them."""
    out = []
    for s, e in p.outages:
        start, end = from_epoch(s), from_epoch(e) if e < now else None
        opened = said_plural(
            "Opened after %(streak)s failed cycle in a row: %(failing)s.",
            "Opened after %(streak)s failed cycles in a row: %(failing)s.",
            FAILURES_TO_OPEN,
            streak=FAILURES_TO_OPEN,
            failing=_timed_out(),
        )
        updates: tuple[IncidentUpdate, ...] = (IncidentUpdate(start, "opened", "major_outage", opened),)
        if end is not None:
            lasted = said_duration((end - start).total_seconds())
            recovered = said("Recovered after %(lasted)s.", lasted=lasted)
            updates += (IncidentUpdate(end, "resolved", "operational", recovered),)
        title = title_for(name, Status.MAJOR_OUTAGE)
        severity = SEVERITY[Status.MAJOR_OUTAGE]
        out.append(Incident(incident_id(p.slug, start), p.slug, title, severity, start, end, updates))
    return out


def month_tallies(p: Profile, start: int, end: int) -> Credits:
    """The service's monthly rollups over [start, end), as its runs would have credited them:
    maintenance first, then outage (a major outage), the rest operational."""
    out: Credits = {}
    for month, _ in split_by_month(start, end):
        first, after = month_bounds(month)
        a, b = max(start, first), min(end, after)
        maintenance = overlap(p.maintenance, a, b, 1)
        down = min(b - a - maintenance, overlap(p.outages, a, b, 1))
        tally = Tally()
        tally.seconds.update(
            {
                Status.MAINTENANCE.value: maintenance,
                Status.MAJOR_OUTAGE.value: down,
                Status.OPERATIONAL.value: b - a - maintenance - down,
            }
        )
        out[(p.slug, month)] = tally
    return out


def current_state(p: Profile, now: int, step: int = MINUTE) -> ServiceState:
    at = from_epoch(now - step)
    ongoing = [s for s, e in p.outages if s < now <= e]
    status = Status.MAJOR_OUTAGE if ongoing else Status.OPERATIONAL
    since = ongoing[0] if ongoing else max((e for s, e in p.outages if e <= now), default=now - 86400)
    if ongoing:
        reason = said("%(failing)s; failing since %(since)s.", failing=_timed_out(), since=said_time(from_epoch(since)))
    else:
        reason = said("The check answers as expected.")
    return ServiceState(
        status=status,
        since=from_epoch(since),
        reason=reason,
        sources=("checks",),
        observed_at=at,
        own_status=status,
        own_since=from_epoch(since),
        incident_basis=status,
    )


def config_text(n: int, store: Path, output: Path, interval: int = MINUTE) -> str:
    lines = [
        "# Written by statusgen simulate: synthetic services for benchmarks and demos.",
        "[site]",
        'title = "Simulated status"',
        'base_url = "https://status.example.org"',
        f"interval = {interval}",
        f'store = "{store}"',
        f'output = "{output}"',
        "# Nothing answers at the checks' port 9 (discard): a run's failures need no confirming.",
        "confirm = 0",
        "",
        "[categories]",
    ]
    lines += [f'{k} = "{v}"' for k, v in CATEGORIES.items()]
    cats = list(CATEGORIES)
    for i in range(n):
        lines += [
            "",
            "[[services]]",
            f'slug = "service-{i:04d}"',
            f'name = "Service {i:04d}"',
            f'category = "{cats[i % len(cats)]}"',
            "[[services.checks]]",
            f'url = "http://127.0.0.1:9/service-{i:04d}"',
            "timeout = 10",
        ]
    return "\n".join(lines) + "\n"


def simulate(
    n: int,
    days: int,
    db: Path,
    now: datetime,
    seed: int = 1,
    progress: Callable[[int], None] = lambda _: None,
    interval: int = MINUTE,
) -> None:
    """Fill ``db`` with ``days`` of history for ``n`` services (those of ``config_text``) checked every
    ``interval`` seconds, ending at ``now``."""
    fill(numbered(n), days, db, now, seed, progress, interval)


def fill(
    services: list[Simulated],
    days: int,
    db: Path,
    now: datetime,
    seed: int = 1,
    progress: Callable[[int], None] = lambda _: None,
    interval: int = MINUTE,
) -> None:
    """Fill ``db`` with ``days`` of history for ``services`` checked every ``interval`` seconds
    (a whole number of minutes), ending at ``now``. Past the buckets' longest retention, only the
    monthly rollups and the incidents are kept, as a real store keeps them."""
    end = floor_to(to_epoch(now), interval)
    start = end - days * 86400
    kept = max(start, floor_to(end - max(RESOLUTIONS.values()), 86400))
    store = Store(db)
    cache, rng = HistCache(), random.Random(seed)
    try:
        store.record_run(RunRecord(0, from_epoch(start), from_epoch(start + 1), len(services), 0))
        for service in services:
            p = profile(service, start, end, seed)
            rows = consistent_rows(p, kept, end, cache, interval)
            raw = raw_rows(p, max(start, end - RAW_RETENTION_S), end, rng, interval)
            states = {p.slug: current_state(p, end, interval)}
            months = month_tallies(p, start, end)
            store.bulk_load(rows, raw, states, incidents_of(p, service.name, end), months)
            progress(1)
        store.record_run(RunRecord(0, from_epoch(end - 5), from_epoch(end), len(services), 0))
    finally:
        store.close()
