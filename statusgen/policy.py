"""The HTTP policy: what every way of serving the tree says alike.

Read by the preview server (``web.serve``), the nginx configuration
(``web.nginx``), publishing (``web.publish``), the OpenAPI document, the
error bodies and the API page: rate limits, freshness, content types, the
connection timeouts and the security headers. Change a rule here and every
one of them follows.
"""

from __future__ import annotations

import ipaddress
import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from statusgen import routes

#: The interface (the JSON under /api/ and the feeds under /feed/): requests a client (one address)
#: may make in any minute; a burst of as many at once is answered.
RATE_PER_MINUTE = 120
#: Pages and static files, for people: a limit of their own, so that a person browsing never meets
#: the interface's. A page is some five requests (itself, its stylesheet, script and icons): this is
#: 240 pages a minute from one address, a few dozen people behind one office address each
#: reloading every few seconds.
PAGES_PER_MINUTE = 1200
#: The most a grant may allow (``[[rate_limit.grants]]``): ten requests a second.
MAX_GRANTED_PER_MINUTE = 600 * 10
MAX_AGE = 15  # seconds an answer stays fresh
CACHE_CONTROL = f"public, max-age={MAX_AGE}"
#: Headers every answer carries, whatever serves it.
COMMON_HEADERS = {
    "Access-Control-Allow-Origin": "*",  # the data may be reused freely
    "Access-Control-Expose-Headers": "ETag, Retry-After",
    "X-Content-Type-Options": "nosniff",
}
#: The answer to a CORS preflight (OPTIONS with Origin and Access-Control-Request-Method GET or
#: HEAD): a script on another origin may ask with these headers (If-None-Match is not one a browser
#: sends without asking first), and the browser may remember the answer for a day.
PREFLIGHT_HEADERS = {
    "Access-Control-Allow-Methods": "GET, HEAD",
    "Access-Control-Allow-Headers": "If-None-Match, If-Modified-Since",
    "Access-Control-Max-Age": "86400",
}
#: Content types by extension, each with its charset written into the type itself (nginx's charset
#: filter skips the answers gzip_static makes).
CONTENT_TYPES = {
    "json": "application/json; charset=utf-8",
    "html": "text/html; charset=utf-8",
    "xml": "application/xml; charset=utf-8",
    "css": "text/css; charset=utf-8",
    "js": "text/javascript; charset=utf-8",
    "txt": "text/plain; charset=utf-8",
    "csv": "text/csv; charset=utf-8; header=present",
    "ics": "text/calendar; charset=utf-8",
    "svg": "image/svg+xml",
    "png": "image/png",
    "ico": "image/x-icon",
}
ATOM = "application/atom+xml; charset=utf-8"  # the feeds' (/feed/*.xml)
PROMETHEUS = "text/plain; version=0.0.4; charset=utf-8"  # /metrics, the text exposition format


#: Files of these kinds (and /metrics, text without a suffix), of a disk block or more, get a .gz
#: copy that gzip_static and the preview server send to clients that accept gzip. A smaller file's
#: copy would cost an inode and a block of its own to save a client under 4 KiB, well inside TCP's
#: first flight (some 14 KB).
GZIP_SUFFIXES = (".json", ".xml", ".html", ".css", ".js", ".svg", ".txt", ".csv")
GZIP_MIN_BYTES = 4096


def has_gzip_copy(rel: str, size: int) -> bool:
    """Whether the file ``rel`` of the tree, of ``size`` bytes, gets a precompressed .gz copy."""
    return (rel.endswith(GZIP_SUFFIXES) or rel == routes.METRICS) and size >= GZIP_MIN_BYTES


def content_type(rel: str) -> str:
    """The content type of a file of the tree."""
    if rel.endswith(".xml") and rel.startswith("feed/"):
        return ATOM
    if rel == routes.METRICS:
        return PROMETHEUS
    return CONTENT_TYPES.get(os.path.splitext(rel)[1].lstrip("."), "application/octet-stream")


# -- connections and security headers: what the preview server and nginx both hold to ----------

