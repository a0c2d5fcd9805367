"""Guess a vendor payload's format from its shape.

XML whose root is an Atom ``feed`` or an ``rss`` element is a ``feed``; JSON
is told apart by the keys each API is known by. Instatus nests its status in
``page`` (Statuspage puts ``status`` beside it); its components list alone has
upper-case status words. Uptime Kuma's status page has ``publicGroupList``
(its heartbeat list alone is refused by name: the status-page URL is the one
to configure). Upptime's summary is an array of sites with ``uptime``. Anything else (an HTML error
page, a truncated body, an unknown API) is a ``VendorParseError``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from statusgen.vendors._payload import fail, load_json

FORMAT = "vendor"

_XML_ROOT = re.compile(rb"<(?!\?|!)([A-Za-z_][\w.:-]*)")
_FEED_ROOTS = (b"feed", b"rss")
_HTML_ROOTS = (b"html", b"head", b"body")


def _xml_format(head: bytes) -> str:
    text = head.decode("utf-8", "replace").encode("ascii", "ignore")
    if re.match(rb"\s*<!doctype\s+html", text, re.IGNORECASE):
        fail(FORMAT, "is an HTML page, not a status payload")
    match = _XML_ROOT.search(text)
    root = match.group(1).split(b":")[-1].lower() if match else b""
    if root in _FEED_ROOTS:
        return "feed"
    if root in _HTML_ROOTS:
        fail(FORMAT, "is an HTML page, not a status payload")
    fail(FORMAT, "is XML but not an Atom or RSS feed")


def _is_statuspage(value: Any) -> bool:
    keys = ("components", "incidents", "scheduled_maintenances", "status")
    return isinstance(value.get("page"), dict) and any(k in value for k in keys)


def _is_statusio(value: Any) -> bool:
    result = value.get("result")
    return isinstance(result, dict) and "status_overall" in result


def _is_slack(value: Any) -> bool:
    return "active_incidents" in value or ("date_updated" in value and isinstance(value.get("status"), str))


def _is_heroku(value: Any) -> bool:
    systems = value.get("status")
    return isinstance(systems, list) and all(isinstance(s, dict) and "system" in s for s in systems)


def _is_cachet(value: Any) -> bool:
    return isinstance(value.get("data"), list)


def _is_instatus(value: Any) -> bool:
    page = value.get("page")
    if isinstance(page, dict):
        return isinstance(page.get("status"), str) and "status" not in value
    components = value.get("components")
    return isinstance(components, list) and all(_upper_status(c) for c in components) and bool(components)


def _upper_status(component: Any) -> bool:
    status = component.get("status") if isinstance(component, dict) else None
    return isinstance(status, str) and status.isupper()


def _is_uptimekuma(value: Any) -> bool:
    if "heartbeatList" in value and "publicGroupList" not in value:
        fail(FORMAT, "is an Uptime Kuma heartbeat list; configure the status page's URL (/api/status-page/<slug>)")
    return "publicGroupList" in value or ("status_page" in value and "heartbeat" in value)


def _is_upptime(value: list[Any]) -> bool:
    return bool(value) and all(isinstance(e, dict) and "uptime" in e and "status" in e for e in value)


_OBJECT_SHAPES: tuple[tuple[str, Callable[[Any], bool]], ...] = (
    ("instatus", _is_instatus),
    ("uptimekuma", _is_uptimekuma),
    ("statuspage", _is_statuspage),
    ("statusio", _is_statusio),
    ("slack", _is_slack),
    ("heroku", _is_heroku),
    ("cachet", _is_cachet),
)


def _json_format(value: Any) -> str:
    if isinstance(value, list):
        if all(isinstance(e, dict) and "external_desc" in e for e in value):
            return "gcp"
        if _is_upptime(value):
            return "upptime"
        fail(FORMAT, "is a JSON array, but neither Google Cloud incidents nor an Upptime summary")
    if not isinstance(value, dict):
        fail(FORMAT, "is JSON, but neither an object nor an array")
    for name, matches in _OBJECT_SHAPES:
        if matches(value):
            return name
    keys = ", ".join(sorted(value)[:12])
    fail(FORMAT, f"is JSON in no known status format (keys: {keys})")


def detect_format(body: bytes) -> str:
    """The format name of a payload: statuspage, statusio, slack, heroku, cachet, gcp, feed,
    instatus, uptimekuma or upptime."""
    head = bytes(body).removeprefix(b"\xef\xbb\xbf").lstrip()
    if not head:
        fail(FORMAT, "is empty")
    if head[:1] == b"<":
        return _xml_format(head[:4096])
    return _json_format(load_json(FORMAT, head).value)
