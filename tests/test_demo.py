"""The demo, as `PORT=N make run` starts it: a past of 90 days, links that name its port.

The demo runs as `make run` runs it (``python -m statusgen.demo``, in a process of its own, from a
folder of its own), serves on a free port, and is read over HTTP like any visitor would.
"""

from __future__ import annotations

import mailbox
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from email.utils import parsedate_to_datetime
from pathlib import Path

import httpx
import lxml.html
import pytest

from statusgen.demo import DEMO_VISITOR, SERVICES
from tests.conformance import free_port

PAUSED = {s.slug for s in SERVICES if "paused" in s.service_keys}


@dataclass
class RunningDemo:
    base: str
    port: int
    folder: Path
    said: list[str]  # what it printed until it served

    def get(self, path: str) -> httpx.Response:
        return httpx.get(self.base + path, timeout=10)


@pytest.fixture(scope="module")
def running_demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningDemo]:
    folder = tmp_path_factory.mktemp("demo")
    port = free_port()
    env = {**os.environ, "PORT": str(port)}
    process = subprocess.Popen(
        [sys.executable, "-m", "statusgen.demo", "--pause", "0", "--interval", "3600"],  # make run's cycles
        cwd=folder,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert process.stdout is not None
        lines = []
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            line = process.stdout.readline()
            assert line, "the demo ended before serving:\n" + "".join(lines)
            lines.append(line)
            if "open http://" in line:
                break
        else:
            raise AssertionError("the demo did not start serving within 120 s:\n" + "".join(lines))
        assert f"http://127.0.0.1:{port}/" in lines[-1]
        yield RunningDemo(f"http://127.0.0.1:{port}", port, folder, lines)
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def test_the_demo_says_each_step_and_serves_from_its_first_build(running_demo: RunningDemo) -> None:
    """`make run` answers as soon as the first run has built the site: the quick runs after it go
    on while it serves (they took some 15 s before it answered)."""
    steps = [line.split(":")[0] if line.startswith("run ") else line[:24] for line in running_demo.said if line.strip()]
    assert steps == [
        "demo: 8 services on http",
        "demo: simulating 150 day",
        "demo: visitor@demo.examp",
        "demo: the first run: che",
        "run 3",
        "statusgen demo: open htt",
    ]


def test_the_demos_visitor_reads_the_messages_the_first_run_made(running_demo: RunningDemo) -> None:
    """The demo subscribes one visitor by email before its first run: what the site sent them is in
    the Maildir that receives what would be sent: a confirmation, a welcome, then a message for
    each incident the first run opened (the demo's failing services)."""
    sent = list(mailbox.Maildir(running_demo.folder / "demo-data" / "mail" / "sent", create=False))
    assert {str(m["To"]) for m in sent} == {DEMO_VISITOR}
    subjects = {str(m["Subject"]) for m in sent}
    welcome = next(m for m in sent if str(m["Subject"]).startswith("You are subscribed"))
    assert any(s.startswith("confirm ") for s in subjects)
    since = parsedate_to_datetime(str(welcome["Date"]))
    incidents = running_demo.get("/api/v1/incidents.json").json()["incidents"]
    opened = {i["service_name"] for i in incidents if datetime.fromisoformat(i["started_at"]) >= since}
    assert opened and all(any(s.startswith(f"{name}: ") for s in subjects) for name in opened)


def test_the_demo_writes_in_the_folder_it_runs_from(running_demo: RunningDemo) -> None:
    assert (running_demo.folder / "site" / "index.html").is_file()
    assert (running_demo.folder / "demo-data" / "statusgen.db").is_file()


def test_every_90_day_bar_is_filled_but_the_paused_services(running_demo: RunningDemo) -> None:
    page = lxml.html.document_fromstring(running_demo.get("/").text)
    seen = set()
    for service in SERVICES:
        cells = page.xpath(f"//li[@id='svc-{service.slug}']//div[@class='bar']/i")
        days = {"n": 0, "all": 0}
        for cell in cells:
            classes = cell.get("class").split()
            count = next((int(k[1:]) for k in classes if re.fullmatch(r"s\d+", k)), 1)  # s{n}: n days
            days["all"] += count
            days["n"] += count if classes[0] in ("n", "y") else 0  # no data, or none yet
        assert days["all"] == 90, service.slug
        if service.slug in PAUSED:
            assert days["n"] == 90, service.slug
        else:
            assert days["n"] == 0, (service.slug, days)  # no grey day: the simulated past fills them
            seen.add(service.slug)
    assert seen


def test_the_history_and_the_charts_have_a_past(running_demo: RunningDemo) -> None:
    for service in SERVICES:
        if service.slug in PAUSED:
            continue
        doc = running_demo.get(f"/api/v1/services/{service.slug}/history?range=90d").json()
        measured = [p for p in doc["points"] if p["availability"] is not None]
        assert len(measured) >= 89, service.slug
        page = lxml.html.document_fromstring(running_demo.get(f"/services/{service.slug}/").text)
        charts = page.xpath("//svg[contains(@class, 'chart')]")
        assert charts and not page.xpath("//*[contains(text(), 'No checks counted in this range')]")


def test_a_few_past_incidents_are_told(running_demo: RunningDemo) -> None:
    closed = running_demo.get("/api/v1/incidents?active=0").json()["incidents"]
    assert 3 <= len(closed) <= 60
    starts = sorted(datetime.fromisoformat(i["started_at"].replace("Z", "+00:00")) for i in closed)
    assert starts[-1] - starts[0] > timedelta(days=30)  # spread over the past, not one burst
    assert running_demo.get("/incidents/").status_code == 200


def test_the_reports_have_three_whole_months_of_past(running_demo: RunningDemo) -> None:
    months = running_demo.get("/api/v1/reports").json()["months"]
    past = [m for m in months if m["complete"]]
    assert len(past) >= 3 and all(m["availability"] is not None for m in past)
    report = running_demo.get(past[0]["links"]["self"]).json()
    targets = {s["slug"]: s["sla"] for s in report["services"] if s["sla"]}
    assert targets["acme-api"]["target"] == 99.95 and targets["payments-eu"]["target"] == 99.9  # its category's
    assert running_demo.get(past[0]["links"]["page"]).status_code == 200


def test_every_link_names_the_port_it_serves_on(running_demo: RunningDemo) -> None:
    here = f"http://127.0.0.1:{running_demo.port}"
    servers = running_demo.get("/api/v1/openapi.json").json()["servers"]
    assert [s["url"] for s in servers] == [here, "/"]  # its address, and wherever it is read from
    for path in ("/feed/incidents.xml", "/api/", "/api/v1/openapi.json"):
        text = running_demo.get(path).text
        hosts = set(re.findall(r"https?://127\.0\.0\.1:\d+", text))
        assert hosts == {here}, (path, hosts)


SCREENSHOT = Path(__file__).resolve().parent.parent / "docs" / "front-page.png"
ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"
REFRESH = "STATUSGEN_REFRESH_SCREENSHOT"  # `make screenshot` sets it


def test_the_front_page_in_a_browser_and_the_readmes_screenshot(running_demo: RunningDemo) -> None:
    """The demo's front page in Chromium, as the README shows it: every bar drawn, nothing
    broken. The README's screenshot is this one: ``make screenshot`` writes it to docs/."""
    from playwright.sync_api import sync_playwright

    from tests.test_browser import ARGS, CHROMIUM

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme="light").new_page()
            errors: list[str] = []
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            assert page.goto(running_demo.base + "/", wait_until="load").status == 200
            assert errors == []
            widths = page.eval_on_selector_all(".bar", "bars => bars.map(b => b.getBoundingClientRect().width)")
            assert len(widths) == len(SERVICES) and min(widths) > 100  # drawn, not collapsed
            ARTIFACTS.mkdir(exist_ok=True)
            shot = page.screenshot(path=str(ARTIFACTS / "front-page.png"))
            # the same page in German and Japanese (docs/translating.md shows them), in a font that
            # has the Japanese glyphs (scripts/system-packages.sh installs one)
            fonts = subprocess.run(["fc-list", ":lang=ja"], capture_output=True, text=True, check=False).stdout
            assert fonts.strip(), "no Japanese font: make system installs fonts-ipafont-gothic"
            shots = {}
            for tag, words in (("de", "Vorfälle"), ("ja", "インシデント")):
                assert page.goto(f"{running_demo.base}/{tag}/", wait_until="load").status == 200
                assert page.evaluate("document.documentElement.lang") == tag and words in page.inner_text("main")
                shots[tag] = page.screenshot(path=str(ARTIFACTS / f"front-page-{tag}.png"))
            assert errors == []
        finally:
            browser.close()
    if os.environ.get(REFRESH) == "1":
        SCREENSHOT.write_bytes(shot)
        for tag, png in shots.items():
            SCREENSHOT.with_name(f"front-page-{tag}.png").write_bytes(png)
    for tag in shots:
        png = SCREENSHOT.with_name(f"front-page-{tag}.png").read_bytes()
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and int.from_bytes(png[16:20], "big") == 1280
        assert f"front-page-{tag}.png" in (SCREENSHOT.parent / "translating.md").read_text()
    committed = SCREENSHOT.read_bytes()
    assert committed[:8] == b"\x89PNG\r\n\x1a\n"
    assert int.from_bytes(committed[16:20], "big") == 1280  # the width this test shoots at
    assert "docs/front-page.png" in (SCREENSHOT.parent.parent / "README.md").read_text()
