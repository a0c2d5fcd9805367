"""The subscriptions' mail edge on real servers: Dovecot as the mailbox (IMAP) and a Maildir
folder, aiosmtpd as the mail server, and check-config --online's look at both."""

from __future__ import annotations

import mailbox
import os
import re
import socketserver
import threading
import time
import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from email import message_from_bytes, policy
from email.message import EmailMessage
from pathlib import Path

import pytest

from statusgen.config.records import MailServer, SubscriptionsConfig
from statusgen.subscribe.mailbox import MAX_MESSAGE_BYTES, Letter, Mailbox, MailboxError, open_mailbox
from statusgen.subscribe.online import check_online
from statusgen.subscribe.sender import MailServerError, SendFailed, open_sender
from tests.conformance import free_port
from tests.mailservers import (  # noqa: F401 (the fixtures, found by their names)
    Dovecot,
    MailCA,
    Relay,
    dovecot_fixture,
    dovecot_server_fixture,
    dovecot_tls_fixture,
    dovecot_tls_server_fixture,
    mail_ca_fixture,
    relay_fixture,
    start_relay,
    trust_mail_ca_fixture,
)

ADDRESS = "status@example.com"
ENV = {"IMAP_USER": "status", "IMAP_PASSWORD": "imap-s3cret-Pw", "SMTP_USER": "sender", "SMTP_PASSWORD": "smtp-Pw-42"}
#: What the process may allocate while it lists a 10 MB message: far less than the message.
LISTING_BUDGET = 2 * 1024 * 1024


def settings(mailbox: MailServer, smtp: MailServer | None = None) -> SubscriptionsConfig:
    return SubscriptionsConfig(ADDRESS, mailbox, smtp or MailServer(folder=Path("/nonexistent")), timeout=5.0)


def imap_server(url: str) -> MailServer:
    return MailServer(url=url, user="${IMAP_USER}", password="${IMAP_PASSWORD}")


def smtp_server(url: str, login: bool = False) -> MailServer:
    return MailServer(url=url, user="${SMTP_USER}", password="${SMTP_PASSWORD}") if login else MailServer(url=url)


def imap(server: Dovecot, url: str | None = None) -> SubscriptionsConfig:
    return settings(imap_server(url or server.url()))


def request(n: int, body: str = "subscribe") -> bytes:
    return f"From: visitor{n}@example.org\r\nTo: {ADDRESS}\r\nSubject: request {n}\r\n\r\n{body}\r\n".encode()


def sized(size: int) -> bytes:
    """A message of exactly ``size`` bytes, CRLF lines as IMAP counts them."""
    head = b"From: big@example.org\r\nSubject: big\r\n\r\n"
    lines, rest = divmod(size - len(head), 1000)
    body = (b"x" * 998 + b"\r\n") * lines + (b"y" * (rest - 2) + b"\r\n" if rest >= 2 else b"z" * rest)
    return head + body


@contextmanager
def traced() -> Iterator[list[int]]:
    """The most memory Python held within the block, in bytes (in the list, once it ends)."""
    peak: list[int] = []
    tracemalloc.start()
    try:
        yield peak
    finally:
        peak.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()


def listed_with_peak(box: Mailbox, limit: int) -> tuple[list[Letter], int]:
    """``box.letters(limit)`` and the most memory Python held for it meanwhile, in bytes."""
    with traced() as peak:
        letters = box.letters(limit)
    return letters, peak[0]


def subjects(letters: list[Letter]) -> list[str]:
    return [str(message_from_bytes(x.raw or b"", policy=policy.default)["Subject"]) for x in letters]


# -- IMAP ----------------------------------------------------------------------------------------


def test_imap_lists_oldest_first_within_the_limit_and_never_again_once_done(dovecot: Dovecot) -> None:
    for n in (1, 2, 3):
        dovecot.deliver(request(n))
    with open_mailbox(imap(dovecot), ENV) as box:
        first = box.letters(2)
        assert subjects(first) == ["request 1", "request 2"]
        box.done(first)
        assert subjects(box.letters(10)) == ["request 3"]
    with open_mailbox(imap(dovecot), ENV) as box:  # kept by the server, not by the connection
        again = box.letters(10)
    assert subjects(again) == ["request 3"]
    assert [x.ref for x in first] == ["1", "2"] and again[0].digest not in {x.digest for x in first}
    kept = dovecot.messages()  # marked, never deleted: the operator's mailbox keeps them
    assert [(uid, raw) for uid, _, raw in kept] == [(1, request(1)), (2, request(2)), (3, request(3))]
    flags = {uid: marks for uid, marks, _ in kept}
    assert {"\\Seen", "$StatusgenRead"} <= flags[1] and {"\\Seen", "$StatusgenRead"} <= flags[2]
    assert "$StatusgenRead" not in flags[3]


