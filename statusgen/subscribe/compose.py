"""The messages subscribers are sent, in the language each subscribed from.

Each is a plain text part and an HTML part made by the same template machinery (``templates/mail``):
the HTML autoescaped as every page is, the text read back from the same escaped output, so a
service's, a vendor's or an operator's words are said as they are and never become markup.

Every message carries the list's headers a mail program acts on: ``List-Id`` (RFC 2919),
``List-Unsubscribe`` (RFC 2369: a ``mailto:`` with the subscriber's token; a static site has no
HTTPS endpoint to take RFC 8058's one-click POST: docs/subscriptions.md), ``Auto-Submitted``
(RFC 3834) and ``X-Loop``, by which the reader of the mailbox knows our own messages coming back.
An incident's updates (and a maintenance's start and end) thread under its first message: their
``Message-ID`` are made of the event, the subscriber and the address's domain, so a message sent
again by a later run would be the same message.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from email import policy
from email.message import EmailMessage
from email.utils import format_datetime, formataddr, make_msgid
from typing import Any

from markupsafe import Markup

from statusgen import mailto, routes
from statusgen.config import Config, SubscriptionsConfig
from statusgen.decide.incidents import IncidentUpdate
from statusgen.decide.subscribers import CONFIRM, GOODBYE, WELCOME, Subscriber, expiry
from statusgen.i18n import Language, say_in
from statusgen.notify.events import Event
from statusgen.render.templating import render_text
from statusgen.text import one_line

#: The events that begin a thread (an incident's first update is ``/0``): the others answer them.
THREAD_OPENERS = ("incident.opened", "maintenance.announced", "vendor.incident")
#: Header lines up to RFC 5322's limit: folded at 78, a long List-Unsubscribe URL would be written
#: as an encoded word, which no mail program reads as a link.
POLICY = policy.default.clone(max_line_length=998)


@dataclass(frozen=True)
class Parts:
    subject: str
    text: str
    html: str


def _language(config: Config, tag: str) -> Language:
    """The site's language ``tag`` (its first, if the site no longer speaks it)."""
    tags = config.site.languages
    chosen = tag if tag in tags else tags[0]
    return Language(chosen, chosen == tags[0])


def _site_url(config: Config, language: Language, path: str = "/") -> str:
    return config.site.base_url + language.url(path)


def _parts(template: str, language: Language, **context: Any) -> Parts:
    """A message's subject (``mail/subject.txt``), text (``mail/{template}.txt``) and HTML
    (``mail/{template}.html``): the text ones escaped as every template is, then read back."""
    html = render_text(f"mail/{template}.html", language, **context)
    text = render_text(f"mail/{template}.txt", language, **context)
    subject = render_text("mail/subject.txt", language, template=template, **context)
    return Parts(one_line(Markup(subject).unescape()), Markup(text).unescape(), html)


def _domain(subs: SubscriptionsConfig) -> str:
    return subs.address.rsplit("@", 1)[1]


def _envelope(
    config: Config, subs: SubscriptionsConfig, to: Subscriber, language: Language, parts: Parts, now: datetime
) -> EmailMessage:
    """The headers every message has, and its two parts."""
    msg = EmailMessage(policy=POLICY)
    msg["From"] = formataddr((one_line(subs.sender_name or config.site.title), subs.address))
    msg["To"] = to.address
    msg["Subject"] = parts.subject
    msg["Date"] = format_datetime(now)
    msg["List-Id"] = formataddr((one_line(config.site.title), subs.list_id))
    msg["List-Unsubscribe"] = f"<{mailto.mailto(subs.address, mailto.UNSUBSCRIBE, token=to.token)}>"
    msg["X-Loop"] = subs.address
    msg.set_content(parts.text)
    msg.add_alternative(parts.html, subtype="html")
    msg["Content-Language"] = language.tag  # after the parts: set_content drops the Content- headers
    return msg


