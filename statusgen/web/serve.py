"""The preview server: serves the tree with every HTTP rule of the API.

It maps public URLs (query strings included) onto the pre-rendered files
through ``routes.resolve``, and applies the same rules as the generated nginx
configuration: ETag (a hash of the bytes sent), If-None-Match -> 304,
``Cache-Control: max-age=15``, GET and HEAD only (405 with Allow), 120
requests to the interface (/api/, /feed/) in any minute per client address and
a limit of its own for pages (past either, 429 with Retry-After), JSON error
bodies for the interface and HTML error pages for people, CORS, and
precompressed ``.gz`` copies. It never serves a file
outside the tree: names are built from validated parts, and the resolved
path must stay inside the current generation.
"""

from __future__ import annotations

import hashlib
import math
import os
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

from statusgen import routes
from statusgen.policy import CACHE_CONTROL, COMMON_HEADERS, PAGES_PER_MINUTE, RATE_PER_MINUTE, content_type


def etag_of(data: bytes) -> str:
    return '"' + hashlib.blake2b(data, digest_size=12).hexdigest() + '"'


def etag_matches(header: str | None, etag: str) -> bool:
    if not header:
        return False
    tags = [t.strip() for t in header.split(",")]
    return "*" in tags or any(t.removeprefix("W/") == etag for t in tags)


class RateLimiter:
    """At most ``per_minute`` requests from one client in any 60 seconds (a sliding window).

    A burst of ``per_minute`` at once is answered; the next is refused until the
    oldest request of the window is a minute old, which is what Retry-After says.
    """

    WINDOW = 60.0

    def __init__(self, per_minute: int = RATE_PER_MINUTE, clock: Callable[[], float] = time.monotonic):
        self.limit = per_minute
        self.clock = clock
        self.seen: dict[str, deque[float]] = {}
        self.lock = threading.Lock()

    def take(self, client: str) -> float:
        """0 when the request may go; else the seconds until it could."""
        with self.lock:
            now = self.clock()
            times = self.seen.setdefault(client, deque())
            while times and now - times[0] >= self.WINDOW:
                times.popleft()
            if len(times) < self.limit:
                times.append(now)
                return 0.0
            self._forget_idle(now)
            return self.WINDOW - (now - times[0])

    def _forget_idle(self, now: float) -> None:
        if len(self.seen) > 10_000:
            for client in [c for c, t in self.seen.items() if not t or now - t[-1] >= self.WINDOW]:
                del self.seen[client]


def safe_log_text(text: str) -> str:
    """Untrusted text (paths, headers) made safe for a log line."""
    return text.encode("unicode_escape", "backslashreplace").decode("ascii")[:500]


