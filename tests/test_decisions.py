"""The pure decisions: state machine, incidents, health index, history. Fixed clock, no I/O."""

from __future__ import annotations

from dataclasses import fields, replace
from datetime import UTC, datetime, timedelta

import orjson
import pytest

from statusgen import latency
from statusgen.config import CheckConfig, Config, MaintenanceWindow, ServiceConfig, SiteConfig
from statusgen.decide.health import RunRecord, collection_state, health_index, is_stale
from statusgen.decide.history import Bucket, availability, history, in_progress, incident_seconds
from statusgen.decide.incidents import Incident, advance
from statusgen.decide.run import decide_cycle
from statusgen.decide.state import ServiceState, decide, verdict
from statusgen.model import RANGES, CheckResult, Outcome, Status

T0 = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
MIN = timedelta(minutes=1)
SVC = ServiceConfig(
    "api",
    "Example API",
    "cloud",
    (
        CheckConfig("https://api.example.com/health", timeout=10, degraded_ms=500),
        CheckConfig("https://www.example.com/"),
    ),
    failures_to_open=3,
    successes_to_resolve=2,
)


def result(i: int, at: datetime, outcome: Outcome = Outcome.OK, ms: float = 40.0) -> CheckResult:
    up = outcome is Outcome.OK
    return CheckResult(
        "api", i, at, outcome, ms if outcome is not Outcome.TIMEOUT else None, 200 if up else None, up and ms > 500
    )


def cycle(at: datetime, a: Outcome = Outcome.OK, b: Outcome = Outcome.OK, ms: float = 40.0) -> list[CheckResult]:
    return [result(0, at, a, ms), result(1, at, b, ms)]


def decide_one(prev: ServiceState, svc: ServiceConfig, results: list[CheckResult], now: datetime) -> ServiceState:
    """One service's next state through the whole cycle's decisions (flags, own state, merge)."""
    config = Config(path=None, site=SiteConfig(), categories={"cloud": "Cloud"}, services=(svc,))
    return decide_cycle(config, {svc.slug: prev}, {}, results, now).states[svc.slug]


def run(pattern: list[tuple[Outcome, Outcome]], ms: float = 40.0, svc: ServiceConfig = SVC):
    """Feed cycles one minute apart; return the states and incidents after each."""
    state, incident, seen = ServiceState(), None, []
    for n, (a, b) in enumerate(pattern):
        at = T0 + n * MIN
        new = decide(state, svc, cycle(at, a, b, ms), at)
        incident = advance(incident if incident and incident.open else None, state, new, svc, at) or incident
        state = new
        seen.append((state, incident))
    return seen


OK, TO, HS = Outcome.OK, Outcome.TIMEOUT, Outcome.HTTP_STATUS


def test_verdict_of_a_cycle():
    assert verdict([]).value == "none"
    assert verdict(cycle(T0)).value == "ok"
    assert verdict(cycle(T0, TO)).value == "partial"
    assert verdict(cycle(T0, TO, HS)).value == "down"
    assert verdict(cycle(T0, ms=900)).value == "slow"


def test_first_good_cycle_is_operational():
    ((state, inc),) = run([(OK, OK)])
    assert state.status is Status.OPERATIONAL
    assert state.since == T0
    assert state.reason == "All 2 checks answer as expected."
    assert inc is None


def test_outage_needs_three_failed_cycles_and_starts_at_the_first():
    seen = run([(OK, OK), (TO, TO), (TO, TO), (TO, TO)])
    assert [s.status for s, _ in seen] == [
        Status.OPERATIONAL,
        Status.OPERATIONAL,
        Status.OPERATIONAL,
        Status.MAJOR_OUTAGE,
    ]
    state, inc = seen[-1]
    assert state.since == T0 + MIN
    assert seen[1][0].reason.endswith("1 of 3 failed cycles needed to declare an outage.")
    assert "api.example.com timed out after 10 s" in state.reason
    assert inc is not None and inc.open and inc.severity == "critical"
    assert inc.started_at == T0 + MIN
    assert inc.title == "Example API: major outage"
    assert inc.id == "api-20261122t120100"
    assert inc.updates[0].message == (
        "Opened after 3 failed cycles in a row: api.example.com timed out after 10 s; "
        "www.example.com timed out after 10 s."
    )