HEADER_TIMEOUT = 10  # seconds for a request's line and headers, from its first byte
IDLE_TIMEOUT = 15  # seconds a kept-alive connection may wait for its next request
SEND_TIMEOUT = 10  # seconds for an answer to be taken by the client
#: Connections one client address may hold at once: a browser opens six, and a few people
#: behind one office address stay well under it.
CONNECTIONS_PER_ADDRESS = 64
#: A request's head (its line and headers) as both servers read it, nginx's way: in a first buffer
#: of FIRST_BUFFER_BYTES, then in at most HEAD_BUFFERS of LINE_MAX_BYTES, each line whole in one
#: of them (client_header_buffer_size, large_client_header_buffers). A longer request line is
#: refused with 414, a longer header line or more headers than the buffers hold with 431. No
#: address of the site comes near: they stop a client, not a reader.
FIRST_BUFFER_BYTES = 1024
LINE_MAX_BYTES = 8192  # with the line's CRLF
HEAD_BUFFERS = 4


#: Pages run the site's own script and stylesheet and fetch its own interface; nothing else,
#: and no other site may frame them. No inline style: a header this short passes any proxy's
#: buffers (nginx's proxy_buffer_size is 4 KB).
PAGE_POLICY = "; ".join(
    [
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self'",
        "connect-src 'self'",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'none'",
    ]
)
#: The embeddable status (/embed/, /de/embed/...) may be framed by any site: it is made to be.
EMBED_POLICY = PAGE_POLICY.replace("frame-ancestors 'none'", "frame-ancestors *")
#: Everything else (JSON, feeds, images, scripts) is read, never run as a document.
DOCUMENT_POLICY = "default-src 'none'; frame-ancestors 'none'"
REFERRER_POLICY = "no-referrer"  # the pages' links lead to vendors, who need not know who sent them


def security_headers(rel: str, languages: Sequence[str]) -> dict[str, str]:
    """The security headers of the answer with the file ``rel`` of a tree in ``languages`` (its
    HTML pages get theirs; the embeddable status, in each language's folder too, may be framed)."""
    if rel.endswith(".html"):
        policy = EMBED_POLICY if routes.is_embed(rel, languages) else PAGE_POLICY
    else:
        policy = DOCUMENT_POLICY
    return {"Content-Security-Policy": policy, "Referrer-Policy": REFERRER_POLICY}


# -- limits granted: what both servers read of [[rate_limit.grants]] ---------------------------

#: Where a build tells the servers of its tree the limits the operator granted: the networks and
#: the rate of each grant, never its purpose or contact. A dot file: no server serves it, and
#: ``statusgen publish`` leaves it home.
GRANTS_FILE = ".grants.json"


@dataclass(frozen=True)
class Grant:
    """A limit of the interface's own for some client addresses, instead of ``RATE_PER_MINUTE``."""

    networks: tuple[str, ...]  # CIDR, as ipaddress writes them (127.0.0.5/32)
    per_minute: int


def grants_document(grants: Iterable[Grant]) -> bytes:
    return json.dumps({"grants": [{"networks": list(g.networks), "per_minute": g.per_minute} for g in grants]}).encode()


def grants_from(data: bytes) -> tuple[Grant, ...]:
    """The grants of a tree's ``GRANTS_FILE``, checked as an input of nginx's configuration must
    be (each network a network, each rate a whole number in bounds); ValueError if it is not."""
    try:
        found = json.loads(data)["grants"]
        grants = tuple(
            Grant(tuple(str(ipaddress.ip_network(n)) for n in g["networks"]), g["per_minute"]) for g in found
        )
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"not a list of grants ({exc})") from None
    for g in grants:
        if type(g.per_minute) is not int or not RATE_PER_MINUTE < g.per_minute <= MAX_GRANTED_PER_MINUTE:
            raise ValueError(f"a rate of {g.per_minute!r} a minute is out of bounds")
    return grants


def granted(grants: Sequence[Grant], address: str) -> Grant | None:
    """The grant of a client address: the one of its most specific network, as nginx's ``geo``
    chooses (None: the interface's limit)."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return None
    found = [(ipaddress.ip_network(n), g) for g in grants for n in g.networks]
    matching = [(net.prefixlen, -i, g) for i, (net, g) in enumerate(found) if ip in net]
    return max(matching, key=lambda m: m[:2])[2] if matching else None
