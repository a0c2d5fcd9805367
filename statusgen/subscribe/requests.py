"""A message from the mailbox, read as a visitor's request, a delivery report, or nothing of ours.

Anyone can write to the subscription address, so what arrives is untrusted and mostly not a
command: only a message a person wrote, from one address, whose subject (or first line) says a
command of ``statusgen.mailto`` becomes a ``Request``. Never answered (RFC 3834 section 2):

* a message over 256 KB (``mailbox`` reads no further);
* automatic ones: ``Auto-Submitted`` other than ``no``, ``Precedence`` bulk, junk, list or
  auto_reply, the vacation responders' own headers and subjects, a mailing list's traffic;
* loops: our own messages coming back (our ``X-Loop``, our ``List-Id``, our own address as sender);
* a sender that is no single plain address.

A delivery report (a bounce: ``bounces``) is read for the addresses that failed for good.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from email import policy
from email.message import EmailMessage, Message
from email.parser import BytesParser
from email.utils import getaddresses

from statusgen.config import SubscriptionsConfig
from statusgen.config.values import EMAIL_ADDRESS
from statusgen.decide.subscribers import Request, address_key
from statusgen.mailto import command
from statusgen.subscribe.bounces import MALFORMED, failed_for_good, is_report

FIRST_LINES = 2048  # characters of a text body searched for a command when the subject says none
AUTOMATIC_PRECEDENCE = ("bulk", "junk", "list", "auto_reply")
#: Headers only automatic responders and mailing lists write.
AUTOMATIC_HEADERS = ("X-Autoreply", "X-Autorespond", "X-Auto-Reply", "X-Autoresponder", "List-Id", "List-Post")
#: What vacation responders begin their subjects with, in the languages they are seen most in.
VACATION_SUBJECT = re.compile(
    r"^\s*(auto(matic)?[ -]?(reply|response|antwort)|autoreply|out of (the )?office|abwesenheit|"
    r"r[ée]ponse automatique|absence|respuesta autom[áa]tica|resposta autom[áa]tica|自動応答|不在)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Read:
    """What a message is: a ``request``, a report of ``bounced`` addresses, or neither (``said``
    says why, for the log: never an address)."""

    said: str
    request: Request | None = None
    bounced: frozenset[str] = field(default_factory=frozenset)


def parse(raw: bytes) -> EmailMessage:
    return BytesParser(policy=policy.default).parsebytes(raw)


def _header(msg: Message, name: str) -> str:
    """A header's value as text, or "" when it is absent or cannot be decoded."""
    try:
        value = msg.get(name)
    except MALFORMED:
        return ""
    return str(value or "").strip()


def automatic(msg: Message) -> str | None:
    """Why a message was written by a program (no answer is due), or None."""
    submitted = _header(msg, "Auto-Submitted").lower()
    if submitted and submitted.split(";")[0].strip() != "no":
        return "written automatically (Auto-Submitted)"
    if _header(msg, "Precedence").lower() in AUTOMATIC_PRECEDENCE:
        return "written automatically (Precedence)"
    for name in AUTOMATIC_HEADERS:
        if name in msg:
            return f"written automatically ({name})"
    if VACATION_SUBJECT.match(_header(msg, "Subject")):
        return "an automatic reply (its subject)"
    return None


def loop(msg: Message, subs: SubscriptionsConfig) -> bool:
    """Whether the message is one of ours coming back, or claims our own address as its sender."""
    if address_key(_header(msg, "X-Loop")) == address_key(subs.address):
        return True
    if subs.list_id in _header(msg, "List-Id").lower():
        return True
    return any(address_key(a) == address_key(subs.address) for a in _from(msg))


def _from(msg: Message) -> list[str]:
    """The addresses of the From header (none, when it cannot be read)."""
    return [a for _, a in getaddresses([_header(msg, "From")]) if a]


def sender(msg: Message) -> str | None:
    """The one plain address the message is from, or None."""
    found = _from(msg)
    if len(found) != 1 or not EMAIL_ADDRESS.fullmatch(found[0]) or ".." in found[0]:
        return None
    return found[0]


def _first_line(msg: EmailMessage) -> str:
    """The first non-empty line of the message's plain text, not quoted."""
    try:
        part = msg.get_body(preferencelist=("plain",))
        text = part.get_content() if part is not None else ""
    except MALFORMED:  # an unknown charset, a malformed part
        return ""
    for line in str(text)[:FIRST_LINES].splitlines():
        if line.strip() and not line.lstrip().startswith(">"):
            return line.strip()
    return ""


def read(raw: bytes | None, subs: SubscriptionsConfig) -> Read:
    """What one message of the mailbox is (``raw`` None: larger than the mailbox reads)."""
    if raw is None:
        return Read("larger than 256 KB: not read")
    msg = parse(raw)
    if is_report(msg):
        return Read("a delivery report", bounced=frozenset(failed_for_good(msg)))
    if loop(msg, subs):
        return Read("one of our own messages, or our own address as sender: a loop")
    why = automatic(msg)
    if why:
        return Read(why)
    address = sender(msg)
    if address is None:
        return Read("no single plain address in From")
    said = command(_header(msg, "Subject")) or command(_first_line(msg))
    if said is None:
        return Read("no command in its subject or first line")
    return Read(f"a {said.verb} request", Request(address, said.verb, said.services, said.language, said.token))
