"""Checks and vendor fetches against a hostile internet (issue 28), on real loopback servers:
secrets sent but never kept, answers that inflate without end, redirects that lead inside.

In the redirect tests, ``INTERNAL`` lets loopback stand for both sides: 127.0.0.1 counts as the
public internet and 127.0.0.2 as an address inside (``neterrors.is_public``'s ``internal``).
"""

from __future__ import annotations

import asyncio
import gzip
import ipaddress
import json
import socket
import ssl
import struct
import subprocess
import sys
import threading
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest
import trustme

from statusgen.config import CheckConfig, Config, ServiceConfig, SiteConfig, VendorConfig
from statusgen.config.secrets import MissingSecret
from statusgen.model import DESCRIPTIONS, CheckResult, Outcome
from statusgen.neterrors import Network, PrivateRedirect, RedirectGuard, is_public, opened
from statusgen.probe import probe_all
from statusgen.timeutil import utcnow
from statusgen.vendors import fetch_source
from statusgen.vendors.model import VendorRow
from statusgen.vendors.stage import fetch_vendors

ROOT = Path(__file__).resolve().parent.parent
SUMMARY = (ROOT / "tests/fixtures/vendors/statuspage/sendgrid_summary_active_incident_groups.json").read_bytes()
INTERNAL: tuple[Network, ...] = (ipaddress.ip_network("127.0.0.2/32"),)
BOMB_CHECKS = 100
BOMB_SEGMENT = 16 << 20  # zeros compressed at once
BOMB_SEGMENTS = 128  # the bomb inflates to 2 GiB
PEAK_RSS_LIMIT_KB = 300 * 1024
TEXT = b"".join(b"line %06d of a long and repetitive status page\n" % i for i in range(8000)) + b"all good"


# -- loopback servers -------------------------------------------------------------


class Recorder(ThreadingHTTPServer):
    """A loopback server that answers each path as told, records every request's path and
    headers, and takes a hundred connections at once (the default backlog is five)."""

    daemon_threads = True
    request_queue_size = 256

    def __init__(self, host: str, port: int = 0) -> None:
        super().__init__((host, port), Answer)
        self.host = host
        self.routes: dict[str, tuple[int, dict[str, str], bytes]] = {}
        self.seen: list[tuple[str, dict[str, str]]] = []

    def handle_error(self, request: object, client_address: object) -> None:
        """A client that stops reading (a capped answer, a refused redirect) is expected: no traceback."""

    def url(self, path: str) -> str:
        return f"http://{self.host}:{self.server_address[1]}{path}"

    def route(self, path: str, status: int = 200, body: bytes = b"all good", **headers: str) -> None:
        self.routes[path] = (status, {k.replace("_", "-"): v for k, v in headers.items()}, body)

    def redirect(self, path: str, to: str) -> None:
        self.route(path, 302, b"", Location=to)


class Answer(BaseHTTPRequestHandler):
    server: Recorder
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        self.server.seen.append((self.path, dict(self.headers.items())))
        status, headers, body = self.server.routes.get(self.path.split("?", 1)[0], (404, {}, b"no such path"))
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            self.wfile.write(body)
        except OSError:
            self.close_connection = True  # the client stopped reading, as it should

    def log_message(self, *_: object) -> None:
        pass


@contextmanager
def recorder(host: str, port: int = 0, tls: ssl.SSLContext | None = None) -> Iterator[Recorder]:
    server = Recorder(host, port)
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def public() -> Iterator[Recorder]:
    with recorder("127.0.0.1") as server:
        yield server


@pytest.fixture
def inside() -> Iterator[Recorder]:
    with recorder("127.0.0.2") as server:
        server.route("/secret", body=b"all good: the admin page")
        yield server


def config_for(*checks: CheckConfig, allow_private: bool = False) -> Config:
    services = tuple(ServiceConfig(f"s{i}", f"S{i}", "c", (c,)) for i, c in enumerate(checks))
    site = SiteConfig(concurrency=10, allow_private_targets=allow_private)
    return Config(path=None, site=site, categories={"c": "C"}, services=services)  # type: ignore[arg-type]


