"""An outage shows within one run (issue 54): a check that starts failing is tried again within
the run, and the failures an outage needs are seen there; a recovery likewise. Real targets on
loopback, the real probe and ``run_cycle``; and the quorum's confirmed failures counted in
history as they are on the page."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import orjson
import pytest

from statusgen.config import CheckConfig, Config, SiteConfig, load_config
from statusgen.cycle import run_cycle
from statusgen.model import CheckResult
from statusgen.probe import CheckTarget, probe_all
from statusgen.store import Store
from tests.conftest import Clock, write_config
from tests.test_locations import AGENTS, Farm, cycle_from_everywhere, farm, key

__all__ = ["farm", "key"]  # fixtures of test_locations, used here


class Targets(ThreadingHTTPServer):
    """``/up`` answers 200, ``/down`` 500, ``/hang`` never, ``/blip`` 500 to its first request only;
    ``broken`` makes every path answer 500."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), TargetHandler)
        self.broken = False
        self.blipped = False
        self.asked: list[tuple[str, float]] = []

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/{path}"


class TargetHandler(BaseHTTPRequestHandler):
    server: Targets

    def do_GET(self) -> None:
        self.server.asked.append((self.path, time.monotonic()))
        if self.path == "/hang":
            time.sleep(5)
            return
        failing = self.server.broken or self.path == "/down"
        if self.path == "/blip" and not self.server.blipped:
            self.server.blipped, failing = True, True
        self.send_response(500 if failing else 200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def targets() -> Iterator[Targets]:
    server = Targets()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()


def tried(targets: Targets, path: str, wanted: bool = True, confirm: int = 2, every: float = 0.3) -> list[CheckResult]:
    check = CheckConfig(targets.url(path), timeout=1.0, confirm=confirm, confirm_every=every)
    config = Config(None, SiteConfig(), {}, ())  # type: ignore[arg-type]  # the probe reads the site only
    return asyncio.run(probe_all(config, [CheckTarget("s", 0, check)], confirm=lambda r: wanted))


def test_a_failing_check_is_tried_again_within_the_run_each_try_spaced(targets: Targets) -> None:
    results = tried(targets, "down")
    assert [r.http_status for r in results] == [500, 500, 500]
    starts = [at for path, at in targets.asked]
    assert all(b - a >= 0.3 - 0.02 for a, b in zip(starts, starts[1:])), starts  # each after its spacing


def test_a_try_that_says_otherwise_ends_the_tries(targets: Targets) -> None:
    assert [r.http_status for r in tried(targets, "blip")] == [500, 200]
    assert [r.http_status for r in tried(targets, "up")] == [200, 200, 200]  # confirming an answer
    assert [r.http_status for r in tried(targets, "down", wanted=False)] == [500]  # nothing to confirm
    assert [r.http_status for r in tried(targets, "down", confirm=0)] == [500]


def site(tmp_path: Path, targets: Targets, confirm: int = 2) -> Config:
    body = '[categories]\nc = "C"\n' + "".join(
        f'[[services]]\nslug = "{name}"\nname = "{name}"\ncategory = "c"\n'
        f'[[services.checks]]\nurl = "{targets.url(name)}"\ntimeout = 1\n'
        for name in ("up", "down", "hang")
    )
    return load_config(write_config(tmp_path, body, f"confirm = {confirm}\nconfirm_every = 0.3\n"))


def record(config: Config, slug: str) -> dict:
    return orjson.loads((config.site.output / f"api/v1/services/{slug}.json").read_bytes())["service"]


def test_a_fresh_site_shows_an_outage_after_its_first_run(tmp_path: Path, targets: Targets) -> None:
    config = site(tmp_path, targets)
    run_cycle(config, spread_s=0)
    assert {s: record(config, s)["status"] for s in ("up", "down", "hang")} == {
        "up": "operational",
        "down": "major_outage",
        "hang": "major_outage",
    }
    with Store(config.site.store) as store:
        assert set(store.open_incidents()) == {"down", "hang"}
        rows = store.db.execute("SELECT service, count(*) FROM results GROUP BY service").fetchall()
    assert dict(rows) == {"up": 1, "down": 1, "hang": 1}  # history keeps what the run concluded
    assert "3 of 3 failed cycles" not in record(config, "down")["reason"]


def test_without_tries_a_fresh_site_waits_for_its_runs(tmp_path: Path, targets: Targets) -> None:
    config = site(tmp_path, targets, confirm=0)
    run_cycle(config, spread_s=0)
    assert record(config, "down")["status"] == "unknown"
    assert "1 of 3 failed cycles needed" in record(config, "down")["reason"]


def test_an_outage_opens_and_resolves_within_one_run_each(tmp_path: Path, targets: Targets) -> None:
    config, clock = site(tmp_path, targets), Clock()
    run_cycle(config, clock, spread_s=0)
    assert record(config, "up")["status"] == "operational"
    targets.broken = True
    clock.tick()
    run_cycle(config, clock, spread_s=0)
    assert record(config, "up")["status"] == "major_outage"
    with Store(config.site.store) as store:
        assert "up" in store.open_incidents()
    targets.broken = False
    clock.tick()
    run_cycle(config, clock, spread_s=0)
    assert record(config, "up")["status"] == "operational"  # two good answers within the run
    with Store(config.site.store) as store:
        assert "up" not in store.open_incidents()


# -- the quorum's confirmed failures counted in history ------------------------------------------


def four_locations(tmp_path: Path, farm: Farm) -> Config:
    port = farm.server_address[1]
    body = (
        '[categories]\nc = "C"\n'
        + "".join(f'[[locations]]\nname = "{n}"\n' for n in ("eu", "us", "ap"))
        + f'[[services]]\nslug = "alpha"\nname = "Alpha"\ncategory = "c"\n'
        f'[[services.checks]]\nurl = "http://127.0.0.1:{port}/alpha"\ntimeout = 3\n'
    )
    site = 'inbox = "inbox"\ninbox_key = "${TEST_INBOX_KEY}"\nfailures_to_open = 1\nsuccesses_to_resolve = 1\n'
    return load_config(write_config(tmp_path, body, site))


def day(config: Config) -> dict:
    return orjson.loads((config.site.output / "api/v1/services/alpha/history/24h.json").read_bytes())["summary"]


def test_a_failure_the_quorum_confirms_counts_in_history(tmp_path: Path, farm: Farm) -> None:
    config, clock = four_locations(tmp_path, farm), Clock()
    farm.failing = {AGENTS["eu"], AGENTS["us"], AGENTS["ap"]}  # three of four: this host sees it up
    for _ in range(2):
        seen = cycle_from_everywhere(config, clock, agents=("eu", "us", "ap"))
        clock.t += timedelta(minutes=1)
    assert seen["status"] == "partial_outage"
    assert "Failing from 3 of 4 locations: eu, us and ap." in seen["reason"]
    farm.failing = set()
    clock.t += timedelta(minutes=6)  # the 5-minute bucket of those runs closes: the history shows it
    cycle_from_everywhere(config, clock, agents=())  # the agents' latest results are the same ones
    summary = day(config)
    # this host's two answers and the three locations' two failures each, counted once each
    assert (summary["checks"], summary["failed"], summary["availability"]) == (8, 6, 25.0), summary


def test_this_hosts_failure_the_quorum_sets_aside_is_excluded_and_the_others_count(tmp_path: Path, farm: Farm) -> None:
    config, clock = four_locations(tmp_path, farm), Clock()
    farm.failing = {"127.0.0.1"}
    seen = cycle_from_everywhere(config, clock, agents=("eu", "us", "ap"))
    farm.failing = set()
    clock.t += timedelta(minutes=6)  # the 5-minute bucket of the first run closes: the history shows it
    cycle_from_everywhere(config, clock, agents=("eu", "us", "ap"))
    assert seen["status"] == "degraded" and seen["incident"] is None
    assert "set aside because fewer locations than the quorum see it failing" in seen["reason"]
    assert "our own vantage point" not in seen["reason"]
    assert (
        "Failing from main, fewer than the 3 locations needed to count it; the other 3 see it up." in (seen["reason"])
    )
    summary = day(config)  # this host's failure set aside; the three others' answers counted
    assert (summary["excluded"], summary["failed"], summary["checks"], summary["availability"]) == (1, 0, 3, 100)