def test_partial_outage_when_some_checks_fail():
    state, inc = run([(OK, OK), (OK, HS), (OK, HS), (OK, HS)])[-1]
    assert state.status is Status.PARTIAL_OUTAGE
    assert inc.severity == "major"


def test_isolated_failures_never_open_an_incident():
    pattern = [(TO, OK) if n % 10 == 1 else (OK, OK) for n in range(60)]
    seen = run(pattern)
    assert {s.status for s, _ in seen} == {Status.OPERATIONAL}
    assert all(i is None for _, i in seen)


def test_recovery_needs_two_good_cycles_and_resolves_the_incident():
    seen = run([(OK, OK)] + [(TO, TO)] * 3 + [(OK, OK), (OK, OK), (OK, OK)])
    statuses = [s.status for s, _ in seen]
    assert statuses[4] is Status.MAJOR_OUTAGE  # one good cycle is not enough
    assert statuses[4] is Status.MAJOR_OUTAGE and "1 of 2 good cycles" in seen[4][0].reason
    assert statuses[5] is Status.OPERATIONAL
    state, inc = seen[5]
    assert state.since == T0 + 4 * MIN  # recovery began at the first good cycle
    assert not inc.open and inc.ended_at == T0 + 4 * MIN
    assert inc.updates[-1].message == "Recovered after 3 min."
    assert [u.kind for u in inc.updates] == ["opened", "resolved"]


def test_an_incident_read_back_from_its_record_is_the_same_incident():
    """The store reads incidents back without their dataclasses' __init__ (``incidents._read``):
    every field must come back, equal, including each update's."""
    seen = run([(OK, OK)] + [(TO, TO)] * 3 + [(OK, OK), (OK, OK)])
    closed = seen[-1][1]
    still_open = replace(closed, ended_at=None, updates=closed.updates[:1])
    for inc in (closed, still_open):
        back = Incident.from_json(orjson.loads(orjson.dumps(inc.to_json())))
        assert back == inc and vars(back).keys() >= {f.name for f in fields(Incident)}
        assert all(vars(u).keys() == {f.name for f in fields(u)} for u in back.updates)
        assert back.to_json() == inc.to_json() and back.updated_at == inc.updated_at


def test_severity_change_adds_an_update():
    seen = run([(OK, OK), (OK, TO), (OK, TO), (OK, TO), (TO, TO)])
    inc = seen[-1][1]
    assert [u.kind for u in inc.updates] == ["opened", "severity"]
    assert inc.severity == "critical" and inc.title == "Example API: major outage"


def test_degraded_by_latency_has_hysteresis():
    slow, fast = (OK, OK), (OK, OK)
    state = ServiceState()
    statuses = []
    for n, ms in enumerate([40, 900, 900, 900, 40, 900, 40, 40]):
        at = T0 + n * MIN
        state = decide(state, SVC, cycle(at, *slow, ms=ms) if ms > 500 else cycle(at, *fast), at)
        statuses.append(state.status)
    assert statuses == [Status.OPERATIONAL] * 3 + [Status.DEGRADED] * 4 + [Status.OPERATIONAL]


def test_flapping_every_cycle_is_one_degraded_incident():
    seen = run([(OK, OK)] + [(TO, TO), (OK, OK)] * 30)
    incidents = {i.id for _, i in seen if i is not None}
    assert len(incidents) == 1
    state, inc = seen[-1]
    assert state.status is Status.DEGRADED and state.flapping and inc.open and inc.severity == "minor"
    assert state.reason.startswith("Flapping: its checks keep failing and recovering, since ")


def test_flapping_ends_after_calm_cycles_and_resolves():
    seen = run([(OK, OK)] + [(TO, TO), (OK, OK)] * 10 + [(OK, OK)] * 6)
    statuses = [s.status for s, _ in seen]
    assert Status.DEGRADED in statuses and statuses[-1] is Status.OPERATIONAL
    state, inc = seen[-1]
    assert not state.flapping and not inc.open
    assert len({i.id for _, i in seen if i is not None}) == 1


