"""Damage SQLite cannot see: a stored value whose bytes changed inside a sound page. Runs and
builds stop with one line (exit 3) and publish nothing; ``statusgen doctor`` names the damage and
``--repair`` drops it and rebuilds the rest. A real simulated store of enough services for the
build to render them in worker processes."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import orjson
import pytest

from statusgen.store import Store
from statusgen.store.doctor import examine, repair
from statusgen.store.hours import deflated
from tests.test_operations import statusgen
from tests.test_stopping import MANY

HOUR = 3600


@pytest.fixture(scope="module")
def simulation(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """One simulated store (and its configuration) for the module: each test builds from a copy."""
    folder = tmp_path_factory.mktemp("simulation")
    cfg, db = folder / "sim.toml", folder / "sim.db"
    made = statusgen(
        "simulate",
        "--services",
        str(MANY),
        "--days",
        "2",
        "--config-out",
        str(cfg),
        "--db",
        str(db),
        "--output",
        str(folder / "site"),
    )
    assert made.returncode == 0, made.stderr
    return cfg, db


@pytest.fixture
def simulated(tmp_path: Path, simulation: tuple[Path, Path]) -> tuple[Path, Path, Path]:
    """A copy of the simulated store, its configuration pointing at it, and the site built from it."""
    cfg, db, site = tmp_path / "sim.toml", tmp_path / "sim.db", tmp_path / "site"
    shutil.copyfile(simulation[1], db)
    text = simulation[0].read_text(encoding="utf-8")
    text = text.replace(str(simulation[1]), str(db)).replace(str(simulation[1].parent / "site"), str(site))
    cfg.write_text(text, encoding="utf-8")
    built = statusgen("build", "--config", str(cfg))
    assert built.returncode == 0, built.stderr
    return cfg, db, site


def damage_an_hour(db: Path, service: str) -> int:
    """Overwrite 10 bytes inside one deflated hour of results, ten hours back: its page stays sound."""
    con = sqlite3.connect(db)
    hour, blob = con.execute(
        "SELECT hour, rows FROM result_hours WHERE service = ? ORDER BY hour DESC LIMIT 1 OFFSET 10", (service,)
    ).fetchone()
    middle = len(blob) // 2
    con.execute(
        "UPDATE result_hours SET rows = ? WHERE service = ? AND hour = ?",
        (blob[:middle] + bytes(10) + blob[middle + 10 :], service, hour),
    )
    con.commit()
    assert con.execute("PRAGMA quick_check").fetchone() == ("ok",)
    con.close()
    return int(hour)


def served(site: Path) -> bytes:
    return (site.resolve() / ".manifest.json").read_bytes()


def test_a_damaged_value_stops_runs_and_builds_until_doctor_repairs_it(simulated: tuple[Path, Path, Path]) -> None:
    cfg, db, site = simulated
    before = served(site)
    damage_an_hour(db, "service-0007")
    for command in ("run", "build"):  # the run stores its results, then both make the records again
        got = statusgen(command, "--config", str(cfg))
        assert got.returncode == 3, got.stderr
        lines = got.stderr.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in got.stderr, got.stderr
        assert "results of the hour of service 'service-0007' at " in lines[0] and "statusgen doctor" in lines[0]
    assert served(site) == before  # nothing published

    found = statusgen("doctor", "--config", str(cfg))
    assert found.returncode == 3, found.stderr
    assert found.stdout.count("damaged: ") == 1 and "'service-0007'" in found.stdout

    fixed = statusgen("doctor", "--repair", "--config", str(cfg))
    assert fixed.returncode == 0, fixed.stderr
    assert "rebuilt the results of the hour of service 'service-0007'" in fixed.stdout
    again = statusgen("run", "--config", str(cfg))
    assert again.returncode == 0, again.stderr
    assert served(site) != before
    assert statusgen("doctor", "--config", str(cfg)).returncode == 0


def test_doctor_finds_damage_in_every_kind_of_stored_value_and_says_what_was_lost(
    simulated: tuple[Path, Path, Path],
) -> None:
    cfg, db, _ = simulated
    con = sqlite3.connect(db)
    hour = con.execute("SELECT max(hour) FROM result_hours WHERE service = 'service-0001'").fetchone()[0] - 10 * HOUR
    con.execute("DELETE FROM results WHERE service = 'service-0001' AND ts >= ? AND ts < ?", (hour, hour + HOUR))
    con.execute("UPDATE result_hours SET rows = ? WHERE service = 'service-0001' AND hour = ?", (deflated("[1"), hour))
    res, start = con.execute("SELECT res, start FROM buckets WHERE service = 'service-0002' LIMIT 1").fetchone()
    con.execute(
        "UPDATE buckets SET hist = ? WHERE service = 'service-0002' AND res = ? AND start = ?",
        (b"\x05\x85", res, start),
    )
    con.execute("UPDATE service_state SET state = '{\"status\": ' WHERE service = 'service-0003'")
    incident, owner = con.execute("SELECT id, service FROM incidents LIMIT 1").fetchone()
    con.execute("UPDATE incidents SET record = '[]' WHERE id = ?", (incident,))
    con.commit()
    con.close()
    with Store(db) as store:
        found = {(d.table, d.service) for d in examine(store)}
        assert found == {
            ("result_hours", "service-0001"),
            ("buckets", "service-0002"),
            ("service_state", "service-0003"),
            ("incidents", owner),
        }
        told = repair(store, examine(store))
        assert examine(store) == []
    assert any("dropped the results of the hour of service 'service-0001'" in t and "pruned" in t for t in told)
    assert any("latency histogram" in t and "counts and percentiles stay" in t for t in told)
    assert any("state of service 'service-0003'" in t and "afresh" in t for t in told)
    assert any(incident in t and "lost" in t for t in told)
    assert statusgen("run", "--config", str(cfg)).returncode == 0
    con = sqlite3.connect(db)
    (state,) = con.execute("SELECT state FROM service_state WHERE service = 'service-0003'").fetchone()
    con.close()
    assert orjson.loads(state)["status"]  # decided afresh by the run
