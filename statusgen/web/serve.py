"""The preview server: serves the tree with every HTTP rule of the API.

It maps public URLs (query strings included) onto the pre-rendered files
through ``routes.resolve``, and applies the same rules as the generated nginx
configuration: ETag (a hash of the bytes sent) and Last-Modified (the file's
modification time), If-None-Match and If-Modified-Since -> 304 as nginx answers
them (``not_modified``), ``Vary: Accept-Encoding`` for a file with a .gz copy,
``Cache-Control: max-age=15``, GET and HEAD only (405 with Allow), 120
requests to the interface (/api/, /feed/) in any minute per client address and
a limit of its own for pages (past either, 429 with Retry-After), JSON error
bodies for the interface and HTML error pages for people, CORS, and
precompressed ``.gz`` copies, and the security headers (``security_headers``). It reads a
request's line and headers within nginx's limits, and refuses what nginx refuses before reading a
path (``routes.is_refused``) with the same answers (``Handler._refuse``). It never
serves a file outside the tree: names are built from validated parts, and the resolved
path must stay inside the current generation.

It stands up to abuse the way the nginx configuration does: a listen backlog that
holds a crowd, a deadline for each request's line and headers and for each answer,
an idle timeout between requests, at most ``MAX_CONNECTIONS`` connections at once
and ``CONNECTIONS_PER_ADDRESS`` from one address (the next are closed at once), so one
address holding slow connections never takes the threads of the others; when slow
connections from many addresses fill every slot, those waiting longest for a request
make way for clients that have sent theirs (``PreviewServer.verify_request``). A
request with a body is answered and its connection closed: the body is never read, so
what follows it is never taken for a request.
"""

from __future__ import annotations

import hashlib
import io
import math
import os
import socket
import sys
import threading
import time
from calendar import timegm
from collections import Counter, deque
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from email.message import Message
from email.utils import formatdate, parsedate
from http.client import HTTPMessage
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from statusgen import routes
from statusgen.policy import (
    CACHE_CONTROL,
    COMMON_HEADERS,
    CONNECTIONS_PER_ADDRESS,
    FIRST_BUFFER_BYTES,
    GRANTS_FILE,
    HEAD_BUFFERS,
    HEADER_TIMEOUT,
    IDLE_TIMEOUT,
    LINE_MAX_BYTES,
    PAGES_PER_MINUTE,
    PREFLIGHT_HEADERS,
    RATE_PER_MINUTE,
    SEND_TIMEOUT,
    Grant,
    content_type,
    granted,
    grants_from,
    security_headers,
)
from statusgen.web.languages import TreeLanguagesError, tree_languages

#: Connections the preview server holds at once (a thread each).
MAX_CONNECTIONS = 512
LINGER = 1.0  # seconds spent discarding what a client still sends after its last answer

#: Requests refused before their path is read, by the status the standard library or nginx gives
#: them and the status both servers answer: a request line or path nginx cannot read (400) is one
#: that names nothing, 404, as the nginx configuration has it.
REFUSED = {400: 404, 414: 414, 431: 431, 505: 505}


def arguments(query: str) -> dict[str, list[str]]:
    """The query's parameters as nginx's ``$arg_NAME`` reads them, so that both servers answer a
    query alike: a parameter is a ``name=value`` pair (a name without ``=`` is none), its name
    matched as written (``STATUS`` is not ``status``), neither name nor value percent-decoded
    (``%73tatus`` is not ``status`` either), the first of a name counting (``routes.resolve``)."""
    found: dict[str, list[str]] = {}
    for part in query.split("&"):
        name, equals, value = part.partition("=")
        if equals:
            found.setdefault(name, []).append(value)
    return found


def only_part_sent(connection: socket.socket) -> bool:
    """Whether ``connection`` has sent part of a request and stopped short of its end (looked at,
    not read), or has gone: what a slow client does. One that has sent nothing yet may be a client
    whose request is on its way."""
    try:
        waiting = connection.recv(65536, socket.MSG_PEEK | socket.MSG_DONTWAIT)
    except BlockingIOError:
        return False  # nothing yet
    except OSError:
        return True  # gone
    return not waiting or b"\r\n\r\n" not in waiting


