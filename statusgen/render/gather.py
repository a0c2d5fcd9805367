"""Gather: what a build needs of the whole site, read from the store in one place.

Each service's own measurements (its last day of results, its buckets) are
read when that service is rendered (``render.service``), by the process that
renders it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import cached_property
from typing import Any, NamedTuple

import orjson

from statusgen.config import Config, ServiceConfig
from statusgen.config.operatorfiles import OperatorFiles
from statusgen.decide.health import RunRecord
from statusgen.decide.history import Span
from statusgen.decide.incidents import Incident
from statusgen.decide.operator import manual_incident, with_notes
from statusgen.decide.reports import Tally, month_of, months_before
from statusgen.decide.state import ServiceState
from statusgen.model import CheckResult
from statusgen.store import Store
from statusgen.store.failures import DECODING, damaged
from statusgen.store.locations import BatchRecord, InboxListing
from statusgen.timeutil import to_epoch
from statusgen.vendors.model import VendorRow


class IncidentRow(NamedTuple):
    """An incident as the store lists it: its service, start and end (None while open) in epoch
    seconds, and its record as stored (JSON text, ``Incident.to_json``)."""

    service: str
    started: int
    ended: int | None
    record: str
    source: str = "checks"  # or "operator": a manual incident of the notes folder


@dataclass(frozen=True)
class SiteData:
    config: Config
    now: datetime  # used only to judge staleness
    states: dict[str, ServiceState]
    incidents: list[IncidentRow]  # newest first
    last_run: RunRecord | None  # the last finished run
    epoch: datetime  # when this site first ran; dates the feed ids
    vendors: dict[str, VendorRow] = field(default_factory=dict)  # service -> its vendor source as stored
    versions: dict[str, int] = field(default_factory=dict)  # service -> its measurements version
    by_service: dict[str, list[IncidentRow]] = field(default_factory=dict)  # each service's incidents
    notifications: dict[str, int] = field(default_factory=dict)  # the outbox's counts (Store.notification_counts)
    months: dict[str, dict[str, Tally]] = field(default_factory=dict)  # service -> month -> its rollup
    batches: dict[str, BatchRecord] = field(default_factory=dict)  # each location's last taken (Store.last_batches)
    refused: dict[str, BatchRecord] = field(default_factory=dict)  # ...and last refused (Store.last_refusals)
    inbox: InboxListing | None = None  # what the inbox's last listing held besides batches
    refusals: dict[str, int] = field(default_factory=dict)  # each location's batches refused in the last day
    # service -> location -> its fresh results (within site.stale_after), oldest first: [[locations]] only
    elsewhere: dict[str, dict[str, list[CheckResult]]] = field(default_factory=dict)

    def state(self, slug: str) -> ServiceState:
        return self.states.get(slug) or ServiceState()

    @cached_property
    def vendor_views(self) -> dict[str, Any]:
        """Each service's last good vendor view, parsed once a process: its record, the record's key
        and the site's maintenance all read it."""
        views = {}
        for slug, row in self.vendors.items():
            try:
                views[slug] = orjson.loads(row.view_json) if row.view_json else None
            except DECODING:
                raise damaged(None, "vendor view", slug) from None
        return {slug: view for slug, view in views.items() if view is not None}

    def service(self, slug: str) -> ServiceConfig:
        return self.config.by_slug[slug]

    def incidents_of(self, slug: str) -> list[IncidentRow]:
        """One service's incidents, newest first."""
        return self.by_service.get(slug, [])

    def spans_of(self, slug: str) -> list[Span]:
        """One service's incidents as its history counts them."""
        return [(i.started, i.ended) for i in self.incidents_of(slug)]

    @property
    def time(self) -> datetime:
        """The time the data holds as of: the last finished run, else the newest observation."""
        if self.last_run and self.last_run.finished_at:
            return self.last_run.finished_at
        observed = [s.observed_at for s in self.states.values() if s.observed_at]
        return max(observed) if observed else self.now


def as_of_service(data: SiteData, svc: ServiceConfig) -> datetime:
    """The time a service's data holds as of: its last observation, else the site's."""
    return data.state(svc.slug).observed_at or data.time


def gather(store: Store, config: Config, now: datetime) -> SiteData:
    incidents = with_operator(config, [IncidentRow(*row) for row in store.incident_records()])
    by_service: dict[str, list[IncidentRow]] = {}
    for row in incidents:
        by_service.setdefault(row.service, []).append(row)
    return SiteData(
        config=config,
        now=now,
        states=store.states(),
        incidents=incidents,
        last_run=store.last_finished_run(),
        epoch=store.first_run_started() or now,
        vendors=store.vendor_rows(),
        versions=store.data_versions(),
        by_service=by_service,
        notifications=store.notification_counts(),
        months=store.months(months_before(month_of(to_epoch(now)), config.site.report_months - 1)),
        batches=store.last_batches() if config.locations else {},
        refused=store.last_refusals() if config.locations else {},
        inbox=store.last_listing() if config.locations else None,
        refusals=store.refusals(now - timedelta(days=1)) if config.locations else {},
        elsewhere=_elsewhere(store, config, now),
    )


def _elsewhere(store: Store, config: Config, now: datetime) -> dict[str, dict[str, list[CheckResult]]]:
    if not config.locations:
        return {}
    since = now - timedelta(seconds=config.site.stale_after_s)
    return store.fresh_by_service(since, [loc.name for loc in config.locations])


def with_operator(config: Config, stored: list[IncidentRow]) -> list[IncidentRow]:
    """The stored incidents, each with the operator's notes on it (a closed incident's too: a run
    adds them to the open ones), and the manual incidents of the notes folder; newest first."""
    files = config.operator
    if not files.notes and not files.incidents:
        return stored
    noted = {n.incident.rsplit("-", 1)[0] for n in files.notes}  # an id begins with its service's slug
    rows = [_noted(row, files) if row.service in noted else row for row in stored]
    for m in files.incidents:
        if m.service in config.by_slug:
            made = with_notes(manual_incident(m, config.by_slug[m.service].name), files.notes_on(m.id))
            ended = to_epoch(made.ended_at) if made.ended_at else None
            rows.append(IncidentRow(m.service, to_epoch(made.started_at), ended, _record(made), "operator"))
    return sorted(rows, key=lambda r: r.started, reverse=True)  # stable: the store's order among equals


def _noted(row: IncidentRow, files: OperatorFiles) -> IncidentRow:
    try:
        incident = Incident.from_json(orjson.loads(row.record))
    except DECODING:
        raise damaged(None, "incident", row.service, row.started) from None
    noted = with_notes(incident, files.notes_on(incident.id))
    return row if noted == incident else row._replace(record=_record(noted))


def _record(incident: Incident) -> str:
    return orjson.dumps(incident.to_json()).decode()