def vendor_config(vendor: VendorConfig, allow_private: bool = False) -> Config:
    services = (ServiceConfig("v", "V", "c", (), vendor=vendor),)
    site = SiteConfig(allow_private_targets=allow_private)
    return Config(path=None, site=site, categories={"c": "C"}, services=services)  # type: ignore[arg-type]


def probe(
    *checks: CheckConfig, internal: tuple[Network, ...] | None = None, allow_private: bool = False
) -> list[CheckResult]:
    return asyncio.run(probe_all(config_for(*checks, allow_private=allow_private), internal=internal))


def fetch(url: str, guard: RedirectGuard = RedirectGuard(), max_bytes: int = 1_000_000) -> Outcome:  # noqa: B008
    async def go() -> Outcome:
        async with httpx.AsyncClient(max_redirects=5) as client:
            got = await fetch_source(
                client, url, etag=None, last_modified=None, timeout=5.0, max_bytes=max_bytes, guard=guard
            )
            return got.outcome

    return asyncio.run(go())


# -- headers and secrets ----------------------------------------------------------


def test_a_check_sends_its_headers_and_url_with_the_variables_read_when_it_is_made(
    public: Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    public.route("/health")
    monkeypatch.setenv("X", "configured-earlier")
    check = CheckConfig(public.url("/health?key=${Y}"), keyword="all good", headers=(("Authorization", "Bearer ${X}"),))
    monkeypatch.setenv("X", "token-x")  # the value when the request is made is the one sent
    monkeypatch.setenv("Y", "key-y")
    assert [r.outcome for r in probe(check)] == [Outcome.OK]
    path, headers = public.seen[-1]
    assert path == "/health?key=key-y"
    assert headers["Authorization"] == "Bearer token-x"


def test_a_variable_unset_at_request_time_stops_the_run(public: Recorder, monkeypatch: pytest.MonkeyPatch) -> None:
    """The operator's to fix, as one configuration error (exit 2), not a service's failure."""
    public.route("/health")
    monkeypatch.delenv("UNSET_TOKEN", raising=False)
    with pytest.raises(MissingSecret, match="UNSET_TOKEN"):
        probe(CheckConfig(public.url("/health"), headers=(("X-Token", "${UNSET_TOKEN}"),)))
    source = VendorConfig(public.url("/summary.json?key=${UNSET_TOKEN}"))
    with pytest.raises(MissingSecret, match="UNSET_TOKEN"):
        asyncio.run(fetch_vendors(vendor_config(source), {}, utcnow))
    assert public.seen == []


def test_a_vendor_fetch_sends_its_secrets_and_the_store_keeps_none(
    public: Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    public.route("/summary.json", body=SUMMARY, ETag='"v1"')
    monkeypatch.setenv("VENDOR_KEY", "vendor-key-value")
    monkeypatch.setenv("VENDOR_TOKEN", "vendor-token-value")
    source = VendorConfig(
        public.url("/summary.json?key=${VENDOR_KEY}"), headers=(("X-Api-Key", "${VENDOR_TOKEN}"),), timeout=5
    )
    config = vendor_config(source)
    row, obs = asyncio.run(fetch_vendors(config, {}, utcnow))["v"]
    path, headers = public.seen[-1]
    assert (path, headers["X-Api-Key"]) == ("/summary.json?key=vendor-key-value", "vendor-token-value")
    assert obs.outcome is Outcome.OK
    assert row.url == public.url("/summary.json")
    assert "vendor-key-value" not in repr(row) and "vendor-token-value" not in repr(row)
    # the stored row is recognised as the same source's: its validators are sent again
    asyncio.run(fetch_vendors(config, {"v": row}, utcnow))
    assert public.seen[-1][1]["If-None-Match"] == '"v1"'


def test_a_refused_redirect_names_only_the_public_url(public: Recorder, inside: Recorder) -> None:
    public.redirect("/in", inside.url("/secret?token=hidden-value#frag"))

    async def go() -> str:
        async with httpx.AsyncClient() as client:
            request = client.build_request("GET", public.url("/in"))
            try:
                async with opened(client, request, RedirectGuard(internal=INTERNAL)):
                    return "followed"
            except PrivateRedirect as exc:
                return str(exc)

    assert asyncio.run(go()) == inside.url("/secret")


# -- bodies within their cap --------------------------------------------------------


def zlib_raw(data: bytes) -> bytes:
    deflate = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    return deflate.compress(data) + deflate.flush()


@pytest.mark.parametrize(
    "encoding, body",
    [
        ("gzip", gzip.compress(TEXT)),
        ("x-gzip", gzip.compress(TEXT)),
        ("deflate", zlib.compress(TEXT)),
        ("deflate", zlib_raw(TEXT)),  # deflate as many servers send it: without the zlib header
        ("deflate, gzip", gzip.compress(zlib.compress(TEXT))),
        ("identity", TEXT),
        ("", TEXT),
    ],
)
def test_encoded_bodies_are_decoded_in_full_within_the_cap(public: Recorder, encoding: str, body: bytes) -> None:
    """The keyword is at the end of a body many decoding steps long."""
    public.route("/page", body=body, Content_Encoding=encoding)
    results = probe(CheckConfig(public.url("/page"), keyword="all good", max_bytes=len(TEXT)))
    assert [(r.outcome, r.http_status) for r in results] == [(Outcome.OK, 200)]
    assert public.seen[-1][1]["Accept-Encoding"] == "gzip, deflate"


def test_the_cap_holds_on_decoded_bytes(public: Recorder) -> None:
    public.route("/page", body=gzip.compress(TEXT), Content_Encoding="gzip")
    broken = gzip.compress(TEXT)
    broken = broken[:10] + b"\xff" + broken[11:]  # the first deflate block of a type that does not exist
    public.route("/broken", body=broken, Content_Encoding="gzip")
    results = probe(
        CheckConfig(public.url("/page"), keyword="all good", max_bytes=len(TEXT) - 1),
        CheckConfig(public.url("/broken"), keyword="all good"),
    )
    assert [(r.outcome, r.http_status) for r in results] == [(Outcome.TOO_LARGE, 200), (Outcome.PROTOCOL, None)]


class Trickle(BaseHTTPRequestHandler):
    """Deflate with its zlib header, chunked, its first chunk a single byte: too short to tell
    the header from raw deflate."""

    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        body = zlib.compress(TEXT)
        self.send_response(200)
        self.send_header("Content-Encoding", "deflate")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for piece in (body[:1], body[1:]):
            self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
        self.wfile.write(b"0\r\n\r\n")

    def log_message(self, *_: object) -> None:
        pass


def test_deflate_is_recognised_from_its_first_two_bytes_however_they_arrive() -> None:
    server = Recorder("127.0.0.1")
    server.RequestHandlerClass = Trickle
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        results = probe(CheckConfig(server.url("/"), keyword="all good", max_bytes=len(TEXT)))
    finally:
        server.shutdown()
        server.server_close()
    assert [r.outcome for r in results] == [Outcome.OK]


def test_a_vendor_body_is_decoded_and_capped(public: Recorder) -> None:
    public.route("/summary.json", body=gzip.compress(SUMMARY), Content_Encoding="gzip")
    assert fetch(public.url("/summary.json"), max_bytes=len(SUMMARY)) is Outcome.OK
    assert fetch(public.url("/summary.json"), max_bytes=len(SUMMARY) - 1) is Outcome.TOO_LARGE


def gzip_bomb() -> bytes:
    """A gzip body of a few megabytes that inflates to gigabytes of zeros: one segment of zeros
    compressed with a full flush (which resets the compressor, so every segment compresses to the
    same bytes), repeated, then the gzip trailer of all the zeros."""
    zeros = bytes(BOMB_SEGMENT)
    deflate = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    segment = deflate.compress(zeros) + deflate.flush(zlib.Z_FULL_FLUSH)
    crc = 0
    for _ in range(BOMB_SEGMENTS):
        crc = zlib.crc32(zeros, crc)
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"
    last_block = b"\x03\x00"  # an empty final block
    size = (BOMB_SEGMENT * BOMB_SEGMENTS) & 0xFFFFFFFF
    return header + segment * BOMB_SEGMENTS + last_block + struct.pack("<II", crc, size)


def test_the_bomb_is_a_valid_gzip_body_of_gigabytes() -> None:
    bomb = gzip_bomb()
    inflate, inflated, rest = zlib.decompressobj(47), 0, bomb
    while rest:
        inflated += len(inflate.decompress(rest, 1 << 20))
        rest = inflate.unconsumed_tail
    assert inflate.eof and inflated == BOMB_SEGMENT * BOMB_SEGMENTS
    assert len(bomb) < 4 << 20


class Bomb(BaseHTTPRequestHandler):
    """Answers every path with the bomb; under /chunked/ without a Content-Length, so that only
    decoding can tell it is too large."""

    protocol_version = "HTTP/1.1"
    bomb = b""

    def do_GET(self) -> None:
        chunked = self.path.startswith("/chunked/")
        self.send_response(200)
        self.send_header("Content-Encoding", "gzip")
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Content-Length", str(len(self.bomb)))
        self.end_headers()
        try:
            if chunked:
                for at in range(0, len(self.bomb), 65536):
                    piece = self.bomb[at : at + 65536]
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                self.wfile.write(b"0\r\n\r\n")
            else:
                self.wfile.write(self.bomb)
        except OSError:
            self.close_connection = True  # the client stopped reading, as it should

    def log_message(self, *_: object) -> None:
        pass


@pytest.fixture(scope="module")
def bomb_server() -> Iterator[str]:
    Bomb.bomb = gzip_bomb()
    server = Recorder("127.0.0.1")
    server.RequestHandlerClass = Bomb
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.url("")
    server.shutdown()
    server.server_close()


# The probe or the vendor fetch, in a process of its own so that its peak memory is its own: it
# prints each outcome and its peak resident size. The peak is the kernel's high-water mark of the
# process's own memory (VmHWM): ru_maxrss would count the parent's too, as Linux carries it across
# the fork and exec that start the child.
CHILD = """
import asyncio, json, sys
from statusgen.config import CheckConfig, Config, ServiceConfig, SiteConfig, VendorConfig
from statusgen.probe import probe_all
from statusgen.timeutil import utcnow
from statusgen.vendors.stage import fetch_vendors

mode, url, count = sys.argv[1], sys.argv[2], int(sys.argv[3])

def service(i):
    if mode == "checks":
        return ServiceConfig(f"s{i}", f"S{i}", "c", (CheckConfig(f"{url}/{i}", timeout=60),))
    return ServiceConfig(f"s{i}", f"S{i}", "c", (), vendor=VendorConfig(f"{url}/chunked/{i}", timeout=60))

services = tuple(service(i) for i in range(count))
config = Config(path=None, site=SiteConfig(concurrency=count), categories={"c": "C"}, services=services)
if mode == "checks":
    outcomes = [r.outcome.value for r in asyncio.run(probe_all(config))]
else:
    outcomes = [obs.outcome.value for _, obs in asyncio.run(fetch_vendors(config, {}, utcnow)).values()]
status = open("/proc/self/status").read().splitlines()
peak_kb = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
print(json.dumps({"outcomes": outcomes, "peak_kb": peak_kb}))
"""


@pytest.mark.parametrize("mode", ["checks", "vendors"])
def test_a_hundred_gzip_bombs_cost_little_memory(bomb_server: str, mode: str) -> None:
    """Every bomb is too_large, and the whole run's peak stays small: the byte cap holds on the
    inflated body, as it is inflated."""
    child = subprocess.run(
        [sys.executable, "-c", CHILD, mode, bomb_server, str(BOMB_CHECKS)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    report = json.loads(child.stdout)
    print(f"peak RSS of {BOMB_CHECKS} gzip bombs ({mode}): {report['peak_kb'] / 1024:.0f} MiB")
    assert report["outcomes"] == ["too_large"] * BOMB_CHECKS
    assert report["peak_kb"] < PEAK_RSS_LIMIT_KB


# -- redirects that lead inside ------------------------------------------------------


@pytest.mark.parametrize(
    "address, public_",
    [
        ("8.8.8.8", True),
        ("2606:4700:4700::1111", True),
        ("::ffff:8.8.8.8", True),
        ("127.0.0.1", False),
        ("127.3.4.5", False),
        ("::1", False),
        ("10.1.2.3", False),
        ("172.16.0.1", False),
        ("192.168.1.1", False),
        ("169.254.169.254", False),  # a cloud's metadata service
        ("100.64.0.1", False),  # shared address space (carrier-grade NAT)
        ("fd00::1", False),
        ("fe80::1%eth0", False),
        ("::ffff:127.0.0.1", False),
        ("::ffff:10.0.0.1", False),
        ("0.0.0.0", False),
        ("192.0.2.1", False),  # documentation
        # an IPv6 address that carries an IPv4 one reaches it: the IPv4 address decides
        ("::127.0.0.1", False),  # IPv4-compatible
        ("64:ff9b::7f00:1", False),  # NAT64
        ("64:ff9b:1::a00:1", False),  # NAT64, local use
        ("2002:7f00:1::", False),  # 6to4
        ("::ffff:0:7f00:1", False),  # IPv4-translated
        ("2001:0:4136:e378:8000:63bf:80ff:fffe", False),  # Teredo, client 127.0.0.1
        ("64:ff9b::808:808", True),  # NAT64 of 8.8.8.8
        ("2002:808:808::1", True),  # 6to4 of 8.8.8.8
    ],
)
def test_what_counts_as_public(address: str, public_: bool) -> None:
    assert is_public(address) is public_


def test_named_internal_networks_replace_the_default() -> None:
    assert is_public("127.0.0.1", INTERNAL) and is_public("10.1.2.3", INTERNAL)
    assert not is_public("127.0.0.2", INTERNAL)
    assert not is_public("::ffff:127.0.0.2", INTERNAL)


def test_a_redirect_from_public_to_inside_is_refused(public: Recorder, inside: Recorder) -> None:
    public.redirect("/in", inside.url("/secret"))
    public.redirect("/hop", public.url("/in"))  # public, public, then inside
    results = probe(
        CheckConfig(public.url("/in"), keyword="all good"),
        CheckConfig(public.url("/hop"), keyword="all good"),
        internal=INTERNAL,
    )
    assert [(r.outcome, r.http_status, r.latency_ms) for r in results] == [(Outcome.PRIVATE_REDIRECT, None, None)] * 2
    assert inside.seen == []


def test_a_redirect_to_a_name_that_resolves_inside_is_refused(public: Recorder) -> None:
    """Here 127.0.0.2 stands for the public internet, and ``localhost`` resolves inside."""
    public.route("/secret")
    every_loopback_but_the_public_one = (ipaddress.ip_network("127.0.0.1/32"), ipaddress.ip_network("::1/128"))
    with recorder("127.0.0.2") as outside:
        outside.redirect("/in", f"http://localhost:{public.server_address[1]}/secret")
        results = probe(CheckConfig(outside.url("/in")), internal=every_loopback_but_the_public_one)
    assert [r.outcome for r in results] == [Outcome.PRIVATE_REDIRECT]
    assert public.seen == []


def test_redirects_that_stay_outside_or_start_inside_are_followed(public: Recorder, inside: Recorder) -> None:
    public.route("/page")
    public.redirect("/moved", public.url("/page"))
    public.redirect("/in", inside.url("/secret"))
    inside.redirect("/start", public.url("/in"))  # inside, outside, then inside again: refused
    outside_only = probe(CheckConfig(public.url("/moved"), keyword="all good"), internal=INTERNAL)
    all_inside = probe(CheckConfig(public.url("/in"), keyword="admin page"))  # by default, loopback is all inside
    back_inside = probe(CheckConfig(inside.url("/start")), internal=INTERNAL)
    assert [r.outcome for r in outside_only + all_inside + back_inside] == [
        Outcome.OK,
        Outcome.OK,
        Outcome.PRIVATE_REDIRECT,
    ]
    assert [path for path, _ in inside.seen] == ["/secret", "/start"]


@pytest.fixture
def rebinding(monkeypatch) -> dict[str, int]:
    """A name for each test to use, ``*.rebind.test``, whose first lookup answers 127.0.0.1 (the
    public internet here) and every later one 127.0.0.2 (inside), as a hostile DNS server can
    (DNS rebinding): the lookups asked, by name. The one mock of these tests: the internet's DNS."""
    asked: dict[str, int] = {}
    real = socket.getaddrinfo

    def getaddrinfo(host, port, *args, **kwargs):  # type: ignore[no-untyped-def]
        name = host.decode() if isinstance(host, bytes) else host  # the connection asks in bytes
        if not (isinstance(name, str) and name.endswith(".rebind.test")):
            return real(host, port, *args, **kwargs)
        host = name
        asked[host] = asked.get(host, 0) + 1
        address = "127.0.0.1" if asked[host] == 1 else "127.0.0.2"
        return [(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (address, int(port)))]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return asked


def test_a_name_that_turns_inside_after_its_check_is_still_asked_where_it_was_checked(
    public: Recorder, rebinding: dict[str, int]
) -> None:
    with recorder("127.0.0.2") as inside:
        inside.route("/page", body=b"all good: the admin page")
        inside.route("/summary.json", body=b"{}")
        with recorder("127.0.0.1", inside.server_address[1]) as outside:  # the same port, outside
            outside.route("/page", body=b"all good: the public page")
            outside.route("/summary.json", body=SUMMARY)
            port = outside.server_address[1]
            public.redirect("/away", f"http://www.rebind.test:{port}/page")
            public.redirect("/summary.json", f"http://status.rebind.test:{port}/summary.json")
            results = probe(CheckConfig(public.url("/away"), keyword="the public page"), internal=INTERNAL)
            source = VendorConfig(public.url("/summary.json"), timeout=5)
            _, vendor = asyncio.run(fetch_vendors(vendor_config(source), {}, utcnow, internal=INTERNAL))["v"]
    assert [r.outcome for r in results] == [Outcome.OK]
    assert vendor.outcome is Outcome.OK and vendor.view is not None and vendor.view.incidents
    assert inside.seen == []  # where a second lookup would have led
    assert [(path, headers["Host"], headers["Connection"]) for path, headers in outside.seen] == [
        ("/page", f"www.rebind.test:{port}", "close"),
        ("/summary.json", f"status.rebind.test:{port}", "close"),  # the vendors' client keeps connections
    ]
    assert rebinding == {"www.rebind.test": 1, "status.rebind.test": 1}  # looked up once: checked, then asked there


def test_the_first_hop_is_judged_by_the_address_its_connection_used(rebinding: dict[str, int]) -> None:
    """A name that answers the connection a public address and a second lookup an internal one
    does not make the chain "configured inside": its redirect inside is refused, for a check and
    for a vendor source."""
    with recorder("127.0.0.2") as inside, recorder("127.0.0.1") as outside:
        inside.route("/secret", body=b"all good: the admin page")
        outside.redirect("/start", inside.url("/secret"))
        port = outside.server_address[1]
        results = probe(CheckConfig(f"http://first.rebind.test:{port}/start"), internal=INTERNAL)
        source = VendorConfig(f"http://vendor.rebind.test:{port}/start", timeout=5)
        _, vendor = asyncio.run(fetch_vendors(vendor_config(source), {}, utcnow, internal=INTERNAL))["v"]
    assert [r.outcome for r in results] == [Outcome.PRIVATE_REDIRECT]
    assert vendor.outcome is Outcome.PRIVATE_REDIRECT
    assert inside.seen == []
    assert [path for path, _ in outside.seen] == ["/start", "/start"]


def test_a_pinned_https_hop_keeps_its_name_for_tls(public: Recorder, rebinding: dict[str, int], tmp_path) -> None:
    ca = trustme.CA()
    ca_file = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(ca_file))
    tls = {}
    for name in ("good.rebind.test", "other.example"):
        tls[name] = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ca.issue_cert(name).configure_cert(tls[name])
    with (
        recorder("127.0.0.1", tls=tls["good.rebind.test"]) as good,
        recorder("127.0.0.1", tls=tls["other.example"]) as bad,
    ):
        good.route("/page", body=b"all good: over TLS")
        public.redirect("/good", f"https://good.rebind.test:{good.server_address[1]}/page")
        public.redirect("/bad", f"https://bad.rebind.test:{bad.server_address[1]}/page")
        results = probe(
            CheckConfig(public.url("/good"), keyword="over TLS", ca_file=ca_file),
            CheckConfig(public.url("/bad"), ca_file=ca_file),
            internal=INTERNAL,
        )
    # the server's name is checked against the host, not the address it was asked at
    assert [r.outcome for r in results] == [Outcome.OK, Outcome.CERT_NAME]
    assert [headers["Host"] for _, headers in good.seen] == [f"good.rebind.test:{good.server_address[1]}"]


def test_allow_private_targets_lets_redirects_lead_inside(public: Recorder, inside: Recorder) -> None:
    public.redirect("/in", inside.url("/secret"))
    results = probe(CheckConfig(public.url("/in"), keyword="admin page"), internal=INTERNAL, allow_private=True)
    assert [r.outcome for r in results] == [Outcome.OK]
    assert [path for path, _ in inside.seen] == ["/secret"]


def test_too_many_redirects_are_still_counted(public: Recorder) -> None:
    public.redirect("/loop", public.url("/loop"))
    assert [r.outcome for r in probe(CheckConfig(public.url("/loop")), internal=INTERNAL)] == [Outcome.REDIRECTS]
    assert len(public.seen) == 6  # the request and five redirects


def test_a_vendor_redirected_inside_is_refused(public: Recorder, inside: Recorder) -> None:
    inside.route("/summary.json", body=SUMMARY)
    public.redirect("/summary.json", inside.url("/summary.json"))
    assert fetch(public.url("/summary.json"), RedirectGuard(internal=INTERNAL)) is Outcome.PRIVATE_REDIRECT
    source = VendorConfig(public.url("/summary.json"), timeout=5)
    row, obs = asyncio.run(fetch_vendors(vendor_config(source), {}, utcnow, internal=INTERNAL))["v"]
    assert (obs.outcome, row.outcome) == (Outcome.PRIVATE_REDIRECT, "private_redirect")
    assert inside.seen == []
    allowed = asyncio.run(fetch_vendors(vendor_config(source, allow_private=True), {}, utcnow, internal=INTERNAL))
    assert allowed["v"][1].outcome is Outcome.OK
    assert fetch(public.url("/summary.json")) is Outcome.OK  # loopback to loopback: inside from the start


def test_the_new_outcome_reads_as_words() -> None:
    assert DESCRIPTIONS[Outcome.PRIVATE_REDIRECT] == "was redirected to a private address"
    assert VendorRow("v", "https://status.example.com/api").url == "https://status.example.com/api"


def test_configured_headers_go_to_their_own_origin_only(public: Recorder, inside: Recorder, monkeypatch) -> None:
    """httpx strips only Authorization on a redirect to another host; the configured headers may
    carry secrets of their own, so they are dropped there too."""
    monkeypatch.setenv("STATUSGEN_TEST_KEY", "key-0a9f")
    inside.route("/landing")
    public.redirect("/moved", inside.url("/landing"))  # another origin (both inside: allowed)
    public.route("/here")
    public.redirect("/same", public.url("/here"))  # the same origin
    check = {"headers": (("X-Api-Key", "${STATUSGEN_TEST_KEY}"),)}
    results = probe(CheckConfig(public.url("/moved"), **check), CheckConfig(public.url("/same"), **check))
    assert [r.outcome for r in results] == [Outcome.OK, Outcome.OK]
    sent = {path: {k.lower(): v for k, v in headers.items()} for path, headers in public.seen + inside.seen}
    assert sent["/moved"]["x-api-key"] == sent["/same"]["x-api-key"] == sent["/here"]["x-api-key"] == "key-0a9f"
    assert "x-api-key" not in sent["/landing"]