def head_fits(lines: list[int]) -> bool:
    """Whether a request's head, given as the length of each of its lines, fits where nginx reads
    it: a first buffer, then at most ``HEAD_BUFFERS`` of ``LINE_MAX_BYTES``, each line whole in
    one of them (a line longer than what is left of a buffer starts the next)."""
    room, buffers = FIRST_BUFFER_BYTES, 0
    for size in lines:
        if size > room:
            if size > LINE_MAX_BYTES or buffers == HEAD_BUFFERS:
                return False
            room, buffers = LINE_MAX_BYTES, buffers + 1
        room -= size
    return True


def accepts_gzip(header: str | None) -> bool:
    """Whether an Accept-Encoding header takes gzip: named with a q above 0, as nginx reads it
    (``gzip;q=0`` refuses it, and ``*`` alone does not ask for it)."""
    taken = {}
    for part in (header or "").lower().split(","):
        coding, _, params = part.strip().partition(";")
        q = 1.0
        for param in params.split(";"):
            name, _, value = param.strip().partition("=")
            if name == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        taken[coding.strip()] = q
    return taken.get("gzip", 0.0) > 0


def etag_of(data: bytes) -> str:
    return '"' + hashlib.blake2b(data, digest_size=12).hexdigest() + '"'


def etag_matches(header: str | None, etag: str) -> bool:
    if not header:
        return False
    tags = [t.strip() for t in header.split(",")]
    return "*" in tags or any(t.removeprefix("W/") == etag for t in tags)


def http_date(mtime: int) -> str:
    """A Last-Modified value: the IMF-fixdate nginx writes (``Wed, 04 Dec 2026 19:41:01 GMT``)."""
    return formatdate(mtime, usegmt=True)


def modified_since(header: str, mtime: int) -> bool:
    """Whether a file of ``mtime`` changed since an If-Modified-Since value, as nginx reads it with
    the generated configuration's ``if_modified_since exact``: only the very date the file's
    Last-Modified says is unchanged (a later date may come from another clock or an older copy of
    the tree); a date it cannot read says nothing, so the file counts as changed. Its zone is not
    read: HTTP dates are GMT."""
    parsed = parsedate(header)
    return parsed is None or timegm(parsed) != mtime


def not_modified(headers: Message, etag: str, mtime: int) -> bool:
    """Whether a request answered with a 200 of ``etag`` and ``mtime`` gets a 304, as nginx decides
    it: when it asks with If-None-Match or If-Modified-Since, and each it sends says unchanged
    (nginx reads both; RFC 9110 would read only If-None-Match, and both servers keep to nginx)."""
    tags, since = headers.get("If-None-Match"), headers.get("If-Modified-Since")
    if tags is None and since is None:
        return False
    return (since is None or not modified_since(since, mtime)) and (tags is None or etag_matches(tags, etag))


class RateLimiter:
    """At most ``per_minute`` requests from one client in any 60 seconds (a sliding window).

    A burst of ``per_minute`` at once is answered; the next is refused until the
    oldest request of the window is a minute old, which is what Retry-After says.
    """

    WINDOW = 60.0
    CLIENTS = 10_000  # past this many addresses remembered, those idle for a window are forgotten

    def __init__(self, per_minute: int = RATE_PER_MINUTE, clock: Callable[[], float] = time.monotonic):
        self.limit = per_minute
        self.clock = clock
        self.seen: dict[str, deque[float]] = {}
        self.swept = -self.WINDOW  # when idle addresses were last forgotten
        self.lock = threading.Lock()

    def take(self, client: str) -> float:
        """0 when the request may go; else the seconds until it could."""
        with self.lock:
            now = self.clock()
            if len(self.seen) > self.CLIENTS and now - self.swept >= 1.0:  # a sweep at most each second
                self.swept = now
                self._forget_idle(now)
            times = self.seen.setdefault(client, deque())
            while times and now - times[0] >= self.WINDOW:
                times.popleft()
            if len(times) < self.limit:
                times.append(now)
                return 0.0
            return self.WINDOW - (now - times[0])

    def _forget_idle(self, now: float) -> None:
        for client in [c for c, t in self.seen.items() if not t or now - t[-1] >= self.WINDOW]:
            del self.seen[client]


