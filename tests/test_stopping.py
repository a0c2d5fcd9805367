"""Stopping: a killed run leaves no worker rendering and no lock held; SIGTERM ends a loop within
seconds whatever its cycle is doing; a loop started with an invalid configuration exits 2.
Real processes, real signals, a real store and tree."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from contextlib import suppress
from pathlib import Path

from statusgen.store.lock import run_lock
from tests.conftest import Targets, write_config
from tests.test_operations import STATUSGEN, db_is_intact, loop, site_is_complete, statusgen, stop, wait_for

#: Services enough for a build to render them with worker processes (``build.WORKER_SERVICES``).
MANY = 200


def services(count: int, url: str, timeout: float = 3) -> str:
    return '[categories]\nweb = "Web"\n' + "".join(
        f'[[services]]\nslug = "svc-{i}"\nname = "Service {i}"\ncategory = "web"\n'
        f'[[services.checks]]\nurl = "{url}"\ntimeout = {timeout}\n'
        for i in range(count)
    )


def config_of(tmp: Path, count: int, url: str, interval: float = 60, timeout: float = 3) -> Path:
    return write_config(tmp, services(count, url, timeout), f'interval = {interval}\noutput = "site"')


def children_of(pid: int) -> set[int]:
    """The processes whose parent is ``pid``, from /proc."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rpartition(")")[2].split()[1]) == pid:
                found.add(int(entry.name))
    return found


def alive(pid: int) -> bool:
    """Whether ``pid`` runs: a zombie (dead, not yet reaped by whoever adopted it) does not."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def cpu_ticks(pid: int) -> int | None:
    """The CPU time ``pid`` has used (user and system, in clock ticks); None once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return None
    return int(fields[11]) + int(fields[12])


def rendered(site: Path) -> int:
    """The services whose page a killed build's workers have written into its partial generation."""
    return sum(1 for _ in (site.parent / f"{site.name}.gens").glob("partial-*/services/*/index.html"))


def test_a_killed_build_frees_the_lock_and_its_workers_stop_rendering(tmp_path: Path, targets: Targets) -> None:
    """kill -9 of a build: the run lock is free at once (no worker holds a copy of it), and the
    workers render no more than the chunks the pool had handed out by then, then idle: the chunk
    each worker renders and the pool's queue of three (workers + 1), 5 x 50 services of the 800.
    Counted in pages, not in seconds: the workers are awaited until idle (no CPU used in a second,
    no page written), however long a loaded machine makes that."""
    cfg = config_of(tmp_path, MANY * 4, targets.url("/ok"))
    proc = subprocess.Popen([*STATUSGEN, "build", "--config", str(cfg)], stderr=subprocess.PIPE)
    workers: set[int] = set()
    site = tmp_path / "site"
    try:
        assert wait_for(lambda: len(children_of(proc.pid)) >= 2 and rendered(site) > 0, 60), "no worker rendered"
        workers = children_of(proc.pid)
        proc.kill()
        proc.wait()
        at_kill = rendered(site)
        with run_lock(tmp_path / "data" / "statusgen.db", wait_s=2):  # the next run gets the lock
            pass
        last = [(rendered(site), {w: cpu_ticks(w) for w in workers})]

        def idle() -> bool:
            time.sleep(1)
            last.append((rendered(site), {w: cpu_ticks(w) for w in workers}))
            return last[-1] == last[-2]

        assert wait_for(idle, 120, step=0), "workers of a killed build went on rendering"
        after = last[-1][0] - at_kill
        print(f"services rendered by the kill: {at_kill}; after it: {after}")
        assert after <= 5 * 50, (at_kill, after)  # of the 800, in chunks of 50 services (build.CHUNK)
    finally:
        proc.kill()
        proc.wait()
        for pid in workers:  # idle in the pool's queue: a service manager ends them with the run's group
            with suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def test_sigterm_abandons_the_checks_in_flight_and_exits_at_once(tmp_path: Path, targets: Targets) -> None:
    targets.set("/hang")
    cfg = config_of(tmp_path, 3, targets.url("/hang"), interval=60, timeout=20)
    assert statusgen("run", "--config", str(cfg)).returncode == 0
    site = tmp_path / "site"
    served = site.resolve()
    targets.set("/hang", delay=40)  # from now on every check hangs until it times out
    with loop(cfg) as lines:
        assert wait_for(lambda: targets.hits.get("/hang", 0) > 3, 20), lines.text()  # a check in flight
        code, took = stop(lines, signal.SIGTERM)
        print(f"SIGTERM to exit: {took:.2f} s")
        assert code == 0 and took < 5, lines.text()
        text = lines.text()
        messages = lines.messages()
    assert "received SIGTERM; abandoning the cycle in progress and stopping" in messages
    assert messages[-1] == "loop stopped after 0 cycles (0 failed); the cycle in progress was abandoned"
    assert len(lines.lines) == len(lines.raw), text  # nothing but the log's lines: no asyncio complaint
    assert "Traceback" not in text and all(ln["level"] == "info" for ln in lines.lines), text
    assert site.resolve() == served and site_is_complete(site) > 10
    db = tmp_path / "data" / "statusgen.db"
    db_is_intact(db)
    assert json.loads((site / "api/v1/health.json").read_bytes())
    with run_lock(db):
        pass


def test_sigint_between_cycles_stops_the_loop(tmp_path: Path, targets: Targets) -> None:
    targets.set("/ok")
    cfg = config_of(tmp_path, 3, targets.url("/ok"), interval=10)  # spread briefly, then a wait
    with loop(cfg) as lines:
        assert wait_for(lambda: lines.seen("run "), 30), lines.text()
        code, took = stop(lines, signal.SIGINT)
        assert code == 0 and took < 5, lines.text()
        messages = lines.messages()
    assert messages[-2:] == ["received SIGINT; stopping", "loop stopped after 1 cycles (0 failed)"]
    site_is_complete(tmp_path / "site")


def test_a_loop_started_with_an_invalid_configuration_exits_2(tmp_path: Path, targets: Targets) -> None:
    cfg = config_of(tmp_path, 3, targets.url("/ok"), interval=1)
    cfg.write_text(cfg.read_text().replace("interval = 1", "interval = 'one'"))
    res = statusgen("--log-format", "json", "run", "--loop", "--config", str(cfg))
    assert res.returncode == 2
    assert res.stderr.startswith("statusgen: ") and "interval" in res.stderr and "Traceback" not in res.stderr
    assert not (tmp_path / "site").exists()


def test_an_invalid_edit_later_keeps_the_last_good_configuration(tmp_path: Path, targets: Targets) -> None:
    targets.set("/ok")
    cfg = config_of(tmp_path, 3, targets.url("/ok"), interval=1)
    good = cfg.read_text()
    with loop(cfg) as lines:
        assert wait_for(lambda: lines.seen("run "), 30), lines.text()
        cfg.write_text(good.replace("interval = 1", "interval = 'one'"))
        assert wait_for(lambda: lines.seen("configuration not reloaded, keeping the last good one"), 10)
        bad = len(lines.messages())
        assert wait_for(lambda: lines.seen("run ", after=bad), 10), lines.text()  # cycles go on
        assert lines.proc.poll() is None
        code, _ = stop(lines, signal.SIGTERM)
    assert code == 0
