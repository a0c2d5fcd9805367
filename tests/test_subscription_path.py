"""A visitor's whole path, on real parts: the page in Chromium, Dovecot as the mailbox (IMAP on
loopback), aiosmtpd as the mail server, ``statusgen run`` as the operator's schedule runs it.

The visitor takes the ``mailto:`` link from the German subscribe page (script on, one service
ticked), their mail program's message is delivered to the mailbox, a run sends the confirmation,
their answer confirms, an incident opens and ends (two messages, one thread), and the
List-Unsubscribe link ends it with one last message. Forgeries, automatic replies, loops, a
10 MB message, 1,000 requests from one address and a mail server's bounces are each handled
as issue 58 says, with the run's memory bounded; no address reaches the tree or the logs.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from email.message import EmailMessage
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from playwright.sync_api import sync_playwright

from statusgen import mailto
from statusgen.config import load_config
from statusgen.decide.subscribers import Subscriber
from statusgen.store import Store
from tests.conftest import Targets, start_preview
from tests.mailservers import Dovecot, Relay, dovecot_fixture, dovecot_server_fixture, relay_fixture  # noqa: F401
from tests.test_browser import ARGS, CHROMIUM

ADDRESS = "status@example.org"
VISITOR = "Vera.Visitor@example.net"
FIXTURES = Path(__file__).parent / "fixtures" / "mail"

# A run in its own process, as cron starts it; it prints its own peak memory (VmHWM: ru_maxrss
# would keep pytest's across exec).
RUN = r"""
import atexit, sys
peak = lambda: next(l.split()[1] for l in open("/proc/self/status") if l.startswith("VmHWM:"))
atexit.register(lambda: print(f"peak_kib={peak()}", file=sys.stderr))
from statusgen.cli import main
sys.argv = ["statusgen", "run", "--config", sys.argv[1]]
main()
"""


@dataclass
class Path_:
    """One site with subscriptions, its mailbox and its mail server."""

    config: Path
    dovecot: Dovecot
    relay: Relay
    targets: Targets
    env: dict[str, str]

    def run(self) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [sys.executable, "-c", RUN, str(self.config)], capture_output=True, text=True, env=self.env, timeout=300
        )
        assert done.returncode == 0, done.stderr[-3000:]
        return done

    def write(self, subject: str, sender: str = VISITOR, **headers: str) -> bytes:
        """A message as a mail program writes it, delivered to the mailbox."""
        msg = EmailMessage()
        msg["From"], msg["To"], msg["Subject"] = sender, ADDRESS, subject
        for name, value in headers.items():
            msg[name.replace("_", "-")] = value
        msg.set_content("Sent from my mail program")
        raw = bytes(msg)
        self.dovecot.deliver(raw)
        return raw

    def sent_to(self, address: str) -> list[EmailMessage]:
        return [r.message for r in self.relay.received if address.lower() in (a.lower() for a in r.rcpt_tos)]

    def unread(self) -> int:
        """The mailbox's messages no run has marked done."""
        return sum(1 for flags in self.dovecot.flags().values() if "\\Seen" not in flags)

    def subscribers(self) -> dict[str, str]:
        with Store(load_config(self.config).site.store) as store:
            return {s.key: s.state for s in store.subscribers()}


def configured(tmp_path: Path, targets: Targets, services: tuple[str, ...], mailbox: str, smtp: str) -> Path:
    """A site in two languages whose ``services`` open an incident at their first failure and
    end it at their first answer, with subscriptions (``mailbox``: its TOML value and keys)."""
    checks = "".join(
        f'[[services]]\nslug = "{s}"\nname = "{s.upper() if s == "api" else s.title()}"\ncategory = "core"\n'
        f'[[services.checks]]\nurl = "{targets.url("/" + s)}"\n'
        for s in services
    )
    config = tmp_path / "services.toml"
    config.write_text(
        '[site]\ntitle = "Path status"\nbase_url = "https://status.example.org"\nlanguages = ["en", "de"]\n'
        "interval = 60\nconfirm = 0\nfailures_to_open = 1\nsuccesses_to_resolve = 1\n"
        f'[categories]\ncore = "Core"\n{checks}'
        f'[subscriptions]\naddress = "{ADDRESS}"\nmailbox = {mailbox}\nsmtp = "{smtp}"\nbounces = 2\n',
        encoding="utf-8",
    )
    return config