def test_imap_digest_names_a_message_for_good(dovecot: Dovecot) -> None:
    dovecot.deliver(request(1))
    with open_mailbox(imap(dovecot), ENV) as box:
        before = box.letters(1)
    with open_mailbox(imap(dovecot), ENV) as box:
        after = box.letters(1)
    assert before == after and len(before[0].digest) == 64
    assert before[0].raw == request(1) and before[0].size == len(request(1))


def test_imap_reads_a_message_of_the_limit_and_not_one_byte_more(dovecot: Dovecot) -> None:
    dovecot.deliver(sized(MAX_MESSAGE_BYTES))
    dovecot.deliver(sized(MAX_MESSAGE_BYTES + 1))
    with open_mailbox(imap(dovecot), ENV) as box:
        fits, over = box.letters(5)
    assert fits.raw == sized(MAX_MESSAGE_BYTES) and fits.size == MAX_MESSAGE_BYTES
    assert over.raw is None and over.size == MAX_MESSAGE_BYTES + 1


def test_imap_a_10_mb_message_is_listed_unread_in_bounded_memory(dovecot: Dovecot) -> None:
    dovecot.deliver(sized(10 * 1024 * 1024))
    dovecot.deliver(request(2))
    with open_mailbox(imap(dovecot), ENV) as box:
        (big, small), peak = listed_with_peak(box, 5)
        box.done([big, small])
        assert box.letters(5) == []
    assert big.raw is None and big.size == 10 * 1024 * 1024 and small.raw == request(2)
    assert peak < LISTING_BUDGET, f"listing took {peak} bytes"


def test_imap_wrong_password_names_the_mailbox_and_not_the_password(dovecot: Dovecot) -> None:
    env = {**ENV, "IMAP_PASSWORD": "Wrong-Secret-99"}
    with pytest.raises(MailboxError) as caught:
        open_mailbox(imap(dovecot), env)
    said = str(caught.value)
    assert dovecot.url() in said and "refused the login" in said and "mailbox_password" in said
    assert "Wrong-Secret-99" not in said and "imap-s3cret" not in said and "\n" not in said


def test_imap_missing_folder_and_closed_port_say_what_to_fix(dovecot: Dovecot) -> None:
    with pytest.raises(MailboxError, match='cannot open its folder .*check the folder "Nowhere"'):
        open_mailbox(imap(dovecot, url=dovecot.url(folder="Nowhere")), ENV)
    closed = f"imap://127.0.0.1:{free_port()}/"
    with pytest.raises(MailboxError, match=f"the mailbox {closed} could not be reached"):
        open_mailbox(imap(dovecot, url=closed), ENV)


def test_imap_starttls_is_required_when_configured(dovecot: Dovecot) -> None:
    # this Dovecot has no TLS (ssl = no): the login must not go in clear instead
    with pytest.raises(MailboxError, match="does not offer STARTTLS"):
        open_mailbox(imap(dovecot, url=dovecot.url("imap+starttls")), ENV)


# -- Maildir -------------------------------------------------------------------------------------


def maildir_with(folder: Path, *messages: bytes) -> list[str]:
    """A Maildir holding ``messages`` in new/, the first the oldest; their keys."""
    box = mailbox.Maildir(folder, create=True)
    keys = [box.add(raw) for raw in messages]
    for age, key in enumerate(keys):
        path = folder / "new" / key
        os.utime(path, (time.time() - 1000 + age, time.time() - 1000 + age))
    return keys


def test_maildir_lists_new_and_unseen_oldest_first_and_marks_them_seen(tmp_path: Path) -> None:
    folder = tmp_path / "inbox"
    keys = maildir_with(folder, request(1), request(2), request(3))
    (folder / "new" / keys[2]).rename(folder / "cur" / f"{keys[2]}:2,")  # read by a person: not seen
    seen = maildir_with(folder, request(4))[0]
    (folder / "new" / seen).rename(folder / "cur" / f"{seen}:2,FS")  # seen by another reader
    config = settings(MailServer(folder=folder))
    with open_mailbox(config, {}) as box:
        listed = box.letters(10)
        assert subjects(listed) == ["request 1", "request 2", "request 3"]
        box.done(listed[:1] + listed[2:])
    assert sorted(os.listdir(folder / "cur")) == sorted([f"{keys[0]}:2,S", f"{keys[2]}:2,S", f"{seen}:2,FS"])
    with open_mailbox(config, {}) as box:
        again = box.letters(10)
    assert subjects(again) == ["request 2"] and again[0].digest == listed[1].digest
    assert box.letters(1)[0].ref == f"new/{keys[1]}"


