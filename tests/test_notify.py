"""Notifications on real parts: runs against loopback targets with an injected clock; a loopback
HTTP receiver records our generic webhook and Apprise's json:// posts, and an aiosmtpd server on
loopback receives the emails."""

from __future__ import annotations

import email
import email.policy
import io
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from click.testing import CliRunner
from jsonschema import Draft202012Validator

from statusgen.cli import main
from statusgen.config import Config, load_config
from statusgen.cycle import run_cycle
from statusgen.model import STATUS_WORDS, Status
from statusgen.store import Store
from statusgen.timeutil import iso
from tests.conftest import Clock, Targets, write_config

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = json.loads((ROOT / "docs" / "notify-webhook.schema.json").read_text(encoding="utf-8"))


@dataclass
class Post:
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Receiver:
    """Records every POST; answers ``status`` (503: "down"); ``on_post`` runs before it answers."""

    url: str = ""
    status: int = 200
    delay: float = 0.0
    posts: list[Post] = field(default_factory=list)
    on_post: Callable[[Post], None] | None = None

    def at(self, path: str) -> list[Post]:
        return [p for p in self.posts if p.path.split("?")[0] == path]


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    got = Receiver()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            post = Post(self.path, dict(self.headers), body)
            time.sleep(got.delay)
            if got.status < 300:
                got.posts.append(post)
            if got.on_post:
                got.on_post(post)
            self.send_response(got.status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    got.url = f"127.0.0.1:{server.server_address[1]}"
    yield got
    server.shutdown()
    server.server_close()


class Mailbox:
    def __init__(self) -> None:
        self.messages: list[email.message.EmailMessage] = []

    async def handle_DATA(self, server: object, session: object, envelope: Any) -> str:
        self.messages.append(email.message_from_bytes(envelope.content, policy=email.policy.default))  # type: ignore[arg-type]
        return "250 OK"


@pytest.fixture
def mailbox() -> Iterator[tuple[Mailbox, int]]:
    box = Mailbox()
    with socket.socket() as probe:  # a free port: the controller checks its server by connecting to it
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    controller = Controller(box, hostname="127.0.0.1", port=port)
    controller.start()
    yield box, port
    controller.stop()


SERVICE = """
[categories]
cloud = "Cloud"

[[services]]
slug = "alpha"
name = "Alpha <Cloud> & Co"
category = "cloud"
failures_to_open = 2
successes_to_resolve = 1
[[services.checks]]
url = "{target}"
"""


def site(tmp: Path, body: str, notify: str) -> Config:
    return load_config(write_config(tmp, body + notify))


def cycles(cfg: Config, clock: Clock, n: int) -> None:
    for _ in range(n):
        run_cycle(cfg, clock)
        clock.tick()


def webhook(name: str, url: str, extra: str = "") -> str:
    return f'\n[[notify]]\nname = "{name}"\nurl = "{url}"\n{extra}\n'


def test_an_outage_opens_and_resolves_two_messages_each(tmp_path, targets: Targets, receiver, mailbox):
    box, smtp_port = mailbox
    targets.set("/a")
    notify = (
        webhook("hook", f"statusgen://{receiver.url}/hook")
        + webhook("apprise-json", f"json://{receiver.url}/json")
        + webhook("mail", f"mailto://127.0.0.1:{smtp_port}?from=status@example.org&to=ops@example.org")
    )
    # the check's label reaches the body as the reason: untrusted text with markup in it
    body = SERVICE.format(target=targets.url("/a")).replace('url = "', 'label = "Alpha <Cloud> & *Co*"\nurl = "')
    cfg = site(tmp_path, body, notify)
    clock = Clock()
    cycles(cfg, clock, 2)
    targets.set("/a", 503)
    cycles(cfg, clock, 3)
    targets.set("/a")
    cycles(cfg, clock, 2)

    hooks = [p.json() for p in receiver.at("/hook")]
    assert [h["events"][0]["kind"] for h in hooks] == ["incident.opened", "incident.resolved"]
    for h in hooks:
        Draft202012Validator(SCHEMA).validate(h)
        (event,) = h["events"]
        incident = event["incident"]
        assert incident["service"] == "alpha" and incident["service_name"] == "Alpha <Cloud> & Co"
        assert event["link"] == f"https://status.example.org/services/alpha/incidents/#inc-{incident['id']}"
        assert event["link"] in h["markdown"]
    assert hooks[0]["events"][0]["incident"]["open"] is True
    assert hooks[1]["events"][0]["incident"]["open"] is False
    assert "503" in hooks[0]["markdown"]

    posted = [p.json() for p in receiver.at("/json")]
    assert [p["title"] for p in posted] == ["Alpha <Cloud> & Co: major outage", "Alpha <Cloud> & Co: resolved"]
    assert all("https://status.example.org/services/alpha/incidents/#inc-alpha-" in p["message"] for p in posted)

    assert [m["Subject"] for m in box.messages] == [p["title"] for p in posted]
    html = box.messages[0].get_body(("html",)).get_content()
    # the label is text, never markup: escaped once for HTML, its emphasis marks shown as they are
    assert "Alpha &lt;Cloud&gt; &amp; *Co* answered HTTP 503" in html
    assert "<Cloud>" not in html and "&amp;lt;" not in html and "<em>" not in html
    assert "https://status.example.org/services/alpha/incidents/#inc-alpha-" in html

    with Store(cfg.site.store) as store:
        assert store.notification_counts() == {"sent": 6, "failed": 0, "pending": 0, "uncertain": 0}
    health = json.loads((cfg.site.output / "api/v1/health.json").read_bytes())
    assert health["notifications"]["sent"] >= 3


def test_the_webhook_schema_in_docs_is_current():
    from statusgen.notify.shape import webhook_schema

    assert webhook_schema() == SCHEMA, (
        "run: .venv/bin/python -m statusgen.notify.shape > docs/notify-webhook.schema.json"
    )


def kinds(posts: list[Post]) -> list[list[str]]:
    return [[e["kind"] for e in p.json()["events"]] for p in posts]


def test_a_crash_between_sending_and_recording_sends_no_duplicate(tmp_path, targets: Targets, receiver):
    """The receiver kills the run the moment the message arrives, before the run records it."""
    targets.set("/a", 503)
    body = SERVICE.format(target=targets.url("/a")).replace("failures_to_open = 2", "failures_to_open = 1")
    cfg = site(tmp_path, body, webhook("hook", f"statusgen://{receiver.url}/hook"))
    command = [sys.executable, "-c", "from statusgen.cli import main; main()", "run", "--config", str(cfg.path)]
    run = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    receiver.on_post = lambda post: os.kill(run.pid, signal.SIGKILL)
    run.communicate(timeout=60)
    assert run.returncode == -signal.SIGKILL
    assert kinds(receiver.posts) == [["incident.opened"]]
    receiver.on_post = None

    targets.set("/a")
    run_cycle(cfg)  # the incident resolves: that event is sent, the one left half-sent is not
    run_cycle(cfg)
    assert kinds(receiver.posts) == [["incident.opened"], ["incident.resolved"]]
    with Store(cfg.site.store) as store:
        assert store.notification_counts() == {"sent": 1, "failed": 0, "pending": 0, "uncertain": 1}


def test_a_receiver_down_for_three_cycles_gets_the_events_after_once(tmp_path, targets: Targets, receiver):
    targets.set("/a")
    cfg = site(tmp_path, SERVICE.format(target=targets.url("/a")), webhook("hook", f"statusgen://{receiver.url}/h"))
    clock = Clock()
    cycles(cfg, clock, 1)
    receiver.status = 503
    targets.set("/a", 503)
    cycles(cfg, clock, 2)  # the incident opens in the second
    targets.set("/a")
    cycles(cfg, clock, 1)  # and resolves: three cycles the receiver missed
    assert receiver.posts == []
    receiver.status = 200
    cycles(cfg, clock, 3)
    assert kinds(receiver.posts) == [["incident.opened"], ["incident.resolved"]]
    with Store(cfg.site.store) as store:
        counts = store.notification_counts()
    refused = 2 + 1  # the opening was refused in the two down cycles after it, the end in the one after it
    assert counts == {"sent": 2, "failed": refused, "pending": 0, "uncertain": 0}


MANY = """
[[services]]
slug = "svc-{i}"
name = "Service {i}"
category = "cloud"
failures_to_open = 1
[[services.checks]]
url = "{target}"
"""


def test_thirty_services_changing_in_one_cycle_make_one_digest(tmp_path, targets: Targets, receiver):
    targets.set("/a")
    body = '[categories]\ncloud = "Cloud"\n' + "".join(MANY.format(i=i, target=targets.url("/a")) for i in range(30))
    notify = webhook("hook", f"statusgen://{receiver.url}/hook") + webhook("chat", f"json://{receiver.url}/json")
    cfg = load_config(write_config(tmp_path, body + notify, site="mass_failure_ratio = 1.0"))
    clock = Clock()
    cycles(cfg, clock, 1)
    targets.set("/a", 503)
    cycles(cfg, clock, 2)
    (digest,) = [p.json() for p in receiver.at("/hook")]
    Draft202012Validator(SCHEMA).validate(digest)
    assert digest["kind"] == "digest"
    assert sorted(e["service"] for e in digest["events"]) == sorted(f"svc-{i}" for i in range(30))
    assert {e["kind"] for e in digest["events"]} == {"incident.opened"}
    assert digest["title"] == "Test status: 30 changes to 30 services"
    assert "and 10 more" in digest["markdown"]
    (chat,) = [p.json() for p in receiver.at("/json")]
    assert chat["title"] == digest["title"] and chat["message"] == digest["markdown"]


def test_a_secret_appears_nowhere_but_the_request(tmp_path, targets: Targets, receiver, monkeypatch):
    secret = "tok-4f9a1c7e2b"
    monkeypatch.setenv("NOTIFY_TOKEN", secret)
    targets.set("/a")
    notify = webhook("hook", f"statusgen://{receiver.url}/hook?token=${{NOTIFY_TOKEN}}") + webhook(
        "down", "json://127.0.0.1:9/x?token=${NOTIFY_TOKEN}"
    )
    cfg = site(tmp_path, SERVICE.format(target=targets.url("/a")), notify)
    logs = io.StringIO()
    from statusgen.logs import setup

    setup("json", logs)
    clock = Clock()
    cycles(cfg, clock, 1)
    targets.set("/a", 503)
    cycles(cfg, clock, 3)
    tried = CliRunner().invoke(main, ["notify", "--config", str(cfg.path), "--test"])
    assert tried.exit_code == 1
    assert receiver.posts and all(p.path.endswith(f"?token={secret}") for p in receiver.posts)
    assert "notify down: could not send" in logs.getvalue()
    seen = {"logs": logs.getvalue().encode(), "notify --test": tried.output.encode()}
    for path in tmp_path.rglob("*"):
        if path.is_file():
            seen[str(path)] = path.read_bytes()
    assert [where for where, content in seen.items() if secret.encode() in content] == []


def test_notify_test_sends_to_each_notifier_and_prints_its_answer(tmp_path, targets: Targets, receiver, mailbox):
    box, smtp_port = mailbox
    notify = (
        webhook("hook", f"statusgen://{receiver.url}/hook")
        + webhook("mail", f"mailto://127.0.0.1:{smtp_port}?from=status@example.org&to=ops@example.org")
        + webhook("chat", f"json://{receiver.url}/json")
    )
    cfg = site(tmp_path, SERVICE.format(target=targets.url("/a")), notify)
    res = CliRunner().invoke(main, ["notify", "--config", str(cfg.path), "--test"])
    assert res.exit_code == 0, res.output
    assert [line.split(":")[:2] for line in res.output.splitlines()] == [
        ["hook", " sent"],
        ["mail", " sent"],
        ["chat", " sent"],
    ]
    (hook,) = [p.json() for p in receiver.at("/hook")]
    Draft202012Validator(SCHEMA).validate(hook)
    assert hook["kind"] == "test" and hook["events"] == []
    assert [m["Subject"] for m in box.messages] == ["Test status: a test from statusgen"]

    one = CliRunner().invoke(main, ["notify", "--config", str(cfg.path), "--test", "chat"])
    assert one.exit_code == 0 and one.output.startswith("chat: sent")
    assert len(receiver.at("/json")) == 2 and len(receiver.at("/hook")) == 1

    receiver.status = 503
    down = CliRunner().invoke(main, ["notify", "--config", str(cfg.path), "--test", "hook"])
    assert down.exit_code == 1
    assert "hook: NOT SENT: The webhook answered HTTP 503." in down.output
    unknown = CliRunner().invoke(main, ["notify", "--config", str(cfg.path), "--test", "nope"])
    assert unknown.exit_code == 2 and 'no notifier "nope"; configured: hook, mail, chat' in unknown.output


def test_a_slow_notifier_holds_the_run_no_longer_than_its_timeout(tmp_path, targets: Targets, receiver):
    targets.set("/a", 503)
    body = SERVICE.format(target=targets.url("/a")).replace("failures_to_open = 2", "failures_to_open = 1")
    cfg = site(tmp_path, body, webhook("hook", f"statusgen://{receiver.url}/hook", "timeout = 1"))
    receiver.delay = 6.0
    started = time.monotonic()
    run_cycle(cfg)
    assert time.monotonic() - started < 5.0
    receiver.delay = 0.0
    run_cycle(cfg)  # what may have arrived is not sent again
    with Store(cfg.site.store) as store:
        assert store.notification_counts() == {"sent": 0, "failed": 1, "pending": 0, "uncertain": 1}


VENDOR_ONLY = """
[categories]
cloud = "Cloud"

[[services]]
slug = "claude"
name = "Claude"
category = "cloud"
[services.vendor]
url = "{page}"
format = "statuspage"
"""


def test_a_vendor_incident_is_told_once_when_the_page_first_shows_it(tmp_path, targets: Targets, receiver):
    fixtures = ROOT / "tests" / "fixtures" / "vendors" / "statuspage"
    quiet = (fixtures / "githubstatus_summary_all_operational_2026.json").read_bytes()
    incident = (fixtures / "claude_summary_major_incident_now_degraded.json").read_bytes()
    targets.set("/summary.json", body=quiet)
    notify = webhook("hook", f"statusgen://{receiver.url}/hook", 'events = ["vendor.incident"]')
    cfg = site(tmp_path, VENDOR_ONLY.format(page=targets.url("/summary.json")), notify)
    clock = Clock()
    cycles(cfg, clock, 2)
    assert receiver.posts == []
    targets.set("/summary.json", body=incident)
    cycles(cfg, clock, 3)
    (post,) = [p.json() for p in receiver.posts]
    Draft202012Validator(SCHEMA).validate(post)
    (event,) = post["events"]
    assert (event["id"], event["kind"], event["severity"], event["incident"]) == (
        "vendor/claude/978mjkgw6mh7",
        "vendor.incident",
        "major",
        None,
    )
    assert event["message"].startswith("Elevated errors on platform.claude.com (")
    (posted,) = json.loads(incident)["incidents"]
    assert event["link"] in (posted["shortlink"], f"https://status.claude.com/incidents/{posted['id']}")


def test_a_vendor_maintenance_is_told_ended_when_the_page_drops_it(tmp_path, targets: Targets, receiver):
    page = json.loads(
        (ROOT / "tests/fixtures/vendors/statuspage/cloudamqp_summary_maintenance_in_progress.json").read_bytes()
    )
    (maintenance,) = page["scheduled_maintenances"]
    targets.set("/summary.json", body=json.dumps(page).encode())
    notify = webhook("hook", f"statusgen://{receiver.url}/hook", 'events = ["maintenance.ended"]')
    cfg = site(tmp_path, VENDOR_ONLY.format(page=targets.url("/summary.json")), notify)
    clock = Clock()
    cycles(cfg, clock, 2)
    page["scheduled_maintenances"], page["status"]["indicator"] = [], "none"  # completed: the page drops it
    targets.set("/summary.json", body=json.dumps(page).encode())
    cycles(cfg, clock, 2)
    (post,) = [p.json() for p in receiver.posts]
    Draft202012Validator(SCHEMA).validate(post)
    (event,) = post["events"]
    assert (event["id"], event["kind"], event["since"]) == (
        f"maintenance/claude/vendor/{maintenance['id']}/ended",
        "maintenance.ended",
        "2020-07-16T21:00:00Z",
    )
    assert event["message"].startswith("Upgrade of shared servers")


def manual_file(started: str, resolved: str | None = None) -> str:
    end = f"resolved = {resolved}\n" if resolved else ""
    return (
        f'+++\nservice = "alpha"\ntitle = "Mail: queued at the provider"\nseverity = "major"\n'
        f"started = {started}\n{end}+++\nOutgoing mail waits at the provider.\n"
    )


def test_a_manual_incident_is_told_once_as_it_opens_and_once_as_it_ends(tmp_path, targets: Targets, receiver):
    targets.set("/a")
    cfg = site(tmp_path, SERVICE.format(target=targets.url("/a")), webhook("hook", f"statusgen://{receiver.url}/h"))
    clock = Clock()
    cycles(cfg, clock, 1)
    started = (clock() - timedelta(minutes=5)).strftime("%Y-%m-%dT%H:%M:%SZ")
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "mail.md").write_text(manual_file(started), encoding="utf-8")
    cycles(load_config(cfg.path), clock, 2)  # a run reads the notes folder with its configuration
    (notes / "mail.md").write_text(manual_file(started, iso(clock())), encoding="utf-8")
    cycles(load_config(cfg.path), clock, 2)
    posted = [p.json() for p in receiver.posts]
    assert kinds(receiver.posts) == [["incident.opened"], ["incident.resolved"]]
    # the operator's title, whole, though it holds ": "; the service's name from the configuration
    assert [p["events"][0]["title"] for p in posted] == [
        "Alpha <Cloud> & Co: Mail: queued at the provider",
        "Alpha <Cloud> & Co: resolved",
    ]
    assert posted[0]["events"][0]["message"] == "Outgoing mail waits at the provider."
    assert posted[0]["events"][0]["incident"]["id"] == posted[1]["events"][0]["incident"]["id"]
    for post in posted:
        Draft202012Validator(SCHEMA).validate(post)


