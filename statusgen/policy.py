"""The HTTP policy: what every way of serving the tree says alike.

Read by the preview server (``web.serve``), the nginx configuration
(``web.nginx``), publishing (``web.publish``), the OpenAPI document, the
error bodies and the API page. Change a rule here and every one of them
follows.
"""

from __future__ import annotations

import os

#: The interface (the JSON under /api/ and the feeds under /feed/): requests a client (one address)
#: may make in any minute; a burst of as many at once is answered.
RATE_PER_MINUTE = 120
#: Pages and static files, for people: a limit of their own, so that a person browsing never meets
#: the interface's. A page is some five requests (itself, its stylesheet, script and icons): this is
#: 240 pages a minute from one address, a few dozen people behind one office address each
#: reloading every few seconds.
PAGES_PER_MINUTE = 1200
MAX_AGE = 15  # seconds an answer stays fresh
CACHE_CONTROL = f"public, max-age={MAX_AGE}"
#: Headers every answer carries, whatever serves it.
COMMON_HEADERS = {
    "Access-Control-Allow-Origin": "*",  # the data may be reused freely
    "Access-Control-Expose-Headers": "ETag, Retry-After",
    "X-Content-Type-Options": "nosniff",
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
    "svg": "image/svg+xml",
    "png": "image/png",
    "ico": "image/x-icon",
}
ATOM = "application/atom+xml; charset=utf-8"  # the feeds' (/feed/*.xml)


#: Files of these kinds, of a disk block or more, get a .gz copy that gzip_static and the preview
#: server send to clients that accept gzip. A smaller file's copy would cost an inode and a block of
#: its own to save a client under 4 KiB, well inside TCP's first flight (some 14 KB).
GZIP_SUFFIXES = (".json", ".xml", ".html", ".css", ".js", ".svg", ".txt")
GZIP_MIN_BYTES = 4096


def content_type(rel: str) -> str:
    """The content type of a file of the tree."""
    if rel.endswith(".xml") and rel.startswith("feed/"):
        return ATOM
    return CONTENT_TYPES.get(os.path.splitext(rel)[1].lstrip("."), "application/octet-stream")
