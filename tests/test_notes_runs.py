"""The notes folder in real runs: loopback targets, an injected clock, real files edited between
runs, the CLI that writes and checks them, the feeds read by feedparser, and the pages in
Chromium (screenshots, axe)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import feedparser
import pytest
from axe_playwright_python.sync_playwright import Axe
from click.testing import CliRunner
from playwright.sync_api import sync_playwright

from statusgen.cli import main
from statusgen.config import load_config
from statusgen.cycle import run_cycle
from statusgen.store import Store
from statusgen.timeutil import iso
from statusgen.web.serve import PreviewServer
from tests.conftest import Clock, Targets, write_config
from tests.test_browser import ARGS, ARTIFACTS, CHROMIUM

SERVICES = """
[categories]
cloud = "Cloud"

[[services]]
slug = "api"
name = "API"
category = "cloud"
[[services.checks]]
url = "{a}"

[[services]]
slug = "mail"
name = "Mail"
category = "cloud"
[[services.checks]]
url = "{m}"

[[services]]
slug = "web"
name = "Web"
category = "cloud"
[[services.checks]]
url = "{w}"
"""


def read(site: Path, rel: str) -> Any:
    return json.loads((site / rel).read_bytes())


def cli(*args: str, stdin: str | None = None) -> Any:
    return CliRunner().invoke(main, list(args), input=stdin)


@pytest.fixture(scope="module")
def scenario(tmp_path_factory) -> Iterator[dict[str, Any]]:
    """Runs: all up (2) with a maintenance of web in progress and a manual incident of mail open;
    api fails (3) and opens an incident; the operator notes it (statusgen note) and a run tells it;
    mail's incident is resolved by editing its file; one more run."""
    tmp = tmp_path_factory.mktemp("notes-runs")
    targets = Targets()
    threading.Thread(target=targets.serve_forever, daemon=True).start()
    for p in ("/a", "/m", "/w"):
        targets.set(p)
    path = write_config(tmp, SERVICES.format(a=targets.url("/a"), m=targets.url("/m"), w=targets.url("/w")))
    clock = Clock()
    start = clock()
    common = ["--config", str(path)]
    made = cli(
        "maintenance", *common, "--title", "Web server upgrade", "--service", "web",
        "--start", iso(start - timedelta(minutes=5)) or "", "--end", iso(start + timedelta(hours=3)) or "",
        "-m", "Pages may be slow. See [the plan](https://example.com/plan).",
    )  # fmt: skip
    assert made.exit_code == 0, made.output
    made = cli(
        "incident", "mail", *common, "--title", "Outgoing mail delayed", "--severity", "critical",
        "--started", iso(start) or "", stdin="Mail is **queued**, nothing is lost.\n",
    )  # fmt: skip
    assert made.exit_code == 0, made.output
    manual_file = Path(made.output.split("wrote ", 1)[1].strip())
    out: dict[str, Any] = {"path": path, "manual_file": manual_file, "targets": targets, "clock": clock}

    def runs(n: int) -> None:
        for _ in range(n):
            run_cycle(load_config(path), clock)
            clock.tick()

    runs(2)
    out["early"] = {
        slug: read(load_config(path).site.output, f"api/v1/services/{slug}.json") for slug in ("mail", "web")
    }
    out["early_feed"] = feedparser.parse((load_config(path).site.output / "feed/incidents.xml").read_bytes())
    targets.set("/a", 503, b"down")
    runs(3)
    with Store(load_config(path).site.store) as store:
        [api_incident] = [i for i in store.incidents() if i.service == "api"]
    out["note_at"] = clock() - timedelta(seconds=30)
    noted = cli(
        "note", api_incident.id, *common, "--at", iso(out["note_at"]) or "",
        "-m", "We think this is **DNS** at the provider. <script>alert(1)</script>",
    )  # fmt: skip
    assert noted.exit_code == 0, noted.output
    runs(1)
    with Store(load_config(path).site.store) as store:
        out["stored"] = next(i for i in store.incidents() if i.id == api_incident.id)
    out["open_site"] = {
        "snapshot": read(load_config(path).site.output, "api/v1/snapshot.json"),
        "incidents": read(load_config(path).site.output, "api/v1/incidents.json"),
    }
    resolved_at = clock() - timedelta(seconds=10)
    text = manual_file.read_text().replace("+++\n\n", f"resolved = {iso(resolved_at)}\n+++\n\n", 1)
    manual_file.write_text(text)
    out["resolved_at"] = resolved_at
    runs(1)
    site = load_config(path).site.output
    out["site"] = site
    out["snapshot"] = read(site, "api/v1/snapshot.json")
    out["incidents"] = read(site, "api/v1/incidents.json")
    out["feed"] = feedparser.parse((site / "feed/incidents.xml").read_bytes())
    out["web_feed"] = feedparser.parse((site / "feed/services/web.xml").read_bytes())
    yield out
    targets.shutdown()
    targets.server_close()


