"""Running it for real: the lock, the loop and SIGTERM, kills at random points, a full disk,
a read-only output. Real processes, real files, real signals."""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import pytest

from statusgen.store.lock import run_lock
from tests.conftest import Targets, generations, write_config

STATUSGEN = [sys.executable, "-m", "statusgen.cli"]


def config_for(
    tmp: Path,
    targets: Targets,
    services: int = 3,
    interval: float = 60,
    output: str = "site",
    delay_path: str = "/ok",
    store: str | None = None,
) -> Path:
    body = '[categories]\nweb = "Web"\n' + "".join(
        f'[[services]]\nslug = "svc-{i}"\nname = "Service {i}"\ncategory = "web"\n'
        f'[[services.checks]]\nurl = "{targets.url(delay_path)}"\ntimeout = 3\n'
        for i in range(services)
    )
    where = f'\nstore = "{store}"' if store else ""
    return write_config(tmp, body, f'interval = {interval}\noutput = "{output}"{where}')


def statusgen(*args: str, **kw) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*STATUSGEN, *args], capture_output=True, text=True, timeout=120, **kw)


def site_is_complete(site: Path) -> int:
    """Every file the current generation's manifest lists exists, and every JSON file parses."""
    root = site.resolve()
    manifest = json.loads((root / ".manifest.json").read_bytes())["files"]
    assert manifest
    for rel in manifest:
        data = (root / rel).read_bytes()
        if rel.endswith(".json"):
            json.loads(data)
    return len(manifest)


def db_is_intact(db: Path) -> None:
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    con.close()


def wait_for(condition: Callable[[], bool], timeout: float, step: float = 0.02) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(step)
    return condition()


class Lines:
    """A process's stderr, JSON lines, read as they come by a thread."""

    def __init__(self, proc: subprocess.Popen[str]):
        self.proc, self.lines, self.raw = proc, list[dict[str, object]](), list[str]()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.raw.append(line)
            with suppress(ValueError):
                self.lines.append(json.loads(line))

    def messages(self) -> list[str]:
        return [str(ln["message"]) for ln in self.lines]

    def seen(self, start: str, after: int = 0) -> bool:
        return any(m.startswith(start) for m in self.messages()[after:])

    def text(self) -> str:
        self.thread.join(timeout=5)
        return "".join(self.raw)


@contextmanager
def loop(cfg: Path) -> Iterator[Lines]:
    proc = subprocess.Popen(
        [*STATUSGEN, "--log-format", "json", "run", "--loop", "--config", str(cfg)], stderr=subprocess.PIPE, text=True
    )
    try:
        yield Lines(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def stop(lines: Lines, signum: signal.Signals) -> tuple[int, float]:
    """Send ``signum``; the exit code and how long the process took to exit."""
    t0 = time.monotonic()
    lines.proc.send_signal(signum)
    code = lines.proc.wait(timeout=60)
    return code, time.monotonic() - t0


@pytest.fixture
def slow_targets(targets):
    targets.set("/ok")
    targets.set("/slow", delay=0.8)
    return targets


def test_a_second_run_exits_with_a_clear_message_or_waits(tmp_path, slow_targets):
    cfg = config_for(tmp_path, slow_targets)
    store = tmp_path / "data" / "statusgen.db"
    with run_lock(store):
        res = statusgen("run", "--config", str(cfg))
        assert res.returncode == 5
        assert "another run holds the lock (pid " in res.stderr and "--wait-lock" in res.stderr
        assert "Traceback" not in res.stderr
    res = statusgen("run", "--config", str(cfg), "--wait-lock", "5")
    assert res.returncode == 0, res.stderr


def test_two_concurrent_runs(tmp_path, slow_targets):
    cfg = config_for(tmp_path, slow_targets, delay_path="/slow")
    procs = [
        subprocess.Popen([*STATUSGEN, "run", "--config", str(cfg)], stderr=subprocess.PIPE, text=True) for _ in range(2)
    ]
    codes = sorted(p.wait(timeout=60) for p in procs)
    errors = "".join(p.stderr.read() for p in procs)
    assert codes == [0, 5], errors
    assert site_is_complete(tmp_path / "site") > 10
    db_is_intact(tmp_path / "data" / "statusgen.db")


def test_loop_logs_one_json_line_per_cycle_survives_failures_and_stops_on_sigterm(tmp_path, slow_targets):
    """Each step waits for the cycle it needs, as the log tells it (a minute at most each, where a
    cycle takes about a second): two good cycles; a bad edit of the configuration, and a cycle on the
    last good one; a cycle that cannot write its tree; a good cycle again; then SIGTERM."""
    cfg = config_for(tmp_path, slow_targets, interval=1)
    good, gens, aside = cfg.read_text(), tmp_path / "site.gens", tmp_path / "gens-aside"

    def cycle_after(lines: Lines, mark: int) -> bool:
        return wait_for(lambda: lines.seen("run ", after=mark), 60)

    with loop(cfg) as lines:
        assert cycle_after(lines, 0) and cycle_after(lines, len(lines.messages())), lines.text()
        cfg.write_text(good.replace("interval = 1", "interval = 'one'"))  # a bad edit: keep the last good one
        kept = "configuration not reloaded, keeping the last good one"
        assert wait_for(lambda: lines.seen(kept), 60), lines.text()
        assert cycle_after(lines, next(i for i, m in enumerate(lines.messages()) if m.startswith(kept))), lines.text()
        cfg.write_text(good)
        os.rename(gens, aside)  # a cycle that cannot write
        gens.write_text("in the way")
        unwritable = "cannot write the output tree"
        assert wait_for(lambda: any(unwritable in m for m in lines.messages()), 60), lines.text()
        gens.unlink()
        os.rename(aside, gens)
        assert cycle_after(lines, len(lines.messages())), lines.text()
        code, _ = stop(lines, signal.SIGTERM)
        text = lines.text()
    assert code == 0, text
    assert len(lines.lines) == len(lines.raw), text  # every line JSON
    messages = lines.messages()
    cycles = [ln for ln in lines.lines if "run" in ln]
    assert len(cycles) >= 4 and all(ln["level"] == "info" and ln["checks"] == 3 for ln in cycles)
    assert any(m.startswith(kept) for m in messages)
    assert any(m.startswith("cycle failed: ") and unwritable in m for m in messages)
    stopped = next(i for i, m in enumerate(messages) if m.startswith("received SIGTERM; "))
    assert len(messages) - stopped <= 3  # then the cycle in progress, if one was, and the last line
    assert all(m.startswith("run ") for m in messages[stopped + 1 : -1])
    assert messages[-1].startswith("loop stopped after ")
    assert [c["run"] for c in cycles] == sorted(c["run"] for c in cycles)
    site_is_complete(tmp_path / "site")


#: Random points a run is killed at (each seed one), spread over its stages (probe, store, render,
#: swap): each costs the suite about 1.5 s.
KILLS = 12


def test_killed_at_random_points_the_tree_and_store_survive(tmp_path, targets):
    targets.set("/ok", delay=0.05)
    cfg = config_for(tmp_path, targets, services=12)
    assert statusgen("run", "--config", str(cfg)).returncode == 0
    site, db = tmp_path / "site", tmp_path / "data" / "statusgen.db"
    survived = 0
    for seed in range(KILLS):
        rng = random.Random(seed)
        proc = subprocess.Popen([*STATUSGEN, "run", "--config", str(cfg)], stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.05, 1.2))
        proc.kill()
        proc.wait()
        assert site_is_complete(site) > 50
        db_is_intact(db)
        res = statusgen("run", "--config", str(cfg))
        assert res.returncode == 0, res.stderr
        survived += 1
    runs = sqlite3.connect(db).execute("SELECT COUNT(*) FROM runs").fetchone()[0]
    assert survived == KILLS and runs >= KILLS + 1
    assert len(generations(tmp_path / "site")) <= 2  # killed generations are cleaned up


