"""Probing real loopback servers: every outcome of our vocabulary that a server can produce."""

from __future__ import annotations

import asyncio
import socket
from http.server import BaseHTTPRequestHandler

import httpx
import pytest

from statusgen.config import CheckConfig, Config, ServiceConfig, SiteConfig
from statusgen.model import Outcome
from statusgen.neterrors import outcome_of
from statusgen.probe import probe_all
from tests.conftest import loopback_server


class Odd(BaseHTTPRequestHandler):
    """Answers that break in the ways real servers do."""

    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        if self.path == "/loop":
            self.send_response(302)
            self.send_header("Location", "/loop")
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif self.path == "/cut":
            self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial")
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
        elif self.path == "/big":
            body = b"x" * 200_000
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def odd():
    with loopback_server(Odd) as base:
        yield base


def config_for(*checks: CheckConfig) -> Config:
    services = tuple(ServiceConfig(f"s{i}", f"S{i}", "c", (c,)) for i, c in enumerate(checks))
    return Config(path=None, site=SiteConfig(concurrency=10), categories={"c": "C"}, services=services)  # type: ignore[arg-type]


def outcomes(*checks: CheckConfig):
    return asyncio.run(probe_all(config_for(*checks)))


def closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_outcomes_from_real_servers(targets, odd):
    targets.set("/ok", body=b"status: all good")
    targets.set("/err", 503)
    targets.set("/slow", delay=1.5)
    targets.set("/sluggish", delay=0.3)
    results = outcomes(
        CheckConfig(targets.url("/ok"), keyword="all good"),
        CheckConfig(targets.url("/ok"), keyword="missing words"),
        CheckConfig(targets.url("/err")),
        CheckConfig(targets.url("/err"), expect_status=(503,)),
        CheckConfig(targets.url("/slow"), timeout=0.5),
        CheckConfig(targets.url("/sluggish"), degraded_ms=100),
        CheckConfig(f"http://127.0.0.1:{closed_port()}/"),
        CheckConfig(odd + "/loop"),
        CheckConfig(odd + "/cut"),
        CheckConfig(odd + "/big", max_bytes=65536),
    )
    got = [(r.outcome, r.http_status) for r in results]
    assert got == [
        (Outcome.OK, 200),
        (Outcome.KEYWORD, 200),
        (Outcome.HTTP_STATUS, 503),
        (Outcome.OK, 503),
        (Outcome.TIMEOUT, None),
        (Outcome.OK, 200),
        (Outcome.CONNECT, None),
        (Outcome.REDIRECTS, None),
        (Outcome.PROTOCOL, None),
        (Outcome.TOO_LARGE, 200),
    ]
    timed_out, sluggish = results[4], results[5]
    assert timed_out.latency_ms is None
    assert sluggish.slow and 300 <= sluggish.latency_ms < 1000
    assert not results[0].slow and results[0].latency_ms < 300


def test_checks_run_concurrently(targets):
    targets.set("/wait", delay=0.5)
    import time

    start = time.perf_counter()
    results = outcomes(*[CheckConfig(targets.url("/wait")) for _ in range(10)])
    elapsed = time.perf_counter() - start
    assert all(r.outcome is Outcome.OK for r in results)
    assert elapsed < 2.5  # one after another would take 5 s


@pytest.mark.parametrize(
    "exc, outcome",
    [
        (httpx.ConnectError("[Errno -2] Name or service not known"), Outcome.DNS),
        (httpx.ConnectError("[Errno -3] Temporary failure in name resolution"), Outcome.DNS),
        (httpx.ConnectError("[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed"), Outcome.TLS),
        (httpx.ConnectError("[Errno 111] Connection refused"), Outcome.CONNECT),
        (httpx.ReadTimeout("timed out"), Outcome.TIMEOUT),
        (ValueError("odd"), Outcome.ERROR),
    ],
)
def test_exception_mapping(exc, outcome):
    assert outcome_of(exc) is outcome
