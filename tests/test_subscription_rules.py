"""The rules of subscribing by email, without I/O: the commands' grammar (``statusgen.mailto``),
what a message is (``subscribe.requests``) and what a request does (``decide.subscribers``)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from statusgen import mailto
from statusgen.config import MailServer, SubscriptionsConfig
from statusgen.decide.subscribers import (
    CONFIRM,
    GOODBYE,
    WELCOME,
    Asking,
    Limits,
    Request,
    Subscriber,
    address_hash,
    bounced,
    handle,
)
from statusgen.subscribe.requests import read

NOW = datetime(2026, 12, 5, 10, 0, tzinfo=UTC)
SUBS = SubscriptionsConfig(
    "status@example.org", MailServer(folder=Path("/nonexistent/in")), MailServer(folder=Path("/nonexistent/out"))
)
LIMITS = Limits(("api", "web", "db"), ("en", "de", "pt-BR"), max_subscribers=3, requests_per_day=5)
TOKEN = "A" * 32


# -- the grammar ---------------------------------------------------------------------------------


@given(
    st.lists(st.sampled_from(["api", "web", "db-eu", "x1"]), unique=True, max_size=4),
    st.sampled_from([None, "de", "pt-BR", "ja"]),
)
def test_a_subscribe_subject_reads_back_as_it_was_made(services: list[str], language: str | None) -> None:
    said = mailto.command(mailto.subject("subscribe", tuple(services), language))
    assert said == mailto.Command("subscribe", tuple(services), language)


@pytest.mark.parametrize(
    ("subject", "expected"),
    [
        ("Re: confirm " + TOKEN + " (your subscription to Example)", mailto.Command("confirm", token=TOKEN)),
        ("AW: RE: [Status] confirm " + TOKEN, mailto.Command("confirm", token=TOKEN)),
        ("Fwd: unsubscribe", mailto.Command("unsubscribe")),
        ("UNSUBSCRIBE " + TOKEN, mailto.Command("unsubscribe", token=TOKEN)),
        ("confirm", None),  # a confirmation without its token confirms nothing
        ("confirm short", None),
        ("Hello, how do I subscribe?", None),
        ("subscribe " * 200, None),  # longer than a subject line may be
    ],
)
def test_commands_in_replies_and_forwards(subject: str, expected: mailto.Command | None) -> None:
    assert mailto.command(subject) == expected


def test_a_mailto_link_quotes_its_subject() -> None:
    link = mailto.mailto("status@example.org", "subscribe", ("api", "web"), "pt-BR")
    assert link == "mailto:status@example.org?subject=subscribe%20api%20web%20lang%3Dpt-BR"


# -- what a message is ---------------------------------------------------------------------------


def message(subject: str, sender: str = "Ann <ann@example.net>", body: str = "", **headers: str) -> bytes:
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = "status@example.org"
    msg["Subject"] = subject
    for name, value in headers.items():
        msg[name.replace("_", "-")] = value
    msg.set_content(body or "sent from my phone")
    return bytes(msg)


def test_a_request_names_its_sender_services_and_language() -> None:
    found = read(message("subscribe api web lang=de"), SUBS)
    assert found.request == Request("ann@example.net", "subscribe", ("api", "web"), "de")


def test_a_command_on_the_first_line_when_the_subject_has_none() -> None:
    found = read(message("(no subject)", body="\n> quoted subscribe\nunsubscribe\nthanks"), SUBS)
    assert found.request == Request("ann@example.net", "unsubscribe")


@pytest.mark.parametrize(
    ("headers", "subject", "why"),
    [
        ({"Auto_Submitted": "auto-replied"}, "subscribe", "Auto-Submitted"),
        ({"Precedence": "bulk"}, "subscribe", "Precedence"),
        ({"Precedence": "junk"}, "Re: confirm " + TOKEN, "Precedence"),
        ({"X_Autoreply": "yes"}, "subscribe", "X-Autoreply"),
        ({"List_Id": "<other.list.example.net>"}, "subscribe", "List-Id"),
        ({}, "Out of Office: subscribe", "subject"),
        ({}, "Automatische Antwort: subscribe", "subject"),
        ({"X_Loop": "STATUS@example.org"}, "Re: confirm " + TOKEN, "loop"),
        ({"List_Id": "Example <status.example.org>"}, "subscribe", "loop"),
    ],
)
def test_automatic_messages_and_loops_are_never_answered(headers: dict[str, str], subject: str, why: str) -> None:
    found = read(message(subject, **headers), SUBS)
    assert found.request is None
    assert why in found.said


def test_our_own_address_as_sender_is_a_loop() -> None:
    assert read(message("subscribe", sender="Status <status@EXAMPLE.org>"), SUBS).request is None


@pytest.mark.parametrize(
    "sender",
    ["ann@example.net, bob@example.net", "not an address", "ann@@example.net", "ann@example..net", "x@[", ""],
)
def test_a_sender_must_be_one_plain_address(sender: str) -> None:
    raw = f"From: {sender}\r\nTo: status@example.org\r\nSubject: subscribe\r\n\r\nhello\r\n".encode()
    found = read(raw, SUBS)  # written as it came: the email package cannot even write some of these
    assert found.request is None


def test_a_message_too_large_is_not_read() -> None:
    assert read(None, SUBS).request is None


def test_headers_that_break_the_parser_are_nothing_of_ours() -> None:
    raw = b"From: =?utf-8?q?\xff\xfe?= <ann@example.net>\r\nSubject: subscribe\r\nAuto-Submitted: =?x?=\r\n\r\nhi\r\n"
    found = read(raw, SUBS)
    assert found.request is None or found.request.sender == "ann@example.net"


# -- what a request does -------------------------------------------------------------------------


def pending(address: str = "ann@example.net", at: datetime = NOW, **kw: object) -> Subscriber:
    base = Subscriber(address, TOKEN, "pending", (), "en", at, None, ("api",), "de", at)
    return base.__class__(**{**base.__dict__, **kw})


ASKED = Asking(NOW.date().isoformat(), 1, NOW)  # one request today, its confirmation sent at NOW
NOTHING = Asking()


def test_a_new_address_waits_for_its_confirmation() -> None:
    done = handle(
        Request("Ann@Example.net", "subscribe", ("api", "nope"), "DE"), None, None, NOTHING, LIMITS, 0, TOKEN, NOW
    )
    assert done.reply == CONFIRM and done.saved is not None
    assert (done.saved.state, done.saved.asked_services, done.saved.asked_language) == ("pending", ("api",), "de")
    assert done.saved.token == TOKEN and done.asking == ASKED
    assert "Ann" not in done.said and address_hash("ann@example.net") in done.said


def test_no_new_address_past_the_limit() -> None:
    done = handle(Request("new@example.net", "subscribe"), None, None, NOTHING, LIMITS, 3, TOKEN, NOW)
    assert done.saved is None and done.reply is None


def test_one_confirmation_an_hour_and_requests_a_day() -> None:
    known, ask = pending(), Request("ann@example.net", "subscribe", ("web",))
    again = handle(ask, known, None, ASKED, LIMITS, 1, "B" * 32, NOW + timedelta(minutes=59))
    assert again.reply is None and again.saved is None and again.asking == Asking(ASKED.day, 2, NOW)
    later = handle(ask, known, None, ASKED, LIMITS, 1, "B" * 32, NOW + timedelta(hours=1))
    assert later.reply == CONFIRM and later.saved is not None and later.saved.asked_services == ("web",)
    assert later.saved.token == TOKEN  # an address keeps its token
    full = Asking(NOW.date().isoformat(), 5, NOW)
    past = handle(ask, known, None, full, LIMITS, 1, TOKEN, NOW + timedelta(hours=2))
    assert past.reply is None and "past 5 requests" in past.said
    tomorrow = handle(ask, known, None, full, LIMITS, 1, TOKEN, NOW + timedelta(days=1))
    assert tomorrow.reply == CONFIRM and tomorrow.asking is not None and tomorrow.asking.requests == 1


def test_leaving_does_not_start_the_limits_afresh() -> None:
    """The count is the address's, not its subscription's: a forged subscribe, unsubscribe,
    subscribe makes one message, not three."""
    ask = Request("ann@example.net", "subscribe")
    first = handle(ask, None, None, NOTHING, LIMITS, 0, TOKEN, NOW)
    assert first.saved is not None and first.asking is not None
    left = handle(Request("ann@example.net", "unsubscribe"), first.saved, None, first.asking, LIMITS, 1, "x", NOW)
    assert left.removed == first.saved and left.reply is None  # never confirmed: no goodbye
    again = handle(ask, None, None, first.asking, LIMITS, 0, "C" * 32, NOW + timedelta(minutes=5))
    assert again.reply is None and again.saved is None


def test_only_the_token_from_its_own_address_confirms_within_48_hours() -> None:
    known = pending()
    good = handle(Request("ANN@example.net", "confirm", token=TOKEN), known, known, NOTHING, LIMITS, 1, "x", NOW)
    assert good.reply == WELCOME and good.saved is not None
    assert (good.saved.state, good.saved.services, good.saved.language, good.saved.waiting) == (
        "confirmed",
        ("api",),
        "de",
        False,
    )
    other = handle(Request("eve@example.net", "confirm", token=TOKEN), None, known, NOTHING, LIMITS, 1, "x", NOW)
    assert other.saved is None and other.reply is None and "another address" in other.said
    unknown = handle(Request("ann@example.net", "confirm", token="Z" * 32), known, None, NOTHING, LIMITS, 1, "x", NOW)
    assert unknown.saved is None and unknown.reply is None
    late = handle(
        Request("ann@example.net", "confirm", token=TOKEN),
        known,
        known,
        NOTHING,
        LIMITS,
        1,
        "x",
        NOW + timedelta(hours=49),
    )
    assert late.saved is None and late.reply is None


def test_unsubscribe_by_address_or_by_token_from_anywhere() -> None:
    known = pending(state="confirmed")
    by_address = handle(Request("ann@example.net", "unsubscribe"), known, None, NOTHING, LIMITS, 1, "x", NOW)
    assert by_address.removed == known and by_address.reply == GOODBYE
    by_token = handle(
        Request("alias@example.com", "unsubscribe", token=TOKEN), None, known, NOTHING, LIMITS, 1, "x", NOW
    )
    assert by_token.removed == known and by_token.reply == GOODBYE
    stranger = handle(Request("eve@example.net", "unsubscribe"), None, None, NOTHING, LIMITS, 1, "x", NOW)
    assert stranger.removed is None and stranger.reply is None  # a forged sender gets no mail


def test_permanent_failures_remove_an_address_at_the_limit() -> None:
    known = pending(state="confirmed", bounces=1)
    assert bounced(known, 3).saved == pending(state="confirmed", bounces=2)
    gone = bounced(pending(state="confirmed", bounces=2), 3)
    assert gone.removed is not None and gone.saved is None and gone.reply is None


@given(st.binary(max_size=2048))
def test_any_bytes_are_read_as_something_or_nothing(raw: bytes) -> None:
    read(raw, SUBS)  # never an exception: the mailbox is anyone's to write to


@given(
    st.sampled_from(["From", "Subject", "Auto-Submitted", "Precedence", "X-Loop", "List-Id", "Content-Type"]),
    st.text(alphabet=st.characters(codec="utf-8"), max_size=80),
)
def test_any_header_value_is_read_as_something_or_nothing(name: str, value: str) -> None:
    raw = message("subscribe").replace(
        b"\nSubject:",
        f"\n{name}: ".encode("utf-8", "surrogateescape")
        + value.encode("utf-8", "surrogateescape")
        + b"\nX-Was-Subject:",
        1,
    )
    read(raw, SUBS)


def test_a_maintenance_threads_under_its_announcement(tmp_path: Path) -> None:
    """Announced, begun, ended: three messages, one thread, in the subscriber's language."""
    from dataclasses import replace

    from statusgen.config import MaintenanceWindow, load_config
    from statusgen.notify.events import maintenance_events
    from statusgen.subscribe.compose import update
    from tests.test_subscription_machine import CONFIG

    (tmp_path / "services.toml").write_text(CONFIG)
    config = load_config(tmp_path / "services.toml")
    window = MaintenanceWindow(start=NOW + timedelta(days=2), end=NOW + timedelta(days=2, hours=1), title="Disks")
    api = replace(config.by_slug["api"], maintenance=(window,))
    config = replace(config, services=(api, config.by_slug["web"]), by_slug={})
    assert config.subscriptions is not None
    reader = Subscriber("ann@example.net", TOKEN, "confirmed", ("api",), "de", NOW, NOW)
    runs = [
        (NOW - timedelta(minutes=1), NOW),
        (window.start - timedelta(minutes=1), window.start),
        (window.end - timedelta(minutes=1), window.end),
    ]
    events = [e for since, now in runs for e in maintenance_events(config, since, now, {}, {"api": "operational"})]
    assert [e.kind for e in events] == ["maintenance.announced", "maintenance.started", "maintenance.ended"]
    planned, began, ended = (update(config, config.subscriptions, e, reader, NOW) for e in events)
    assert "In-Reply-To" not in planned and planned["Subject"] == "API: Wartung geplant"
    assert began["In-Reply-To"] == ended["In-Reply-To"] == planned["Message-ID"] == began["References"]
    assert len({m["Message-ID"] for m in (planned, began, ended)}) == 3