def _mount(*args: str) -> bool:
    return subprocess.run(["mount", *args], capture_output=True).returncode == 0


def test_a_full_disk_fails_clearly_and_keeps_the_last_site(tmp_path, slow_targets):
    out = tmp_path / "disk"
    out.mkdir()
    if _mount("-t", "tmpfs", "-o", "size=2m", "tmpfs", str(out)):
        try:
            cfg = config_for(tmp_path, slow_targets, output=str(out / "site"))
            assert statusgen("run", "--config", str(cfg)).returncode == 0
            free = os.statvfs(out).f_bavail * os.statvfs(out).f_frsize
            (out / "filler").write_bytes(b"\0" * max(0, free - 4096))
            res = statusgen("run", "--config", str(cfg))
            assert res.returncode == 4 and "No space left on device" in res.stderr
            assert "the last complete site is left in place" in res.stderr and "Traceback" not in res.stderr
            assert site_is_complete(out / "site") > 10
            assert not list((out / "site.gens").glob("partial-*"))  # the failed build removed what it wrote
        finally:
            subprocess.run(["umount", str(out)])
    else:  # no tmpfs here: the same failure through a file-size limit
        import resource

        cfg = config_for(tmp_path, slow_targets, output=str(out / "site"))
        assert statusgen("run", "--config", str(cfg)).returncode == 0
        res = subprocess.run(
            [*STATUSGEN, "run", "--config", str(cfg)],
            capture_output=True,
            text=True,
            preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (256, 256)),
        )
        assert res.returncode == 4 and "the last complete site is left in place" in res.stderr
        assert site_is_complete(out / "site") > 10
    db_is_intact(tmp_path / "data" / "statusgen.db")


def test_a_read_only_output_fails_clearly_and_keeps_the_last_site(tmp_path, slow_targets):
    out = tmp_path / "ro"
    out.mkdir()
    cfg = config_for(tmp_path, slow_targets, output=str(out / "site"))
    assert statusgen("run", "--config", str(cfg)).returncode == 0
    assert _mount("--bind", str(out), str(out)) and _mount("-o", "remount,bind,ro", str(out))
    try:
        res = statusgen("run", "--config", str(cfg))
        assert res.returncode == 4
        assert "Read-only file system" in res.stderr and "the last complete site is left in place" in res.stderr
        assert site_is_complete(out / "site") > 10
    finally:
        subprocess.run(["umount", str(out)])
