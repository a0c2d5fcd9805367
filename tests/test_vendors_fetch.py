"""fetch_source against a real loopback HTTP server, and read_local against real files."""

from __future__ import annotations

import asyncio
import socket
import ssl
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import httpx
import pytest

from statusgen.errors import StatusgenError, VendorParseError
from statusgen.model import Outcome
from statusgen.vendors import FetchResult, fetch_source, parse_vendor, read_local
from tests.conftest import loopback_server

SAMPLES = Path(__file__).resolve().parent / "fixtures" / "vendors"
SUMMARY = (SAMPLES / "statuspage" / "sendgrid_summary_active_incident_groups.json").read_bytes()
ETAG = '"sendgrid-v1"'
LAST_MODIFIED = "Wed, 11 Oct 2023 15:30:45 GMT"
HTML = b"<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body>oops</body></html>"


@dataclass
class Seen:
    """The request headers the server received, per path."""

    headers: dict[str, list[dict[str, str]]] = field(default_factory=dict)


class Handler(BaseHTTPRequestHandler):
    seen: Seen

    def log_message(self, *_: object) -> None:
        pass

    def _send(self, code: int, body: bytes = b"", headers: dict[str, str] | None = None) -> None:
        self.send_response(code)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            self.wfile.write(body)
        except OSError:
            self.close_connection = True  # the client gave up (timeout or size cap), as tested

    def do_GET(self) -> None:
        self.seen.headers.setdefault(self.path, []).append(dict(self.headers.items()))
        route = getattr(self, "route_" + self.path.strip("/").replace("-", "_"), None)
        if route is None:
            self._send(404, b"not found")
        else:
            route()

    def route_summary(self) -> None:
        validators = {"ETag": ETAG, "Last-Modified": LAST_MODIFIED}
        if self.headers.get("If-None-Match") == ETAG:
            self.send_response(304)
            self.send_header("ETag", ETAG)
            self.end_headers()
        else:
            self._send(200, SUMMARY, {"Content-Type": "application/json", **validators})

    def route_slow(self) -> None:
        time.sleep(1.5)
        self._send(200, SUMMARY)

    def route_huge(self) -> None:
        self.send_response(200)
        self.end_headers()  # no Content-Length: the body runs until the connection closes
        self.close_connection = True
        try:
            for _ in range(64):
                self.wfile.write(b"x" * 65536)
        except OSError:
            pass  # the client stopped reading, as it should

    def route_declared_huge(self) -> None:
        self._send(200, b"x" * 200_000)

    def route_html(self) -> None:
        self._send(200, HTML, {"Content-Type": "text/html"})

    def route_loop(self) -> None:
        self._send(302, b"", {"Location": "/loop"})

    def route_moved(self) -> None:
        self._send(301, b"", {"Location": "/summary"})

    def route_broken(self) -> None:
        self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\nshort")
        self.close_connection = True


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, Seen]]:
    seen = Seen()
    handler = type("BoundHandler", (Handler,), {"seen": seen})
    with loopback_server(handler) as base:
        yield base, seen


def fetch(url: str, *, etag: str | None = None, last_modified: str | None = None,
          timeout: float = 5.0, max_bytes: int = 1_000_000,
          transport: httpx.AsyncBaseTransport | None = None) -> FetchResult:  # fmt: skip
    async def go() -> FetchResult:
        async with httpx.AsyncClient(max_redirects=3, transport=transport) as client:
            return await fetch_source(
                client,
                url,
                etag=etag,
                last_modified=last_modified,
                timeout=timeout,
                max_bytes=max_bytes,
            )

    return asyncio.run(go())


def test_ok_with_validators(server: tuple[str, Seen]) -> None:
    base, _ = server
    result = fetch(base + "/summary")
    assert (result.outcome, result.status_code, result.not_modified) == (Outcome.OK, 200, False)
    assert result.body == SUMMARY
    assert (result.etag, result.last_modified) == (ETAG, LAST_MODIFIED)
    assert result.elapsed_ms > 0
    assert parse_vendor(result.body).status == "degraded"


def test_conditional_request_gets_304(server: tuple[str, Seen]) -> None:
    base, seen = server
    result = fetch(base + "/summary", etag=ETAG, last_modified=LAST_MODIFIED)
    sent = seen.headers["/summary"][-1]
    assert sent["If-None-Match"] == ETAG
    assert sent["If-Modified-Since"] == LAST_MODIFIED
    assert (result.outcome, result.status_code) == (Outcome.OK, 304)
    assert result.not_modified and result.body is None
    assert (result.etag, result.last_modified) == (ETAG, LAST_MODIFIED)


