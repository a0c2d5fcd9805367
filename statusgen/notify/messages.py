"""The words of a notification: a title and a Markdown body a person reads, and the generic
webhook's JSON body (version ``WEBHOOK_VERSION``, described by docs/notify-webhook.schema.json).

A message is one event, or a digest of several (``events.plan``). Vendor text and reasons are
untrusted: ``escaped`` keeps them from making markup of their own in Markdown, or in the HTML
Apprise makes of it for email.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson

from statusgen.config import Config
from statusgen.decide.incidents import Incident
from statusgen.model import STATUS_WORDS, Status
from statusgen.notify.events import Event
from statusgen.render.api.documents import incident_document
from statusgen.render.gather import IncidentRow
from statusgen.timeutil import iso, moment, to_epoch

WEBHOOK_VERSION = 1
DIGEST_LINES = 20  # a digest names this many events, then says how many more
MARKDOWN_MARKS = re.compile(r"([\\`*_\[\]#|~])")


@dataclass(frozen=True)
class Message:
    title: str
    body: str  # Markdown
    kind: str  # event | digest | test
    events: tuple[Event, ...]


def escaped(text: str) -> str:
    """Untrusted text as Markdown that shows it as it is: no emphasis, link or HTML of its own."""
    return MARKDOWN_MARKS.sub(r"\\\1", html.escape(" ".join(text.split()), quote=False))


def absolute(config: Config, link: str | None) -> str | None:
    """A link of an event as a reader follows it: the site's paths under its base URL."""
    if link is None:
        return None
    return config.site.base_url + link if link.startswith("/") else link


def _name(config: Config, slug: str) -> str:
    svc = config.by_slug.get(slug)
    return svc.name if svc else slug


def event_message(config: Config, event: Event) -> Message:
    """One event: what happened in its title; since when, why and where to read more in its body."""
    lines = [_headline(event), "", escaped(event.message)]
    link = absolute(config, event.link)
    if link:
        where = "The vendor's page" if event.kind == "vendor.incident" else f"On {escaped(config.site.title)}"
        lines += ["", f"{where}: <{link}>"]
    return Message(event.title, "\n".join(lines), "event", (event,))


def _headline(event: Event) -> str:
    words = STATUS_WORDS[Status(event.status)].capitalize()
    if event.kind == "incident.resolved":
        return f"**{words}** again; the incident began {moment(event.since or event.at)}."
    if event.kind == "incident.noted":
        return f"**Note** from the operator ({moment(event.at)}):"
    if event.kind == "maintenance.announced":
        return f"**Maintenance** planned, from {moment(event.since or event.at)}:"
    if event.kind == "maintenance.started":
        return f"**Maintenance** began {moment(event.at)}:"
    if event.kind == "maintenance.ended":
        return f"**Maintenance** ended {moment(event.at)}; now: {STATUS_WORDS[Status(event.status)]}."
    if event.kind == "vendor.incident":
        return f"**The vendor reports** ({moment(event.since or event.at)}):"
    severity = f", severity {event.severity}" if event.severity else ""
    return f"**{words}** since {moment(event.since or event.at)}{severity}."


def digest_message(config: Config, events: Sequence[Event]) -> Message:
    """Several events in one message: a line each (the first ``DIGEST_LINES``), and the site."""
    services = {e.service for e in events}
    title = f"{config.site.title}: {len(events)} changes to {len(services)} services"
    lines = [f"- **{escaped(_name(config, e.service))}**: {escaped(_summary(e))}" for e in events[:DIGEST_LINES]]
    if len(events) > DIGEST_LINES:
        lines.append(f"- and {len(events) - DIGEST_LINES} more")
    lines += ["", f"Every service: <{config.site.base_url}/>"]
    return Message(title, "\n".join(lines), "digest", tuple(events))


SAID = {
    "incident.opened": "incident opened",
    "incident.escalated": "now",
    "incident.resolved": "resolved",
    "incident.noted": "note",
    "vendor.incident": "the vendor reports",
    "maintenance.announced": "maintenance planned",
    "maintenance.started": "maintenance began",
    "maintenance.ended": "maintenance ended",
}


def _summary(event: Event) -> str:
    """A digest's line: what happened to the service, and when."""
    if event.kind in ("incident.opened", "incident.escalated"):
        what = f": {STATUS_WORDS[Status(event.status)]}"
    elif event.kind == "incident.resolved":
        what = ""
    else:
        what = f": {event.message}"
    return f"{SAID[event.kind]}{what} ({moment(event.at)})"


def message_of(config: Config, events: Sequence[Event]) -> Message:
    return event_message(config, events[0]) if len(events) == 1 else digest_message(config, events)


def trial_message(config: Config, name: str, now: datetime) -> Message:
    title = f"{config.site.title}: a test from statusgen"
    body = (
        f"This is a test of the notifier **{escaped(name)}**, sent {moment(now)} by `statusgen notify --test`. "
        f"Incidents of {escaped(config.site.title)} will be told here.\n\n<{config.site.base_url}/>"
    )
    return Message(title, body, "test", ())


# -- the generic webhook ---------------------------------------------------------------------------


def webhook_body(config: Config, message: Message, now: datetime) -> bytes:
    """The generic webhook's JSON body: the message as a person reads it, and each event it tells
    of with the incident's record as the API publishes it (``/api/v1/incidents/...``)."""
    return orjson.dumps(
        {
            "version": WEBHOOK_VERSION,
            "kind": message.kind,
            "sent_at": iso(now),
            "site": {"title": config.site.title, "url": config.site.base_url},
            "title": message.title,
            "markdown": message.body,
            "events": [_event_document(config, e) for e in message.events],
        }
    )


def _event_document(config: Config, event: Event) -> dict[str, Any]:
    return event.to_json() | {
        "service_name": _name(config, event.service),
        "link": absolute(config, event.link),
        "incident": _incident_document(config, event.incident),
    }


def _incident_document(config: Config, record: dict[str, Any] | None) -> dict[str, Any] | None:
    if record is None:
        return None
    incident = Incident.from_json(record)
    ended = to_epoch(incident.ended_at) if incident.ended_at else None
    row = IncidentRow(incident.service, to_epoch(incident.started_at), ended, orjson.dumps(record).decode())
    return incident_document(config, row)
