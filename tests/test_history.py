"""Histories kept between builds equal histories made anew, in a real store.

A service is checked every 17 minutes for three days (so every range slides, buckets
close, some stay empty); after every cycle a real build runs, keeping each history whose
key holds (``render.service``), and every served history is compared, byte for byte,
with the history made from the store's buckets alone, and the record's buckets in
progress with those made anew. An incident opens and ends on the way, a result arrives
late into a closed bucket, and retention runs.
"""

from __future__ import annotations

import random
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson

from statusgen import latency, routes
from statusgen.config import Config, parse_config
from statusgen.decide.health import RunRecord
from statusgen.decide.history import COARSER, Columns, history, in_progress, window
from statusgen.decide.incidents import Incident, IncidentUpdate
from statusgen.decide.run import StoredResult
from statusgen.decide.state import ServiceState
from statusgen.model import RANGES, CheckResult, Outcome, Status
from statusgen.render.build import build
from statusgen.store import Cycle, Store
from statusgen.timeutil import to_epoch

T0 = datetime(2026, 11, 1, 0, 3, tzinfo=UTC)


def config(tmp: Path) -> Config:
    return parse_config(
        '[site]\nstore = "s.db"\n[categories]\nc = "C"\n[[services]]\nslug = "api"\nname = "API"\n'
        'category = "c"\n[[services.checks]]\nurl = "https://api.example"\n',
        tmp / "s.toml",
    )


def made_anew(store: Store, slug: str, as_of: datetime, incidents: list[Incident]) -> dict[str, bytes]:
    """The four histories from the store's buckets alone."""
    spans = [(to_epoch(i.started_at), to_epoch(i.ended_at) if i.ended_at else None) for i in incidents]
    out = {}
    for name, rng in RANGES.items():
        start, end = window(rng, as_of)
        res, coarser = rng.resolution_s, COARSER[rng.resolution_s]
        coarse = store.buckets(slug, coarser, start, end) if coarser else []
        made = history(slug, rng, as_of, spans, store.buckets(slug, res, start, end), coarse)
        assert made.columns == Columns.of(made.points())  # the charts' columns are the points'
        out[name] = orjson.dumps(made.document)
    return out


def progress_anew(store: Store, slug: str, as_of: datetime, incidents: list[Incident]) -> dict[str, object]:
    """The buckets in progress of the four ranges and the 24-hour summary, from the store's buckets alone."""
    spans = [(to_epoch(i.started_at), to_epoch(i.ended_at) if i.ended_at else None) for i in incidents]
    out: dict[str, object] = {}
    for name, rng in RANGES.items():
        begun = window(rng, as_of)[1]
        now = store.buckets(slug, rng.resolution_s, begun, begun + rng.resolution_s)
        out[name] = in_progress(rng, as_of, spans, now[0] if now else None)
    return out


def through_the_build(store: Store, cfg: Config, at: datetime) -> tuple[dict[str, bytes], int, dict[str, object]]:
    """The four histories as a build serves them, how many it made anew (the others it kept), and
    the record's buckets in progress; its last day agrees with itself (``last_day_agrees``)."""
    kept = build(store, cfg, at, workers=1).stats.kept
    site = cfg.site.output
    paths = {name: routes.history_file("api", name) for name in RANGES}
    docs = {name: orjson.dumps(orjson.loads((site / path).read_bytes())) for name, path in paths.items()}
    record = orjson.loads((site / routes.service_file("api")).read_bytes())
    last_day_agrees(record["service"]["last_day"], docs["24h"])
    return docs, sum(1 for path in paths.values() if path not in kept), record["service"]["in_progress"]


def last_day_agrees(day: dict, served_24h: bytes) -> None:
    """A record's last day: its summary adds up exactly the rows it lists, all of them within its
    period, which starts where the 24-hour history does."""
    rows, summary = day["rows"], day["summary"]
    counted = [row for row in rows if row[6] is None]  # [at, check, outcome, latency_ms, http_status, slow, flag]
    up = sum(row[2] == "ok" for row in counted)
    assert day["count"] == len(rows)
    assert all(day["from"] <= row[0] <= day["to"] for row in rows)
    assert day["from"] == orjson.loads(served_24h)["from"]
    assert (summary["checks"], summary["failed"]) == (len(counted), len(counted) - up)
    assert summary["maintenance"] == sum(row[6] == "maintenance" for row in rows)
    assert summary["excluded"] == sum(row[6] == "excluded" for row in rows)
    assert summary["availability"] == (round(100 * up / len(counted), 3) if counted else None)