def test_a_hard_outage_while_flapping_escalates_the_same_incident():
    seen = run([(OK, OK)] + [(TO, TO), (OK, OK)] * 6 + [(TO, TO)] * 3)
    state, inc = seen[-1]
    assert state.status is Status.MAJOR_OUTAGE
    assert [u.kind for u in inc.updates] == ["opened", "severity"] and inc.severity == "critical"


def test_unknown_until_threshold_for_a_never_measured_failing_service():
    seen = run([(TO, TO), (TO, TO), (TO, TO)])
    assert [s.status for s, _ in seen] == [Status.UNKNOWN, Status.UNKNOWN, Status.MAJOR_OUTAGE]


def test_maintenance_and_paused():
    window = MaintenanceWindow(T0, T0 + 60 * MIN, "Upgrade")
    svc = maintained(window)
    state = decide_one(ServiceState(), svc, cycle(T0 + MIN, TO, TO), T0 + MIN)
    assert state.status is Status.MAINTENANCE and state.since == T0
    assert state.reason == "Scheduled maintenance: Upgrade (until 2026-11-22 13:00 UTC)."
    assert advance(None, ServiceState(), state, svc, T0 + MIN) is None
    paused = decide_one(state, ServiceConfig("api", "A", "cloud", SVC.checks, paused=True), [], T0)
    assert paused.status is Status.UNKNOWN and paused.reason == "Checks are paused by the operator."


def test_state_round_trips_through_json():
    state, _ = run([(OK, OK), (TO, TO), (TO, TO), (TO, TO)])[-1]
    assert ServiceState.from_json(state.to_json()) == state


@pytest.mark.parametrize(
    "statuses, expected",
    [
        ([], None),
        ([Status.UNKNOWN, Status.MAINTENANCE], None),
        ([Status.OPERATIONAL] * 3, 100.0),
        ([Status.OPERATIONAL, Status.MAJOR_OUTAGE], 50.0),
        ([Status.OPERATIONAL, Status.DEGRADED, Status.PARTIAL_OUTAGE, Status.UNKNOWN], 70.0),
    ],
)
def test_health_index(statuses, expected):
    assert health_index(statuses) == expected


def test_collection_goes_stale_after_three_intervals_or_as_configured():
    run_ = RunRecord(1, T0, T0 + timedelta(seconds=2), 10, 1)
    default = SiteConfig(interval=60).stale_after_s
    assert default == 180
    assert not is_stale(run_, default, T0 + 3 * MIN)
    assert is_stale(run_, default, T0 + 3 * MIN + timedelta(seconds=3))
    late = SiteConfig(interval=60, stale_after=3600).stale_after_s  # a CI schedule that may run late
    assert not is_stale(run_, late, T0 + 59 * MIN) and is_stale(run_, late, T0 + 61 * MIN)
    assert collection_state(run_, 60, default, T0 + MIN)["last_run"]["duration_ms"] == 2000.0
    assert collection_state(None, 60, default, T0)["state"] == "stale"
    assert collection_state(run_, 60, late, T0 + 61 * MIN)["reason"] == "No finished run for more than 1 h."


def test_history_gives_every_bucket_with_null_gaps():
    rng = RANGES["24h"]
    start = int((T0 - 10 * MIN).timestamp())
    hist = latency.add({}, [40, 50, 60, 70])
    rows = [
        Bucket(
            start, 4, 1, 0, 0, 0, latency.percentile(hist, 0.5), latency.percentile(hist, 0.95), latency.encode(hist)
        )
    ]
    now = Bucket(start + 10 * 60, 1, 0, 0, 0, 0, 30.0, 30.0, latency.encode(latency.add({}, [30])))
    made = history("api", rng, T0 + MIN, [], [*rows, now])  # the bucket in progress is not in it
    doc, points = made.document, made.points()
    assert doc["count"] == 288 == len(points)
    assert points[-1]["start"] == "2026-11-22T11:55:00Z" and doc["to"] == doc["as_of"] == "2026-11-22T12:00:00Z"
    assert in_progress(rng, T0 + MIN, [], now)["start"] == "2026-11-22T12:00:00Z"
    assert in_progress(rng, T0 + MIN, [], now)["checks"] == 1
    measured = [p for p in points if p["availability"] is not None]
    assert len(measured) == 1 and measured[0]["availability"] == 80.0
    assert measured[0]["start"] == "2026-11-22T11:50:00Z"
    assert abs(measured[0]["latency_p50_ms"] - 50) / 50 < 0.05
    assert doc["summary"]["availability"] == 80.0 and doc["resolution"] == "5m"
    starts = [p["start"] for p in points]
    assert starts == sorted(starts)
    assert orjson.loads(orjson.dumps(doc))["points"] == points  # the answer holds the points as made