def test_no_conditional_headers_without_validators(server: tuple[str, Seen]) -> None:
    base, seen = server
    fetch(base + "/summary")
    sent = {k.lower() for k in seen.headers["/summary"][-1]}
    assert "if-none-match" not in sent and "if-modified-since" not in sent


def test_stale_etag_gets_the_body(server: tuple[str, Seen]) -> None:
    base, _ = server
    result = fetch(base + "/summary", etag='"old"')
    assert (result.status_code, result.not_modified, result.body) == (200, False, SUMMARY)


def test_redirect_followed(server: tuple[str, Seen]) -> None:
    base, _ = server
    result = fetch(base + "/moved")
    assert (result.outcome, result.body) == (Outcome.OK, SUMMARY)


def test_slow_answer_times_out(server: tuple[str, Seen]) -> None:
    base, _ = server
    started = time.perf_counter()
    result = fetch(base + "/slow", timeout=0.3)
    assert result.outcome == Outcome.TIMEOUT and result.body is None
    assert time.perf_counter() - started < 1.2


def test_streamed_body_over_cap_is_too_large(server: tuple[str, Seen]) -> None:
    base, _ = server
    result = fetch(base + "/huge", max_bytes=100_000)
    assert (result.outcome, result.status_code, result.body) == (Outcome.TOO_LARGE, 200, None)


def test_declared_length_over_cap_is_too_large(server: tuple[str, Seen]) -> None:
    base, _ = server
    assert fetch(base + "/declared-huge", max_bytes=100_000).outcome == Outcome.TOO_LARGE
    assert fetch(base + "/declared-huge", max_bytes=200_000).outcome == Outcome.OK


def test_http_error_status(server: tuple[str, Seen]) -> None:
    base, _ = server
    result = fetch(base + "/missing")
    assert (result.outcome, result.status_code, result.body) == (Outcome.HTTP_STATUS, 404, None)


def test_redirect_loop(server: tuple[str, Seen]) -> None:
    base, _ = server
    assert fetch(base + "/loop").outcome == Outcome.REDIRECTS


def test_truncated_answer_is_protocol(server: tuple[str, Seen]) -> None:
    base, _ = server
    assert fetch(base + "/broken").outcome == Outcome.PROTOCOL


def test_tls_to_a_plain_http_server(server: tuple[str, Seen]) -> None:
    base, _ = server
    assert fetch(base.replace("http://", "https://") + "/summary").outcome == Outcome.TLS


def test_closed_port_is_connect() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    result = fetch(f"http://127.0.0.1:{port}/")
    assert (result.outcome, result.status_code, result.body) == (Outcome.CONNECT, None, None)


def test_dns_failure_is_dns() -> None:
    """A resolver failure, as httpx reports it (the sandbox may have no resolver to ask)."""

    def refuse(request: httpx.Request) -> httpx.Response:
        try:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        except socket.gaierror as exc:
            raise httpx.ConnectError(str(exc), request=request) from exc

    assert fetch("http://status.example.invalid/", transport=httpx.MockTransport(refuse)).outcome == Outcome.DNS


def test_certificate_failure_is_tls() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        try:
            raise ssl.SSLCertVerificationError("certificate verify failed: self-signed certificate")
        except ssl.SSLError as exc:
            raise httpx.ConnectError(str(exc), request=request) from exc

    assert fetch("https://status.example.com/", transport=httpx.MockTransport(refuse)).outcome == Outcome.TLS


def test_unsupported_scheme_is_error() -> None:
    assert fetch("ftp://status.example.com/summary.json").outcome == Outcome.ERROR


def test_html_answer_is_a_parse_error(server: tuple[str, Seen]) -> None:
    base, _ = server
    result = fetch(base + "/html")
    assert result.outcome == Outcome.OK and result.body == HTML
    with pytest.raises(VendorParseError, match="HTML"):
        parse_vendor(result.body)
    with pytest.raises(VendorParseError, match="statuspage payload: looks like HTML"):
        parse_vendor(result.body, "statuspage")


# -- local files ------------------------------------------------------------


def test_read_local_path_and_file_url(tmp_path: Path) -> None:
    target = tmp_path / "with space.json"
    target.write_bytes(SUMMARY)
    assert read_local(target) == SUMMARY
    assert read_local(str(target)) == SUMMARY
    assert read_local(target.as_uri()) == SUMMARY


def test_read_local_problems(tmp_path: Path) -> None:
    with pytest.raises(StatusgenError, match="cannot read vendor file"):
        read_local(tmp_path / "missing.json")
    with pytest.raises(StatusgenError, match="only local file"):
        read_local("file://elsewhere.example.com/summary.json")
    (tmp_path / "big.json").write_bytes(b"x" * 11)
    with pytest.raises(StatusgenError, match="larger than 10 bytes"):
        read_local(tmp_path / "big.json", max_bytes=10)