def test_maildir_digest_survives_the_move_to_cur(tmp_path: Path) -> None:
    folder = tmp_path / "inbox"
    maildir_with(folder, request(1))
    with open_mailbox(settings(MailServer(folder=folder)), {}) as box:
        before = box.letters(1)[0]
        box.done([before])
    moved = next(iter(os.listdir(folder / "cur")))
    (folder / "cur" / moved).rename(folder / "cur" / moved.replace(",S", ","))  # a person marks it unread
    with open_mailbox(settings(MailServer(folder=folder)), {}) as box:
        after = box.letters(1)[0]
    assert after.digest == before.digest and after.ref != before.ref


def test_maildir_a_10_mb_message_is_listed_unread_in_bounded_memory(tmp_path: Path) -> None:
    folder = tmp_path / "inbox"
    maildir_with(folder, sized(10 * 1024 * 1024), sized(MAX_MESSAGE_BYTES))
    with open_mailbox(settings(MailServer(folder=folder)), {}) as box:
        (big, fits), peak = listed_with_peak(box, 5)
    assert big.raw is None and big.size == 10 * 1024 * 1024 and fits.raw == sized(MAX_MESSAGE_BYTES)
    assert peak < LISTING_BUDGET, f"listing took {peak} bytes"


def test_maildir_dovecot_delivered_is_read_as_a_host_delivery(dovecot: Dovecot) -> None:
    dovecot.deliver(request(1))
    with open_mailbox(settings(MailServer(folder=dovecot.maildir)), {}) as box:
        assert subjects(box.letters(5)) == ["request 1"]


def test_maildir_missing_or_not_a_maildir_names_the_folder(tmp_path: Path) -> None:
    with pytest.raises(MailboxError, match=f"the mailbox folder {tmp_path / 'none'} does not exist"):
        open_mailbox(settings(MailServer(folder=tmp_path / "none")), {})
    (tmp_path / "plain").mkdir()
    with pytest.raises(MailboxError, match="is not a Maildir .no new, cur, tmp."):
        open_mailbox(settings(MailServer(folder=tmp_path / "plain")), {})


# -- sending -------------------------------------------------------------------------------------


def update(to: str, n: int = 1) -> EmailMessage:
    message = EmailMessage()
    message["From"] = f"Status <{ADDRESS}>"
    message["To"] = to
    message["Subject"] = f"update {n}"
    message.set_content(f"update number {n}\n")
    return message


def smtp(relay: Relay, scheme: str = "smtp", login: bool = False) -> SubscriptionsConfig:
    return settings(MailServer(folder=Path("/nonexistent")), smtp_server(relay.url(scheme), login))


def test_sender_uses_one_connection_and_our_address_as_envelope_sender(relay: Relay) -> None:
    with open_sender(smtp(relay), ENV) as sender:
        for n in range(5):
            sender.send(update(f"reader{n}@example.net", n))
    assert [r.rcpt_tos for r in relay.received] == [[f"reader{n}@example.net"] for n in range(5)]
    assert {r.mail_from for r in relay.received} == {ADDRESS}
    assert len(set(relay.peers)) == 1, "one connection for the run's messages"
    assert [r.message["Subject"] for r in relay.received] == [f"update {n}" for n in range(5)]


def test_sender_refusals_are_permanent_for_5xx_and_temporary_for_4xx(relay: Relay) -> None:
    relay.refuse["gone@example.net"] = (550, "5.1.1 no such user")
    relay.refuse["full@example.net"] = (450, "4.2.2 mailbox full")
    with open_sender(smtp(relay), ENV) as sender:
        with pytest.raises(SendFailed) as gone:
            sender.send(update("gone@example.net"))
        with pytest.raises(SendFailed) as full:
            sender.send(update("full@example.net"))
        sender.send(update("reader@example.net"))  # the connection goes on
    assert gone.value.permanent and "550 5.1.1 no such user" in gone.value.said
    assert not full.value.permanent and "450" in full.value.said
    assert [r.rcpt_tos for r in relay.received] == [["reader@example.net"]]