def test_availability_counts_good_answers_over_counted_ones():
    assert availability(0, 0) is None  # nothing counted (maintenance only, or set aside)
    assert availability(7, 0) == 100.0
    assert availability(0, 3) == 0.0
    assert availability(2, 1) == 66.667
    assert availability(99_999, 1) == 99.999


def test_incident_minutes_per_bucket():
    start = int(T0.timestamp())
    ended = [(start + 120, start + 720)]
    assert incident_seconds(ended, start, 300, 4, start + 3600) == [180, 300, 120, 0]
    still_open = [(start + 120, None)]
    assert incident_seconds(still_open, start, 300, 4, start + 11 * 60) == [180, 300, 60, 0]


def test_latency_histogram_is_within_five_percent():
    values = [float(v) for v in range(1, 2001)]
    hist = latency.add({}, values)
    assert latency.decode(latency.encode(hist)) == hist
    for q, true in ((0.5, 1000.0), (0.95, 1900.0)):
        assert abs(latency.percentile(hist, q) - true) / true < 0.05


def maintained(*windows: MaintenanceWindow) -> ServiceConfig:
    """The example service with these maintenance windows."""
    return ServiceConfig("api", "Example API", "cloud", SVC.checks, maintenance=windows)


def test_recurring_maintenance_window_in_cron_form():
    from statusgen.config.cron import last_fire

    weekly = MaintenanceWindow(schedule="0 2 * * sun", duration=7200, title="Weekly patching")
    svc = maintained(weekly)
    sunday = datetime(2026, 11, 22, 3, 30, tzinfo=UTC)  # a Sunday, inside 02:00-04:00
    state = decide_one(ServiceState(), svc, cycle(sunday, TO, TO), sunday)
    assert state.status is Status.MAINTENANCE
    assert state.since == datetime(2026, 11, 22, 2, 0, tzinfo=UTC)
    assert state.reason == "Scheduled maintenance: Weekly patching (until 2026-11-22 04:00 UTC)."
    later = sunday + timedelta(hours=1)  # 04:30: the window has closed
    assert decide_one(state, svc, cycle(later), later).status is Status.OPERATIONAL
    monday = datetime(2026, 11, 23, 2, 30, tzinfo=UTC)
    assert svc.maintenance_at(monday) is None
    assert last_fire("*/15 9-17 * * mon-fri", datetime(2026, 11, 23, 9, 20, tzinfo=UTC), 600) == datetime(
        2026, 11, 23, 9, 15, tzinfo=UTC
    )
    assert last_fire("0 0 1 * *", datetime(2026, 12, 1, 0, 5, tzinfo=UTC), 3600) == datetime(2026, 12, 1, tzinfo=UTC)


def test_loop_spreads_checks_over_most_of_the_interval():
    from statusgen.config import Config, SiteConfig
    from statusgen.cycle import loop_spread

    svc = ServiceConfig("api", "A", "c", (CheckConfig("https://a.example", timeout=10, confirm=0),))
    assert loop_spread(Config(path=None, site=SiteConfig(interval=60), categories={}, services=(svc,))) == 45.0
    assert loop_spread(Config(path=None, site=SiteConfig(interval=300), categories={}, services=(svc,))) == 240.0
    # a check tried twice more, 10 s apart, may hold the run 20 s past its timeout: 60 - 10 - 20 - 5
    tried = ServiceConfig("api", "A", "c", (CheckConfig("https://a.example", timeout=10),))
    assert loop_spread(Config(path=None, site=SiteConfig(interval=60), categories={}, services=(tried,))) == 25.0
    assert loop_spread(Config(path=None, site=SiteConfig(interval=1), categories={}, services=(svc,))) == 0.0


