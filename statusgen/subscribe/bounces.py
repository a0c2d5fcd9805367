"""Delivery failures reported to the subscription address: which addresses failed for good.

A mail server that cannot deliver what we sent writes back to the sender, and the sender is the
address the mailbox reads. Those reports come in many shapes (RFC 3464 delivery status
notifications, Exim's X-Failed-Recipients, older servers' own wordings), so they are read with
flufl.bounce, GNU Mailman's reader of them, and only through its public ``all_failures``.

Only permanent failures count (``decide.subscribers.bounced`` removes an address after
``[subscriptions] bounces`` of them): a "delayed" notice or a 4.x.x answer says the server is
still trying, and a full mailbox or a greylisting server is no reason to drop a reader.
"""

from __future__ import annotations

import logging
from email.message import Message
from email.utils import parseaddr

from flufl.bounce import all_failures

from statusgen.decide.subscribers import address_key

#: flufl.bounce logs a detector that fails with its traceback; without a handler of ours that goes
#: to stderr through logging's last resort. A report it cannot read is no report to us (below),
#: and its traceback could quote an address, so its log goes nowhere.
logging.getLogger("flufl.bounce").addHandler(logging.NullHandler())

#: The senders of reports: RFC 5321 sends them from the null path (Return-Path: <>), and mail
#: servers sign them with one of these names.
REPORTERS = ("mailer-daemon", "postmaster")


def _failures(message: Message) -> tuple[frozenset[bytes], frozenset[bytes]]:
    """flufl.bounce's temporary and permanent failures; none for a message it cannot read."""
    try:
        return all_failures(message)
    # The mailbox is anyone's to write to, and the heuristic detectors were written for servers'
    # well-formed reports: a message that trips one is read as reporting nothing.
    except Exception:
        return frozenset(), frozenset()


def _addresses(found: frozenset[bytes]) -> set[str]:
    """The reported addresses as the store keys them; bytes that are no address are dropped."""
    keys = set()
    for raw in found:
        try:
            address = parseaddr(raw.decode("utf-8"))[1]
        except UnicodeDecodeError:
            continue
        if "@" in address:
            keys.add(address_key(address))
    return keys


def failed_for_good(message: Message) -> set[str]:
    """The addresses ``message`` reports as failed permanently, casefolded (``address_key``)."""
    return _addresses(_failures(message)[1])


#: What the email package raises reading a malformed header (policy.default parses each as it is
#: read): the header says nothing to us, as if it were absent.
MALFORMED = (ValueError, IndexError, TypeError, LookupError, AttributeError)


def _header(message: Message, name: str) -> str:
    try:
        return str(message.get(name, ""))
    except MALFORMED:
        return ""


def _delivery_status(message: Message) -> bool:
    """Whether ``message`` is an RFC 3464 report: multipart/report; report-type=delivery-status."""
    try:
        kind = message.get_content_type()
        return kind == "multipart/report" and str(message.get_param("report-type", "")).lower() == "delivery-status"
    except MALFORMED:
        return False


def is_report(message: Message) -> bool:
    """Whether ``message`` reports on mail we sent rather than being a visitor's: a delivery status
    notification, a mail server's bounce from the null path, or anything flufl.bounce reads as
    one (even a temporary failure: it is no request to answer)."""
    if _delivery_status(message):
        return True
    sender = parseaddr(_header(message, "From"))[1].partition("@")[0].casefold()
    null_path = "".join(_header(message, "Return-Path").split()) == "<>"
    if sender in REPORTERS and null_path:
        return True
    temporary, permanent = _failures(message)
    return bool(temporary or permanent)