def test_an_open_manual_incident_sets_its_service_status_and_its_end_clears_it(scenario):
    early = scenario["early"]["mail"]["service"]
    assert (early["status"], early["state"]["sources"]) == ("major_outage", ["checks", "operator"])
    assert early["reason"] == "Reported by the operator: Outgoing mail delayed."
    assert early["open_incident"]["id"].startswith("mail-operator-")
    [manual] = [i for i in scenario["open_site"]["incidents"]["incidents"] if i["source"] == "operator"]
    assert manual["open"] and manual["severity"] == "critical" and manual["service"] == "mail"
    assert manual["updates"][0]["message"] == "Mail is **queued**, nothing is lost."
    after = {s["slug"]: s["status"] for s in scenario["snapshot"]["services"]}
    assert after["mail"] == "operational"
    [closed] = [i for i in scenario["incidents"]["incidents"] if i["source"] == "operator"]
    assert (closed["id"], closed["open"]) == (manual["id"], False)  # the same incident, closed by its file
    assert closed["ended_at"] == iso(scenario["resolved_at"]) and closed["updates"][-1]["kind"] == "resolved"


def test_a_planned_maintenance_puts_its_service_in_maintenance_and_is_told(scenario):
    web = scenario["early"]["web"]["service"]
    assert web["status"] == "maintenance"
    assert [e["flag"] for e in web["state"]["evidence"]] == ["maintenance"]  # its results are set aside
    [told] = web["upcoming_maintenance"]
    assert (told["source"], told["status"], told["title"]) == ("operator", "in_progress", "Web server upgrade")
    assert told["message"] == "Pages may be slow. See [the plan](https://example.com/plan)."
    assert web["maintenance"] == []  # the configured windows only
    assert told in scenario["snapshot"]["upcoming_maintenance"]


def test_a_note_is_an_update_of_the_stored_incident_and_moves_its_times(scenario):
    stored = scenario["stored"]
    assert [u.kind for u in stored.updates] == ["opened", "note"]
    assert stored.updates[-1].ref and stored.updates[-1].at == scenario["note_at"]
    [doc] = [i for i in scenario["incidents"]["incidents"] if i["id"] == stored.id]
    assert doc["updated_at"] == iso(scenario["note_at"]) and doc["source"] == "checks"
    [entry] = [e for e in scenario["feed"].entries if e.id.endswith(f"incident/{stored.id}")]
    assert entry.updated == iso(scenario["note_at"])
    html = entry.content[0].value
    assert "<strong>DNS</strong>" in html and "<script>" not in html and "&lt;script&gt;" in html


def test_maintenance_entries_in_the_feeds_are_stable_and_move_when_it_begins(scenario):
    early = [e for e in scenario["early_feed"].entries if ":maintenance/" in e.id]
    late = [e for e in scenario["feed"].entries if ":maintenance/" in e.id]
    assert [e.id for e in early] == [e.id for e in late] and len(late) == 1
    [entry] = late
    assert entry.id in {e.id for e in scenario["web_feed"].entries}
    assert entry.title == "Maintenance in progress: Web server upgrade (Web)"
    assert 'href="https://example.com/plan"' in entry.content[0].value
    assert entry.updated == scenario["early"]["web"]["service"]["upcoming_maintenance"][0]["start"]


def test_maintenance_that_ended_is_told_completed_in_the_feeds_for_two_weeks(tmp_path):
    targets = Targets()
    threading.Thread(target=targets.serve_forever, daemon=True).start()
    for p in ("/a", "/m", "/w"):
        targets.set(p)
    clock = Clock()
    now = clock()
    windows = {  # configured: web's ended an hour ago, api's fifteen days ago
        "w": (now - timedelta(hours=3), now - timedelta(hours=1), "Disk swap"),
        "a": (now - timedelta(days=15, hours=1), now - timedelta(days=15), "Old move"),
    }
    body = SERVICES.format(a=targets.url("/a"), m=targets.url("/m"), w=targets.url("/w"))
    for p, (start, end, title) in windows.items():
        body = body.replace(
            f'url = "{targets.url("/" + p)}"\n',
            f'url = "{targets.url("/" + p)}"\n[[services.maintenance]]\n'
            f'start = {iso(start)}\nend = {iso(end)}\ntitle = "{title}"\n',
        )
    path = write_config(tmp_path, body)
    planned = cli(
        "maintenance", "--config", str(path), "--title", "Mail move", "--service", "mail", "--service", "web",
        "--start", iso(now - timedelta(hours=2)) or "", "--end", iso(now - timedelta(minutes=30)) or "", "-m", "Done.",
    )  # fmt: skip
    assert planned.exit_code == 0, planned.output
    try:
        run_cycle(load_config(path), clock)
    finally:
        targets.shutdown()
        targets.server_close()
    site = load_config(path).site.output
    assert read(site, "api/v1/snapshot.json")["upcoming_maintenance"] == []  # over: not upcoming
    feeds = {name: feedparser.parse((site / f"feed/{name}.xml").read_bytes()) for name in ("incidents", "services/web")}
    for parsed in feeds.values():
        assert not parsed.bozo, parsed.bozo_exception
    told = [(e.title, e.updated) for e in feeds["incidents"].entries]
    assert told == [
        ("Maintenance completed: Mail move (Mail and Web)", iso(now - timedelta(minutes=30))),
        ("Maintenance completed: Disk swap (Web)", iso(now - timedelta(hours=1))),
    ]  # newest first: published as announced, 14 days before each began
    assert [(e.title, e.updated) for e in feeds["services/web"].entries] == told
    [disk] = [e for e in feeds["incidents"].entries if "Disk swap" in e.title]
    assert disk.summary == f"Disk swap: completed, from {iso(windows['w'][0])} to {iso(windows['w'][1])}."
    assert "Scheduled by the operator" in disk.content[0].value