def save(
    store: Store,
    at: datetime,
    outcome: Outcome,
    ms: float | None,
    incidents=(),
    flag=None,
    observed: datetime | None = None,
) -> None:
    """A run's result at ``at``; the state it leaves was observed at ``observed`` (by default ``at``):
    a service's histories end with the bucket of that time."""
    result = CheckResult("api", 0, at, outcome, ms, 200 if ms else None, False)
    state = ServiceState(Status.OPERATIONAL, at, "fine", ("checks",), observed_at=observed or at)
    store.save_cycle(
        Cycle(
            RunRecord(0, at, at + timedelta(seconds=1), 1, int(ms is None)),
            [StoredResult(result, flag)],
            {"api": state},
            list(incidents),
        )
    )


def test_histories_kept_between_builds_equal_histories_made_anew(tmp_path):
    rnd = random.Random(7)
    cfg = config(tmp_path)
    store = Store(cfg.site.store)
    incidents: list[Incident] = []
    remade = cycles = 0
    at = T0
    for n in range(3 * 24 * 60 // 17):
        at += timedelta(minutes=17)
        down = 100 <= n < 104
        changed: list[Incident] = []
        if n == 101:  # an incident opens (from the first failure), then ends
            incidents = changed = [
                Incident(
                    "api-1",
                    "api",
                    "API: major outage",
                    "major",
                    T0 + timedelta(minutes=17 * 101),
                    None,
                    (IncidentUpdate(at, "opened", "major_outage", "Opened"),),
                )
            ]
        if n == 104:
            incidents = changed = [
                Incident(
                    incidents[0].id,
                    "api",
                    incidents[0].title,
                    "major",
                    incidents[0].started_at,
                    at,
                    incidents[0].updates,
                )
            ]
        save(
            store,
            at,
            Outcome.HTTP_STATUS if down else Outcome.OK,
            None if down else rnd.uniform(20, 900),
            changed,
            flag="maintenance" if 60 <= n < 64 else None,
        )
        if n == 150:  # a late result, into a bucket that closed an hour ago
            save(store, at - timedelta(hours=1), Outcome.OK, 5000.0, observed=at)
        if n % 50 == 0:
            store.prune(at)
        docs, made, progress = through_the_build(store, cfg, at)
        remade += made
        cycles += 1
        assert docs == made_anew(store, "api", at, incidents), f"cycle {n} at {at}"
        assert progress == progress_anew(store, "api", at, incidents), f"cycle {n} at {at}"
    assert remade < cycles * 4 / 2  # most histories were kept


def test_a_late_result_or_a_changed_incident_makes_the_history_again(tmp_path):
    cfg = config(tmp_path)
    store = Store(cfg.site.store)
    at = T0 + timedelta(hours=2)
    for minutes in range(0, 120, 7):
        save(store, T0 + timedelta(minutes=minutes), Outcome.OK, 50.0, observed=at)
    assert through_the_build(store, cfg, at)[1] == 4  # the first build makes every range
    assert through_the_build(store, cfg, at)[1] == 0  # the next keeps them all
    save(store, at - timedelta(minutes=50), Outcome.OK, 70.0, observed=at)  # late: closed in 24h and 7d only
    assert through_the_build(store, cfg, at)[1] == 2
    started = T0 + timedelta(minutes=30)
    save(
        store,
        at,
        Outcome.OK,
        50.0,
        [
            Incident(
                "api-2",
                "api",
                "t",
                "minor",
                started,
                started + timedelta(minutes=9),
                (IncidentUpdate(started, "opened", "degraded", "Opened"),),
            )
        ],
    )
    docs, made, _ = through_the_build(store, cfg, at)
    assert made == 4 and docs == made_anew(store, "api", at, store.incidents())


def test_the_records_last_day_summary_adds_up_its_rows_whether_the_history_is_kept_or_made(tmp_path):
    """A result a minute, a build after each: the 24-hour history is kept within a bucket, and the
    record's last day summary (closed buckets and the bucket in progress) adds up its rows; an
    incident, maintenance, an empty stretch and a late result on the way; the window's edges
    fall inside hours."""
    rnd = random.Random(11)
    cfg = config(tmp_path)
    store = Store(cfg.site.store)
    start = T0 + timedelta(hours=25, minutes=7)
    for minutes in range(0, 3 * 60, 3):  # a day before, slow: the window's old edge weighs in its latency
        at = start - timedelta(hours=25) + timedelta(minutes=minutes)
        save(store, at, Outcome.OK, rnd.uniform(2000, 9000), flag="maintenance" if minutes % 33 == 0 else None)
    incident = Incident(
        "api-3", "api", "t", "minor", start - timedelta(hours=23), start - timedelta(hours=22, minutes=45), ()
    )
    kept = 0
    for n in range(40):
        at = start + timedelta(minutes=n)
        if 20 <= n < 25:
            continue  # nothing measured
        down = n % 9 == 0
        save(
            store,
            at,
            Outcome.HTTP_STATUS if down else Outcome.OK,
            None if down else rnd.uniform(20, 900),
            [incident] if n == 0 else (),
        )
        if n == 30:  # a late result, into a closed bucket near the window's old edge
            save(store, at - timedelta(hours=23, minutes=50), Outcome.OK, 4000.0, observed=at)
        docs, made, progress = through_the_build(store, cfg, at)
        kept += made == 0
        assert progress == progress_anew(store, "api", at, store.incidents()), f"minute {n}"
    assert kept >= 20  # the summary was made from the sums, the history kept


def test_simulated_buckets_add_up_across_resolutions(tmp_path):
    """``statusgen simulate`` makes each coarser bucket the sum of the finer ones, as real
    runs do: a summary that merges coarser buckets where they fit then equals one that
    merges the finer ones."""
    from statusgen.simulate import simulate

    now = datetime(2026, 11, 22, 20, 0, 30, tzinfo=UTC)
    simulate(2, 12, tmp_path / "sim.db", now)
    store = Store(tmp_path / "sim.db")
    rows = store.db.execute("SELECT res, start, up, down, hist FROM buckets WHERE service = 'service-0000'")
    by_res: dict[int, dict[int, tuple]] = {}
    for res, start, up, down, hist in rows:
        by_res.setdefault(res, {})[start] = (up, down, latency.decode(hist))
    for fine, coarse in ((3600, 21600), (21600, 86400)):
        for start, (up, down, hist) in by_res[coarse].items():
            parts = [v for s, v in by_res[fine].items() if start <= s < start + coarse]
            if len(parts) == coarse // fine:  # wholly within the finer buckets' retention
                merged: dict[int, int] = {}
                for p in parts:
                    latency.merge(merged, p[2])
                assert (up, down, hist) == (sum(p[0] for p in parts), sum(p[1] for p in parts), merged)


def test_simulated_incidents_never_end_after_now(tmp_path):
    """An outage of the simulated past still going on at its end is an open incident, its
    service in a major outage since the outage began; every other incident ended before now."""
    from statusgen.simulate import Simulated, fill

    now = datetime(2026, 11, 22, 20, 0, 30, tzinfo=UTC)
    services = [Simulated(f"s{i}", f"S {i}", outages_per_day=12.0) for i in range(12)]  # an outage every 2 h
    fill(services, 3, tmp_path / "sim.db", now)
    store = Store(tmp_path / "sim.db")
    incidents, states = store.incidents(), store.states()
    ends = [i.updates[-1].at for i in incidents]
    assert max(ends) <= now and all(i.ended_at is None or i.ended_at <= now for i in incidents)
    open_ = [i for i in incidents if i.open]
    assert open_, "with this many outages some service is down at the end"
    for incident in open_:
        state = states[incident.service]
        assert state.status == Status.MAJOR_OUTAGE and state.since == incident.started_at


def test_a_simulated_store_checked_every_five_minutes_holds_one_result_a_bucket(tmp_path):
    """``simulate --interval 300``: raw results five minutes apart, one of them in each 5-minute
    bucket and twelve in each hour, as a site checking every five minutes leaves them."""
    from statusgen.simulate import fill, numbered

    now = datetime(2026, 11, 22, 20, 0, 30, tzinfo=UTC)
    fill(numbered(3), 2, tmp_path / "sim.db", now, interval=300)
    db = sqlite3.connect(tmp_path / "sim.db")
    times = [t for (t,) in db.execute("SELECT ts FROM results WHERE service = 'service-0000' ORDER BY ts")]
    assert times and {b - a for a, b in zip(times, times[1:], strict=False)} == {300}
    counts = {
        res: {n for (n,) in db.execute("SELECT up + down + maintenance FROM buckets WHERE res = ?", (res,))}
        for res in (300, 3600)
    }
    db.close()
    assert counts[300] == {1} and max(counts[3600]) == 12
