"""Decision: every decision of one run, for every service. Pure.

``decide_cycle`` takes the configuration, the previous states and open
incidents, the run's results, the vendors' observations and the verdict on
our own vantage point, and returns each service's next state, the incidents
opened or changed, and each result with the flag that says how history
counts it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from statusgen.config import Config, ServiceConfig
from statusgen.decide.confirm import Round, rounds
from statusgen.decide.incidents import Incident, advance, link_vendor
from statusgen.decide.merge import merge, usable_view, vendor_says, view_status
from statusgen.decide.operator import operator_state, with_notes
from statusgen.decide.quorum import counted_from_elsewhere, labelled, seen_by
from statusgen.decide.state import ServiceState, decide, paused, under_maintenance
from statusgen.decide.vantage import Vantage
from statusgen.i18n import said, said_time
from statusgen.model import EXCLUDED_FLAG, MAINTENANCE_FLAG, QUORUM_FLAG, CheckResult, Status
from statusgen.vendors import VendorView
from statusgen.vendors.model import VendorObservation


@dataclass(frozen=True)
class StoredResult:
    """A result as read back, with the flag set on it by the decisions."""

    result: CheckResult
    flag: str | None  # None (counted), or why not: MAINTENANCE_FLAG, EXCLUDED_FLAG or QUORUM_FLAG


@dataclass(frozen=True)
class Decisions:
    states: dict[str, ServiceState]
    incidents: list[Incident]  # incidents opened or changed this cycle
    results: list[StoredResult]  # results with the flags the decisions set


def decide_cycle(
    config: Config,
    prev_states: dict[str, ServiceState],
    open_incidents: dict[str, Incident],
    results: Sequence[CheckResult],
    now: datetime,
    vendors: Mapping[str, VendorObservation] | None = None,
    vantage: Vantage | None = None,
    elsewhere: Mapping[str, Mapping[str, Sequence[CheckResult]]] | None = None,
    counted_since: datetime | None = None,
) -> Decisions:
    """Every decision of a cycle: each service's state, merged with its vendor, and its incident.

    Each result is flagged first: inside a maintenance window (configured, or announced by the
    vendor) it is ``maintenance``; failed while the vantage point is suspect, ``excluded``.
    Our own state is decided from the unflagged results alone, then merged with the vendor's
    view and the operator's open manual incidents; an incident follows our own state only, and
    carries the operator's notes on it (``decide.operator``).

    ``elsewhere``: each service's fresh results from the other locations, by location (a site
    with [[locations]]). The quorum of them and this host then decides (``decide.quorum``): a
    failure it confirms is counted with this host's results, in the state and in history (the
    results newer than ``counted_since``, the previous run); this host's failures it does not
    confirm are set aside (``quorum``), and the state says where it fails.

    ``results`` may hold several tries of a check (``decide.confirm``): each round of them is a
    cycle of the state machine, and history keeps each check's last.
    """
    vendors = vendors or {}
    suspect = vantage is not None and vantage.suspect
    by_service: dict[str, list[CheckResult]] = defaultdict(list)
    for r in results:
        by_service[r.service].append(r)
    states: dict[str, ServiceState] = {}
    changed: list[Incident] = []
    flagged: list[StoredResult] = []
    for svc in config.services:
        prev = prev_states.get(svc.slug) or ServiceState()
        tries = rounds(by_service.get(svc.slug, [])) or [Round(now, [])]
        if suspect:  # tries again confirm nothing when our own path is at fault: the run as first seen
            tries = tries[:1]
        mine = tries[-1].results  # what the run concluded of each check: history keeps it
        obs = vendors.get(svc.slug)
        view = usable_view(obs, svc, now)
        vendor_maintenance = view is not None and view_status(view) is Status.MAINTENANCE
        seen = None
        if elsewhere and svc.checks and not svc.paused:
            seen = seen_by(config.site.location, mine, elsewhere.get(svc.slug, {}), config.site.quorum)
        minority = seen is not None and seen.minority

        flagged += [StoredResult(r, result_flag(r, svc, now, vendor_maintenance, suspect, minority)) for r in mine]
        extra = counted_from_elsewhere(seen, config.site.location) if seen else []
        # the other locations' results the quorum counts are history's as they are the state's; each
        # once: those an earlier run counted are older than ``counted_since``
        flagged += [
            StoredResult(replace(r, location=None), None)
            for r in extra
            if counted_since is None or r.ts > counted_since
        ]
        vendor_view = view if vendor_maintenance else None
        own = prev
        for tried in tries:  # each round of tries within the run is a cycle of the state machine
            flags = [result_flag(r, svc, now, vendor_maintenance, suspect, minority) for r in tried.results]
            counted = [*tried.results, *extra]
            own = own_state(own, svc, counted, [*flags, *[None] * len(extra)], now, vendor_view, tried.at)
        new = merge(prev, own, svc, obs, now)
        new = operator_state(new, (m for m in config.operator.incidents if m.service == svc.slug), now)
        if seen is not None:
            new = labelled(new, prev, seen, config.site.minority_failure == "degraded", now)
        states[svc.slug] = new
        current = open_incidents.get(svc.slug)
        after = advance(current, prev, new, svc, now)
        if after is not None and after.open and obs is not None and obs.view is not None:
            after = link_vendor(after, obs.view, now)
        if after is not None:  # the operator's notes on it: new ones are told as its updates
            after = with_notes(after, config.operator.notes_on(after.id))
        if after is not None and after != current:
            changed.append(after)
    return Decisions(states, changed, flagged)


def result_flag(
    r: CheckResult, svc: ServiceConfig, now: datetime, vendor_maintenance: bool, suspect: bool, minority: bool = False
) -> str | None:
    """How a result counts: None (counted), or why it counts toward nothing (see ``model.FLAG_WORDS``):
    ``minority``, the failures of this host that fewer locations than the quorum see."""
    if vendor_maintenance or svc.maintenance_at(now) or svc.maintenance_at(r.ts):
        return MAINTENANCE_FLAG
    if suspect and not r.up:
        return EXCLUDED_FLAG
    if minority and not r.up:
        return QUORUM_FLAG
    return None


def own_state(
    prev: ServiceState,
    svc: ServiceConfig,
    results: Sequence[CheckResult],
    flags: Sequence[str | None],
    now: datetime,
    vendor_maintenance: VendorView | None,
    at: datetime | None = None,
) -> ServiceState:
    """The service's state from its own counted results, before the vendor's view is merged in;
    ``at``, when they were seen (by default their first's time)."""
    if svc.paused:
        return paused(prev, now)
    window = svc.maintenance_at(now)
    if window is not None:
        until = said_time(window.end) if window.end else said("its end")
        reason = said("Scheduled maintenance: %(title)s (until %(until)s).", title=window.title, until=until)
        return under_maintenance(prev, svc, results, window.start or now, reason, "schedule")
    if vendor_maintenance is not None:
        # Our own view enters maintenance when we first read it (the vendor's start is the merge's).
        reason = said("%(vendor)s.", vendor=vendor_says(vendor_maintenance))
        return under_maintenance(prev, svc, results, now, reason, "vendor")
    counted = [r for r, f in zip(results, flags, strict=True) if f is None]
    set_aside = [(r, f) for r, f in zip(results, flags, strict=True) if f is not None]
    return decide(prev, svc, counted, now, set_aside, at)
