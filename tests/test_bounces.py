"""Delivery failures read from the mailbox: recorded reports of Postfix, Exim and Gmail (see
tests/fixtures/mail/README.md), read as the mailbox reads a message, with either of the standard
library's parsing policies."""

from __future__ import annotations

import email
import email.policy
from email.message import Message
from pathlib import Path

import pytest

from statusgen.subscribe.bounces import failed_for_good, is_report

MAIL = Path(__file__).parent / "fixtures" / "mail"
POLICIES = pytest.mark.parametrize("policy", [email.policy.compat32, email.policy.default], ids=["compat32", "default"])


def read(name: str, policy: email.policy.Policy) -> Message:
    return email.message_from_bytes((MAIL / name).read_bytes(), policy=policy)


@POLICIES
@pytest.mark.parametrize(
    ("name", "failed"),
    [
        ("postfix-unknown-user.eml", {"gone.reader@example.net"}),
        ("exim-failed.eml", {"nobody-here@example.com"}),
        ("gmail-not-found.eml", {"no.such.reader@example.com"}),
    ],
)
def test_a_permanent_failure_names_the_address_as_the_store_keys_it(
    name: str, failed: set[str], policy: email.policy.Policy
) -> None:
    message = read(name, policy)
    assert is_report(message)
    assert failed_for_good(message) == failed


@POLICIES
def test_a_delayed_delivery_is_a_report_and_no_permanent_failure(policy: email.policy.Policy) -> None:
    """Postfix's "still being retried" notice (4.2.2, mailbox full): the reader is not dropped."""
    message = read("postfix-delayed.eml", policy)
    assert is_report(message)
    assert failed_for_good(message) == set()


@POLICIES
def test_a_visitors_message_is_no_report(policy: email.policy.Policy) -> None:
    """Its text names the postmaster and a failure; it is a request all the same."""
    message = read("visitor-subscribe.eml", policy)
    assert not is_report(message)
    assert failed_for_good(message) == set()


def test_a_mailer_daemon_from_the_null_path_is_a_report_though_it_names_nobody() -> None:
    message = email.message_from_string(
        "Return-Path: < >\nFrom: Mail Delivery System <MAILER-DAEMON@mx.example.org>\n"
        "Subject: Undeliverable\n\nSomething went wrong.\n"
    )
    assert is_report(message)
    assert failed_for_good(message) == set()


def test_a_postmaster_writing_from_an_address_is_a_person() -> None:
    message = email.message_from_string(
        "Return-Path: <postmaster@example.net>\nFrom: postmaster@example.net\nSubject: subscribe\n\nHello.\n"
    )
    assert not is_report(message)


def test_a_report_of_another_kind_is_read_by_the_library_alone() -> None:
    """A read receipt (report-type disposition-notification) says nothing of delivery."""
    message = email.message_from_string(
        "From: reader@example.net\nMIME-Version: 1.0\nContent-Type: multipart/report; "
        'report-type=disposition-notification; boundary="b"\n\n--b\nContent-Type: text/plain\n\n'
        "Your message was displayed.\n--b--\n"
    )
    assert not is_report(message)


def test_a_message_the_library_cannot_read_reports_nothing_and_prints_nothing(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """An empty From trips one of flufl.bounce's heuristic detectors (an IndexError in 6.0): the
    message reports no failure, and no traceback reaches stderr."""
    message = email.message_from_string("From:\nSubject: hello\n\nhi\n")
    assert failed_for_good(message) == set()
    assert not is_report(message)
    assert "Traceback" not in capsys.readouterr().err


@pytest.mark.parametrize("sender", ["mailer-daemon@", "postmaster@["])
def test_a_from_the_email_package_cannot_parse_is_no_sender(sender: str) -> None:
    """policy.default parses a header as it is read, and raises for these (Python 3.11): the
    message is read as having no From, not as an error of the run."""
    message = email.message_from_string(f"Return-Path: <>\nFrom: {sender}\n\nhi\n", policy=email.policy.default)
    assert not is_report(message)
    assert failed_for_good(message) == set()
