"""Decision: the health index and the state of our own collection. Pure.

Health index (0-100, one decimal): the mean, over the services whose status is
known and not under maintenance, of a score per status:

    operational 100, degraded 70, partial_outage 40, major_outage 0

``null`` when no service counts. The front page shows this same number.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from statusgen.i18n import N_, said, said_duration
from statusgen.model import Status
from statusgen.timeutil import iso

SCORES: dict[Status, float] = {
    Status.OPERATIONAL: 100.0,
    Status.DEGRADED: 70.0,
    Status.PARTIAL_OUTAGE: 40.0,
    Status.MAJOR_OUTAGE: 0.0,
}
#: How the index is made, its statuses' places filled with their codes (the health document) or
#: their words (the method page).
FORMULA = N_(
    "mean over services with a known status, maintenance excluded, of: %(operational)s 100, "
    "%(degraded)s 70, %(partial_outage)s 40, %(major_outage)s 0; null when no service counts"
)


def health_index(statuses: Iterable[Status]) -> float | None:
    scores = [SCORES[s] for s in statuses if s in SCORES]
    if not scores:
        return None
    return round(sum(scores) / len(scores), 1)


@dataclass(frozen=True)
class RunRecord:
    """One collection run as the store keeps it."""

    id: int
    started_at: datetime
    finished_at: datetime | None
    checks_attempted: int = 0
    checks_failed: int = 0
    vendors_attempted: int = 0
    vendors_failed: int = 0
    probe_ms: float = 0.0
    note: str | None = None  # set when our own vantage point looked at fault
    canaries_attempted: int = 0
    canaries_failed: int = 0
    results_excluded: int = 0

    @property
    def duration_ms(self) -> float | None:
        if self.finished_at is None:
            return None
        return round((self.finished_at - self.started_at).total_seconds() * 1000.0, 1)


def is_stale(last: RunRecord | None, stale_after_s: float, now: datetime) -> bool:
    """Stale: no finished run for more than ``stale_after_s`` (``site.stale_after``: by default
    three intervals), the time after which every document says it is out of date."""
    if last is None or last.finished_at is None:
        return True
    return now - last.finished_at > timedelta(seconds=stale_after_s)


def collection_state(last: RunRecord | None, interval_s: float, stale_after_s: float, now: datetime) -> dict[str, Any]:
    stale = is_stale(last, stale_after_s, now)
    if last is None:
        return {
            "state": "stale",
            "stale": True,
            "interval_s": interval_s,
            "last_run": None,
            "reason": said("No collection run has finished yet."),
        }
    state = "stale" if stale else ("degraded" if last.note else "ok")
    reason = (
        said("No finished run for more than %(lasted)s.", lasted=said_duration(stale_after_s))
        if stale
        else (last.note or said("The last run finished normally."))
    )
    return {
        "state": state,
        "stale": stale,
        "interval_s": interval_s,
        "reason": reason,
        "last_run": {
            "started_at": iso(last.started_at),
            "finished_at": iso(last.finished_at),
            "duration_ms": last.duration_ms,
            "checks_attempted": last.checks_attempted,
            "checks_failed": last.checks_failed,
            "vendor_sources_attempted": last.vendors_attempted,
            "vendor_sources_failed": last.vendors_failed,
            "canaries_attempted": last.canaries_attempted,
            "canaries_failed": last.canaries_failed,
            "results_excluded": last.results_excluded,
        },
    }
