"""Subscriptions as a state machine (hypothesis): visitors subscribe, confirm (with their own
token, another's, or a made-up one), leave, bounce; incidents are queued; runs read the mailbox
and send; a run is killed while sending, before or after the server took a message. Whatever
the order:

* nobody gets an update of an event queued while they were not confirmed;
* nobody gets the same update twice;
* nobody who left (or was removed for bouncing) gets one from a run that read their leaving;
* nobody gets more than one confirmation an hour.

Real parts: the store is a SQLite file; the mailbox and the mail server are Maildir folders,
read and written by the same code as in production (``[subscriptions] mailbox`` and ``smtp`` as
folders); the requests are messages a mail program would write.
"""

from __future__ import annotations

import mailbox
import shutil
import tempfile
from datetime import UTC, datetime, timedelta
from email import message_from_bytes, policy
from email.message import EmailMessage
from email.utils import parsedate_to_datetime
from pathlib import Path

import orjson
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from statusgen import mailto
from statusgen.config import load_config
from statusgen.decide.health import RunRecord
from statusgen.decide.subscribers import Subscriber, address_key
from statusgen.notify.events import Event
from statusgen.store import Cycle, Store
from statusgen.store.records import MailEvent
from statusgen.subscribe.compose import message_ids, update
from statusgen.subscribe.run import mail_turn

PEOPLE = ("ann@example.net", "Bob@Example.net", "cy@example.com")
SERVICES = ("api", "web")
ADDRESS = "status@example.org"
CONFIG = f"""
[site]
title = "Machine"
languages = ["en", "de"]
[categories]
core = "Core"
[[services]]
slug = "api"
name = "API"
category = "core"
[[services.checks]]
url = "http://127.0.0.1:9/"
[[services]]
slug = "web"
name = "Web"
category = "core"
[[services.checks]]
url = "http://127.0.0.1:9/"
[subscriptions]
address = "{ADDRESS}"
mailbox = "in"
smtp = "out"
bounces = 2
requests_per_day = 100
"""
START = datetime(2026, 12, 5, 9, 0, tzinfo=UTC)


def request(sender: str, subject: str) -> bytes:
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = ADDRESS
    msg["Subject"] = subject
    msg.set_content("sent from a mail program")
    return bytes(msg)


def delivery_report(failed: str) -> bytes:
    """A delivery status notification (RFC 3464) as Postfix writes one for an unknown user."""
    boundary = "=_report"
    return (
        f"From: MAILER-DAEMON@mx.example.net (Mail Delivery System)\r\n"
        f"To: {ADDRESS}\r\nSubject: Undelivered Mail Returned to Sender\r\nAuto-Submitted: auto-replied\r\n"
        f'MIME-Version: 1.0\r\nContent-Type: multipart/report; report-type=delivery-status; boundary="{boundary}"\r\n'
        f"\r\n--{boundary}\r\nContent-Type: text/plain\r\n\r\nI'm sorry to have to inform you that your message "
        f"could not be delivered.\r\n\r\n<{failed}>: host mx.example.net said: 550 5.1.1 User unknown\r\n"
        f"\r\n--{boundary}\r\nContent-Type: message/delivery-status\r\n\r\nReporting-MTA: dns; mx.example.net\r\n"
        f"\r\nFinal-Recipient: rfc822; {failed}\r\nOriginal-Recipient: rfc822;{failed}\r\nAction: failed\r\n"
        f"Status: 5.1.1\r\nDiagnostic-Code: smtp; 550 5.1.1 <{failed}>: User unknown\r\n"
        f"\r\n--{boundary}--\r\n"
    ).encode()