def test_a_single_run_spreads_its_starts_by_the_number_of_checks():
    from statusgen.config import Config, SiteConfig
    from statusgen.cycle import run_spread

    svcs = tuple(ServiceConfig(f"s{i}", "S", "c", (CheckConfig("https://a.example"),)) for i in range(1000))
    assert run_spread(Config(path=None, site=SiteConfig(), categories={}, services=svcs)) == 4.0
    assert run_spread(Config(path=None, site=SiteConfig(spread=0.0), categories={}, services=svcs)) == 0.0


def test_checks_that_timed_out_start_first_and_the_others_spread_over_their_timeout():
    from statusgen.config import Config, SiteConfig
    from statusgen.cycle import run_spread, timed_out_before
    from statusgen.decide.state import Evidence

    at = datetime(2026, 1, 1, tzinfo=UTC)

    def evidence(check: int, outcome: str) -> Evidence:
        return Evidence(check, "GET", "https://a.example", outcome, None, None, False, at)

    states = {
        "a": ServiceState(evidence=(evidence(1, "ok"), evidence(2, "timeout"))),
        "b": ServiceState(evidence=(evidence(1, "connect"),)),
        "c": ServiceState(),
    }
    assert timed_out_before(states) == {("a", 1)}
    svcs = tuple(
        ServiceConfig(f"s{i}", "S", "c", (CheckConfig("https://a.example", timeout=3.0 if i else 8.0),))
        for i in range(1000)
    )
    config = Config(path=None, site=SiteConfig(), categories={}, services=svcs)
    assert run_spread(config, {("s5", 0)}) == 4.0  # a second past its timeout: as long as 4 s
    assert run_spread(config, {("s5", 0), ("s0", 0)}) == 9.0  # the longest of them sets how long the run lasts
    assert run_spread(config, {("s0", 0)} | {(f"s{i}", 0) for i in range(1, 1000)}) == 9.0
    assert run_spread(replace(config, services=svcs[:10]), {("s5", 0)}) == 4.0
    assert run_spread(replace(config, services=svcs[:10]), {("s9", 1)}) == pytest.approx(
        0.04
    )  # no such check: the default
    long = replace(config, services=(ServiceConfig("x", "X", "c", (CheckConfig("https://a.example", timeout=60.0),)),))
    assert run_spread(long, {("x", 0)}) == 10.0  # never more than 10 s
    assert run_spread(replace(config, site=SiteConfig(spread=0.5)), {("s5", 0)}) == 0.5  # as the site says


def test_overall_status_and_its_sentence():
    from statusgen.decide.overall import overall

    S = Status
    assert overall([S.OPERATIONAL] * 3).summary == "All services are operating normally."
    assert overall([S.OPERATIONAL, S.UNKNOWN]).summary == (
        "All measured services are operating normally (1 service is not measured)."
    )
    mixed = overall([S.DEGRADED, S.OPERATIONAL, S.MAJOR_OUTAGE, S.DEGRADED, S.MAINTENANCE, S.OPERATIONAL])
    assert mixed.status is S.MAJOR_OUTAGE
    assert mixed.summary == (
        "1 service has a major outage, 2 services have degraded performance and 1 service is under maintenance; "
        "the other 2 are operating normally."
    )
    assert overall([S.PARTIAL_OUTAGE, S.OPERATIONAL]).summary == (
        "1 service has a partial outage; the other one is operating normally."
    )
    assert overall([S.MAINTENANCE]).status is S.MAINTENANCE
    assert overall([S.UNKNOWN, S.UNKNOWN]) == overall([S.UNKNOWN]).__class__(S.UNKNOWN, "No service is measured yet.")
    assert overall([]).status is S.UNKNOWN