def test_check_config_names_a_note_on_an_unrecorded_incident_and_run_refuses_before_probing(scenario, tmp_path):
    path = scenario["path"]
    bad = path.parent / "notes" / "2026-01-01-stray.md"
    bad.write_text('+++\nincident = "api-20260101t000000"\nat = 2026-01-01T00:00:00Z\n+++\nStray.\n')
    hits = dict(scenario["targets"].hits)
    try:
        checked = cli("check-config", str(path))
        assert checked.exit_code == 2
        assert 'notes/2026-01-01-stray.md: incident "api-20260101t000000" is not a recorded incident' in checked.output
        ran = cli("run", "--config", str(path))
        assert ran.exit_code == 2 and "2026-01-01-stray.md" in ran.output and "Traceback" not in ran.output
        assert scenario["targets"].hits == hits  # nothing was probed
    finally:
        bad.unlink()
    ok = cli("check-config", str(path))
    assert ok.exit_code == 0 and "1 notes, 1 manual incidents, 1 planned" in ok.output


def test_a_command_that_would_write_a_bad_file_writes_nothing(scenario):
    path = scenario["path"]
    before = sorted((path.parent / "notes").iterdir())
    answer = cli(
        "maintenance", "--config", str(path), "--title", "Backwards", "--service", "web",
        "--start", "2026-12-01 22:00", "--end", "2026-12-01 20:00", "-m", "x",
    )  # fmt: skip
    assert answer.exit_code == 2 and "must be after start" in answer.output
    assert cli("note", "x", "--config", str(path), "-m", " ").exit_code == 2  # empty text: a usage error
    unknown = cli("incident", "nosuch", "--config", str(path), "--title", "t", "-m", "x")
    assert unknown.exit_code == 2 and 'unknown service "nosuch"' in unknown.output
    assert sorted((path.parent / "notes").iterdir()) == before


# -- in Chromium ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def served(scenario) -> Iterator[str]:
    server = PreviewServer(scenario["site"], "127.0.0.1", 0, quiet=True, per_minute=100_000)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


PAGES = {
    "front": "/",
    "web": "/services/web/",
    "mail-incidents": "/services/mail/incidents/",
    "incidents": "/incidents/",
}


def test_the_operators_words_in_chromium_with_no_accessibility_violation(served, scenario):
    ARTIFACTS.mkdir(exist_ok=True)
    found: dict[str, Any] = {}
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        for scheme, width in (("light", 1280), ("dark", 360)):
            for name, url in PAGES.items():
                context = chromium.new_context(viewport={"width": width, "height": 900}, color_scheme=scheme)
                page = context.new_page()
                answer = page.goto(served + url, wait_until="load")
                assert answer is not None and answer.status == 200, url
                page.screenshot(path=str(ARTIFACTS / f"notes-{name}-{scheme}-{width}.png"), full_page=True)
                if name in ("front", "web"):
                    words = page.locator(".maintenance-list .words")
                    assert words.locator("a").get_attribute("href") == "https://example.com/plan"
                if name == "mail-incidents":
                    assert page.locator(".timeline .words strong").first.inner_text() == "queued"
                    assert "The operator" in page.locator(".incident dl").first.inner_text()
                if name == "incidents":
                    note = page.locator(".timeline li", has_text="Note from the operator").first
                    assert note.locator("strong").inner_text() == "DNS"
                    assert page.locator("script:not([src]):not([type='application/json'])").count() == 0
                violations = Axe().run(page).response["violations"]
                if violations:
                    found[f"{url} {scheme}"] = [
                        (v["id"], [n["html"][:120] for n in v["nodes"][:3]]) for v in violations
                    ]
                context.close()
        chromium.close()
    assert found == {}
