"""``statusgen backup FILE``: a consistent copy of the live store, taken while runs write to it,
and restored as docs/operations.md says."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from click.testing import CliRunner

from statusgen.cli import main
from tests.conftest import Targets

#: A writer in a process of its own, as a run is: every transaction writes a run and its result
#: together, so a copy that holds a run without its result (or the other way round) took a
#: transaction in half. It says "ready" once its first transaction is in, and writes until the
#: file named second exists.
WRITER = """
import sys
from datetime import timedelta
from pathlib import Path
from tests.test_store import T0, cycle_at
from statusgen.store import Store

n = 0
with Store(Path(sys.argv[1])) as store:
    while not Path(sys.argv[2]).exists():
        store.save_cycle(cycle_at(T0 + timedelta(minutes=n)))
        if n == 0:
            print("ready", flush=True)
        n += 1
"""


def backup(config: Path, copy: Path) -> tuple[int, str]:
    done = CliRunner().invoke(main, ["backup", "--config", str(config), str(copy)])
    return done.exit_code, done.output


STATUSGEN = Path(sys.executable).with_name("statusgen")
ONE_SERVICE = (
    '\n[[services]]\nslug = "a"\nname = "A"\ncategory = "web"\n[[services.checks]]\nurl = "http://127.0.0.1:9/"\n'
)


def config_for(folder: Path, body: str = ONE_SERVICE) -> Path:
    path = folder / "services.toml"
    path.write_text(
        f'[site]\ntitle = "Backups"\nbase_url = "https://status.example.org"\ninterval = 60\n'
        f'store = "data/statusgen.db"\n[categories]\nweb = "Web"\n{body}'
    )
    return path


def counts(db: Path) -> tuple[int, int]:
    """The runs and the results a store holds."""
    con = sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True)
    try:
        assert con.execute("PRAGMA quick_check").fetchone() == ("ok",)
        return con.execute("SELECT (SELECT count(*) FROM runs), (SELECT count(*) FROM results)").fetchone()
    finally:
        con.close()


def test_copies_taken_while_a_writer_commits_hold_whole_transactions(tmp_path: Path) -> None:
    config = config_for(tmp_path)
    store = tmp_path / "data" / "statusgen.db"
    store.parent.mkdir()
    stop = tmp_path / "stop"
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(store), str(stop)],
        cwd=Path(__file__).resolve().parents[1],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert writer.stdout is not None and writer.stdout.readline() == "ready\n"
        seen = []
        while len(seen) < 12:
            copy = tmp_path / "backups" / f"copy-{len(seen)}.db"
            committed = counts(store)[0]
            code, out = backup(config, copy)
            assert code == 0, out
            assert f"{copy}: a copy of" in out and "schema version" in out
            runs, results = counts(copy)
            assert runs == results, (runs, results)  # whole transactions only
            assert runs >= committed  # with what the WAL held, not only what reached the file
            assert not copy.with_name(copy.name + "-wal").exists()  # one file, nothing beside it
            seen.append(runs)
    finally:
        stop.touch()
        writer.wait(timeout=60)
    assert writer.returncode == 0
    assert len(set(seen)) >= 6 and seen == sorted(seen)  # taken while it wrote
    assert sorted(p.name for p in (tmp_path / "backups").iterdir()) == sorted(f"copy-{n}.db" for n in range(len(seen)))


def test_a_backup_neither_waits_for_nor_holds_up_a_write_in_progress(tmp_path: Path) -> None:
    """A writer in the middle of its transaction (as a run saving its cycle): the copy is the store
    as last committed, at once, and the writer commits afterwards as if nothing happened."""
    config = config_for(tmp_path)
    store = tmp_path / "data" / "statusgen.db"
    CliRunner().invoke(
        main,
        ["simulate", "--services", "2", "--days", "1", "--db", str(store), "--config-out", str(tmp_path / "sim.toml")],
    )
    before = counts(store)
    writing = sqlite3.connect(store, isolation_level=None)
    writing.execute("BEGIN IMMEDIATE")
    writing.execute("INSERT INTO runs (started_at, finished_at) VALUES (1, 2)")
    t0 = time.monotonic()
    code, out = backup(config, tmp_path / "copy.db")
    assert code == 0, out
    assert time.monotonic() - t0 < 5  # SQLite's busy wait is 30 s: it did not wait for the writer
    assert counts(tmp_path / "copy.db") == before
    writing.execute("COMMIT")
    writing.close()
    assert counts(store)[0] == before[0] + 1


def test_a_backup_during_a_real_run_and_a_restore(tmp_path: Path, targets: Targets) -> None:
    """``statusgen run`` is probing a slow service while the backup is taken: the copy holds the
    runs finished before, the run ends well, and the copy, restored as docs/operations.md says,
    builds the site."""
    targets.set("/fast")
    targets.set("/slow")
    body = "".join(
        f'\n[[services]]\nslug = "{s}"\nname = "{s}"\ncategory = "web"\n[[services.checks]]\n'
        f'url = "{targets.url("/" + s)}"\ntimeout = 10\n'
        for s in ("fast", "slow")
    )
    config = config_for(tmp_path, body)
    assert CliRunner().invoke(main, ["run", "--config", str(config)]).exit_code == 0
    targets.set("/slow", delay=3)
    run = subprocess.Popen([STATUSGEN, "run", "--config", str(config)], stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 10
        while targets.hits.get("/slow", 0) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert targets.hits["/slow"] == 2 and run.poll() is None  # the run is waiting on its check
        code, out = backup(config, tmp_path / "backups" / "statusgen.db")
        assert code == 0, out
    finally:
        assert run.wait(timeout=60) == 0, run.stderr.read() if run.stderr else ""
    store = tmp_path / "data" / "statusgen.db"
    copy = tmp_path / "backups" / "statusgen.db"
    assert counts(copy) == (1, 2) and counts(store) == (2, 4)

    # The restore of docs/operations.md: no run going, the copy in place of the store (its -wal
    # and -shm, the live store's, removed first), then the next run or build goes on from it.
    for name in ("statusgen.db-wal", "statusgen.db-shm"):
        (store.parent / name).unlink(missing_ok=True)
    shutil.copyfile(copy, store)
    done = CliRunner().invoke(main, ["build", "--config", str(config)])
    assert done.exit_code == 0, done.output
    assert counts(store) == (1, 2)
    assert (tmp_path / "site" / "api" / "v1" / "snapshot.json").is_file()


def test_no_store_or_the_store_itself_is_refused(tmp_path: Path) -> None:
    config = config_for(tmp_path)
    code, out = backup(config, tmp_path / "copy.db")
    assert code == 3 and "no store here to back up" in out and not (tmp_path / "copy.db").exists()
    store = tmp_path / "data" / "statusgen.db"
    CliRunner().invoke(
        main,
        ["simulate", "--services", "1", "--days", "1", "--db", str(store), "--config-out", str(tmp_path / "sim.toml")],
    )
    code, out = backup(config, store)
    assert code == 3 and "that is the store itself" in out
    assert counts(store)[0] == 2
