"""The SQLite store: migrations, one transaction per run, retention. Real files."""

from __future__ import annotations

import shutil
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson
import pytest

from statusgen.decide.health import RunRecord
from statusgen.decide.incidents import Incident, IncidentUpdate
from statusgen.decide.run import StoredResult
from statusgen.decide.state import ServiceState
from statusgen.errors import StoreError
from statusgen.model import CheckResult, Outcome, Status
from statusgen.store import RAW_RETENTION_S, Cycle, Store
from statusgen.store.migrations import MIGRATIONS

T0 = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


def cycle_at(at: datetime, outcome: Outcome = Outcome.OK, incidents=()) -> Cycle:
    results = [
        StoredResult(CheckResult("api", 0, at, outcome, 42.0 if outcome is Outcome.OK else None, 200, False), None)
    ]
    return Cycle(
        RunRecord(0, at, at + timedelta(seconds=1), 1, int(outcome is not Outcome.OK)),
        results,
        {"api": ServiceState(Status.OPERATIONAL, at, "fine", ("checks",))},
        list(incidents),
    )


def test_new_store_is_migrated_and_in_wal_mode(tmp_path):
    store = Store(tmp_path / "s.db")
    assert store.schema_version() == MIGRATIONS[-1][0]
    assert store.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    store.close()
    again = Store(tmp_path / "s.db")  # reopening applies nothing twice
    assert again.db.execute("SELECT COUNT(*) FROM schema_migrations").fetchone()[0] == len(MIGRATIONS)


def test_a_cycle_is_written_and_read_back(tmp_path):
    store = Store(tmp_path / "s.db")
    inc = Incident(
        "api-1",
        "api",
        "API: major outage",
        "critical",
        T0,
        None,
        (IncidentUpdate(T0, "opened", "major_outage", "Opened"),),
    )
    store.save_cycle(cycle_at(T0, incidents=[inc]))
    store.save_cycle(cycle_at(T0 + timedelta(minutes=1), Outcome.TIMEOUT))
    assert store.states()["api"].status is Status.OPERATIONAL
    assert store.open_incidents() == {"api": inc}
    rows = store.buckets("api", 300, 0, 2**40)
    assert [(r.up, r.down) for r in rows] == [(1, 1)]
    assert [(r.up, r.down) for r in store.buckets("api", 86400, 0, 2**40)] == [(1, 1)]
    assert len(store.recent_results(T0)["api"]) == 2
    assert store.last_finished_run().checks_failed == 1


def test_incident_records_read_back_as_written_and_older_ones_in_full(tmp_path):
    """A record read back gives the incident and the record it was written as; a record an older
    version wrote (no ``link`` or ``ref`` in its updates) gives them too, as null."""
    store = Store(tmp_path / "s.db")
    inc = Incident(
        "api-1",
        "api",
        "API: major outage",
        "critical",
        T0,
        T0 + timedelta(hours=1),
        (
            IncidentUpdate(T0, "opened", "major_outage", "Opened"),
            IncidentUpdate(T0 + timedelta(hours=1), "vendor", "operational", "Fixed", "https://v.example/1", "1"),
        ),
    )
    store.save_cycle(cycle_at(T0, incidents=[inc]))
    read = store.incidents()
    assert read == [inc] and read[0].to_json() == inc.to_json()
    older = inc.to_json()
    older["updates"] = [{k: v for k, v in u.items() if k not in ("link", "ref")} for u in older["updates"]]
    store.db.execute("UPDATE incidents SET record = ?", (orjson.dumps(older).decode(),))
    store.db.commit()
    [again] = store.incidents()
    assert again.to_json()["updates"][1] == inc.to_json()["updates"][1] | {"link": None, "ref": None}
    assert again.to_json()["updates"][0] == inc.to_json()["updates"][0]
    assert all(set(u) == {"at", "kind", "status", "message", "link", "ref"} for u in again.to_json()["updates"])


