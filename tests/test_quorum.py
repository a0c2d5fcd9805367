"""The quorum's decisions, without I/O: ``decide.quorum`` alone, and a hypothesis state machine
that drives ``decide_cycle`` with this host and two other locations seeing a service up or down,
cycle after cycle, some of them stopping. The machine's oracle is its own: it counts the
locations that see the service failing, and derives the status, the incident and the history's
flags from docs/locations.md and docs/decisions.md, never from ``decide.quorum``."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

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
    sends nothing, and the quorum is the default majority or a configured number. The test keeps
    its own count of the locations that see the service failing and its own streaks, and holds
    ``decide_cycle`` to docs/locations.md and docs/decisions.md exactly: an outage if and only if
    the quorum failed ``failures_to_open`` cycles in a row (each try within a run a cycle), until
    ``successes_to_resolve`` cycles without it; a minority's failure degrades, never more."""

    FAILURES_TO_OPEN = 2
    SUCCESSES_TO_RESOLVE = 2
    CONFIRM = 2  # tries again within a run: docs/checks.md

    def __init__(self) -> None:
        super().__init__()
        self.now = T0
        self.states: dict[str, ServiceState] = {}
        self.open: dict[str, Incident] = {}
        # the model: docs/decisions.md's state machine, fed by this test's own count of locations
        self.fail_streak = self.good_streak = 0
        self.in_outage = False
        self.severity: Status | None = None  # the outage's status, as of its latest failed cycle
        self.ever_good = False
        self.history = ""  # "f" a failed cycle, "o" a good one: flapping (docs/decisions.md)
        self.flapping = False
        self.expected: Status | None = None
        self.expected_history: list[tuple[str, bool, str | None]] = []

    @initialize(quorum=st.sampled_from([None, 1, 2, 3]))
    def configure(self, quorum: int | None) -> None:
        check = CheckConfig("https://svc.example.com/")
        service = ServiceConfig(
            "svc",
            "Svc",
            "c",
            (check,),
            failures_to_open=self.FAILURES_TO_OPEN,
            successes_to_resolve=self.SUCCESSES_TO_RESOLVE,
        )
        self.quorum = quorum
        self.config = Config(
            path=Path("/x/services.toml"),
            site=SiteConfig(inbox="/inbox", inbox_key="${K}", quorum=quorum),
            categories={"c": "C"},
            services=(service,),
            locations=(LocationConfig("eu"), LocationConfig("ap")),
        )

    def _cycle(self, failed: bool | None) -> None:
        """One cycle of the model: failed (the quorum failed), good, or None (nothing counted)."""
        if failed is None:
            return  # a cycle whose results were all set aside changes nothing
        self.history = (self.history + ("f" if failed else "o"))[-30:]
        if failed:
            self.fail_streak, self.good_streak = self.fail_streak + 1, 0
            if self.fail_streak >= self.FAILURES_TO_OPEN:
                self.in_outage = True
        else:
            self.fail_streak, self.good_streak = 0, self.good_streak + 1
            self.ever_good = True
            if self.in_outage and self.good_streak >= self.SUCCESSES_TO_RESOLVE:
                self.in_outage = False
        if self.flapping:  # until 5 good cycles in a row calm it; the bounces are then behind it
            self.flapping = self.good_streak < 5
            if not self.flapping:
                self.history = self.history[-self.good_streak :]
        else:
            changes = sum(1 for a, b in itertools.pairwise(self.history) if a != b)
            self.flapping = changes >= 6 and self.history.count("f") >= len(self.history) / 4

    @rule(
        main=st.booleans(),
        eu=st.sampled_from(["up", "down", "silent"]),
        ap=st.sampled_from(["up", "down", "silent"]),
    )
    def cycle(self, main: bool, eu: str, ap: str) -> None:
        self.now += timedelta(minutes=1)
        # the other locations' latest results, sent a little before this run
        elsewhere = {
            loc: [result(said == "up", self.now - timedelta(seconds=5))]
            for loc, said in (("eu", eu), ("ap", ap))
            if said != "silent"
        }
        # this host's tries: again within the run when the first changes what the state says
        # (a failure where there is no outage, an answer where there is one), all agreeing
        tries = 1 + (self.CONFIRM if main == self.in_outage else 0)
        mine = [result(main, self.now + timedelta(seconds=10 * k)) for k in range(tries)]
        self.last_try = mine[-1].ts

        # this test's own count: each location with fresh results once, failing when its result is
        fresh = {"main": main} | {loc: said == "up" for loc, said in (("eu", eu), ("ap", ap)) if said != "silent"}
        failing = [loc for loc, up in fresh.items() if not up]
        need = self.quorum if self.quorum is not None else len(fresh) // 2 + 1
        quorum_failed = len(failing) >= need and bool(failing)
        minority = bool(failing) and not quorum_failed
        up_elsewhere = [loc for loc, up in fresh.items() if up and loc != "main"]
        if quorum_failed:
            outcome: bool | None = True
        elif main or up_elsewhere:
            outcome = False  # this host's good result, or in its place those of the locations that see it up
        else:
            outcome = None  # this host's failure set aside, and no other location counted instead
        for _ in range(tries):
            self._cycle(outcome)
        if quorum_failed and self.in_outage:
            self.severity = Status.PARTIAL_OUTAGE if main else Status.MAJOR_OUTAGE  # every counted result failed
        if self.in_outage:
            self.expected = self.severity
        elif self.flapping:
            self.expected = Status.DEGRADED
        elif not self.ever_good:
            self.expected = Status.UNKNOWN
        else:
            self.expected = Status.DEGRADED if minority else Status.OPERATIONAL
        # history: this host's last try, flagged quorum when a minority sees it failing and it is one;
        # then the others' results counted with it: the failed ones of a quorum, or in this host's place
        history = [("main", main, "quorum" if minority and not main else None)]
        if quorum_failed:
            history += [(loc, False, None) for loc in failing if loc != "main"]
        elif minority and not main:
            history += [(loc, True, None) for loc in up_elsewhere]
        self.expected_history = history

        d = decide_cycle(self.config, self.states, self.open, mine, self.now, elsewhere={"svc": elsewhere})
        self.states = d.states
        for incident in d.incidents:
            if incident.open:
                self.open[incident.service] = incident
            else:
                self.open.pop(incident.service, None)
        self.stored = d.results

    @invariant()
    def the_status_is_the_quorums(self) -> None:
        if self.states:
            assert self.states["svc"].status is self.expected, (self.history, self.fail_streak, self.good_streak)
            assert (self.states["svc"].status in OUTAGES) == self.in_outage

    @invariant()
    def an_incident_is_open_only_for_an_outage_or_flapping(self) -> None:
        assert ("svc" in self.open) == (self.in_outage or self.flapping)

    @invariant()
    def history_counts_each_location_by_the_rule(self) -> None:
        if not self.states:
            return
        got = sorted(("main" if r.result.ts >= self.now else "other", r.result.up, r.flag) for r in self.stored)
        want = sorted(("main" if loc == "main" else "other", up, flag) for loc, up, flag in self.expected_history)
        assert got == want
        assert [r.result.ts for r in self.stored if r.result.ts >= self.now] == [self.last_try]  # its last try only


TestLocations = Locations.TestCase
TestLocations.settings = settings(max_examples=80, stateful_step_count=16, deadline=None,
                                  suppress_health_check=[HealthCheck.too_slow])  # fmt: skip