def test_a_configured_maintenance_is_told_as_it_begins_and_as_it_ends(tmp_path, targets: Targets, receiver):
    targets.set("/a")
    clock = Clock()
    start, end = clock() + timedelta(minutes=1, seconds=30), clock() + timedelta(minutes=3, seconds=30)
    window = f'[[services.maintenance]]\nstart = {iso(start)}\nend = {iso(end)}\ntitle = "Disk <swap>"\n'
    cfg = site(
        tmp_path, SERVICE.format(target=targets.url("/a")) + window, webhook("hook", f"statusgen://{receiver.url}/h")
    )
    cycles(cfg, clock, 1)
    targets.set("/a", 503, b"down")  # down as the window ends: the end says so
    cycles(cfg, clock, 4)  # the last run is the first after the end
    assert kinds(receiver.posts) == [["maintenance.announced"], ["maintenance.started"], ["maintenance.ended"]]
    planned, began, ended = (p.json() for p in receiver.posts)
    assert planned["events"][0]["since"] == iso(start) and "Disk &lt;swap&gt;" in planned["markdown"]
    for post in (planned, began, ended):
        Draft202012Validator(SCHEMA).validate(post)
    event = ended["events"][0]
    status = json.loads((cfg.site.output / "api/v1/services/alpha.json").read_bytes())["service"]["status"]
    assert (event["at"], event["since"], event["status"]) == (iso(end), iso(start), status)
    assert status not in ("maintenance", "operational")
    assert event["title"] == "Alpha <Cloud> & Co: maintenance ended"
    assert f"; now: {STATUS_WORDS[Status(status)]}." in ended["markdown"] and "Disk &lt;swap&gt;" in ended["markdown"]


