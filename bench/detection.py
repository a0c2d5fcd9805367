"""Seeded detection scenarios through the real decisions (vantage, state, merge, incidents).

Used by `make bench` (bench_detection.py prints the figures) and by
tests/test_detection.py (asserts them). No I/O: results and vendor views are
synthesized. Each scenario knows the truth (which service was really in
trouble, and when), so an incident of ours that covers none of it is false.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta

from statusgen.config import CheckConfig, Config, ServiceConfig, SiteConfig, VendorConfig
from statusgen.decide.confirm import worth_confirming
from statusgen.decide.incidents import Incident
from statusgen.decide.run import decide_cycle
from statusgen.decide.state import ServiceState
from statusgen.decide.vantage import judge_vantage
from statusgen.model import CheckResult, Outcome
from statusgen.vendors import VendorView
from statusgen.vendors.model import VendorIncident, VendorMaintenance, VendorObservation

T0 = datetime(2026, 1, 1, tzinfo=UTC)
VENDOR_SINCE = datetime(2023, 10, 11, 15, 30, tzinfo=UTC)  # a vendor's incident, long before our cycles

# up(service index, cycle) -> does the check answer?
Behaviour = Callable[[int, int], bool]


@dataclass
class Tally:
    opened: dict[str, list[int]] = field(default_factory=dict)  # incident id -> [cycle opened, cycle resolved?]
    services: dict[str, int] = field(default_factory=dict)  # incident id -> service index
    incidents_seen: dict[str, Incident] = field(default_factory=dict)  # incident id -> as last decided
    states: list[dict[str, ServiceState]] = field(default_factory=list)  # after each cycle
    suspect_cycles: list[int] = field(default_factory=list)
    collection_notes: list[str] = field(default_factory=list)
    false_incidents: int = 0

    @property
    def incidents(self) -> int:
        return len(self.opened)


def vendor_view(status: str, at: datetime = VENDOR_SINCE) -> VendorView:
    """What a Statuspage-like vendor says: operational, an incident of this impact, or maintenance."""
    incidents: tuple[VendorIncident, ...] = ()
    maintenance: tuple[VendorMaintenance, ...] = ()
    if status in ("degraded", "partial_outage", "major_outage"):
        incidents = (VendorIncident("v1", "Elevated error rates", status, "investigating", at, at, None, ()),)
    if status == "maintenance":
        maintenance = (VendorMaintenance("m1", "Database upgrade", "in_progress", at, None, None, ()),)
    return VendorView("statuspage", status, None, (), incidents, maintenance, (), at, None)


def config(services: int, canaries: int = 0, vendor: bool = False) -> Config:
    source = VendorConfig("https://status.example/api/v2/summary.json") if vendor else None
    svcs = tuple(
        ServiceConfig(f"s{i}", f"Service {i}", "c", (CheckConfig(f"https://s{i}.example/"),)) for i in range(services)
    )
    if svcs:
        svcs = (replace(svcs[0], vendor=source),) + svcs[1:]
    return Config(
        path=None,  # type: ignore[arg-type]
        site=SiteConfig(),
        categories={"c": "C"},
        services=svcs,
        canaries=tuple(CheckConfig(f"https://canary{i}.example/") for i in range(canaries)),
    )


def _answer(slug: str, at: datetime, up: bool) -> CheckResult:
    return CheckResult(
        slug, 0, at, Outcome.OK if up else Outcome.TIMEOUT, 40.0 if up else None, 200 if up else None, False
    )


def simulate(
    cfg: Config,
    cycles: int,
    up: Behaviour,
    canary_up: Callable[[int], bool] = lambda c: True,
    vendor: Callable[[int], str] | None = None,
    trouble: Behaviour | None = None,
    confirm: int = 0,
    again: Callable[[int, int, int], bool] | None = None,
) -> Tally:
    """Run the decisions cycle by cycle. ``vendor(c)`` is what service 0's vendor says;
    ``trouble(i, c)`` the truth (default: the check's own answer). With ``confirm``, a check whose
    first answer changes its service's state is tried again up to that many times within the
    cycle, 10 s apart, as a run does (``decide.confirm``): ``again(i, c, k)`` is its k-th try's
    answer (by default the cycle's)."""
    trouble = trouble or (lambda i, c: not up(i, c))
    again = again or (lambda i, c, k: up(i, c))
    states: dict[str, ServiceState] = {}
    open_: dict[str, Incident] = {}
    out = Tally()
    for c in range(cycles):
        at = T0 + timedelta(minutes=c)
        firsts = [_answer(s.slug, at, up(i, c)) for i, s in enumerate(cfg.services)]
        wanted = worth_confirming(states)
        results = []
        for i, first in enumerate(firsts):
            results.append(first)
            for k in range(1, confirm + 1 if wanted(first) else 1):
                results.append(_answer(first.service, at + timedelta(seconds=10 * k), again(i, c, k)))
                if results[-1].up != first.up:
                    break
        canaries = [
            CheckResult("", i, at, Outcome.OK if canary_up(c) else Outcome.CONNECT, None, None, False)
            for i in range(len(cfg.canaries))
        ]
        vantage = judge_vantage(firsts, canaries, cfg.site)
        if vantage.suspect:
            out.suspect_cycles.append(c)
            out.collection_notes.append(vantage.reason or "")
        views = {cfg.services[0].slug: VendorObservation(vendor_view(vendor(c)), Outcome.OK, at)} if vendor else None
        d = decide_cycle(cfg, states, open_, results, at, views, vantage)
        states = d.states
        out.states.append(states)
        for inc in d.incidents:
            out.opened.setdefault(inc.id, [c, -1])
            out.services[inc.id] = int(inc.service[1:])
            out.incidents_seen[inc.id] = inc
            if inc.open:
                open_[inc.service] = inc
            else:
                out.opened[inc.id][1] = c
                open_.pop(inc.service, None)
    for inc_id, (opened, resolved) in out.opened.items():
        span = range(opened, resolved + 1 if resolved >= 0 else cycles)
        # An incident is true when the service was in trouble within its run of failures.
        lead = max(cfg.services[out.services[inc_id]].failures_to_open, 1)
        if not any(trouble(out.services[inc_id], c) for c in range(max(span.start - lead, 0), span.stop)):
            out.false_incidents += 1
    return out


def isolated_failures(
    seed: int = 7, services: int = 20, cycles: int = 1000, rate: float = 0.02, confirm: int = 0
) -> Tally:
    """Blips: a check fails now and then, never long enough to be an outage (each try within a run,
    a blip of its own)."""
    rng = random.Random(seed)
    table = [[rng.random() >= rate for _ in range(cycles)] for _ in range(services)]
    tries = random.Random(seed + 1)
    return simulate(
        config(services),
        cycles,
        lambda i, c: table[i][c],
        trouble=lambda i, c: False,
        confirm=confirm,
        again=lambda i, c, k: tries.random() >= rate,
    )


def hard_outage(start: int = 100, end: int = 160, services: int = 10, confirm: int = 0) -> Tally:
    return simulate(config(services), 200, lambda i, c: not (i == 0 and start <= c < end), confirm=confirm)


def network_down(start: int = 50, end: int = 70, services: int = 20, canaries: int = 2, confirm: int = 0) -> Tally:
    """Our own network is down: every check and canary fails; nobody else is in trouble."""
    down = range(start, end)
    return simulate(
        config(services, canaries),
        100,
        lambda i, c: c not in down,
        lambda c: c not in down,
        trouble=lambda i, c: False,
        confirm=confirm,
    )


def network_down_while_vendor_reports_trouble(
    start: int = 50, end: int = 53, services: int = 20, confirm: int = 0
) -> Tally:
    """Our own network is down for three cycles while service 0's vendor reports an incident."""
    down = range(start, end)
    return simulate(
        config(services, canaries=2, vendor=True),
        100,
        lambda i, c: c not in down,
        lambda c: c not in down,
        vendor=lambda c: "partial_outage" if start - 10 <= c < end + 10 else "operational",
        trouble=lambda i, c: False,  # the vendor's trouble is theirs to report, not an outage we saw
        confirm=confirm,
    )


def vendor_maintenance(start: int = 20, end: int = 30, services: int = 5, confirm: int = 0) -> Tally:
    """The vendor announces maintenance; our check of service 0 fails during it, then answers again."""
    during = range(start, end)
    return simulate(
        config(services, vendor=True),
        60,
        lambda i, c: not (i == 0 and c in during),
        vendor=lambda c: "maintenance" if c in during else "operational",
        trouble=lambda i, c: False,  # failing during announced maintenance is expected
        confirm=confirm,
    )


def flapping(cycles: int = 60, services: int = 10, confirm: int = 0) -> Tally:
    """Down for a whole minute every other minute: with tries within a run, each of the first
    such minutes is a confirmed outage of its own, until the bounces make it flapping."""
    return simulate(
        config(services), cycles + 10, lambda i, c: not (i == 0 and 5 <= c < 5 + cycles and c % 2), confirm=confirm
    )


#: Every scenario, by the name the bench prints.
SCENARIOS: dict[str, Callable[..., Tally]] = {
    "isolated failures (20 services x 1000 cycles at 2%)": isolated_failures,
    "hard outage (cycles 100-160)": hard_outage,
    "our network down (20 cycles, canaries fail)": network_down,
    "our network down while a vendor reports trouble": network_down_while_vendor_reports_trouble,
    "vendor maintenance, our check failing during it": vendor_maintenance,
    "flapping for an hour": flapping,
}