def reply(config: Config, subs: SubscriptionsConfig, kind: str, to: Subscriber, now: datetime) -> EmailMessage:
    """The answer to a request: ``CONFIRM`` (what to answer to confirm), ``WELCOME`` (confirmed),
    ``GOODBYE`` (removed)."""
    language = _language(config, (to.asked_language if kind == CONFIRM else None) or to.language)
    services = to.asked_services if kind == CONFIRM and to.asked_services is not None else to.services
    context = {
        "site_title": config.site.title,
        "site_url": _site_url(config, language),
        "subscribe_url": _site_url(config, language, routes.SUBSCRIBE_PAGE),
        "services": [config.by_slug[s].name for s in services if s in config.by_slug],
        "token": to.token,
        "address": subs.address,
        "confirm_link": mailto.mailto(subs.address, mailto.CONFIRM, token=to.token),
        "unsubscribe_link": mailto.mailto(subs.address, mailto.UNSUBSCRIBE, token=to.token),
        "expires": expiry(to),
    }
    template = {CONFIRM: "confirm", WELCOME: "welcome", GOODBYE: "goodbye"}[kind]
    msg = _envelope(config, subs, to, language, _parts(template, language, **context), now)
    msg["Message-ID"] = make_msgid("statusgen", _domain(subs))
    msg["Auto-Submitted"] = "auto-replied"  # an answer to a message (RFC 3834 section 5)
    return msg


def _thread(event: Event) -> str:
    """What an event's thread is named by: its incident, or its maintenance window."""
    if event.kind.startswith("incident."):
        return event.id.rsplit("/", 1)[0]
    return event.id.removesuffix("/ended").removesuffix("/announced")


def _message_id(kind: str, name: str, subscriber: Subscriber, subs: SubscriptionsConfig) -> str:
    digest = hashlib.sha256(f"{name}\x00{subscriber.token}".encode()).hexdigest()[:24]
    return f"<{kind}.{digest}@{_domain(subs)}>"


def message_ids(event: Event, to: Subscriber, subs: SubscriptionsConfig) -> tuple[str, str]:
    """An update's ``Message-ID``, and that of the first message of its thread (the same, for the
    event that opens it)."""
    thread = _message_id("t", _thread(event), to, subs)
    opens = event.kind in THREAD_OPENERS and (not event.kind.startswith("incident.") or event.id.endswith("/0"))
    return (thread if opens else _message_id("u", event.id, to, subs)), thread


def _said_update(event: Event, language: Language) -> str:
    """What an incident's update says, in the language; other events' words as they came."""
    if event.incident is None or not event.kind.startswith("incident."):
        return event.message
    index = int(event.id.rsplit("/", 1)[1])
    updates = event.incident.get("updates", [])
    if index >= len(updates):
        return event.message
    return say_in(IncidentUpdate.from_json(updates[index]).message, language.tag)


def update(config: Config, subs: SubscriptionsConfig, event: Event, to: Subscriber, now: datetime) -> EmailMessage:
    """One event, to one subscriber, threaded under the first message of its incident or window."""
    language = _language(config, to.language)
    svc = config.by_slug.get(event.service)
    link = event.link
    if link is not None and link.startswith("/"):
        link = _site_url(config, language, link)
    context = {
        "event": event,
        "service_name": svc.name if svc else event.service,
        "said": one_line(_said_update(event, language)) if event.message else "",
        "link": link,
        "vendor_link": event.kind == "vendor.incident",
        "site_title": config.site.title,
        "site_url": _site_url(config, language),
        "subscribe_url": _site_url(config, language, routes.SUBSCRIBE_PAGE),
        "unsubscribe_link": mailto.mailto(subs.address, mailto.UNSUBSCRIBE, token=to.token),
    }
    msg = _envelope(config, subs, to, language, _parts("update", language, **context), now)
    own, thread = message_ids(event, to, subs)
    msg["Message-ID"] = own
    if thread != own:
        msg["In-Reply-To"] = thread
        msg["References"] = thread
    msg["Auto-Submitted"] = "auto-generated"
    msg["Precedence"] = "bulk"  # what vacation responders look for, besides Auto-Submitted
    return msg
