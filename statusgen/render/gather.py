"""Gather: what a build needs, read from the store in one place.

``gather`` reads what the whole site needs; each service's histories are
read as the service is rendered, through ``HistorySource`` (which also
keeps their closed points for the next build). The documents, feeds and
pages are pure functions of the ``SiteData`` and of those histories.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import cached_property
from typing import Any

import orjson

from statusgen.config import Config, ServiceConfig
from statusgen.decide.health import RunRecord
from statusgen.decide.history import (
    COARSER,
    Closed,
    Span,
    Unbalanced,
    build_history,
    incidents_key,
    reusable,
    window,
)
from statusgen.decide.incidents import Incident, current_record
from statusgen.decide.state import ServiceState
from statusgen.model import RANGES, Range
from statusgen.store import Store
from statusgen.vendors.stage import VendorRow

#: An incident as the store lists it: its service, start and end (None while open) in epoch
#: seconds, and its JSON record.
IncidentRecord = tuple[str, int, "int | None", str]
#: A record read (``Incidents.loaded``): the record, the incident's start and end (None while open).
Loaded = tuple[dict[str, Any], int, "int | None"]


class Incidents:
    """statusgen's incidents, newest first, as the store lists them, for a build: nothing is made
    of a record until it is asked for, and no build makes ``Incident`` objects of them all. A
    service's history counts its incidents' spans (from the store's columns); the lists, feeds
    and pages are made of the records as JSON (``loaded``, then ``documents.incident_document``);
    the keys of the feeds and of a service's files are made of the records' text as stored."""

    def __init__(self, records: Iterable[IncidentRecord]):
        self._records = list(records)

    @cached_property
    def _by_service(self) -> dict[str, list[IncidentRecord]]:
        out: dict[str, list[IncidentRecord]] = {}
        for record in self._records:
            out.setdefault(record[0], []).append(record)
        return out

    def __len__(self) -> int:
        return len(self._records)

    def open_count(self) -> int:
        return sum(1 for _, _, ended, _ in self._records if ended is None)

    def spans_of(self, slug: str) -> list[Span]:
        """One service's incidents as its history counts them, newest first."""
        return [(started, ended) for _, started, ended, _ in self._by_service.get(slug, [])]

    def records(self) -> list[str]:
        """Every JSON record as stored, newest first."""
        return [record for _, _, _, record in self._records]

    def records_of(self, slug: str) -> list[str]:
        """One service's JSON records as stored, newest first (what its files are keyed by)."""
        return [record for _, _, _, record in self._by_service.get(slug, [])]

    def loaded(self, slug: str | None = None, open_only: bool = False) -> list[Loaded]:
        """Records read (in the form ``Incident.to_json`` writes), each with its start and end,
        newest first: every incident's, or one service's; all, or the open ones."""
        chosen = self._records if slug is None else self._by_service.get(slug, [])
        return [(current_record(orjson.loads(record)), started, ended) for _, started, ended, record in chosen
                if not open_only or ended is None]

    def open_of(self, slug: str) -> Incident | None:
        """One service's open incident, if it has one."""
        found = next((record for _, _, ended, record in self._by_service.get(slug, []) if ended is None), None)
        return None if found is None else Incident.from_json(orjson.loads(found))


@dataclass(frozen=True)
class SiteData:
    config: Config
    now: datetime                                  # used only to judge staleness
    states: dict[str, ServiceState]
    incidents: Incidents                           # newest first
    last_run: RunRecord | None                     # the last finished run
    last_day_since: datetime                       # the last day of results starts here (rows: ``history``)
    history: HistorySource                         # each service's histories, read when rendered
    epoch: datetime                                # when this site first ran; dates the feed ids
    vendors: dict[str, VendorRow] = field(default_factory=dict)  # service -> its vendor source as stored
    versions: dict[str, int] = field(default_factory=dict)       # service -> its measurements version

    def state(self, slug: str) -> ServiceState:
        return self.states.get(slug) or ServiceState()

    def service(self, slug: str) -> ServiceConfig:
        return self.config.by_slug[slug]


def data_time(data: SiteData) -> datetime:
    """The time the data holds as of: the last finished run, else the newest observation."""
    if data.last_run and data.last_run.finished_at:
        return data.last_run.finished_at
    observed = [s.observed_at for s in data.states.values() if s.observed_at]
    return max(observed) if observed else data.now


class HistorySource:
    """A build's reads of a service's measurements as the service is rendered (by the process
    rendering it: a forked one reads through a connection of its own): its last day of
    results, its buckets and kept points; and its writes of the points that closed, and of
    what the pages drew of them (saved in batches, so a build holds a few services' worth at
    once; a batch is saved when the next service is read, after the pages of its services)."""

    BATCH = 128

    def __init__(self, store: Store):
        self.store = store
        self.pending: list[tuple[str, int, Closed]] = []
        # kept points carried as they were: what their charts were as read, to save them if redrawn
        self.watched: list[tuple[str, int, dict[str, Any], dict[str, Any]]] = []

    def last_day(self, slug: str, since: datetime) -> tuple[int, str]:
        """The service's results from ``since`` on: their count and JSON rows."""
        return self.store.last_day_json(slug, since)

    def last_day_count(self, slug: str, since: datetime) -> int:
        """The count of ``last_day``, without its rows."""
        return self.store.last_day_count(slug, since)

    def histories(self, slug: str, as_of: datetime, spans: list[Span]) -> dict[str, dict[str, Any]]:
        """The service's four history documents, by range name (``spans``: its incidents')."""
        if len(self.pending) + len(self.watched) >= self.BATCH:
            self.flush()
        cached, key = self.store.history_cache(slug), incidents_key(spans)
        out = {}
        for name, rng in RANGES.items():
            res = rng.resolution_s
            closed = cached.get(res)
            if closed is not None and not reusable(closed, rng, as_of, key):
                closed = None
            try:
                out[name], kept = self._history(slug, rng, as_of, spans, key, closed)
            except Unbalanced:              # kept points that do not add up (never by our own writes): anew
                closed = None
                out[name], kept = self._history(slug, rng, as_of, spans, key, None)
            if closed is None or (kept.first, kept.upto) != (closed.first, closed.upto):
                self.pending.append((slug, res, kept))
            else:
                self.watched.append((slug, res, kept.drawn, dict(kept.drawn)))
        return out

    def _history(self, slug: str, rng: Range, as_of: datetime, spans: list[Span], key: str,
                 closed: Closed | None) -> tuple[dict[str, Any], Closed]:
        span, res = self.store.bucket_span, rng.resolution_s
        start, end = window(rng, as_of)
        if closed is not None:
            fine = (span(slug, res, closed.first, start) if closed.first < start else []) + \
                span(slug, res, closed.upto, end)
            return build_history(slug, rng, as_of, spans, key, closed, fine)
        c = COARSER[res]
        return build_history(slug, rng, as_of, spans, key, None, span(slug, res, start, end),
                             span(slug, c, start, end - res) if c else [])

    def flush(self) -> None:
        redrawn = [(slug, res, now) for slug, res, now, was in self.watched if _changed(now, was)]
        if self.pending or redrawn:
            self.store.save_history_cache(self.pending, redrawn)
        self.pending.clear()
        self.watched.clear()


def _changed(drawn: dict[str, Any], was: dict[str, Any]) -> bool:
    """Whether an entry of ``drawn`` was replaced since ``was`` was copied from it."""
    return drawn.keys() != was.keys() or any(v is not was[k] for k, v in drawn.items())


def gather(store: Store, config: Config, now: datetime) -> SiteData:
    last_run = store.last_finished_run()
    anchor = last_run.finished_at if last_run and last_run.finished_at else now
    since = anchor - timedelta(days=1)
    return SiteData(
        config=config, now=now, states=store.states(), incidents=Incidents(store.incident_records()),
        last_run=last_run,
        last_day_since=since,
        history=HistorySource(store),
        epoch=store.first_run_started() or now, vendors=store.vendor_rows(), versions=store.data_versions(),
    )
