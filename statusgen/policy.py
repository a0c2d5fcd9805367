"""The HTTP policy: what every way of serving the tree says alike.

Read by the preview server (``web.serve``), the nginx configuration
(``web.nginx``), publishing (``web.publish``) and the API page. Change a
rule here and every one of them follows.
"""

from __future__ import annotations

import os

RATE_PER_MINUTE = 120
MAX_AGE = 15
CONTENT_TYPES = {
    ".json": "application/json; charset=utf-8",
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".svg": "image/svg+xml",
    ".txt": "text/plain; charset=utf-8",
    ".png": "image/png",
    ".ico": "image/x-icon",
}
ATOM = "application/atom+xml; charset=utf-8"


#: Files of these kinds, of a disk block or more, get a .gz copy that gzip_static and the preview
#: server send to clients that accept gzip. A smaller file's copy would cost an inode and a block of
#: its own to save a client under 4 KiB, well inside TCP's first flight (some 14 KB).
GZIP_SUFFIXES = (".json", ".xml", ".html", ".css", ".js", ".svg", ".txt")
GZIP_MIN_BYTES = 4096


def content_type(rel: str) -> str:
    if rel.endswith(".xml"):
        return ATOM if rel.startswith("feed/") else "application/xml; charset=utf-8"
    return CONTENT_TYPES.get(os.path.splitext(rel)[1], "application/octet-stream")