class Subscriptions(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.folder = Path(tempfile.mkdtemp(prefix="statusgen-machine-"))
        (self.folder / "services.toml").write_text(CONFIG)
        self.config = load_config(self.folder / "services.toml")
        assert self.config.subscriptions is not None
        self.subs = self.config.subscriptions
        self.inbox = mailbox.Maildir(self.folder / "in", create=True)
        self.out = mailbox.Maildir(self.folder / "out", create=True)
        self.store = Store(self.folder / "store.db")
        self.now = START
        self.events: dict[str, Event] = {}
        self.eligible: dict[str, set[str]] = {}  # event -> the keys confirmed for its service when queued
        self.tokens: dict[str, set[str]] = {}  # key -> every token it has had
        self.seen: set[str] = set()  # the out folder's messages already checked
        self.update_ids: set[str] = set()
        self.confirmations: dict[str, list[datetime]] = {}
        self.runs = 0

    def teardown(self) -> None:
        self.store.close()
        shutil.rmtree(self.folder, ignore_errors=True)

    # -- what visitors do --------------------------------------------------------------------

    @initialize(people=st.lists(st.sampled_from(PEOPLE), unique=True, min_size=1, max_size=3))
    def subscribed(self, people: list[str]) -> None:
        """Some visitors subscribed and confirmed before, by the same path as any other."""
        for who in people:
            self.subscribe(who, [])
        self.run(0)
        for who in people:
            self.confirm(who, who, made_up=False)
        self.run(0)

    @rule(who=st.sampled_from(PEOPLE), services=st.lists(st.sampled_from(SERVICES), unique=True, max_size=2))
    def subscribe(self, who: str, services: list[str]) -> None:
        self.inbox.add(request(who, mailto.subject("subscribe", tuple(services), "de")))

    @rule(who=st.sampled_from(PEOPLE), whose=st.sampled_from(PEOPLE), made_up=st.sampled_from([False] * 4 + [True]))
    def confirm(self, who: str, whose: str, made_up: bool) -> None:
        """Answer the last confirmation ``whose`` was sent (another's token when ``who`` differs)."""
        tokens = sorted(self.tokens.get(address_key(whose), set()))
        token = "Q" * 32 if made_up or not tokens else tokens[-1]
        self.inbox.add(request(who, f"Re: {mailto.subject('confirm', token=token)}"))

    @rule(who=st.sampled_from(PEOPLE), by_token=st.booleans())
    def unsubscribe(self, who: str, by_token: bool) -> None:
        tokens = sorted(self.tokens.get(address_key(who), set()))
        token = tokens[-1] if by_token and tokens else None
        sender = "forwarder@example.com" if token else who
        self.inbox.add(request(sender, mailto.subject("unsubscribe", token=token)))

    @rule(who=st.sampled_from(PEOPLE))
    def bounce(self, who: str) -> None:
        self.inbox.add(delivery_report(who))

    @rule(who=st.sampled_from(PEOPLE))
    def vacation(self, who: str) -> None:
        reply = EmailMessage()
        reply["From"], reply["To"], reply["Subject"] = who, ADDRESS, "Re: confirm " + "V" * 32
        reply["Auto-Submitted"] = "auto-replied"
        reply.set_content("I am away.")
        self.inbox.add(bytes(reply))

    # -- what the site does ------------------------------------------------------------------

    @rule(service=st.sampled_from(SERVICES))
    def incident(self, service: str) -> None:
        n = len(self.events)
        event = Event(
            f"{service}-{n}/0", "incident.opened", service, self.now, "major_outage", "major",
            "down", "HTTP 503", self.now, f"/services/{service}/", None,
        )  # fmt: skip
        self.events[event.id] = event
        self.eligible[event.id] = {
            s.key for s in self.store.subscribers() if s.confirmed and (not s.services or service in s.services)
        }
        run = RunRecord(0, self.now, self.now)
        mail = [MailEvent(event.id, service, orjson.dumps(event.to_json()).decode())]
        self.store.save_cycle(Cycle(run, [], {}, [], mail=mail))

    @rule(hours=st.sampled_from([0, 0.5, 1, 2, 30, 49]))
    def run(self, hours: float) -> None:
        self.now += timedelta(hours=hours)
        mail_turn(self.store, self.config, self.now, env={})
        self.runs += 1
        self.check_sent()

    @precondition(lambda self: self.events)
    @rule(handed=st.booleans())
    def killed_while_sending(self, handed: bool) -> None:
        """A run killed after marking a message "sending": before the server took it, or after."""
        due = self.store.waiting_mail(1)
        if not due or not self.store.mail_sending(due[0]):
            return
        if handed:
            to = self.store.subscriber_by_id(due[0].subscriber)
            assert to is not None
            self.out.add(update(self.config, self.subs, self.events[due[0].event], to, self.now).as_bytes())
            self.check_sent()

    # -- what must stay true -----------------------------------------------------------------

    @invariant()
    def learn_tokens(self) -> None:
        for s in self.store.subscribers():
            self.tokens.setdefault(s.key, set()).add(s.token)

    def check_sent(self) -> None:
        present = {s.key: s for s in self.store.subscribers()}
        ids = {  # an update's Message-ID is made of its event and its subscriber's token alone
            message_ids(event, Subscriber(key, token, "confirmed", (), "en", START), self.subs)[0]: (event_id, key)
            for event_id, event in self.events.items()
            for key, tokens in self.tokens.items()
            for token in tokens
        }
        for key in sorted(set(self.out.keys()) - self.seen):
            self.seen.add(key)
            msg = message_from_bytes(self.out.get_bytes(key), policy=policy.default)
            to = address_key(str(msg["To"]))
            if str(msg["Subject"]).startswith("confirm "):
                self.tokens.setdefault(to, set()).add(str(msg["Subject"]).split()[1])
                sent = parsedate_to_datetime(str(msg["Date"]))
                assert all(abs(sent - t) >= timedelta(hours=1) for t in self.confirmations.get(to, []))
                self.confirmations.setdefault(to, []).append(sent)
                continue
            if msg["Auto-Submitted"] != "auto-generated":
                continue  # a welcome or a goodbye (answers are auto-replied)
            message_id = str(msg["Message-ID"])
            assert message_id in ids, "an update of no event to no subscriber"
            event_id, key = ids[message_id]
            assert key == to
            assert message_id not in self.update_ids, "the same update sent twice"
            self.update_ids.add(message_id)
            assert key in self.eligible[event_id], "an update to someone not confirmed when it was queued"
            assert key in present and present[key].confirmed, "an update to someone who left"


TestSubscriptions = Subscriptions.TestCase
TestSubscriptions.settings = settings(max_examples=100, stateful_step_count=30, deadline=None)
