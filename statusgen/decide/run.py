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
from dataclasses import dataclass
from datetime import datetime

from statusgen.config import Config, ServiceConfig
from statusgen.decide.incidents import Incident, advance, link_vendor
from statusgen.decide.merge import merge
from statusgen.decide.state import ServiceState, decide, paused, under_maintenance
from statusgen.decide.vantage import Vantage
from statusgen.model import CheckResult, Status
from statusgen.vendors.stage import VendorObservation


@dataclass(frozen=True)
class StoredResult:
    """A result as read back, with the flag set on it by the decisions."""

    result: CheckResult
    flag: str | None  # None | "maintenance" | "excluded"


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
) -> Decisions:
    """Every decision of a cycle: each service's state, merged with its vendor, and its incident.

    When the vantage point is suspect, failed results are set aside: flagged
    ``excluded`` and not shown to the state machine.
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
        mine = by_service.get(svc.slug, [])
        counted = [r for r in mine if r.up] if suspect else mine
        obs = vendors.get(svc.slug)
        new = merge(prev, service_decision(prev, svc, counted, now), svc, obs, now)
        flagged += [StoredResult(r, result_flag(r, svc, new, suspect)) for r in mine]
        states[svc.slug] = new
        current = open_incidents.get(svc.slug)
        after = advance(current, prev, new, svc)
        if after is not None and after.open and obs is not None and obs.view is not None:
            after = link_vendor(after, obs.view, now)
        if after is not None and after != current:
            changed.append(after)
    return Decisions(states, changed, flagged)


def result_flag(r: CheckResult, svc: ServiceConfig, state: ServiceState, suspect: bool) -> str | None:
    """How a result counts in history: None (counted), "maintenance" or "excluded" (both left out)."""
    if svc.maintenance_at(r.ts) or state.status is Status.MAINTENANCE:
        return "maintenance"
    if suspect and not r.up:
        return "excluded"
    return None


def service_decision(
    prev: ServiceState, svc: ServiceConfig, results: Sequence[CheckResult], now: datetime
) -> ServiceState:
    if svc.paused:
        return paused(prev, now)
    window = svc.maintenance_at(now)
    if window is not None:
        return under_maintenance(prev, svc, window, results)
    return decide(prev, svc, results, now)