@pytest.fixture
def site(
    tmp_path: Path, dovecot: Dovecot, relay: Relay, targets: Targets, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path_]:
    targets.set("/api", 200)
    targets.set("/web", 200)
    mailbox = f'"{dovecot.url()}"\nmailbox_user = "${{PATH_MAIL_USER}}"\nmailbox_password = "${{PATH_MAIL_PASSWORD}}"'
    config = configured(tmp_path, targets, ("api", "web"), mailbox, relay.url())
    monkeypatch.setenv("PATH_MAIL_USER", dovecot.user)  # the test reads the configuration too
    monkeypatch.setenv("PATH_MAIL_PASSWORD", dovecot.password)
    env = dict(os.environ)
    yield Path_(config, dovecot, relay, targets, env)


def mailto_from_the_page(site: Path_, ticked: str) -> tuple[str, str]:
    """The address and subject of the link the German subscribe page makes with ``ticked``."""
    output = load_config(site.config).site.output
    served = start_preview(output)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = browser.new_page()
            page.goto(f"{served.base}/de/subscribe/")
            page.check(f"input[name=service][value={ticked}]")
            href = page.get_attribute("[data-subscribe-link]", "href")
            browser.close()
    finally:
        served.server.shutdown()
        served.server.server_close()
    assert href is not None and href.startswith("mailto:")
    parts = urlsplit(href)
    return unquote(parts.path), unquote(parts.query.removeprefix("subject="))


def test_a_visitor_subscribes_is_told_of_an_incident_in_one_thread_and_leaves(site: Path_) -> None:
    site.run()  # the site is built (and the empty mailbox read)
    to, subject = mailto_from_the_page(site, "api")
    assert (to, subject) == (ADDRESS, "subscribe api lang=de")
    site.write(subject)
    site.run()
    (confirmation,) = site.sent_to(VISITOR)
    assert confirmation["Content-Language"] == "de" and confirmation["Auto-Submitted"] == "auto-replied"
    assert "Abonnement" in str(confirmation["Subject"]) or "subscription" in str(confirmation["Subject"])
    said = mailto.command(str(confirmation["Subject"]))
    assert said is not None and said.verb == "confirm" and said.token
    assert site.relay.received[-1].mail_from == ADDRESS  # bounces come back to the mailbox

    site.write(f"Re: {confirmation['Subject']}")  # the answer, as a mail program writes it
    site.run()
    assert site.subscribers() == {VISITOR.lower(): "confirmed"}
    welcome = site.sent_to(VISITOR)[-1]
    unsubscribe = str(welcome["List-Unsubscribe"])
    assert unsubscribe == f"<{mailto.mailto(ADDRESS, 'unsubscribe', token=said.token)}>"

    before = len(site.sent_to(VISITOR))
    site.targets.set("/api", 503)
    site.targets.set("/web", 503)  # not subscribed to: nothing of it is sent
    site.run()
    site.targets.set("/api", 200)
    site.run()
    opened, resolved = site.sent_to(VISITOR)[before:]
    for msg in (opened, resolved):
        assert msg["List-Id"] == f"Path status <{ADDRESS.replace('@', '.')}>"
        assert msg["Auto-Submitted"] == "auto-generated" and msg["List-Unsubscribe"] == unsubscribe
        assert msg["Content-Language"] == "de" and msg.get_body(("plain",)) and msg.get_body(("html",))
        assert "API" in str(msg["Subject"]) and "Web" not in str(msg["Subject"])
    assert "In-Reply-To" not in opened
    assert resolved["In-Reply-To"] == opened["Message-ID"] == resolved["References"]
    assert "https://status.example.org/de/" in resolved.get_body(("plain",)).get_content()

    address, query = unsubscribe.strip("<>").removeprefix("mailto:").split("?")
    site.write(unquote(query.removeprefix("subject=")))  # the List-Unsubscribe link, followed
    site.run()
    goodbye = site.sent_to(VISITOR)[-1]
    assert goodbye["Auto-Submitted"] == "auto-replied" and site.subscribers() == {}
    left = len(site.sent_to(VISITOR))
    site.targets.set("/api", 503)
    site.run()
    assert len(site.sent_to(VISITOR)) == left  # nobody who left is sent anything

    tree = load_config(site.config).site.output.resolve()
    for path in tree.rglob("*"):
        if path.is_file():
            assert b"vera.visitor" not in path.read_bytes().lower(), path