def test_a_builds_incidents_are_the_store_records_by_service(tmp_path):
    """What a build gathers of the incidents agrees with ``Store.incidents``: newest first, each
    service's own, their spans; a record an older version wrote is told as the current form."""
    from statusgen.config import parse_config
    from statusgen.render.api.documents import incident_document
    from statusgen.render.gather import gather

    store = Store(tmp_path / "s.db")
    made = [
        Incident(
            f"{svc}-{n}",
            svc,
            f"{svc} {n}",
            "minor",
            T0 + timedelta(hours=n, microseconds=700),
            None if n == 3 and svc == "api" else T0 + timedelta(hours=n, minutes=5),
            (IncidentUpdate(T0 + timedelta(hours=n), "opened", "degraded", "Opened"),),
        )
        for n in range(4)
        for svc in ("api", "web")
    ]
    store.save_cycle(cycle_at(T0, incidents=made))
    config = parse_config(
        '[categories]\nc = "C"\n[[services]]\nslug = "api"\nname = "API"\ncategory = "c"\n'
        '[[services.checks]]\nurl = "https://api.example"\n',
        tmp_path / "s.toml",
    )
    data = gather(store, config, T0)
    listed = store.incidents()
    assert [i.id for i in listed[:2]] == ["web-3", "api-3"]  # newest first, then by id
    assert [orjson.loads(row.record) for row in data.incidents] == [i.to_json() for i in listed]
    for slug in ("api", "web", "db"):
        mine = [i for i in listed if i.service == slug]
        assert [row.record for row in data.incidents_of(slug)] == [orjson.dumps(i.to_json()).decode() for i in mine]
        assert data.spans_of(slug) == [
            (int(i.started_at.timestamp()), int(i.ended_at.timestamp()) if i.ended_at else None) for i in mine
        ]
    older = listed[0].to_json()  # as an older version wrote it: no link, no ref
    older["updates"] = [{k: v for k, v in u.items() if k not in ("link", "ref")} for u in older["updates"]]
    row = data.incidents[0]._replace(record=orjson.dumps(older).decode())
    assert incident_document(data.config, row) == incident_document(data.config, data.incidents[0])


def test_a_failing_cycle_writes_nothing(tmp_path):
    store = Store(tmp_path / "s.db")
    bad = cycle_at(T0)
    broken = Cycle(bad.run, bad.results, {"api": "not a state"}, [])  # type: ignore[dict-item]
    with pytest.raises(AttributeError):
        store.save_cycle(broken)
    assert store.db.execute("SELECT COUNT(*) FROM results").fetchone()[0] == 0
    assert store.db.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 0
    assert store.buckets("api", 300, 0, 2**40) == []


def test_retention_keeps_each_resolution_for_its_range(tmp_path):
    store = Store(tmp_path / "s.db")
    old = T0 - timedelta(days=10)
    store.save_cycle(cycle_at(old))
    store.save_cycle(cycle_at(T0))
    store.prune(T0)
    assert len(store.recent_results(old - timedelta(days=1))["api"]) == 1
    assert RAW_RETENTION_S >= 86400
    assert len(store.buckets("api", 300, 0, 2**40)) == 1  # 5-min buckets: only the last day
    assert len(store.buckets("api", 3600, 0, 2**40)) == 1  # 1-h buckets: 8 days
    assert len(store.buckets("api", 21600, 0, 2**40)) == 2  # 6-h buckets: 31 days
    assert len(store.buckets("api", 86400, 0, 2**40)) == 2


def test_an_unopenable_store_is_a_clear_error(tmp_path):
    from statusgen.errors import StoreError

    (tmp_path / "s.db").write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError) as info:
        Store(tmp_path / "s.db")
    assert "s.db: cannot open the store" in str(info.value) and "--new-store" in str(info.value)


