"""Probe agents in other locations, on real parts: three agents on loopback, each leaving from its
own source address (127.0.0.2, .3, .4), against a target farm that fails for chosen addresses
only; the inbox a folder and a real S3-compatible server (moto, through rclone); the builder's
run takes their signed batches and refuses every kind of bad one, one log line each, without
stopping; the key is never written anywhere."""

from __future__ import annotations

import gzip
import logging
import threading
from collections.abc import Iterator
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from statusgen.agent.run import agent_run
from statusgen.batches import MAX_BYTES, Batch, batch_name, encode
from statusgen.cli import main
from statusgen.config import Config, load_config
from statusgen.config.load import is_remote
from statusgen.cycle import run_cycle
from statusgen.inbox import FolderInbox
from statusgen.locations.ingest import ingest
from statusgen.model import CheckResult, Outcome
from statusgen.store import Store
from statusgen.timeutil import iso, utcnow
from tests import batchfile
from tests.conftest import Clock, write_config
from tests.objectstore import s3_server

KEY = "k3y-that-must-never-be-published-0123456789"
AGENTS = {"eu": "127.0.0.2", "us": "127.0.0.3", "ap": "127.0.0.4"}


class Farm(ThreadingHTTPServer):
    """Targets that answer 503 to the source addresses in ``failing``, and note who asked."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), FarmHandler)
        self.failing: set[str] = set()
        self.seen: set[str] = set()


class FarmHandler(BaseHTTPRequestHandler):
    server: Farm

    def do_GET(self) -> None:
        source = self.client_address[0]
        self.server.seen.add(source)
        status = 503 if source in self.server.failing else 200
        body = b"OK all good"
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def farm() -> Iterator[Farm]:
    server = Farm()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()


def configured(tmp_path: Path, farm: Farm, inbox: str = "inbox") -> Config:
    port = farm.server_address[1]
    services = "".join(
        f'[[services]]\nslug = "{s}"\nname = "{s.upper()}"\ncategory = "c"\n'
        f'[[services.checks]]\nurl = "http://127.0.0.1:{port}/{s}"\ntimeout = 3\n'
        for s in ("alpha", "beta")
    )
    locations = "".join(f'[[locations]]\nname = "{name}"\n' for name in AGENTS)
    site = f'inbox = "{inbox}"\ninbox_key = "${{TEST_INBOX_KEY}}"\n'
    return load_config(write_config(tmp_path, f'[categories]\nc = "C"\n{locations}{services}', site))


@pytest.fixture(autouse=True)
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_INBOX_KEY", KEY)
    monkeypatch.delenv("AWS_CA_BUNDLE", raising=False)  # rclone's S3 client refuses to start with it


def stored(config: Config) -> dict[str, list[CheckResult]]:
    with Store(config.site.store) as store:
        return store.location_results(utcnow() - timedelta(days=1))


def test_three_agents_deliver_and_the_run_takes_their_batches(tmp_path: Path, farm: Farm) -> None:
    config = configured(tmp_path, farm)
    farm.failing = {AGENTS["ap"]}
    for name, address in AGENTS.items():
        done = agent_run(config, name, source=address)
        assert (done.checks, len(done.sent), done.kept) == (2, 1, 0), done.line()
    assert set(AGENTS.values()) <= farm.seen  # each agent's checks left from its own address
    assert len(FolderInbox(tmp_path / "inbox").names()) == 3
    run_cycle(config, spread_s=0)
    results = stored(config)
    assert {loc: {r.outcome for r in rs} for loc, rs in results.items()} == {
        "eu": {Outcome.OK},
        "us": {Outcome.OK},
        "ap": {Outcome.HTTP_STATUS},
    }
    assert FolderInbox(tmp_path / "inbox").names() == []  # taken, then removed
    listed = CliRunner().invoke(main, ["locations", "--config", str(config.path)])
    assert listed.exit_code == 0, listed.output
    lines = listed.output.splitlines()
    assert lines[0].startswith("main (this host): last run ")
    assert all(
        any(line.startswith(f"{name}: last batch sent ") and "2 results" in line for line in lines) for name in AGENTS
    )


def bad_batches(config: Config) -> dict[str, tuple[str, bytes]]:
    """A batch of each kind the builder refuses: (its name, its bytes), by the reason's start."""
    now, key = utcnow(), KEY.encode()
    result = CheckResult("alpha", 0, now, Outcome.OK, 12.0, 200, False)

    def made(location: str, at=now, results=(result,), sign_key=key, name=None) -> tuple[str, bytes]:
        name = name or batch_name(location, at)
        return name, encode(Batch(location, name, at, tuple(results)), sign_key)

    good_name, good = made("eu")
    altered = good[:-12] + bytes([good[-12] ^ 1]) + good[-11:]  # a bit of the compressed body flipped
    bomb = batch_name("eu", now)
    return {
        "bad signature": (good_name, altered),
        "bad signature (another key)": made("eu", sign_key=b"another key"),
        "not signed in its gzip header (an unsigned gzip)": (batch_name("eu", now), gzip.compress(b"{}\n")),
        "larger than": (batch_name("eu", now), b"\x1f\x8b" + bytes(MAX_BYTES + 10)),
        "a line longer than": (bomb, batchfile.signed(bomb, bytes(40 << 20), key)),
        "from the future": made("eu", at=now + timedelta(minutes=10), results=()),
        "too old": made("eu", at=now - timedelta(days=3), results=()),
        "bad signature (a batch under another name)": (batch_name("us", now), made("eu")[1]),
        "signed for another location or name": (
            theirs := batch_name("us", now),
            batchfile.signed(theirs, batchfile.header("eu", good_name, iso(now), 0), key),
        ),
        "a result of a check the configuration does not run there": made(
            "eu", results=(CheckResult("alpha", 7, now, Outcome.OK, 1.0, 200, False),)
        ),
        "not a gzip file": (batch_name("eu", now), b"plain text, not gzip"),
    }