def test_maintenance_told_in_progress_and_within_the_horizon():
    from statusgen.decide.maintenance import HORIZON, announced, scheduled, told

    now = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)  # a Wednesday
    svc = maintained(
        MaintenanceWindow(now - 10 * MIN, now + 50 * MIN, "Upgrade"),  # in progress
        MaintenanceWindow(now + timedelta(days=3), now + timedelta(days=3, hours=1), "Move"),  # upcoming
        MaintenanceWindow(now + HORIZON + MIN, now + HORIZON + 2 * MIN, "Far"),  # past the horizon
        MaintenanceWindow(now - 2 * MIN * 60, now - MIN * 60, "Done"),  # over
        MaintenanceWindow(schedule="0 2 * * sun", duration=7200, title="Weekly"),  # next Sunday 02:00
    )
    view = {
        "maintenance_active": [
            {"title": "Vendor DB", "starts_at": "2026-11-25T11:00:00Z", "ends_at": None, "url": "https://v/1"}
        ],
        "maintenance_upcoming": [{"title": "No start", "starts_at": None, "ends_at": None, "url": None}],
    }
    notices = told(scheduled(svc, now) + announced("api", view), now)
    assert [(n.title, n.in_progress(now), n.source) for n in notices] == [
        ("Vendor DB", True, "vendor"),
        ("Upgrade", True, "schedule"),
        ("Move", False, "schedule"),  # Saturday noon
        ("Weekly", False, "schedule"),  # Sunday 02:00
    ]
    weekly = notices[3]
    assert (weekly.start, weekly.end) == (
        datetime(2026, 11, 29, 2, 0, tzinfo=UTC),
        datetime(2026, 11, 29, 4, 0, tzinfo=UTC),
    )
    assert notices[0].to_json(now, "Example API")["status"] == "in_progress"
    assert notices[3].to_json(now, "Example API") | {"start": None} == {
        "service": "api",
        "service_name": "Example API",
        "title": "Weekly",
        "status": "upcoming",
        "start": None,
        "end": "2026-11-29T04:00:00Z",
        "source": "schedule",
        "url": None,
        "message": None,
    }


def test_maintenance_that_ended_is_found_until_its_end_is_a_horizon_old():
    from statusgen.decide.maintenance import HORIZON, ended

    now = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)  # a Wednesday
    since = now - HORIZON
    svc = maintained(
        MaintenanceWindow(now - 2 * MIN * 60, now - MIN * 60, "Done"),  # ended an hour ago
        MaintenanceWindow(now - 10 * MIN, now + 50 * MIN, "Upgrade"),  # in progress
        MaintenanceWindow(since - 60 * MIN, since, "Long ago"),  # ended as the horizon begins
        MaintenanceWindow(schedule="0 2 * * sun", duration=7200, title="Weekly"),  # last Sunday 02:00-04:00
        MaintenanceWindow(schedule="0 11 * * *", duration=7200, title="Daily"),  # now in progress, 11:00-13:00
    )
    found = ended(svc, since, now)
    assert [(n.title, n.start, n.end) for n in found] == [
        ("Done", now - 2 * MIN * 60, now - MIN * 60),
        ("Weekly", datetime(2026, 11, 22, 2, 0, tzinfo=UTC), datetime(2026, 11, 22, 4, 0, tzinfo=UTC)),
        ("Daily", datetime(2026, 11, 24, 11, 0, tzinfo=UTC), datetime(2026, 11, 24, 13, 0, tzinfo=UTC)),
    ]
    assert all(n.over(now) and n.source == "schedule" for n in found)
    an_hour_ago = now - MIN * 60
    assert ended(svc, an_hour_ago - timedelta(seconds=1), now) == found[:1]  # its end is within (since, now]
    assert ended(svc, an_hour_ago, now) == []


from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

HISTOGRAMS = st.dictionaries(st.integers(0, latency.MAX_BIN), st.integers(1, 10**7), max_size=40)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(HISTOGRAMS, max_size=6), HISTOGRAMS)
def test_merging_encoded_histograms_is_merging_them_decoded(histograms, start):
    """``merge_encoded`` reads what ``encode`` wrote, counts of one byte and of several alike."""
    expected, got = dict(start), dict(start)
    for hist in histograms:
        latency.merge(expected, hist)
        latency.merge_encoded(got, latency.encode(hist))
    assert got == expected
    assert latency.merge_encoded({}, None) == {} == latency.merge_encoded({}, b"")