def test_sender_logs_in_with_the_environments_credentials() -> None:
    with start_relay(users={"sender": "smtp-Pw-42"}) as relay:
        with open_sender(smtp(relay, login=True), ENV) as sender:
            sender.send(update("reader@example.net"))
        with pytest.raises(MailServerError) as caught:
            open_sender(smtp(relay, login=True), {**ENV, "SMTP_PASSWORD": "Bad-Pw-7"})
        with pytest.raises(MailServerError, match="refused"), open_sender(smtp(relay), ENV) as sender:
            sender.send(update("reader@example.net"))  # no login, no relaying
    assert relay.logins == ["sender"] and [r.login for r in relay.received] == ["sender"]
    said = str(caught.value)
    assert relay.url() in said and "smtp_password" in said and "Bad-Pw-7" not in said


def test_sender_reconnects_once_when_the_server_dropped_the_connection() -> None:
    with start_relay(idle_timeout=0.3) as relay, open_sender(smtp(relay), ENV) as sender:
        sender.send(update("one@example.net"))
        time.sleep(1.0)  # the relay closes the idle connection
        sender.send(update("two@example.net"))
    assert [r.rcpt_tos for r in relay.received] == [["one@example.net"], ["two@example.net"]]
    assert len(set(relay.peers)) == 2


def test_a_message_the_server_may_have_taken_is_never_handed_over_again(relay: Relay) -> None:
    """The server hangs up after the message's data, before its answer: it may have the message,
    so the sender says so (MailServerError: the outbox marks it uncertain) and does not send it again
    on a new connection."""
    relay.hang_up = True
    with open_sender(smtp(relay), ENV) as sender, pytest.raises(MailServerError, match="failed while sending"):
        sender.send(update("one@example.net"))
    assert [r.rcpt_tos for r in relay.received] == [["one@example.net"]]


def test_sender_starttls_is_required_when_configured(relay: Relay) -> None:
    with pytest.raises(MailServerError, match=re.escape(f"{relay.url('smtp+starttls')} does not offer STARTTLS")):
        open_sender(smtp(relay, "smtp+starttls"), ENV)


def test_sender_to_a_folder_keeps_each_message_as_delivered(tmp_path: Path) -> None:
    folder = tmp_path / "demo" / "sent"  # made with its parents, as check_online says it will be
    config = SubscriptionsConfig(ADDRESS, MailServer(folder=tmp_path), MailServer(folder=folder))
    with open_sender(config, ENV) as sender:
        sender.send(update("a@example.net", 1))
        sender.send(update("b@example.net", 2))
    kept = sorted(mailbox.Maildir(folder, create=False), key=lambda m: str(m["Subject"]))
    assert [(m["To"], m["Subject"], m["Return-Path"]) for m in kept] == [
        ("a@example.net", "update 1", f"<{ADDRESS}>"),
        ("b@example.net", "update 2", f"<{ADDRESS}>"),
    ]


# -- check-config --online -----------------------------------------------------------------------


def test_check_online_passes_on_servers_that_answer_and_take_the_login(dovecot: Dovecot, tmp_path: Path) -> None:
    with start_relay(users={"sender": "smtp-Pw-42"}) as relay:
        good = SubscriptionsConfig(ADDRESS, imap_server(dovecot.url()), smtp_server(relay.url(), login=True))
        assert check_online(good, ENV) == []
        assert relay.logins == ["sender"] and relay.received == []  # logged in, sent nothing
    folders = SubscriptionsConfig(ADDRESS, MailServer(folder=dovecot.maildir), MailServer(folder=tmp_path / "a" / "b"))
    assert check_online(folders, ENV) == []
    assert not (tmp_path / "a").exists(), "a check makes nothing"


def test_check_online_finds_each_problem_with_its_key(dovecot: Dovecot, tmp_path: Path) -> None:
    wrong = SubscriptionsConfig(
        ADDRESS,
        imap_server(dovecot.url()),
        MailServer(url=f"smtp://127.0.0.1:{free_port()}"),
    )
    problems = check_online(wrong, {**ENV, "IMAP_PASSWORD": "nope-Pw"})
    assert len(problems) == 2, problems
    assert problems[0].startswith("[subscriptions] mailbox: ") and "refused the login" in problems[0]
    assert problems[1].startswith("[subscriptions] smtp: ") and "could not be reached" in problems[1]
    assert "nope-Pw" not in "".join(problems)
    (tmp_path / "file").write_text("not a folder")
    folders = settings(MailServer(folder=tmp_path / "none"), MailServer(folder=tmp_path / "file" / "x"))
    problems = check_online(folders, ENV)
    assert len(problems) == 2, problems
    assert "does not exist" in problems[0] and f"{tmp_path / 'file'} is not a folder" in problems[1]