def test_every_bad_batch_is_refused_with_its_reason_and_the_run_goes_on(
    tmp_path: Path, farm: Farm, caplog: pytest.LogCaptureFixture
) -> None:
    config = configured(tmp_path, farm)
    inbox = FolderInbox(tmp_path / "inbox")
    bad = bad_batches(config)
    for name, data in bad.values():
        inbox.put(name, data)
    with caplog.at_level(logging.WARNING, logger="statusgen.locations"):
        run_cycle(config, spread_s=0)  # the run goes on
    assert stored(config) == {}  # nothing of them stored
    assert inbox.names() == []  # and none left to refuse again
    refusals = [r.getMessage() for r in caplog.records if r.getMessage().startswith("batch refused")]
    assert len(refusals) == len(bad)
    for reason in bad:
        said = reason.split(" (")[0]
        assert any(said in line for line in refusals), reason


def test_a_replayed_batch_changes_nothing(tmp_path: Path, farm: Farm) -> None:
    config = configured(tmp_path, farm)
    done = agent_run(config, "eu", source=AGENTS["eu"])
    inbox = FolderInbox(tmp_path / "inbox")
    (name,) = done.sent
    copy = inbox.get(name)
    with Store(config.site.store) as store:
        first = ingest(config, store, utcnow())
        inbox.put(name, copy)  # the same batch, again
        again = ingest(config, store, utcnow())
    assert (first.taken, again.taken, again.replayed, again.refused) == ([name], [], [name], [])
    assert len(stored(config)["eu"]) == 2


def test_an_unreachable_inbox_keeps_the_batches_and_they_go_in_time_order(tmp_path: Path, farm: Farm) -> None:
    config = configured(tmp_path, farm)
    (tmp_path / "inbox").write_text("a file where the inbox folder should be")
    cli = CliRunner().invoke(main, ["probe", "--config", str(config.path), "--location", "us"])
    assert cli.exit_code == 6 and "1 batches kept" in cli.output, cli.output
    kept = agent_run(config, "us")
    assert (kept.sent, kept.kept) == ((), 2) and kept.error
    (tmp_path / "inbox").unlink()  # the inbox is back
    sent = agent_run(config, "us")
    assert len(sent.sent) == 3 and list(sent.sent) == sorted(sent.sent)  # oldest first
    with Store(config.site.store) as store:
        taken = ingest(config, store, utcnow())
    assert taken.taken == list(sent.sent)  # applied in time order


