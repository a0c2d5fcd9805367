"""Notifications on real parts: runs against loopback targets with an injected clock; a loopback
HTTP receiver records our generic webhook and Apprise's json:// posts, and an aiosmtpd server on
loopback receives the emails."""

from __future__ import annotations

import email
import email.policy
import json
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from jsonschema import Draft202012Validator

from statusgen.config import Config, load_config
from statusgen.cycle import run_cycle
from statusgen.store import Store
from tests.conftest import Targets, write_config

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


class Clock:
    def __init__(self) -> None:
        self.t = datetime.now(UTC).replace(microsecond=0) - timedelta(hours=2)

    def __call__(self) -> datetime:
        return self.t

    def tick(self) -> None:
        self.t += timedelta(minutes=1)


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
    cfg = site(tmp_path, SERVICE.format(target=targets.url("/a")), notify)
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
    assert "Alpha &lt;Cloud&gt;" not in html or "<Cloud>" not in html  # the name is text, never markup
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