# -- a server that lies --------------------------------------------------------------------------


class LyingImap(socketserver.StreamRequestHandler):
    """An IMAP server that reports a 100-byte message and then sends 10 MB of it: what Dovecot
    never does, and what a hostile or broken server may."""

    ANSWERS = {
        b"LOGIN": b"",
        b"SELECT": b"* FLAGS (\\Seen)\r\n* OK [PERMANENTFLAGS (\\Seen \\*)] ok\r\n* OK [UIDVALIDITY 7] ok\r\n",
        b"SEARCH": b"* SEARCH 1\r\n",
        b"RFC822.SIZE": b"* 1 FETCH (UID 1 RFC822.SIZE 100)\r\n",
        b"LOGOUT": b"* BYE\r\n",
    }

    def handle(self) -> None:
        self.wfile.write(b"* OK [CAPABILITY IMAP4rev1 AUTH=PLAIN] liar ready\r\n")
        for line in self.rfile:
            tag = line.split(b" ", 1)[0]
            if b"BODY.PEEK" in line:
                with suppress(OSError):  # the client hangs up long before the end
                    self.wfile.write(b"* 1 FETCH (UID 1 BODY[]<0> {%d}\r\n" % (10 * 1024 * 1024))
                    for _ in range(10 * 1024):
                        self.wfile.write(b"x" * 1024)
                return
            said = next((answer for word, answer in self.ANSWERS.items() if word in line), b"")
            self.wfile.write(said + tag + b" OK done\r\n")


def test_imap_a_server_that_sends_more_than_asked_is_cut_off(tmp_path: Path) -> None:
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), LyingImap)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    liar = settings(imap_server(f"imap://127.0.0.1:{server.server_address[1]}/"))
    cut_off = r"could not be read \(.*sent 10485760 bytes where at most"
    try:
        with open_mailbox(liar, ENV) as box, traced() as peak, pytest.raises(MailboxError, match=cut_off):
            box.letters(5)
    finally:
        server.shutdown()
        server.server_close()
    assert peak[0] < LISTING_BUDGET, f"listing took {peak[0]} bytes"


def test_tls_to_a_server_without_it_is_one_clear_line(dovecot: Dovecot, relay: Relay) -> None:
    with pytest.raises(MailboxError, match=re.escape(f"the mailbox {dovecot.url('imaps')} could not be reached (")):
        open_mailbox(imap(dovecot, dovecot.url("imaps")), ENV)
    unreached = re.escape(f"the mail server {relay.url('smtps')} could not be reached (")
    with pytest.raises(MailServerError, match=unreached):
        open_sender(smtp(relay, "smtps"), ENV)


# -- TLS -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("scheme", ["imaps", "imap+starttls"])
def test_imap_over_tls_with_a_trusted_certificate(dovecot_tls: Dovecot, trust_mail_ca: MailCA, scheme: str) -> None:
    dovecot_tls.deliver(request(1))
    with open_mailbox(imap(dovecot_tls, dovecot_tls.url(scheme)), ENV) as box:
        assert subjects(box.letters(5)) == ["request 1"]


@pytest.mark.parametrize("scheme", ["imaps", "imap+starttls"])
def test_imap_refuses_a_certificate_it_does_not_trust(dovecot_tls: Dovecot, scheme: str) -> None:
    with pytest.raises(MailboxError, match="its TLS certificate is not trusted"):
        open_mailbox(imap(dovecot_tls, dovecot_tls.url(scheme)), ENV)


@pytest.mark.parametrize("implicit", [True, False], ids=["smtps", "smtp+starttls"])
def test_sender_over_tls_logs_in_and_sends(trust_mail_ca: MailCA, implicit: bool) -> None:
    context = trust_mail_ca.server_context()
    scheme = "smtps" if implicit else "smtp+starttls"
    relay_with_tls = start_relay(users={"sender": "smtp-Pw-42"}, tls=context, implicit=implicit)
    with relay_with_tls as relay, open_sender(smtp(relay, scheme, login=True), ENV) as sender:
        sender.send(update("reader@example.net"))
    assert relay.logins == ["sender"] and [r.rcpt_tos for r in relay.received] == [["reader@example.net"]]


def test_sender_refuses_a_certificate_it_does_not_trust(mail_ca: MailCA) -> None:
    untrusted = "its TLS certificate is not trusted"
    with (
        start_relay(tls=mail_ca.server_context(), implicit=True) as relay,
        pytest.raises(MailServerError, match=untrusted),
    ):
        open_sender(smtp(relay, "smtps"), ENV)
