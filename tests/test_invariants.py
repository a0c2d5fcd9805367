"""The decisions held by invariants: a hypothesis state machine drives ``decide_cycle``.

Random sequences of cycles: each check's outcome and latency (and, where its first result
changes what its service's state says, up to two more tries within the run), vendor views
(operational, degraded, outage, maintenance, stale, unreadable), configured
maintenance windows opening and closing, mass failures with and without
canaries, services added and paused. After every cycle the invariants of our
own incidents are checked against what the cycle counted.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from statusgen.config import CheckConfig, Config, MaintenanceWindow, ServiceConfig, SiteConfig, VendorConfig
from statusgen.decide.confirm import worth_confirming
from statusgen.decide.incidents import Incident
from statusgen.decide.run import decide_cycle
from statusgen.decide.state import ServiceState
from statusgen.decide.vantage import judge_vantage
from statusgen.model import CheckResult, Outcome, Status
from statusgen.vendors import VendorView
from statusgen.vendors.model import VendorIncident, VendorMaintenance, VendorObservation

T0 = datetime(2026, 3, 1, tzinfo=UTC)
MIN = timedelta(minutes=1)
SECOND = timedelta(seconds=1)
SLUGS = tuple(f"s{i}" for i in range(6))
OUTCOMES = ("ok", "ok", "ok", "slow", "timeout", "http_status", "keyword")
VENDOR_SAYS = ("operational", "degraded", "partial_outage", "major_outage", "maintenance", "stale", "unreadable")
STALE_AFTER = 600.0
# Each source's sentence, which a reason may carry at most once.
SOURCE_PHRASES = (
    "Vendor reports",
    "The vendor status page could not be read",
    "The vendor status page has never been read",
    "The vendor's view is too old",
    "The vendor has not acknowledged",
    "Scheduled maintenance",
    "Not counted",
    "Our own checks still say",
)


def view(says: str, at: datetime) -> VendorView:
    incidents: tuple[VendorIncident, ...] = ()
    maintenance: tuple[VendorMaintenance, ...] = ()
    if says in ("degraded", "partial_outage", "major_outage"):
        started = datetime(2023, 10, 11, tzinfo=UTC)  # vendors' times may be long before ours
        incidents = (VendorIncident("v1", "Elevated errors", says, "investigating", started, started, None, ()),)
    if says == "maintenance":
        maintenance = (VendorMaintenance("m1", "Upgrade", "in_progress", at - 90 * MIN, None, None, ()),)
    return VendorView("statuspage", says, None, (), incidents, maintenance, (), at, None)


def result(slug: str, index: int, at: datetime, outcome: str) -> CheckResult:
    if outcome in ("ok", "slow"):
        ms = 3000.0 if outcome == "slow" else 40.0
        return CheckResult(slug, index, at, Outcome.OK, ms, 200, outcome == "slow")
    if outcome == "timeout":
        return CheckResult(slug, index, at, Outcome.TIMEOUT, None, None, False)
    code = 503 if outcome == "http_status" else 200
    return CheckResult(slug, index, at, Outcome(outcome), 40.0, code, False)


@dataclass
class Seen:
    """What the machine remembers of one service, to check each cycle's incidents against."""

    run: list[datetime] = field(default_factory=list)  # counted failed or slow results since the last reset
    last_end: datetime | None = None  # when its last incident ended
    failed_while_open: list[datetime] = field(default_factory=list)  # counted failures while one is open