TWO_CHECKS = """
[categories]
cloud = "Cloud"

[[services]]
slug = "alpha"
name = "Alpha"
category = "cloud"
failures_to_open = 2
successes_to_resolve = 1
[[services.checks]]
url = "{a}"
[[services.checks]]
url = "{b}"
"""


def test_a_change_of_status_while_open_is_told_as_escalated_worse_and_better(tmp_path, targets: Targets, receiver):
    """docs/notifications.md: ``incident.escalated`` when its status changes while it is open (worse
    or better); the severity a notifier filters on is the incident's worst so far; an event's id is
    the incident's and the update's place in it."""
    targets.set("/a")
    targets.set("/b")
    notify = webhook("all", f"statusgen://{receiver.url}/all") + webhook(
        "critical", f"statusgen://{receiver.url}/critical", 'min_severity = "critical"'
    )
    cfg = site(tmp_path, TWO_CHECKS.format(a=targets.url("/a"), b=targets.url("/b")), notify)
    clock = Clock()
    cycles(cfg, clock, 1)
    targets.set("/a", 503)  # one check of two fails: a partial outage (major)
    cycles(cfg, clock, 2)
    targets.set("/b", 503)  # both fail: a major outage (critical), worse
    cycles(cfg, clock, 1)
    targets.set("/b")  # one fails again: a partial outage, better
    cycles(cfg, clock, 1)
    targets.set("/a")
    cycles(cfg, clock, 1)

    posted = [p.json() for p in receiver.at("/all")]
    for post in posted:
        Draft202012Validator(SCHEMA).validate(post)
    events = [post["events"][0] for post in posted]
    assert [(e["kind"], e["status"], e["severity"]) for e in events] == [
        ("incident.opened", "partial_outage", "major"),
        ("incident.escalated", "major_outage", "critical"),
        ("incident.escalated", "partial_outage", "critical"),  # the worst it reached
        ("incident.resolved", "operational", "critical"),
    ]
    assert [e["title"] for e in events[:3]] == ["Alpha: partial outage", "Alpha: major outage", "Alpha: partial outage"]
    incident = events[0]["incident"]["id"]
    assert [e["id"] for e in events] == [f"{incident}/{n}" for n in range(4)]
    assert [e["incident"]["id"] for e in events] == [incident] * 4
    assert [e["incident"]["open"] for e in events] == [True, True, True, False]
    # the notifier of critical incidents hears of it once it is critical, and to its end
    assert kinds(receiver.at("/critical")) == [["incident.escalated"], ["incident.escalated"], ["incident.resolved"]]


