"""Decide: monthly reports (pure). What each run adds to a service's month, and a month's figures.

The accounting rules (docs/api.md, "Monthly reports"; every report states them):

- A month is a calendar month in UTC; the current one counts up to the data's time.
- Each run speaks for the time since the run before it, at most one interval: each service's
  status then (as the run decided it) is credited with that time, split where a month ends. Time
  no run spoke for (the job stopped, the service was not yet configured) is unknown, as is time
  whose status was ``unknown`` (paused, not measured): no data is never counted as up.
- Down time is a major outage's whole time and 30% of a partial outage's (the weighting
  Statuspage and Instatus use); degraded time is up, slow but working.
- Maintenance time is not counted against availability: it leaves the denominator.
- Availability = (counted - down) / counted, where counted is the time known and not in
  maintenance (operational, degraded, partial and major outage). Null when nothing is counted.
- Results the vantage rules set aside (``excluded``) change no status; they are counted.
- A target (``sla``) is met when the availability is at least the target. The error budget of a
  month is the down time the target allows over the month's length less its maintenance;
  what is left is that less the down time so far (negative: overspent).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

from statusgen.decide.health import RunRecord
from statusgen.decide.history import Span
from statusgen.decide.run import StoredResult
from statusgen.decide.state import ServiceState
from statusgen.model import SET_ASIDE, Status

STATUS_COLUMNS: tuple[str, ...] = tuple(s.value for s in Status)
PARTIAL_WEIGHT = 0.3  # a partial outage's share of down time
COUNTED = (Status.OPERATIONAL.value, Status.DEGRADED.value, Status.PARTIAL_OUTAGE.value, Status.MAJOR_OUTAGE.value)


def month_of(t: int) -> str:
    """The UTC month (``YYYY-MM``) epoch second ``t`` falls in."""
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m")


def month_bounds(month: str) -> tuple[int, int]:
    """The first second of ``month`` and of the month after it."""
    year, number = int(month[:4]), int(month[5:7])
    start = datetime(year, number, 1, tzinfo=UTC)
    end = datetime(year + number // 12, number % 12 + 1, 1, tzinfo=UTC)
    return int(start.timestamp()), int(end.timestamp())


def months_before(month: str, n: int) -> str:
    """The month ``n`` months before ``month``."""
    index = int(month[:4]) * 12 + int(month[5:7]) - 1 - n
    return f"{index // 12:04d}-{index % 12 + 1:02d}"


def split_by_month(a: int, b: int) -> Iterator[tuple[str, int]]:
    """The seconds of [a, b) in each month it touches."""
    while a < b:
        month = month_of(a)
        end = min(b, month_bounds(month)[1])
        yield month, end - a
        a = end


@dataclass
class Tally:
    """One service's month as the store keeps it: the seconds of each status, and the results
    the vantage rules set aside."""

    seconds: dict[str, int] = field(default_factory=lambda: dict.fromkeys(STATUS_COLUMNS, 0))
    excluded: int = 0

    def add(self, other: Tally) -> None:
        for status, s in other.seconds.items():
            self.seconds[status] = self.seconds.get(status, 0) + s
        self.excluded += other.excluded


Credits = dict[tuple[str, str], Tally]  # (service, month) -> what a run adds


def credits(
    statuses: Mapping[str, Status], excluded: Mapping[str, int], previous: int | None, now: int, interval: int
) -> Credits:
    """What one run at ``now`` adds to each service's months: its status over the time since the
    run before (``previous``), at most one interval; the results set aside, in ``now``'s month."""
    start = now - interval if previous is None else max(previous, now - interval)
    out: Credits = {}
    for slug, status in statuses.items():
        for month, seconds in split_by_month(start, now):
            tally = out.setdefault((slug, month), Tally())
            tally.seconds[status.value] += seconds
    for slug, n in excluded.items():
        if n:
            out.setdefault((slug, month_of(now)), Tally()).excluded += n
    return out


def run_credits(
    states: Mapping[str, ServiceState],
    results: Iterable[StoredResult],
    previous: RunRecord | None,
    now: datetime,
    interval: float,
) -> Credits:
    """``credits`` of a run's decisions: ``previous``, the last run finished before it."""
    excluded: dict[str, int] = {}
    for r in results:
        if r.flag in SET_ASIDE:
            excluded[r.result.service] = excluded.get(r.result.service, 0) + 1
    before = int(previous.finished_at.timestamp()) if previous and previous.finished_at else None
    statuses = {slug: state.status for slug, state in states.items()}
    return credits(statuses, excluded, before, int(now.timestamp()), int(interval))


@dataclass(frozen=True)
class MonthFigures:
    """A month's figures, for a service, a category or the site; minutes to a tenth."""

    month: str
    start: int
    end: int  # the month's end, or the data's time in the current month
    complete: bool
    minutes: dict[str, float]  # by status, and "unknown": no data or not measured
    availability: float | None
    down_minutes: float
    maintenance_minutes: float
    incidents: int
    incident_minutes: float
    excluded: int
    sla: float | None = None
    met: bool | None = None
    error_budget_minutes: float | None = None
    error_budget_left_minutes: float | None = None


def _minutes(seconds: float) -> float:
    return round(seconds / 60, 1)


def figures(
    month: str, tally: Tally, incidents: Iterable[Span], now: int, sla: float | None, members: int = 1
) -> MonthFigures:
    """The figures of ``month`` from its tally (a service's, or the sum of ``members`` services')
    and the incidents of the same services; ``now``: the data's time."""
    start, month_end = month_bounds(month)
    end = min(month_end, now)
    known = {status: tally.seconds.get(status, 0) for status in STATUS_COLUMNS if status != Status.UNKNOWN.value}
    covered = sum(known.values())
    unknown = max(0, members * (end - start) - covered) + tally.seconds.get(Status.UNKNOWN.value, 0)
    counted = sum(known[s] for s in COUNTED)
    down = known[Status.MAJOR_OUTAGE.value] + PARTIAL_WEIGHT * known[Status.PARTIAL_OUTAGE.value]
    maintenance = known[Status.MAINTENANCE.value]
    touched = [
        min(end, end if e is None else e) - max(start, s) for s, e in incidents if s < end and (e is None or e > start)
    ]
    availability = round(100.0 * (counted - down) / counted, 3) if counted else None
    budget = left = met = None
    if sla is not None:
        budget = _minutes((1 - sla / 100) * max(0, members * (month_end - start) - maintenance))
        left = round(budget - _minutes(down), 1)
        met = None if availability is None else availability >= sla
    return MonthFigures(
        month=month,
        start=start,
        end=end,
        complete=now >= month_end,
        minutes={**{s: _minutes(v) for s, v in known.items()}, Status.UNKNOWN.value: _minutes(unknown)},
        availability=availability,
        down_minutes=_minutes(down),
        maintenance_minutes=_minutes(maintenance),
        incidents=len(touched),
        incident_minutes=_minutes(sum(touched)),
        excluded=tally.excluded,
        sla=sla,
        met=met,
        error_budget_minutes=budget,
        error_budget_left_minutes=left,
    )


def summed(tallies: Iterable[Tally]) -> Tally:
    total = Tally()
    for t in tallies:
        total.add(t)
    return total