def test_forgeries_automatic_replies_and_loops_get_nothing(site: Path_) -> None:
    site.write("subscribe")
    done = site.run()
    (confirmation,) = site.sent_to(VISITOR)
    token = mailto.command(str(confirmation["Subject"])).token  # type: ignore[union-attr]
    site.write(f"Re: confirm {token}", sender="eve@example.net")  # another address's token
    site.write(f"Re: confirm {'W' * 32}")  # a token never sent
    site.write(f"Re: confirm {token}", Auto_Submitted="auto-replied")  # a vacation responder
    site.write(f"Re: confirm {token}", Precedence="bulk")
    site.dovecot.deliver(confirmation.as_bytes())  # our own message, come back
    site.write(f"Out of Office: confirm {token}")
    done = site.run()
    assert site.subscribers() == {VISITOR.lower(): "pending"}
    assert len(site.relay.received) == 1  # nothing answered any of them
    assert VISITOR.lower() not in (done.stdout + done.stderr).lower()  # the logs name a hash
    assert not site.unread()


def test_a_10_mb_message_and_1000_requests_from_one_address(site: Path_) -> None:
    site.config.write_text(site.config.read_text() + "messages_per_run = 600\n")  # [subscriptions] is last
    big = EmailMessage()
    big["From"], big["To"], big["Subject"] = VISITOR, ADDRESS, "subscribe"
    big.set_content("x" * (10 << 20))
    site.dovecot.deliver(bytes(big))
    request = EmailMessage()
    request["From"], request["To"], request["Subject"] = VISITOR, ADDRESS, "subscribe web"
    request.set_content("again")
    with site.dovecot.session() as imap:  # one session for the thousand: as a flood arrives
        for _ in range(1000):
            assert imap.append(site.dovecot.folder, None, None, bytes(request))[0] == "OK"
    runs = 0
    while site.unread():
        done = site.run()
        runs += 1
        peak_mb = int(re.search(r"peak_kib=(\d+)", done.stderr).group(1)) / 1024  # type: ignore[union-attr]
        assert peak_mb < 250, peak_mb
    assert runs == 2  # 600 messages a run: the rest wait for the next
    assert len(site.sent_to(VISITOR)) == 1  # one confirmation, whatever an address sends
    assert site.subscribers() == {VISITOR.lower(): "pending"}


@pytest.mark.parametrize(
    ("fixture", "failed"),
    # Postfix's report, as a host's own server writes it; the others' forms: tests/test_bounces.py
    [("postfix-unknown-user.eml", b"Gone.Reader@example.net")],
)
def test_bounces_remove_an_address_after_the_configured_count(site: Path_, fixture: str, failed: bytes) -> None:
    site.write("subscribe")
    site.run()
    token = mailto.command(str(site.sent_to(VISITOR)[0]["Subject"])).token  # type: ignore[union-attr]
    site.write(f"confirm {token}")
    site.run()
    bounced = (FIXTURES / fixture).read_bytes().replace(failed, VISITOR.encode())
    site.dovecot.deliver(bounced)
    site.run()
    assert site.subscribers() == {VISITOR.lower(): "confirmed"}  # one of two
    site.dovecot.deliver(bounced)
    site.run()
    assert site.subscribers() == {}