def test_a_notifier_removed_from_the_configuration_is_sent_nothing_more(tmp_path, targets: Targets, receiver):
    """docs/notifications.md: "A notifier removed from the configuration is sent nothing more": the
    event it refused waits no longer, even for a notifier of the same name configured again."""
    targets.set("/a")
    stays = webhook("stays", f"statusgen://{receiver.url}/stays")
    goes = webhook("goes", f"statusgen://{receiver.url}/goes")
    body = SERVICE.format(target=targets.url("/a"))
    cfg = site(tmp_path, body, stays + goes)
    clock = Clock()
    cycles(cfg, clock, 1)
    refused: set[str] = set()
    receiver.on_post = lambda post: refused.add(post.path)
    receiver.status = 503  # both refuse the opening: it waits for each
    targets.set("/a", 503)
    cycles(cfg, clock, 2)
    assert refused == {"/stays", "/goes"} and receiver.posts == []

    receiver.status = 200
    receiver.on_post = None
    without = site(tmp_path, body, stays)  # "goes" removed: a run with it gone
    cycles(without, clock, 1)
    assert kinds(receiver.at("/stays")) == [["incident.opened"]]
    assert receiver.at("/goes") == []

    again = site(tmp_path, body, stays + goes)  # configured again: it hears only of what comes after
    cycles(again, clock, 1)
    targets.set("/a")
    cycles(again, clock, 2)
    assert kinds(receiver.at("/stays")) == [["incident.opened"], ["incident.resolved"]]
    assert kinds(receiver.at("/goes")) == [["incident.resolved"]]