class Handler(BaseHTTPRequestHandler):
    server: PreviewServer
    server_version = "statusgen"
    sys_version = ""
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out at once, no 40 ms delayed-ACK stall

    # -- dispatch --------------------------------------------------------------

    def do_GET(self) -> None:
        self._answer(head=False)

    def do_HEAD(self) -> None:
        self._answer(head=True)

    def _not_allowed(self) -> None:
        """Refused before its path is read, with the interface's JSON body: counted as the
        interface's, as nginx counts it."""
        self.root = Path(os.path.realpath(self.server.site))  # this request's generation
        if self._limited(interface=True):
            return
        self._send_file(405, routes.error_file("405"), head=False, extra={"Allow": routes.ALLOW})

    do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = do_TRACE = do_CONNECT = _not_allowed

    def __getattr__(self, name: str) -> Callable[[], None]:
        """Any other method (PROPFIND, made-up ones) is 405 too, not the stdlib's 501."""
        if name.startswith("do_"):
            return self._not_allowed
        raise AttributeError(name)

    def _answer(self, head: bool) -> None:
        self.root = Path(os.path.realpath(self.server.site))  # this request's generation
        url = urlsplit(self.path)
        path = unquote(url.path)
        if self._limited(routes.is_interface(path)):
            return
        if "\x00" in path or not path.startswith("/"):
            self._send_file(404, routes.error_page_file("404"), head)
            return
        found = routes.resolve(path, parse_qs(url.query, keep_blank_values=True), self._exists)
        if found.status == 301:
            self._redirect("/" + found.file, head)
        else:
            self._send_file(found.status, found.file, head)

    # -- helpers ---------------------------------------------------------------

    def _inside(self, rel: str) -> Path | None:
        root = self.root
        full = Path(os.path.realpath(root / rel))
        if full == root or root not in full.parents:
            return None
        return full

    def _exists(self, rel: str) -> bool:
        if rel.split("/", 1)[0] == routes.ERROR_DIR:  # error bodies are sent as errors, never as a page
            return False
        full = self._inside(rel)
        return full is not None and full.is_file()

    def _limited(self, interface: bool) -> bool:
        """Whether the client is over its limit (the interface's or the pages'); if so, refused."""
        limiter = self.server.limiter if interface else self.server.pages_limiter
        wait = limiter.take(self.client_address[0])
        if wait <= 0:
            return False
        body = routes.error_file("429") if interface else routes.error_page_file("429")
        retry = str(max(1, math.ceil(wait)))
        self._send_file(429, body, head=self.command == "HEAD", extra={"Retry-After": retry}, cache="no-store")
        return True

    def _common_headers(self, cache: str) -> None:
        self.send_header("Cache-Control", cache)
        for name, value in COMMON_HEADERS.items():
            self.send_header(name, value)

    def _read(self, rel: str) -> tuple[bytes, bool] | None:
        full = self._inside(rel)
        if full is None:
            return None
        gz = full.with_name(full.name + ".gz")
        try:
            if "gzip" in (self.headers.get("Accept-Encoding") or "") and gz.is_file():
                return gz.read_bytes(), True
            return full.read_bytes(), False
        except OSError:
            return None

    def _send_file(
        self,
        status: int,
        rel: str,
        head: bool,
        extra: dict[str, str] | None = None,
        cache: str = CACHE_CONTROL,
    ) -> None:
        got = self._read(rel)
        if got is None:  # the tree lacks even its error file: answer plainly
            status, rel, got = (
                404,
                "404.json",
                (b'{"error":{"status":404,"code":"not_found","message":"No resource at this path."}}\n', False),
            )
        body, gzipped = got
        etag = etag_of(body)
        if status == 200 and etag_matches(self.headers.get("If-None-Match"), etag):
            self.send_response(304)
            self.send_header("ETag", etag)
            self._common_headers(cache)
            self.end_headers()
            return
        self.send_response(status)
        self.send_header("Content-Type", content_type(rel))
        self.send_header("Content-Length", str(len(body)))
        self.send_header("ETag", etag)
        self.send_header("Vary", "Accept-Encoding")
        if gzipped:
            self.send_header("Content-Encoding", "gzip")
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self._common_headers(cache)
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def _redirect(self, location: str, head: bool) -> None:
        self.send_response(301)
        self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self._common_headers(CACHE_CONTROL)
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        if self.server.quiet:
            return
        line = format % args
        sys.stderr.write(f"{self.address_string()} {safe_log_text(line)}\n")


class PreviewServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request: object, client_address: object) -> None:
        """A client that hangs up mid-answer is normal for a web server: one quiet line, no traceback."""
        exc = sys.exc_info()[1]
        if isinstance(exc, (BrokenPipeError, ConnectionResetError, TimeoutError)):
            return
        if not self.quiet:
            sys.stderr.write(f"statusgen serve: error answering {client_address}: {safe_log_text(repr(exc))}\n")

    def __init__(
        self,
        site: Path,
        host: str = "127.0.0.1",
        port: int = 8080,
        quiet: bool = False,
        per_minute: int = RATE_PER_MINUTE,
        pages_per_minute: int = PAGES_PER_MINUTE,
    ):
        self.site = site
        self.quiet = quiet
        self.limiter = RateLimiter(per_minute)
        self.pages_limiter = RateLimiter(pages_per_minute)
        super().__init__((host, port), Handler)


def serve(site: Path, host: str, port: int, quiet: bool = False) -> None:
    server = PreviewServer(site, host, port, quiet)
    try:
        server.serve_forever()
    finally:
        server.server_close()
