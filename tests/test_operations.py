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
import time
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
    cfg = config_for(tmp_path, slow_targets, interval=1)
    proc = subprocess.Popen(
        [*STATUSGEN, "--log-format", "json", "run", "--loop", "--config", str(cfg)], stderr=subprocess.PIPE, text=True
    )
    time.sleep(2.5)
    good = cfg.read_text()
    cfg.write_text(good.replace("interval = 1", "interval = 'one'"))  # a bad edit: keep the last good one
    time.sleep(1.5)
    cfg.write_text(good)
    gens = tmp_path / "site.gens"
    os.rename(gens, tmp_path / "gens-aside")  # a cycle that cannot write
    gens.write_text("in the way")
    time.sleep(1.5)
    gens.unlink()
    os.rename(tmp_path / "gens-aside", gens)
    time.sleep(2)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 0
    lines = [json.loads(line) for line in proc.stderr.read().splitlines()]
    messages = [ln["message"] for ln in lines]
    cycles = [ln for ln in lines if "run" in ln]
    assert len(cycles) >= 4 and all(ln["level"] == "info" and ln["checks"] == 3 for ln in cycles)
    assert any(m.startswith("configuration not reloaded, keeping the last good one") for m in messages)
    assert any(m.startswith("cycle failed: ") and "cannot write the output tree" in m for m in messages)
    stop = next(i for i, m in enumerate(messages) if m.startswith("received SIGTERM; "))
    assert len(messages) - stop <= 3  # then the cycle in progress, if one was, and the last line
    assert all(m.startswith("run ") for m in messages[stop + 1 : -1])
    assert messages[-1].startswith("loop stopped after ")
    assert [c["run"] for c in cycles] == sorted(c["run"] for c in cycles)
    site_is_complete(tmp_path / "site")


def test_killed_at_random_points_the_tree_and_store_survive(tmp_path, targets):
    targets.set("/ok", delay=0.05)
    cfg = config_for(tmp_path, targets, services=12)
    assert statusgen("run", "--config", str(cfg)).returncode == 0
    site, db = tmp_path / "site", tmp_path / "data" / "statusgen.db"
    survived = 0
    for seed in range(20):
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
    assert survived == 20 and runs >= 21
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
