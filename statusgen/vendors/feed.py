"""Any Atom 1.0 or RSS 2.0 status feed (e.g. Statuspage ``history.atom`` / ``history.rss``).

Each entry is one incident or maintenance; its status is the newest update's
status word (see ``_updates``). Then:

* resolved / completed / postmortem: closed, left out;
* scheduled: upcoming maintenance; in progress / verifying: active maintenance;
* any other word (investigating, identified, monitoring, update): an open
  incident. A feed does not say how bad an incident is, so its impact is the
  mildest one, ``degraded``; it names no components, so it affects the whole page;
* no status word at all: left out (nothing says it is open).

The page status is computed from open incidents and active maintenance.
Feeds carry no components. The XML is parsed with DOCTYPEs refused.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from xml.etree.ElementTree import Element

from statusgen.text import outside_link
from statusgen.vendors._payload import fail
from statusgen.vendors._text import (
    ID_LIMIT,
    clean_text,
    html_to_text,
    parse_iso,
    parse_rfc822,
)
from statusgen.vendors._updates import first_update, latest_status
from statusgen.vendors._xml import parse_xml
from statusgen.vendors.model import (
    VendorIncident,
    VendorMaintenance,
    VendorView,
    computed_status,
)

FORMAT = "feed"
ATOM = "{http://www.w3.org/2005/Atom}"
CONTENT = "{http://purl.org/rss/1.0/modules/content/}encoded"
CLOSED = frozenset({"resolved", "completed", "postmortem"})
MAINTENANCE = {"scheduled": "scheduled", "in_progress": "in_progress", "verifying": "in_progress"}
OPEN_IMPACT = "degraded"


@dataclass(frozen=True)
class Entry:
    """One feed entry, reduced to what tells its state."""

    id: str
    title: str
    link: str | None
    updated: datetime | None
    markup: str


@dataclass(frozen=True)
class Channel:
    """A feed, Atom or RSS alike."""

    page_url: str | None
    updated: datetime | None
    entries: tuple[Entry, ...]


def parse(data: Any) -> VendorView:
    """Read an Atom or RSS feed given as bytes or text."""
    if not isinstance(data, (bytes, bytearray, str)):
        fail(FORMAT, f"must be bytes or text, got {type(data).__name__}")
    channel = _channel(parse_xml(FORMAT, bytes(data) if isinstance(data, bytearray) else data))
    incidents = tuple(_incidents(channel.entries))
    windows = [w for w in map(_window, channel.entries) if w]
    active = tuple(w for w in windows if w.status == "in_progress")
    stamps = [e.updated for e in channel.entries if e.updated]
    return VendorView(
        format=FORMAT,
        status=computed_status((), incidents, active),
        description=None,
        components=(),
        incidents=incidents,
        maintenance_active=active,
        maintenance_upcoming=tuple(w for w in windows if w.status == "scheduled"),
        updated_at=channel.updated or max(stamps, default=None),
        page_url=channel.page_url,
    )


def _channel(root: Element) -> Channel:
    if root.tag == f"{ATOM}feed":
        return _atom(root)
    channel = root.find("channel") if root.tag == "rss" else None
    if channel is not None:
        return _rss(channel)
    fail(FORMAT, f"is not an Atom or RSS 2.0 feed (root element {clean_text(root.tag, 80)!r})")


# -- entries into incidents and maintenance ---------------------------------


def _status(entry: Entry) -> str | None:
    return latest_status(entry.title, entry.markup)


def _incidents(entries: Iterable[Entry]) -> Iterable[VendorIncident]:
    for entry in entries:
        status = _status(entry)
        if status and status not in CLOSED and status not in MAINTENANCE:
            yield _incident(entry, status)


def _incident(entry: Entry, status: str) -> VendorIncident:
    return VendorIncident(
        id=entry.id,
        title=entry.title,
        impact=OPEN_IMPACT,
        status=status,
        started_at=first_update(entry.markup, entry.updated),
        updated_at=entry.updated,
        url=entry.link,
        components=(),
    )


def _window(entry: Entry) -> VendorMaintenance | None:
    status = MAINTENANCE.get(_status(entry) or "")
    if status is None:
        return None
    return VendorMaintenance(
        id=entry.id, title=entry.title, status=status, starts_at=None, ends_at=None,
        url=entry.link, components=(),
    )  # fmt: skip


# -- reading the XML --------------------------------------------------------


def _text(parent: Element, tag: str) -> str | None:
    """The text of a child element, cleaned; None when absent or blank."""
    child = parent.find(tag)
    if child is None:
        return None
    return clean_text("".join(child.itertext())) or None


def _entry(entry_id: str | None, title: str | None, link: str | None, updated: datetime | None, markup: str) -> Entry:
    key = entry_id or link or title
    if key is None:
        fail(FORMAT, "has an entry with no id, link or title")
    return Entry(clean_text(key, ID_LIMIT), title or "(untitled)", outside_link(link), updated, markup)


def _atom_link(parent: Element) -> str | None:
    for link in parent.findall(f"{ATOM}link"):
        if link.get("rel", "alternate") == "alternate" and link.get("href"):
            return clean_text(link.get("href", "")) or None
    return None


def _atom_markup(entry: Element) -> str:
    body = entry.find(f"{ATOM}content")
    body = entry.find(f"{ATOM}summary") if body is None else body
    return "" if body is None else "".join(body.itertext())


def _atom_title(entry: Element) -> str | None:
    title = entry.find(f"{ATOM}title")
    if title is None:
        return None
    text = "".join(title.itertext())
    return clean_text(html_to_text(text) if title.get("type") == "html" else text) or None


def _atom_time(parent: Element) -> datetime | None:
    raw = _text(parent, f"{ATOM}updated") or _text(parent, f"{ATOM}published")
    return parse_iso(raw) if raw else None


def _atom(feed: Element) -> Channel:
    entries = tuple(
        _entry(_text(e, f"{ATOM}id"), _atom_title(e), _atom_link(e), _atom_time(e), _atom_markup(e))
        for e in feed.findall(f"{ATOM}entry")
    )
    return Channel(outside_link(_atom_link(feed)), _atom_time(feed), entries)


def _rss_time(parent: Element) -> datetime | None:
    raw = _text(parent, "lastBuildDate") or _text(parent, "pubDate")
    return (parse_rfc822(raw) or parse_iso(raw)) if raw else None


def _rss_markup(item: Element) -> str:
    body = item.find(CONTENT)
    body = item.find("description") if body is None else body
    return "" if body is None else "".join(body.itertext())


def _rss(channel: Element) -> Channel:
    entries = tuple(
        _entry(_text(i, "guid"), _text(i, "title"), _text(i, "link"), _rss_time(i), _rss_markup(i))
        for i in channel.findall("item")
    )
    return Channel(outside_link(_text(channel, "link")), _rss_time(channel), entries)