class DeadlineReader(io.RawIOBase):
    """The reading side of a connection, where every read gives up at the request's deadline.

    A socket timeout alone bounds each read, so a client sending a byte now and then
    would hold its connection forever; here a read waits only for the time left.
    """

    def __init__(self, sock: socket.socket, header_timeout: float = HEADER_TIMEOUT) -> None:
        self.sock = sock
        self.header_timeout = header_timeout
        self.deadline = math.inf
        self.waiting = False  # for the first byte of a request

    def readable(self) -> bool:
        return True

    def expect_request(self, wait: float) -> None:
        """A request may begin within ``wait`` seconds; its headers then have ``header_timeout``."""
        self.deadline = time.monotonic() + wait
        self.waiting = True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the request did not arrive in time")
        self.sock.settimeout(left)
        count = self.sock.recv_into(buffer)
        if self.waiting and count:
            self.waiting = False
            self.deadline = time.monotonic() + self.header_timeout
        return count


class HeadReader(io.BufferedReader):
    """The reading side of a connection, keeping the length of each line of a request's head (its
    line and its headers, which the standard library reads line by line), so that the head is
    held to the limits nginx holds it to."""

    def __init__(self, raw: io.RawIOBase) -> None:
        super().__init__(raw)
        self.lines: list[int] = []

    def readline(self, size: int | None = -1, /) -> bytes:
        line = super().readline(size)
        self.lines.append(len(line))
        return line


@dataclass(frozen=True)
class Representation:
    """A file as one request gets it."""

    body: bytes
    gzipped: bool  # the bytes of its .gz copy
    varies: bool  # it has a .gz copy: what a client gets depends on its Accept-Encoding
    mtime: int  # of the file sent: Last-Modified


def safe_log_text(text: str) -> str:
    """Untrusted text (paths, headers) made safe for a log line."""
    return text.encode("unicode_escape", "backslashreplace").decode("ascii")[:500]