def test_a_store_damaged_in_the_middle_is_refused_when_opened(tmp_path):
    import random

    from statusgen.errors import StoreError

    path = tmp_path / "s.db"
    db = sqlite3.connect(path)  # made here without Store: a process checks a store once
    db.execute("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)")
    db.executemany("INSERT INTO t VALUES (?, ?)", [(i, "x" * 500) for i in range(400)])
    db.commit()
    db.close()
    pages = path.stat().st_size // 4096
    with open(path, "r+b") as f:
        f.seek(pages // 2 * 4096)
        f.write(random.Random(1).randbytes(3 * 4096))
    with pytest.raises(StoreError) as info:
        Store(path)
    assert str(info.value).startswith(f"{path}: ") and "damaged" in str(info.value)
    assert "\n" not in str(info.value)


def test_an_error_of_sqlite_in_use_is_the_stores(tmp_path):
    from statusgen.errors import StoreError

    store = Store(tmp_path / "s.db")
    store.db.close()  # any error of SQLite once open: a full disk, a damaged page
    with pytest.raises(StoreError) as info:
        store.save_cycle(cycle_at(T0))
    assert str(info.value).startswith(f"{tmp_path / 's.db'}: cannot read or write the store")
    with pytest.raises(StoreError):
        store.states()


def test_a_missing_or_empty_store_that_was_expected_is_an_error(tmp_path):
    from statusgen.errors import StoreError

    path = tmp_path / "s.db"
    with pytest.raises(StoreError, match="the store is missing, but a previous run recorded one"):
        Store(path, expected=True)
    path.write_bytes(b"")
    with pytest.raises(StoreError, match="the store is empty"):
        Store(path, expected=True)
    Store(path).close()  # not expected: a new store
    Store(path, expected=True).close()  # now it holds its schema


def test_a_reader_reads_and_changes_nothing(tmp_path):
    """Render workers open the store as readers: no write, no change of journal mode, and an
    old store is refused, not migrated (the run that writes migrates)."""
    from statusgen.store.migrations import migrate

    path = tmp_path / "s.db"
    with Store(path) as store:
        store.save_cycle(cycle_at(T0))
    sqlite3.connect(path, isolation_level=None).execute("PRAGMA journal_mode=DELETE").connection.close()
    reader = Store.reader(path)
    assert reader.states()["api"].status is Status.OPERATIONAL
    with pytest.raises(StoreError, match="cannot read or write the store"):
        reader.save_cycle(cycle_at(T0 + timedelta(minutes=1)))
    reader.close()
    check = sqlite3.connect(path)
    assert check.execute("PRAGMA journal_mode").fetchone() == ("delete",)
    assert check.execute("SELECT count(*) FROM runs").fetchone() == (1,)
    check.close()

    old = tmp_path / "old.db"
    db = sqlite3.connect(old, isolation_level=None)
    migrate(db, upto=12)
    db.close()
    with pytest.raises(StoreError, match=f"schema is version 12, this statusgen reads version {MIGRATIONS[-1][0]}"):
        Store.reader(old)
    db = sqlite3.connect(old)
    assert db.execute("SELECT max(version) FROM schema_migrations").fetchone() == (12,)
    db.close()


def test_a_store_of_the_first_schema_upgrades_in_place_without_losing_data(tmp_path):
    from statusgen.store.migrations import migrate

    path = tmp_path / "old.db"
    db = sqlite3.connect(path, isolation_level=None)
    migrate(db, upto=1)  # the store as the first release made it
    db.execute("INSERT INTO runs (started_at, finished_at, checks_attempted, checks_failed) VALUES (1, 2, 5, 1)")
    db.execute("INSERT INTO results VALUES ('api', 0, 100, 'ok', 12.5, 200, 0, NULL, 1)")
    db.execute(
        "INSERT INTO service_state VALUES ('api', ?)",
        (
            '{"status": "operational", "since": null, "reason": "fine", "sources": ["checks"], '
            '"evidence": [], "observed_at": null, "fail_streak": 0, "slow_streak": 0, "good_streak": 3, '
            '"streak_since": null, "own_status": "operational"}',
        ),
    )
    db.close()
    store = Store(path)
    assert store.schema_version() == MIGRATIONS[-1][0] > 1
    run = store.last_finished_run()
    assert (run.checks_attempted, run.checks_failed, run.canaries_attempted) == (5, 1, 0)
    assert store.states()["api"].good_streak == 3
    assert store.states()["api"].incident_basis is Status.OPERATIONAL
    assert store.db.execute("SELECT latency_ms FROM results").fetchone() == (12.5,)
    assert store.vendor_rows() == {}


def test_a_store_of_the_previous_schema_upgrades_in_place_and_keeps_its_buckets(tmp_path):
    """Migration 12: the buckets move to a table kept by service, as they were; the history points
    and drawings earlier builds kept in the store go."""
    from statusgen.store.migrations import migrate

    path = tmp_path / "v11.db"
    db = sqlite3.connect(path, isolation_level=None)
    migrate(db, upto=11)
    starts = [int(T0.timestamp()) - 300 * i for i in range(3)]
    for n, start in enumerate(starts):
        db.execute(
            "INSERT INTO buckets (res, start, service, up, down, hist, p50, p95) "
            "VALUES (300, ?, 'api', 2, ?, x'0a02', 12.0, 13.0)",
            (start, n),
        )
    db.execute("INSERT INTO history_cache VALUES ('api', 300, 0, 0, '1:', '', '[0,0,0,0]', NULL, NULL, NULL)")
    db.close()
    store = Store(path)
    assert store.schema_version() == MIGRATIONS[-1][0] >= 12
    tables = {name for (name,) in store.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert "history_cache" not in tables
    kept = store.buckets("api", 300, starts[-1], starts[0] + 300)
    assert [(b.start, b.up, b.down, b.hist, b.p50) for b in kept] == [
        (s, 2, 2 - n, b"\n\x02", 12.0) for n, s in enumerate(reversed(starts))
    ]
    assert store.bucket_tallies("api", [(300, starts[-1], starts[0] + 300), (3600, 0, 1)]) == [(3, 9), (0, 0)]
    assert store.data_versions() == {}  # migration 8: versions start with the next write
    store.save_cycle(cycle_at(T0 + timedelta(minutes=5)))
    assert store.data_versions() == {"api": 1}


def _rows_by_sql(store: Store, since: datetime) -> tuple[int, str]:
    """A service's last day read from its results alone, as stores before the hourly blocks read it."""
    return store.db.execute(
        "SELECT count(*), '[' || ifnull(group_concat(row, ','), '') || ']' FROM "
        "(SELECT row FROM results WHERE service = 'api' AND ts >= ? ORDER BY ts, check_index)",
        (int(since.timestamp()),),
    ).fetchone()


def test_the_last_day_read_from_hourly_blocks_is_the_results_in_order(tmp_path):
    store = Store(tmp_path / "s.db")
    start = T0 - timedelta(hours=30)
    for m in range(0, 30 * 60, 7):  # results over 30 hours, across hour boundaries
        store.save_cycle(
            cycle_at(start + timedelta(minutes=m, seconds=m % 60), Outcome.OK if m % 5 else Outcome.TIMEOUT)
        )
    late = start + timedelta(hours=20, minutes=1, seconds=30)  # a late result inside a closed hour
    store.save_cycle(cycle_at(late, Outcome.HTTP_STATUS))
    for since in (
        T0 - timedelta(days=1),
        T0 - timedelta(hours=9, seconds=1),
        T0 - timedelta(hours=10),
        T0 - timedelta(hours=9, minutes=30),
    ):  # rows before the first whole hour too
        count, rows = store.last_day_json("api", since)
        assert (count, rows) == _rows_by_sql(store, since)
        assert count == len(orjson.loads(rows)) > 0
    assert '"http_status"' in store.last_day_json("api", T0 - timedelta(days=1))[1]
    store.prune(T0 + timedelta(days=1, hours=5, minutes=30))  # results of more than 2 days ago go, and their hours
    since = T0 - timedelta(hours=19, minutes=30)
    assert store.last_day_json("api", since) == _rows_by_sql(store, since)
    assert (
        store.db.execute("SELECT min(hour) FROM result_hours").fetchone()[0]
        >= store.db.execute("SELECT min(ts) FROM results").fetchone()[0] // 3600 * 3600
    )


def test_a_store_before_hourly_blocks_upgrades_and_reads_the_same_last_day(tmp_path):
    from statusgen.store.database import INSERT_RESULT
    from statusgen.store.hours import ROW_SQL
    from statusgen.store.migrations import migrate

    path = tmp_path / "v8.db"
    db = sqlite3.connect(path, isolation_level=None)
    migrate(db, upto=8)  # the store as migration 8 left it: results, no blocks
    for m in range(0, 3 * 60, 11):
        db.execute(INSERT_RESULT, ("api", 0, int((T0 + timedelta(minutes=m)).timestamp()), "ok", 42.5, 200, 0, None, 1))
    db.execute(f"UPDATE results SET row = {ROW_SQL}")
    db.close()
    store = Store(path)
    assert store.schema_version() == MIGRATIONS[-1][0]
    since = T0 + timedelta(minutes=25)
    assert store.last_day_json("api", since) == _rows_by_sql(store, since)
    assert store.db.execute("SELECT sum(n) FROM result_hours").fetchone() == (17,)


FIRST_SCHEMA = Path(__file__).parent / "fixtures" / "store" / "first-schema.db"
#: The services of the store above (the demo of its day), as a configuration of today names them.
FIRST_SERVICES = {
    "acme-api": ("apis", 1, ""),
    "acme-web": ("web", 2, ""),
    "slowpoke": ("apis", 1, ""),
    "payments-eu": ("payments", 2, ""),
    "legacy-gateway": ("web", 1, ""),
    "search": ("apis", 1, ""),
    "billing-db": ("payments", 1, ""),
    "beta-region": ("web", 1, "paused = true\n"),
}


def first_schema_config(folder: Path, store: Path) -> Path:
    services = "".join(
        f'\n[[services]]\nslug = "{slug}"\nname = "{slug.title()}"\ncategory = "{category}"\n{extra}'
        + f'[[services.checks]]\nurl = "http://127.0.0.1:9/{slug}"\n' * checks
        for slug, (category, checks, extra) in FIRST_SERVICES.items()
    )
    path = folder / "services.toml"
    path.write_text(
        f'[site]\ntitle = "Upgraded"\nbase_url = "https://status.example.org"\ninterval = 60\nstore = "{store}"\n'
        f'output = "{folder / "site"}"\n[categories]\napis = "APIs"\nweb = "Websites"\npayments = "Payments"\n'
        f"{services}"
    )
    return path


def test_a_store_made_by_the_first_schema_upgrades_and_builds(tmp_path):
    """A store written by the code of the first schema (0.1.0's first days: tests/fixtures/store/)
    is brought up to date by every migration, reads back what it held, and a site builds from it."""
    from statusgen.config import load_config
    from statusgen.cycle import rebuild

    store_path = tmp_path / "statusgen.db"
    shutil.copyfile(FIRST_SCHEMA, store_path)
    old = sqlite3.connect(store_path)
    assert old.execute("SELECT version FROM schema_migrations").fetchall() == [(1,)]
    last_result = old.execute("SELECT max(ts) FROM results").fetchone()[0]
    BUCKETS = "SELECT res, service, start, up, down, slow, maintenance, hist FROM buckets ORDER BY res, service, start"
    buckets = old.execute(BUCKETS).fetchall()
    old.close()

    with Store(store_path) as store:
        applied = [v for (v,) in store.db.execute("SELECT version FROM schema_migrations ORDER BY version")]
        assert applied == [version for version, _, _ in MIGRATIONS]
        states = store.states()
        assert set(states) == set(FIRST_SERVICES)
        assert states["legacy-gateway"].status is Status.MAJOR_OUTAGE and states["slowpoke"].status is Status.DEGRADED
        assert states["beta-region"].status is Status.UNKNOWN and states["search"].status is Status.OPERATIONAL
        incidents = {i.service: i for i in store.incidents()}
        assert set(incidents) == {"slowpoke", "payments-eu", "legacy-gateway", "search"}
        assert incidents["search"].ended_at is not None and incidents["legacy-gateway"].ended_at is None
        assert str(incidents["legacy-gateway"].title) == "Legacy Gateway: major outage"
        assert store.last_finished_run().checks_attempted == 9
        assert store.db.execute("SELECT count(*) FROM results").fetchone() == (72,)
        assert store.db.execute(BUCKETS).fetchall() == buckets and len(buckets) > 8

    config = load_config(first_schema_config(tmp_path, store_path))
    rebuild(config, clock=lambda: datetime.fromtimestamp(last_result + 30, UTC))
    snapshot = orjson.loads((tmp_path / "site" / "api" / "v1" / "snapshot.json").read_bytes())
    statuses = {s["slug"]: s["status"] for s in snapshot["services"]}
    assert statuses["legacy-gateway"] == "major_outage" and statuses["acme-api"] == "operational"
    listed = orjson.loads((tmp_path / "site" / "api" / "v1" / "incidents.json").read_bytes())["incidents"]
    assert sorted(i["service"] for i in listed) == ["legacy-gateway", "payments-eu", "search", "slowpoke"]
    assert (tmp_path / "site" / "services" / "search" / "incidents" / "index.html").is_file()