def test_the_key_is_never_written(tmp_path: Path, farm: Farm, caplog: pytest.LogCaptureFixture) -> None:
    config = configured(tmp_path, farm)
    with caplog.at_level(logging.DEBUG):
        agent_run(config, "eu", source=AGENTS["eu"])
        run_cycle(config, spread_s=0)
    everything = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert everything and not [p for p in everything if KEY.encode() in p.read_bytes()]
    assert KEY not in caplog.text
    literal = config.path.read_text().replace('"${TEST_INBOX_KEY}"', f'"{KEY}"')
    (tmp_path / "literal.toml").write_text(literal)
    checked = CliRunner().invoke(main, ["check-config", str(tmp_path / "literal.toml")])
    assert checked.exit_code == 2 and "inbox_key must name an environment variable" in checked.output
    assert KEY not in checked.output


def test_an_s3_inbox_through_rclone(tmp_path: Path, farm: Farm) -> None:
    with s3_server("inbox") as s3:
        config = configured(tmp_path, farm, inbox=s3.remote(through_proxy=False))
        assert config.site.inbox is not None and is_remote(config.site.inbox)
        for name in ("eu", "us"):
            done = agent_run(config, name, source=AGENTS[name])
            assert len(done.sent) == 1, done.line()
        assert len(s3.objects()) == 2
        with Store(config.site.store) as store:
            taken = ingest(config, store, utcnow())
        assert len(taken.taken) == 2 and taken.error is None
        assert s3.objects() == {}
    assert set(stored(config)) == {"eu", "us"}
    assert [r.outcome for r in stored(config)["eu"]] == [Outcome.OK, Outcome.OK]


def test_check_config_checks_the_key_and_the_inbox(tmp_path: Path, farm: Farm, monkeypatch: pytest.MonkeyPatch) -> None:
    config = configured(tmp_path, farm)
    ok = CliRunner().invoke(main, ["check-config", str(config.path)])
    assert ok.exit_code == 0 and "locations main, eu, us, ap: keys set; inbox" in ok.output, ok.output
    monkeypatch.delenv("TEST_INBOX_KEY")
    unset = CliRunner().invoke(main, ["check-config", str(config.path)])
    assert unset.exit_code != 0 and "TEST_INBOX_KEY" in unset.output, unset.output
    monkeypatch.setenv("TEST_INBOX_KEY", KEY)
    (tmp_path / "inbox").write_text("not a folder")
    with s3_server("inbox") as s3:
        remote = s3.remote(through_proxy=False).replace("127.0.0.1:", "127.0.0.1:1")  # a port nobody serves
    text = config.path.read_text().replace('inbox = "inbox"', f'inbox = "{remote}"')
    config.path.write_text(text)
    down = CliRunner().invoke(main, ["check-config", str(config.path)])
    assert down.exit_code == 6 and "inbox" in down.output and "rclone lsf failed" in down.output, down.output