class Handler(BaseHTTPRequestHandler):
    server: PreviewServer
    server_version = "statusgen"
    sys_version = ""
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out at once, no 40 ms delayed-ACK stall
    unread_body = False  # whether the request being answered came with a body, left unread
    raw_requestline = b""  # the request line as it came (the standard library's)

    # -- the connection --------------------------------------------------------

    def setup(self) -> None:
        super().setup()
        self.rfile.close()
        self.reader = DeadlineReader(self.connection)
        self.head = HeadReader(self.reader)
        self.rfile = self.head
        self.next_wait: float = HEADER_TIMEOUT  # a new connection is for a request, as nginx has it

    def handle_one_request(self) -> None:
        self.unread_body = False
        self.head.lines.clear()
        self.headers = HTTPMessage()  # none read yet: a request refused before its headers has none
        self.server.admission.waits(self.connection)
        self.reader.expect_request(self.next_wait)
        self.next_wait = IDLE_TIMEOUT
        super().handle_one_request()

    def parse_request(self) -> bool:
        """The standard parse, held to nginx's limits and refusals: a request line past
        ``LINE_MAX_BYTES`` is 414, a head past its limits 431, a target nginx cannot read
        (``routes.is_refused``) 404, each answered as nginx answers it (``_refuse``). Then the
        answer gets its own deadline, and a request with a body is the connection's last (its body
        is never read, so it cannot be told from a next request)."""
        self.root = Path(os.path.realpath(self.server.site))  # this request's generation
        if len(self.raw_requestline) > LINE_MAX_BYTES:
            self.requestline, self.command = "", ""  # as the standard library leaves a line too long
            self.send_error(414)
            return False
        if not super().parse_request():
            return False
        self.server.admission.answers(self.connection)
        self.connection.settimeout(SEND_TIMEOUT)
        if routes.is_refused(self.path):
            self._refuse(404)
            return False
        if not head_fits(self.head.lines):
            self.send_error(431)
            return False
        self.unread_body = self._has_body()
        if self.unread_body:
            self.close_connection = True
        return True

    def _has_body(self) -> bool:
        length = (self.headers.get("Content-Length") or "0").strip()
        return bool(self.headers.get("Transfer-Encoding")) or length != "0"

    def end_headers(self) -> None:
        if self.unread_body:
            self.send_header("Connection", "close")
        super().end_headers()

    def finish(self) -> None:
        super().finish()
        if self.unread_body:
            self._discard_the_rest()

    def _discard_the_rest(self) -> None:
        """Read what the client still sends, for a moment, before the connection is closed:
        closing with bytes unread resets it, and the client may then lose its answer."""
        try:
            self.connection.shutdown(socket.SHUT_WR)
            deadline = time.monotonic() + LINGER
            while (left := deadline - time.monotonic()) > 0:
                self.connection.settimeout(left)
                if not self.connection.recv(65536):
                    return
        except OSError:
            return

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """A request the standard library cannot read (400, 414, 431, 505), or past nginx's
        limits: refused as nginx refuses it (``_refuse``), a request line it cannot read as a path
        that names nothing (404). Headers too large come after the path was read: the page for
        people is then in its language, as nginx's is."""
        self.request_version = self.protocol_version  # a line it could not read is not HTTP/0.9's: headers go
        self.root = Path(os.path.realpath(self.server.site))
        asked = unquote(urlsplit(self.path).path) if code == 431 else ""
        self._refuse(REFUSED.get(code, 404), asked)

    def _refuse(self, status: int, asked: str = "") -> None:
        """A request refused before its path is read, so in no location: answered by how its
        request line begins (``routes.is_interface_request``), as nginx's map of ``$request``
        answers it: the interface's JSON body of ``status``, or the page for people (in the
        language of ``asked``, the path, where it was read). Counted by the rate limit as either;
        the rest of the request is left unread and the connection closed, as nginx closes it."""
        self.unread_body = True
        self.close_connection = True
        interface = routes.is_interface_request(str(self.raw_requestline, "iso-8859-1"))
        if self._limited(interface, asked):
            return
        languages = self.server.languages()
        page = routes.error_page_in(routes.error_page_file("404"), asked, languages)
        self._send_file(status, routes.error_file(str(status)) if interface else page, self.command == "HEAD")

    # -- dispatch --------------------------------------------------------------

    def do_GET(self) -> None:
        self._answer(head=False)

    def do_HEAD(self) -> None:
        self._answer(head=True)

    def _not_allowed(self) -> None:
        """Refused before its path is read, with the interface's JSON body: counted as the
        interface's, as nginx counts it."""
        if self._limited(interface=True, asked=""):
            return
        self._send_file(405, routes.error_file("405"), head=False, extra={"Allow": routes.ALLOW})

    def do_OPTIONS(self) -> None:
        """A CORS preflight (Origin, and Access-Control-Request-Method GET or HEAD) is answered 204
        with what a script on another origin may send, so it can revalidate with If-None-Match;
        any other OPTIONS is 405, as other methods are. A preflight is not counted by the rate
        limit (nginx answers it before counting)."""
        method = (self.headers.get("Access-Control-Request-Method") or "").strip()
        if not self.headers.get("Origin") or method not in ("GET", "HEAD"):
            self._not_allowed()
            return
        self.send_response(204)
        preflight = security_headers("preflight", self.server.languages())
        for name, value in {**COMMON_HEADERS, **PREFLIGHT_HEADERS, **preflight}.items():
            self.send_header(name, value)
        self.end_headers()

    do_POST = do_PUT = do_DELETE = do_PATCH = do_TRACE = do_CONNECT = _not_allowed

    def __getattr__(self, name: str) -> Callable[[], None]:
        """Any other method (PROPFIND, made-up ones) is 405 too, not the stdlib's 501."""
        if name.startswith("do_"):
            return self._not_allowed
        raise AttributeError(name)

    def _answer(self, head: bool) -> None:
        url = urlsplit(self.path)
        path = unquote(url.path)
        if self._limited(routes.is_interface(path), path):
            return
        found = routes.resolve(path, arguments(url.query), self._exists)
        if found.status == 301:
            self._redirect("/" + found.file, head)
        else:
            self._send_file(found.status, routes.error_page_in(found.file, path, self.server.languages()), head)

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
        try:
            return full is not None and full.is_file()
        except OSError:  # a name longer than the file system takes, say: no such file, as nginx has it
            return False

    def _limited(self, interface: bool, asked: str) -> bool:
        """Whether the client is over its limit (the interface's or the pages'); if so, refused
        (a page in the language of ``asked``, the path asked for)."""
        address = self.client_address[0]
        limiter = self.server.interface_limiter(address) if interface else self.server.pages_limiter
        wait = limiter.take(address)
        if wait <= 0:
            return False
        body = (
            routes.error_file("429")
            if interface
            else routes.error_page_in(routes.error_page_file("429"), asked, self.server.languages())
        )
        retry = str(max(1, math.ceil(wait)))
        self._send_file(429, body, head=self.command == "HEAD", extra={"Retry-After": retry}, cache="no-store")
        return True

    def _common_headers(self, cache: str, rel: str) -> None:
        self.send_header("Cache-Control", cache)
        languages = self.server.languages()
        self.send_header("Content-Language", routes.language_of(rel, languages))
        for name, value in {**COMMON_HEADERS, **security_headers(rel, languages)}.items():
            self.send_header(name, value)

    def _read(self, rel: str) -> Representation | None:
        """The file ``rel`` as this request gets it: its .gz copy to a client that accepts gzip."""
        full = self._inside(rel)
        if full is None:
            return None
        gz = full.with_name(full.name + ".gz")
        try:
            varies = gz.is_file()
            gzipped = varies and accepts_gzip(self.headers.get("Accept-Encoding"))
            with (gz if gzipped else full).open("rb") as file:
                return Representation(file.read(), gzipped, varies, int(os.fstat(file.fileno()).st_mtime))
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
            status, rel = 404, "404.json"
            got = Representation(
                b'{"error":{"status":404,"code":"not_found","message":"No resource at this path."}}\n', False, False, 0
            )
        etag = etag_of(got.body)
        unchanged = status == 200 and not_modified(self.headers, etag, got.mtime)
        self.send_response(304 if unchanged else status)
        if not unchanged:
            self.send_header("Content-Type", content_type(rel))
            self.send_header("Content-Length", str(len(got.body)))
        if status == 200:  # nginx dates a file's 200 and 304 only, never an error
            self.send_header("Last-Modified", http_date(got.mtime))
        self.send_header("ETag", etag)
        if got.varies:  # a cache keeps the answers to gzip and to other clients apart (a 304 too)
            self.send_header("Vary", "Accept-Encoding")
        if got.gzipped and not unchanged:
            self.send_header("Content-Encoding", "gzip")
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self._common_headers(cache, rel)
        self.end_headers()
        if not head and not unchanged:
            self.wfile.write(got.body)

    def _redirect(self, location: str, head: bool) -> None:
        self.send_response(301)
        self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self._common_headers(CACHE_CONTROL, location)
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        if self.server.quiet:
            return
        line = format % args
        sys.stderr.write(f"{self.address_string()} {safe_log_text(line)}\n")


