"""The quorum's decisions, without I/O: ``decide.quorum`` alone, and a hypothesis state machine
that drives ``decide_cycle`` with this host and two other locations seeing a service up or down,
cycle after cycle, some of them stopping: the invariants hold per location and for the quorum."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from statusgen.config import CheckConfig, Config, LocationConfig, ServiceConfig, SiteConfig
from statusgen.decide.incidents import Incident
from statusgen.decide.quorum import seen_by
from statusgen.decide.run import decide_cycle
from statusgen.decide.state import ServiceState
from statusgen.model import CheckResult, Outcome, Status

T0 = datetime(2026, 11, 28, 12, 0, tzinfo=UTC)
OUTAGES = {Status.PARTIAL_OUTAGE, Status.MAJOR_OUTAGE}


def result(ok: bool, at: datetime) -> CheckResult:
    return CheckResult("svc", 0, at, Outcome.OK if ok else Outcome.TIMEOUT, 10.0 if ok else None, 200, False)


def test_a_majority_of_the_fresh_locations_by_default() -> None:
    up, down = [result(True, T0)], [result(False, T0)]
    assert seen_by("main", up, {"eu": down, "ap": down}, None).outage  # 2 of 3
    assert seen_by("main", up, {"eu": down, "ap": up}, None).minority  # 1 of 3
    assert seen_by("main", down, {"eu": down}, None).outage  # 2 of 2
    assert seen_by("main", down, {"eu": up}, None).minority  # 1 of 2: a tie is no majority
    assert not seen_by("main", up, {"eu": [], "ap": up}, None).failing  # eu has nothing fresh: set aside
    assert seen_by("main", up, {"eu": down, "ap": down}, 3).minority  # a configured quorum of 3
    later = [result(False, T0), result(True, T0 + timedelta(minutes=1))]
    assert not seen_by("main", up, {"eu": later}, None).failing  # a location's latest result counts


class Locations(RuleBasedStateMachine):
    """main, eu and ap see one service; each cycle each location sees it up, down, or (eu, ap)
    sends nothing. No outage and no incident without a quorum failing."""

    def __init__(self) -> None:
        super().__init__()
        check = CheckConfig("https://svc.example.com/")
        service = ServiceConfig("svc", "Svc", "c", (check,), failures_to_open=1, successes_to_resolve=1)
        site = SiteConfig(inbox="/inbox", inbox_key="${K}")
        self.config = Config(
            path=Path("/x/services.toml"),
            site=site,
            categories={"c": "C"},
            services=(service,),
            locations=(LocationConfig("eu"), LocationConfig("ap")),
        )
        self.now = T0
        self.states: dict[str, ServiceState] = {}
        self.open: dict[str, Incident] = {}
        self.quorum_failed_ever = False
        self.last_seen_outage = False

    @rule(
        main=st.booleans(),
        eu=st.sampled_from(["up", "down", "silent"]),
        ap=st.sampled_from(["up", "down", "silent"]),
    )
    def cycle(self, main: bool, eu: str, ap: str) -> None:
        self.now += timedelta(minutes=1)
        elsewhere = {
            loc: [result(said == "up", self.now)] for loc, said in (("eu", eu), ("ap", ap)) if said != "silent"
        }
        mine = [result(main, self.now)]
        seen = seen_by("main", mine, elsewhere, None)
        self.last_seen_outage = seen.outage
        self.quorum_failed_ever |= seen.outage
        d = decide_cycle(self.config, self.states, self.open, mine, self.now, elsewhere={"svc": elsewhere})
        self.states = d.states
        for incident in d.incidents:
            if incident.open:
                self.open[incident.service] = incident
            else:
                self.open.pop(incident.service, None)

    @invariant()
    def no_outage_without_a_quorum_failing(self) -> None:
        status = self.states["svc"].status if self.states else Status.UNKNOWN
        if status in OUTAGES:
            assert self.quorum_failed_ever
        if not self.quorum_failed_ever:
            assert "svc" not in self.open

    @invariant()
    def an_outage_cycle_is_never_called_operational(self) -> None:
        if self.states and self.last_seen_outage:
            assert self.states["svc"].status is not Status.OPERATIONAL


TestLocations = Locations.TestCase
TestLocations.settings = settings(max_examples=60, stateful_step_count=12, deadline=None,
                                  suppress_health_check=[HealthCheck.too_slow])  # fmt: skip