def test_health_names_each_location_and_sets_aside_one_that_stopped(tmp_path: Path, farm: Farm) -> None:
    """Fresh while its batches come; past site.stale_after without one, set aside (not fresh);
    a refused batch is named with its reason. A one-location site's health has no such field."""
    config = configured(tmp_path, farm)
    clock = Clock()
    for name in ("eu", "us"):
        agent_run(config, name, clock, source=AGENTS[name])
    FolderInbox(tmp_path / "inbox").put(batch_name("ap", clock()), b"not a batch")
    run_cycle(config, clock, spread_s=0)
    health = orjson.loads((config.site.output / "api/v1/health.json").read_bytes())
    seen = {loc["name"]: loc for loc in health["locations"]}
    assert list(seen) == ["main", "eu", "us", "ap"] and seen["main"]["this_host"]
    assert [seen[n]["fresh"] for n in ("main", "eu", "us", "ap")] == [True, True, True, False]
    assert seen["eu"]["results"] == 2 and seen["ap"]["last_refused"]["reason"] == "not a gzip file"
    assert (seen["ap"]["refused_24h"], seen["eu"]["refused_24h"]) == (1, 0)
    clock.t += timedelta(minutes=10)  # eu keeps sending; us has stopped
    agent_run(config, "eu", clock, source=AGENTS["eu"])
    run_cycle(config, clock, spread_s=0)
    health = orjson.loads((config.site.output / "api/v1/health.json").read_bytes())
    assert {loc["name"]: loc["fresh"] for loc in health["locations"]} == {
        "main": True,
        "eu": True,
        "us": False,
        "ap": False,
    }
    (tmp_path / "one").mkdir()
    text = config.path.read_text()
    for name in AGENTS:
        text = text.replace(f'[[locations]]\nname = "{name}"\n', "")
    (tmp_path / "one" / "services.toml").write_text(text)
    plain = load_config(tmp_path / "one" / "services.toml")
    run_cycle(plain, spread_s=0)
    assert "locations" not in orjson.loads((plain.site.output / "api/v1/health.json").read_bytes())


# -- deciding by a quorum --------------------------------------------------------------------


def three_locations(tmp_path: Path, farm: Farm) -> Config:
    """main, eu and ap: a quorum of two; an outage declared at the first failed cycle."""
    port = farm.server_address[1]
    body = (
        '[categories]\nc = "C"\n[[locations]]\nname = "eu"\n[[locations]]\nname = "ap"\n'
        f'[[services]]\nslug = "alpha"\nname = "Alpha"\ncategory = "c"\n'
        f'[[services.checks]]\nurl = "http://127.0.0.1:{port}/alpha"\ntimeout = 3\n'
    )
    site = 'inbox = "inbox"\ninbox_key = "${TEST_INBOX_KEY}"\nfailures_to_open = 1\nsuccesses_to_resolve = 1\n'
    return load_config(write_config(tmp_path, body, site))


def cycle_from_everywhere(config: Config, clock: Clock, agents: tuple[str, ...] = ("eu", "ap")) -> dict:
    """The agents' runs, then the main host's; the service's record and the open incidents."""
    clock.tick()
    for name in agents:
        agent_run(config, name, clock, source=AGENTS[name])
    run_cycle(config, clock, spread_s=0)
    with Store(config.site.store) as store:
        opened = store.open_incidents()
    record = orjson.loads((config.site.output / "api/v1/services/alpha.json").read_bytes())["service"]
    return {"status": record["status"], "reason": record["reason"], "incident": opened.get("alpha")}


def test_one_locations_broken_path_is_labelled_without_outage_or_incident(tmp_path: Path, farm: Farm) -> None:
    config, clock = three_locations(tmp_path, farm), Clock()
    farm.failing = {AGENTS["ap"]}
    seen = cycle_from_everywhere(config, clock)
    assert seen["status"] == "degraded" and seen["incident"] is None
    assert "Failing from ap, fewer than the 2 locations needed to count it; the other 2 see it up." in seen["reason"]


def test_two_of_three_failing_is_an_outage_whose_incident_names_them(tmp_path: Path, farm: Farm) -> None:
    config, clock = three_locations(tmp_path, farm), Clock()
    cycle_from_everywhere(config, clock)
    farm.failing = {AGENTS["eu"], AGENTS["ap"]}
    seen = cycle_from_everywhere(config, clock)
    assert seen["status"] == "partial_outage", seen  # this host still sees it up
    assert "Failing from 2 of 3 locations: eu and ap." in seen["reason"]
    opened = seen["incident"].updates[0].message
    assert "(from eu) answered HTTP 503" in opened and "(from ap) answered HTTP 503" in opened
    farm.failing = set()
    assert cycle_from_everywhere(config, clock)["incident"] is None  # resolved when they see it up again