class Admission:
    """Who may hold a connection: at most ``total`` at once, and ``per_address`` from one address.

    When all are held, the connection that has waited longest for a request (still sending its
    request line and headers, or idle between requests) is closed to make room: slow clients from
    many addresses, each under its share, would otherwise hold every slot until their deadlines,
    and a client that sends its request at once is never the longest waiting."""

    def __init__(self, total: int, per_address: int) -> None:
        self.total = total
        self.per_address = per_address
        self.held: Counter[str] = Counter()
        self.count = 0
        self.room = threading.Condition()
        self.waiting: dict[socket.socket, float] = {}  # connections waiting for a request, since when
        self.closing: set[socket.socket] = set()  # closed to make room, their threads still ending

    def full(self) -> bool:
        with self.room:
            return self.count >= self.total

    def wait_for_room(self, timeout: float) -> bool:
        with self.room:
            return self.room.wait_for(lambda: self.count < self.total, timeout)

    def waits(self, connection: socket.socket) -> None:
        """``connection`` waits for a request (may be closed to make room) from now."""
        with self.room:
            self.waiting[connection] = time.monotonic()

    def answers(self, connection: socket.socket) -> None:
        """``connection`` has sent a whole request: it is answered, not closed."""
        with self.room:
            self.waiting.pop(connection, None)

    def make_room(self) -> None:
        """When every slot is held, close the connection that has waited longest for a request. Its
        slot is free at once: its thread, whose read has ended, need not be waited for."""
        with self.room:
            if self.count < self.total or not self.waiting:
                return
            longest = min(self.waiting, key=self.waiting.__getitem__)
            del self.waiting[longest]
            self.closing.add(longest)
            self.count -= 1
        with suppress(OSError):
            longest.shutdown(socket.SHUT_RDWR)

    def admit(self, address: str) -> bool:
        with self.room:
            if self.held[address] >= self.per_address:
                return False
            self.held[address] += 1
            self.count += 1
            return True

    def leave(self, address: str, connection: socket.socket) -> None:
        with self.room:
            self.waiting.pop(connection, None)
            self.held[address] -= 1
            if not self.held[address]:
                del self.held[address]
            if connection in self.closing:
                self.closing.discard(connection)  # its slot was given back when it was closed
            else:
                self.count -= 1
            self.room.notify()