def test_the_mail_server_refusing_an_address_for_good_counts_as_a_bounce(site: Path_) -> None:
    """A 550 at RCPT (the relay knows the address is gone) is a permanent failure: counted as a
    bounce, the address removed at the configured count; the server's answer quotes the address,
    and the logs still name only its hash."""
    site.write("subscribe")
    site.run()
    token = mailto.command(str(site.sent_to(VISITOR)[0]["Subject"])).token  # type: ignore[union-attr]
    site.write(f"confirm {token}")
    site.run()
    site.relay.refuse[VISITOR] = (550, f"5.1.1 <{VISITOR}>: Recipient address rejected: User unknown")
    said = ""
    for state in ("major_outage", "operational", "major_outage"):  # an incident opens, ends, opens
        site.targets.set("/api", 503 if state == "major_outage" else 200)
        said += (done := site.run()).stdout + done.stderr
        if not site.subscribers():
            break
    assert site.subscribers() == {}  # two refusals: removed
    assert "refused" in said and VISITOR.lower() not in said.lower()


def test_a_mailbox_and_mail_server_that_do_not_answer_leave_the_run_well(site: Path_) -> None:
    """The site is built before the mailbox is read: a mailbox or mail server that is down is a
    warning, and what waits is read and sent by a later run."""
    site.write("subscribe")
    text = site.config.read_text()
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]  # nothing listens there once this block ends
    site.config.write_text(text.replace(site.dovecot.url(), f"imap://127.0.0.1:{port}/INBOX"))
    done = site.run()
    assert "warning: subscriptions:" in done.stdout + done.stderr and "Traceback" not in done.stderr
    assert (load_config(site.config).site.output / "index.html").exists()
    site.config.write_text(text.replace(site.relay.url(), f"smtp://127.0.0.1:{port}"))
    done = site.run()  # the request is read, its answer cannot be sent
    assert "answers not sent" in done.stdout + done.stderr and not site.relay.received
    site.config.write_text(text)
    site.write("subscribe")  # an hour has not passed: asked again, answered later
    site.run()
    assert site.subscribers() == {VISITOR.lower(): "pending"}


def test_a_run_killed_while_sending_sends_the_rest_next_time_and_nobody_twice(
    tmp_path: Path, relay: Relay, targets: Targets
) -> None:
    """``kill -9`` in the middle of sending to 300 subscribers: the next run sends the rest, and
    each address gets the message once, but the one being handed over when the run died (it is
    "uncertain": it may have arrived, so it is never sent again)."""
    targets.set("/api", 503)
    config = configured(tmp_path, targets, ("api",), '"inbox"', relay.url())
    people = [f"reader{i}@example.net" for i in range(300)]
    now = datetime.now(UTC)
    with Store(load_config(config).site.store) as store:
        store.save_subscribers(
            [Subscriber(a, f"tok{i:029d}", "confirmed", (), "en", now, now) for i, a in enumerate(people)], [], [], now
        )
    relay.pause = 0.01
    run = subprocess.Popen(
        [sys.executable, "-c", RUN, str(config)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 120
    while len(relay.received) < 50 and time.monotonic() < deadline and run.poll() is None:
        time.sleep(0.01)
    run.kill()  # SIGKILL: no handler, no cleanup
    run.wait()
    assert 50 <= len(relay.received) < len(people), "killed while sending"
    relay.pause = 0.0
    done = subprocess.run([sys.executable, "-c", RUN, str(config)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "were being sent when a run stopped" in done.stderr + done.stdout
    got = Counter(a for r in relay.received for a in r.rcpt_tos)
    assert max(got.values()) == 1, "nobody twice"
    with Store(load_config(config).site.store) as store:
        counts = store.mail_counts()
    assert counts.get("uncertain", 0) <= 1 and counts.get("sent", 0) + counts.get("uncertain", 0) == len(people)
    assert len(got) >= len(people) - 1