class Decisions(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.now = T0
        self.services: dict[str, ServiceConfig] = {}
        self.canaries = 0
        self.states: dict[str, ServiceState] = {}
        self.open: dict[str, Incident] = {}
        self.incidents: dict[str, Incident] = {}
        self.resolved: set[str] = set()
        self.seen: dict[str, Seen] = {}
        self.vendor: dict[str, VendorObservation] = {}

    def new_service(self, slug: str, data: st.DataObject) -> None:
        checks = tuple(
            CheckConfig(f"https://{slug}.example/{n}", keyword="ok", degraded_ms=2000)
            for n in range(data.draw(st.integers(1, 2)))
        )
        has_vendor = data.draw(st.booleans())
        self.services[slug] = ServiceConfig(
            slug,
            slug.upper(),
            "c",
            checks,
            failures_to_open=data.draw(st.integers(1, 3)),
            successes_to_resolve=data.draw(st.integers(1, 3)),
            vendor=VendorConfig(f"https://status.{slug}.example/", stale_after=STALE_AFTER) if has_vendor else None,
        )
        self.seen[slug] = Seen()

    @initialize(data=st.data(), count=st.integers(1, 4), canaries=st.sampled_from((0, 2)))
    def start(self, data: st.DataObject, count: int, canaries: int) -> None:
        self.canaries = canaries
        for slug in SLUGS[:count]:
            self.new_service(slug, data)

    @precondition(lambda self: len(self.services) < len(SLUGS))
    @rule(data=st.data())
    def add_service(self, data: st.DataObject) -> None:
        self.new_service(SLUGS[len(self.services)], data)

    @rule(data=st.data())
    def pause_or_resume(self, data: st.DataObject) -> None:
        slug = data.draw(st.sampled_from(sorted(self.services)))
        svc = self.services[slug]
        self.services[slug] = replace(svc, paused=not svc.paused)

    @rule(data=st.data(), minutes=st.integers(1, 8))
    def open_window(self, data: st.DataObject, minutes: int) -> None:
        slug = data.draw(st.sampled_from(sorted(self.services)))
        window = MaintenanceWindow(self.now, self.now + minutes * MIN, "Upgrade")
        self.services[slug] = replace(self.services[slug], maintenance=(window,))

    @rule(data=st.data())
    def close_window(self, data: st.DataObject) -> None:
        slug = data.draw(st.sampled_from(sorted(self.services)))
        self.services[slug] = replace(self.services[slug], maintenance=())

    def observe_vendor(self, svc: ServiceConfig, says: str) -> VendorObservation:
        prev = self.vendor.get(svc.slug)
        if says == "unreadable":
            obs = VendorObservation(prev.view if prev else None, Outcome.PARSE, prev.last_ok_at if prev else None)
        elif says == "stale":
            last = self.now - timedelta(seconds=2 * STALE_AFTER)
            obs = VendorObservation(prev.view if prev else view("operational", last), Outcome.TIMEOUT, last)
        else:
            obs = VendorObservation(view(says, self.now), Outcome.OK, self.now)
        self.vendor[svc.slug] = obs
        return obs

    @rule(data=st.data(), mass=st.sampled_from(("none", "none", "none", "with canaries", "without canaries")))
    def cycle(self, data: st.DataObject, mass: str) -> None:
        at = self.now
        results, firsts = [], []
        wanted = worth_confirming(self.states)
        for svc in self.services.values():
            if svc.paused:
                continue
            for n in range(len(svc.checks)):
                outcome = "timeout" if mass != "none" else data.draw(st.sampled_from(OUTCOMES))
                first = result(svc.slug, n, at, outcome)
                results.append(first)
                firsts.append(first)
                # tries again within the run to confirm a failure (decide.confirm), each drawn: it may
                # say otherwise (a recovery's tries, which may end an incident within the run, are the
                # detection scenarios' to cover: tests/test_detection.py)
                for k in range(1, 1 + (data.draw(st.integers(0, 2)) if wanted(first) and not first.up else 0)):
                    again = outcome if mass != "none" else data.draw(st.sampled_from(OUTCOMES))
                    results.append(result(svc.slug, n, at + k * 10 * SECOND, again))
                    if results[-1].up != first.up:
                        break
        canaries = [result("", n, at, "timeout" if mass == "with canaries" else "ok") for n in range(self.canaries)]
        vendors = {
            svc.slug: self.observe_vendor(svc, data.draw(st.sampled_from(VENDOR_SAYS)))
            for svc in self.services.values()
            if svc.vendor is not None
        }
        config = Config(
            path=None,  # type: ignore[arg-type]
            site=SiteConfig(),
            categories={"c": "C"},
            services=tuple(self.services.values()),
            canaries=tuple(CheckConfig(f"https://canary{n}.example/") for n in range(self.canaries)),
        )
        vantage = judge_vantage(firsts, canaries, config.site)
        done = at + 30 * SECOND  # when the run decides: after its tries within the run
        decided = decide_cycle(config, self.states, self.open, results, done, vendors, vantage)
        counted = {
            slug: [s.result for s in decided.results if s.result.service == slug and s.flag is None]
            for slug in self.services
        }
        flags = {(s.result.service, s.result.check_index): s.flag for s in decided.results}
        for slug, state in decided.states.items():
            seen = self.seen[slug]
            if state.own_status is Status.MAINTENANCE or self.services[slug].paused:
                seen.run.clear()  # a window (or a pause) starts the count afresh
            # every try of the run counts as the state machine counts it: as its check's last try is
            # flagged (a maintenance window, our own vantage point at fault, when only the first
            # tries count), failures set aside
            tries = [
                r
                for r in (firsts if vantage.suspect else results)
                if r.service == slug
                and (flags[(slug, r.check_index)] is None or (r.up and not vantage.suspect))
                and flags[(slug, r.check_index)] != "maintenance"
            ]
            seen.run += [r.ts for r in tries if not r.up or r.slow]
            if slug in self.open:
                seen.failed_while_open += [r.ts for r in tries if not r.up]
        assert len({i.service for i in decided.incidents}) == len(decided.incidents), "one incident per service"
        for inc in decided.incidents:
            self.check_incident(inc, counted[inc.service], done)
        self.states = decided.states
        self.now += MIN

    def check_incident(self, inc: Incident, counted: list[CheckResult], at: datetime) -> None:
        seen = self.seen[inc.service]
        assert inc.id not in self.resolved, f"a resolved incident changed: {inc.id}"
        current = self.open.get(inc.service)
        if inc.id not in self.incidents:
            assert current is None, f"a second open incident for {inc.service}"
            assert counted, f"{inc.id} opened in a cycle with no counted result of its own checks"
            assert seen.run, f"{inc.id} opened with no counted failed or slow result since the last reset"
            assert min(seen.run) <= inc.started_at <= at, (inc.started_at, seen.run, at)
            assert seen.last_end is None or inc.started_at >= seen.last_end
        else:
            assert current is not None and current.id == inc.id, f"{inc.id} changed while not open"
        self.incidents[inc.id] = inc
        if inc.open:
            self.open[inc.service] = inc
            return
        assert inc.ended_at is not None and inc.started_at <= inc.ended_at <= at
        assert all(inc.ended_at > t for t in seen.failed_while_open), "ended before a counted failure"
        self.resolved.add(inc.id)
        del self.open[inc.service]
        seen.last_end = inc.ended_at
        seen.run.clear()
        seen.failed_while_open.clear()

    @invariant()
    def operational_has_no_open_incident(self) -> None:
        for slug, state in self.states.items():
            if state.status is Status.OPERATIONAL:
                assert slug not in self.open, f"{slug} is operational with an open incident"

    @invariant()
    def reasons_name_each_source_once(self) -> None:
        for slug, state in self.states.items():
            for phrase in SOURCE_PHRASES:
                assert state.reason.count(phrase) <= 1, (slug, phrase, state.reason)


Decisions.TestCase.settings = settings(
    max_examples=300, stateful_step_count=40, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
test_decisions_hold_their_invariants = Decisions.TestCase