@dataclass(frozen=True)
class TreeInputs:
    """What a tree tells the server that serves it."""

    languages: tuple[str, ...]
    grants: tuple[Grant, ...]


def read_tree_inputs(generation: Path) -> TreeInputs:
    """A generation's languages (health.json's) and the limits it grants (``GRANTS_FILE``). A
    tree without its health document answers in English, and one whose grants cannot be read
    grants none: its error files answer anyway."""
    try:
        languages = tree_languages(generation)
    except TreeLanguagesError:
        languages = ("en",)
    try:
        grants = grants_from((generation / GRANTS_FILE).read_bytes())
    except (OSError, ValueError):
        grants = ()
    return TreeInputs(languages, grants)


class PreviewServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False  # stopping need not wait for a slow client to go
    allow_reuse_address = True
    request_queue_size = socket.SOMAXCONN  # a crowd arriving at once waits to be accepted, not refused
    ROOM_WAIT = 0.5  # seconds a whole request waits for a slot when every one is busy answering

    def verify_request(self, request: Any, client_address: Any) -> bool:
        """Whether a new connection gets a thread. Past its address's share it is closed at once.
        When every slot is held, a new one takes the slot of the connection that has waited longest
        for a request (``Admission.make_room``), unless it has sent part of a request and stopped
        short of its end: that one is closed at once, before it costs a thread. Under a flood of
        slow connections the backlog is then read through at the speed of accepting, and a client
        that sends its request is answered, not queued behind thousands that never will."""
        if self.admission.full():
            if only_part_sent(request):
                return False
            self.admission.make_room()
            if not self.admission.wait_for_room(self.ROOM_WAIT):
                return False
        return self.admission.admit(client_address[0])

    def process_request(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request(request, client_address)
        except BaseException:
            self.admission.leave(client_address[0], request)
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.admission.leave(client_address[0], request)

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
        max_connections: int = MAX_CONNECTIONS,
        connections_per_address: int = CONNECTIONS_PER_ADDRESS,
    ):
        self.site = site
        self.quiet = quiet
        self.limiter = RateLimiter(per_minute)
        self.pages_limiter = RateLimiter(pages_per_minute)
        self.granted_limiters: dict[int, RateLimiter] = {}  # by the rate granted: one window each
        self.admission = Admission(max_connections, connections_per_address)
        self._inputs: tuple[str, TreeInputs] = ("", TreeInputs(("en",), ()))
        self._inputs_lock = threading.Lock()
        super().__init__((host, port), Handler)

    def tree_inputs(self) -> TreeInputs:
        """What the served tree tells its servers (its languages, the limits granted), read again
        when a new generation is swapped in."""
        generation = os.path.realpath(self.site)
        if generation != self._inputs[0]:
            self._inputs = (generation, read_tree_inputs(Path(generation)))
        return self._inputs[1]

    def languages(self) -> tuple[str, ...]:
        """The tree's languages (health.json's)."""
        return self.tree_inputs().languages

    def interface_limiter(self, address: str) -> RateLimiter:
        """The interface's limit for a client address: its grant's, if the tree grants it one."""
        grant = granted(self.tree_inputs().grants, address)
        if grant is None:
            return self.limiter
        with self._inputs_lock:
            return self.granted_limiters.setdefault(grant.per_minute, RateLimiter(grant.per_minute))


def serve(site: Path, host: str, port: int, quiet: bool = False) -> None:
    server = PreviewServer(site, host, port, quiet)
    try:
        server.serve_forever()
    finally:
        server.server_close()
