"""Real servers on loopback for every kind of check: HTTP with JSON bodies and headers, TLS with
certificates made here (good, expiring in 3 days, expired, for another name), a TCP banner
server, and a DNS server that answers, says there is no such name, or never answers."""

from __future__ import annotations

import json
import socket
import socketserver
import ssl
import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import trustme
from dnslib import AAAA, CNAME, MX, QTYPE, RCODE, RR, TXT, A
from dnslib.server import BaseResolver, DNSServer

HEALTH = {"status": "UP", "version": "2.1.0", "checks": [{"name": "db", "healthy": True}], "queue": {"depth": 5}}
PAGES: dict[str, tuple[int, dict[str, str], bytes]] = {
    "/health": (200, {"Content-Type": "application/json", "X-Version": "2.1.0"}, json.dumps(HEALTH).encode()),
    "/degraded": (200, {"Content-Type": "application/json"}, json.dumps({"status": "degraded"}).encode()),
    "/text": (200, {"Content-Type": "text/plain"}, b"all systems go, build 1234"),
    "/moved": (302, {"Location": "/health"}, b""),
    # 29 a's and a final b: what drives the pattern (a+)+$ into catastrophic backtracking
    "/backtrack": (200, {"Content-Type": "text/plain"}, b"a" * 29 + b"b"),
}


class JsonHandler(BaseHTTPRequestHandler):
    """GET: the pages above; POST: the request body echoed back, as JSON."""

    protocol_version = "HTTP/1.1"

    def _answer(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self._answer(*PAGES.get(self.path, (404, {}, b"no such page")))

    def do_POST(self) -> None:
        sent = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        echo = {"received": sent.decode(), "token": self.headers.get("Authorization", "")}
        self._answer(200, {"Content-Type": "application/json"}, json.dumps(echo).encode())

    def log_message(self, *args: object) -> None:
        pass


class Quiet(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        """A client that refused our certificate, as some tests expect: no traceback."""


@contextmanager
def serving(server: socketserver.BaseServer) -> Iterator[None]:
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield
    finally:
        server.shutdown()
        server.server_close()


@dataclass(frozen=True)
class TlsSites:
    """HTTPS servers on loopback, each with one kind of certificate, and the CA file that trusts them."""

    ca_file: Path
    good: int  # ports
    soon: int
    expired: int
    wrong_name: int
    issued: dict[str, datetime]  # each certificate's not_after

    def url(self, which: str, path: str = "/health") -> str:
        return f"https://localhost:{getattr(self, which)}{path}"


def _tls_server(ca: trustme.CA, names: tuple[str, ...], not_before: datetime, not_after: datetime) -> Quiet:
    cert = ca.issue_cert(*names, not_before=not_before, not_after=not_after)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    cert.configure_cert(context)
    server = Quiet(("127.0.0.1", 0), JsonHandler)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    return server


@contextmanager
def tls_sites(folder: Path, now: datetime | None = None) -> Iterator[TlsSites]:
    """Four HTTPS servers: a certificate good for 90 days, one expiring in 3 days (and an hour, so
    that whole days read 3), one expired yesterday, and one for another name."""
    now = now or datetime.now(UTC)
    ca = trustme.CA(organization_name="Statusgen Test CA")
    issued = {
        "good": now + timedelta(days=90),
        "soon": now + timedelta(days=3, hours=1),
        "expired": now - timedelta(days=1),
        "wrong_name": now + timedelta(days=90),
    }
    names = {"wrong_name": ("other.example",)}
    servers = {
        which: _tls_server(ca, names.get(which, ("localhost",)), now - timedelta(days=30), not_after)
        for which, not_after in issued.items()
    }
    ca_file = folder / "test-ca.pem"
    ca.cert_pem.write_to_path(str(ca_file))
    with ExitStack() as stack:
        for server in servers.values():
            stack.enter_context(serving(server))
        ports = {which: server.server_address[1] for which, server in servers.items()}
        yield TlsSites(ca_file, issued=issued, **ports)


@contextmanager
def http_site() -> Iterator[str]:
    """A plain HTTP server of JSON pages; yields its base URL."""
    server = Quiet(("127.0.0.1", 0), JsonHandler)
    with serving(server):
        yield f"http://127.0.0.1:{server.server_address[1]}"


BANNER = b"HELLO statusgen-test ready\r\n"


class Banner(socketserver.StreamRequestHandler):
    """Sends a banner; answers PING with +PONG, anything else with -ERR."""

    def handle(self) -> None:
        self.wfile.write(BANNER)
        line = self.rfile.readline(1024)
        if line:
            self.wfile.write(b"+PONG\r\n" if line.strip() == b"PING" else b"-ERR unknown\r\n")


class BannerServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


@contextmanager
def banner_server() -> Iterator[int]:
    server = BannerServer(("127.0.0.1", 0), Banner)
    with serving(server):
        yield server.server_address[1]


def closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = int(s.getsockname()[1])
    s.close()
    return port


ZONE = {
    "svc.test.": [
        ("A", A("192.0.2.10")),
        ("AAAA", AAAA("2001:db8::10")),
        ("TXT", TXT("v=ok Hello")),
        ("MX", MX("Mail.Svc.Test.", 10)),
    ],
    "alias.test.": [("CNAME", CNAME("svc.test."))],
}


class Zone(BaseResolver):  # type: ignore[misc]
    """Answers from ZONE; NXDOMAIN for a name it does not hold; no records for a type it lacks."""

    def resolve(self, request, handler):  # type: ignore[no-untyped-def]
        reply = request.reply()
        name, qtype = str(request.q.qname), QTYPE[request.q.qtype]
        if name not in ZONE:
            reply.header.rcode = RCODE.NXDOMAIN
            return reply
        for rtype, rdata in ZONE[name]:
            if rtype == qtype:
                reply.add_answer(RR(name, getattr(QTYPE, rtype), rdata=rdata, ttl=60))
        return reply


@dataclass(frozen=True)
class DnsServers:
    answering: str  # "127.0.0.1:port", as a check's resolver
    silent: str  # a server that never answers


@contextmanager
def dns_servers() -> Iterator[DnsServers]:
    server = DNSServer(Zone(), address="127.0.0.1", port=0)
    server.start_thread()
    silent = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    silent.bind(("127.0.0.1", 0))  # bound, never read: every question times out
    try:
        port = server.server.server_address[1]
        yield DnsServers(f"127.0.0.1:{port}", f"127.0.0.1:{silent.getsockname()[1]}")
    finally:
        server.stop()
        server.server.server_close()
        silent.close()