def test_this_hosts_own_broken_path_is_set_aside(tmp_path: Path, farm: Farm) -> None:
    config, clock = three_locations(tmp_path, farm), Clock()
    farm.failing = {"127.0.0.1"}
    seen = cycle_from_everywhere(config, clock)
    assert seen["status"] == "degraded" and seen["incident"] is None
    assert "Failing from main, fewer than the 2 locations needed to count it" in seen["reason"]
    assert "set aside because fewer locations than the quorum see it failing" in seen["reason"]
    with Store(config.site.store) as store:
        flags = store.db.execute("SELECT flag, outcome FROM results ORDER BY flag").fetchall()
    # this host's failure not counted against the service's availability; the others' answers are
    assert flags == [(None, "ok"), (None, "ok"), ("quorum", "http_status")]


def test_a_stopped_agent_is_set_aside_after_its_intervals(tmp_path: Path, farm: Farm) -> None:
    config, clock = three_locations(tmp_path, farm), Clock()
    farm.failing = {AGENTS["ap"]}
    assert "Failing from ap," in cycle_from_everywhere(config, clock)["reason"]
    clock.t += timedelta(seconds=config.site.stale_after_s)  # ap stops; its last failure grows old
    seen = cycle_from_everywhere(config, clock, agents=("eu",))
    assert seen["status"] == "operational" and "Failing" not in seen["reason"]


def test_the_record_and_the_page_give_each_locations_last_result(tmp_path: Path, farm: Farm) -> None:
    import lxml.html

    config, clock = three_locations(tmp_path, farm), Clock()
    farm.failing = {AGENTS["ap"]}
    cycle_from_everywhere(config, clock)
    record = orjson.loads((config.site.output / "api/v1/services/alpha.json").read_bytes())["service"]
    (check,) = record["checks"]
    seen = {entry["location"]: entry["last_result"] for entry in check["locations"]}
    assert list(seen) == ["main", "eu", "ap"]
    assert {loc: r["outcome"] for loc, r in seen.items()} == {"main": "ok", "eu": "ok", "ap": "http_status"}
    assert seen["ap"]["location"] == "ap" and "location" not in seen["main"] and seen["eu"]["latency_ms"] is not None
    page = lxml.html.document_fromstring((config.site.output / "services/alpha/index.html").read_bytes())
    rows = page.xpath("//table[caption='Each check as each location saw it last']/tbody/tr/th")
    assert [r.text_content() for r in rows] == ["main (this host)", "eu", "ap"]
    assert page.xpath("//span[@data-live='at-ap-1']")  # the script tells it from the record


def test_a_one_location_sites_record_has_no_locations(tmp_path: Path, farm: Farm) -> None:
    port = farm.server_address[1]
    body = f'[categories]\nc = "C"\n[[services]]\nslug = "a"\nname = "A"\ncategory = "c"\n[[services.checks]]\nurl = "http://127.0.0.1:{port}/a"\n'
    config = load_config(write_config(tmp_path, body))
    run_cycle(config, spread_s=0)
    record = orjson.loads((config.site.output / "api/v1/services/a.json").read_bytes())["service"]
    assert "locations" not in record["checks"][0] and "location" not in record["checks"][0]["last_result"]


def test_the_method_page_lists_the_locations_and_the_quorum_rule(tmp_path: Path, farm: Farm) -> None:
    import lxml.html

    config, clock = three_locations(tmp_path, farm), Clock()
    cycle_from_everywhere(config, clock)
    page = lxml.html.document_fromstring((config.site.output / "method/index.html").read_bytes())
    said = page.get_element_by_id("vantage").getparent().text_content()
    assert "and from 2 other locations" in said and "eu" in said and "ap" in said
    assert "a majority of the locations with fresh results" in said and "never opens an incident" in said


def test_the_three_location_demo_shows_each_location(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``make run-locations`` without serving: the agents on 127.0.0.2-4 deliver, the main host
    takes them, and Acme Web's login, broken from ap-south alone, is labelled, not an outage."""
    import lxml.html

    from statusgen import demo

    monkeypatch.chdir(tmp_path)
    demo.main(["--locations", "--no-serve", "--cycles", "2", "--days", "0", "--pause", "0"])
    record = orjson.loads((tmp_path / "site/api/v1/services/acme-web.json").read_bytes())["service"]
    assert record["status"] == "degraded"
    assert (
        "Failing from ap-south, fewer than the 3 locations needed to count it; the other 3 see it up."
        in (record["reason"])
    )
    assert [e["location"] for e in record["checks"][1]["locations"]] == ["main", "eu-west", "us-east", "ap-south"]
    page = lxml.html.document_fromstring((tmp_path / "site/services/acme-web/index.html").read_bytes())
    rows = page.xpath("//table[caption='Each check as each location saw it last']/tbody/tr/th")
    assert [r.text_content() for r in rows] == ["main (this host)", "eu-west", "us-east", "ap-south"]


def test_a_check_that_names_locations_runs_there_only(tmp_path: Path, farm: Farm) -> None:
    config = configured(tmp_path, farm)
    text = config.path.read_text().replace('/beta"\ntimeout = 3\n', '/beta"\ntimeout = 3\nlocations = ["eu"]\n')
    config.path.write_text(text)
    config = load_config(config.path)
    assert (agent_run(config, "eu").checks, agent_run(config, "us").checks) == (2, 1)
    config.path.write_text(text.replace('locations = ["eu"]', 'locations = ["mars"]'))
    checked = CliRunner().invoke(main, ["check-config", str(config.path)])
    assert checked.exit_code == 2
    assert 'service "beta", check 1: locations names "mars"; declared: eu, us, ap' in checked.output


def test_a_location_whose_canaries_fail_is_set_aside_as_this_host_would_be(
    tmp_path: Path, farm: Farm, caplog: pytest.LogCaptureFixture
) -> None:
    """eu's own network is down: its canaries fail with its checks. Its failures are set aside,
    as this host's are when its canaries fail: no label, and nothing of them counts."""
    config = three_locations(tmp_path, farm)
    port = farm.server_address[1]
    text = config.path.read_text() + f'[[canaries]]\nurl = "http://127.0.0.1:{port}/canary"\ntimeout = 3\n'
    config.path.write_text(text)
    config = load_config(config.path)
    farm.failing = {AGENTS["eu"]}
    with caplog.at_level(logging.WARNING, logger="statusgen.locations"):
        seen = cycle_from_everywhere(config, Clock())
    assert seen["status"] == "operational" and "Failing" not in seen["reason"], seen
    assert any("location 'eu': its own path looks at fault" in r.getMessage() for r in caplog.records)
    with Store(config.site.store) as store:
        flags = store.db.execute("SELECT location, flag FROM location_results ORDER BY location").fetchall()
    assert flags == [("ap", None), ("eu", "excluded")]


def test_the_24h_history_gives_each_locations_latency(tmp_path: Path, farm: Farm) -> None:
    config, clock = three_locations(tmp_path, farm), Clock()
    farm.failing = {AGENTS["ap"]}
    for _ in range(3):
        cycle_from_everywhere(config, clock)
    clock.t += timedelta(minutes=6)  # a 5-minute bucket closes: the 24h history is made again
    cycle_from_everywhere(config, clock)
    history = orjson.loads((config.site.output / "api/v1/services/alpha/history/24h.json").read_bytes())
    seen = {entry["location"]: entry for entry in history["locations"]}
    assert list(seen) == ["eu", "ap"]  # this host's figures are the history's own
    assert (seen["eu"]["checks"], seen["eu"]["failed"]) == (3, 0) and seen["eu"]["latency_p50_ms"] is not None
    assert (seen["ap"]["checks"], seen["ap"]["failed"], seen["ap"]["latency_p95_ms"]) == (3, 3, None)
    week = orjson.loads((config.site.output / "api/v1/services/alpha/history/7d.json").read_bytes())
    assert "locations" not in week
