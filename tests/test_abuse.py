"""Serving under abuse, against both servers of a tree (issue 28): one address holding
thousands of slow connections does not cut the others off, and a request with a body
that is never read gets exactly one answer. Then the preview server's deadline for a
request: a request sent a byte at a time does not stretch it.

The attacker speaks from 127.0.0.2, the visitors from 127.0.0.3 (Linux routes all of
127/8 to loopback); the conformance suite's addresses start at 127.10.0.1.
"""

from __future__ import annotations

import http.client
import io
import re
import resource
import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, suppress
from pathlib import Path

import pytest

from statusgen.web.serve import DeadlineReader
from tests.conformance import Server, scenario, served

ATTACKER = "127.0.0.2"
VISITOR = "127.0.0.3"
SLOW_CONNECTIONS = 2000
VISITS = 20
PATIENCE_S = 5.0  # what a visitor waits for an answer before counting it as lost
SANE_S = 2.0  # what every visitor's answer must come within
QUIET_S = 0.5  # silence after which a connection has said all it will
#: A request that never ends: its line and a header, then a header now and then, never the blank line.
SLOW_START = b"GET / HTTP/1.1\r\nHost: status.example.org\r\n"
SLOW_MORE = b"X-Slow: 1\r\n"


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    return scenario(tmp_path_factory, "abuse")


@pytest.fixture(scope="module", params=["serve", "nginx"])
def server(request, site, tmp_path_factory) -> Iterator[Server]:
    raise_file_limit(3 * SLOW_CONNECTIONS + 1024)  # before nginx starts: its workers inherit it
    yield from served(request.param, site, tmp_path_factory.mktemp("nginx-prefix"))


def raise_file_limit(wanted: int) -> None:
    """Open files enough for the attacker's sockets (and, in this process, the preview server's)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    ceiling = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft != resource.RLIM_INFINITY and soft < ceiling:
        resource.setrlimit(resource.RLIMIT_NOFILE, (ceiling, hard))


# -- the attacker ----------------------------------------------------------------


def slow_connection(port: int, address: str = ATTACKER) -> socket.socket | None:
    """One connection from the attacker's address that starts a request and never finishes it."""
    sock = socket.socket()
    try:
        sock.bind((address, 0))
        sock.settimeout(2)
        sock.connect(("127.0.0.1", port))
        sock.sendall(SLOW_START)
        sock.setblocking(False)
        return sock
    except OSError:  # a server may refuse or close at once: that is its right
        sock.close()
        return None


def drip(socks: list[socket.socket], stop: threading.Event) -> None:
    """A header line now and then on each connection, so that no idle timer alone ends them."""
    while not stop.wait(0.5):
        for sock in socks:
            with suppress(OSError):  # the server may have closed it: that is its right
                sock.send(SLOW_MORE)


@contextmanager
def slow_connections(port: int, count: int, addresses: tuple[str, ...] = (ATTACKER,)) -> Iterator[list[socket.socket]]:
    """``count`` slow connections, from each of ``addresses`` in turn."""
    made = (slow_connection(port, addresses[n % len(addresses)]) for n in range(count))
    socks = [s for s in made if s is not None]
    stop = threading.Event()
    dripper = threading.Thread(target=drip, args=(socks, stop), daemon=True)
    dripper.start()
    try:
        yield socks
    finally:
        stop.set()
        dripper.join()
        for sock in socks:
            sock.close()


def still_open(socks: list[socket.socket]) -> int:
    """How many of the attacker's connections the server still holds."""
    count = 0
    for sock in socks:
        try:
            count += sock.recv(1, socket.MSG_PEEK) != b""
        except BlockingIOError:
            count += 1  # nothing to read, not closed
        except OSError:
            pass
    return count


# -- the visitors ------------------------------------------------------------------


def visit(port: int, path: str) -> tuple[int, float]:
    """One visitor's request: its status (0 if it got none in time) and how long it took."""
    started = time.monotonic()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=PATIENCE_S, source_address=(VISITOR, 0))
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        response.read()
        status = response.status
    except OSError:
        status = 0
    finally:
        conn.close()
    return status, time.monotonic() - started


def visits(port: int) -> list[tuple[int, float]]:
    paths = ["/", "/api/v1/snapshot"] * (VISITS // 2)
    with ThreadPoolExecutor(VISITS) as pool:
        return list(pool.map(lambda path: visit(port, path), paths))


def flooded_visits(server: Server, addresses: tuple[str, ...]) -> tuple[list[int], list[float]]:
    """The visitors' statuses and times (sorted) while 2,000 slow connections from ``addresses``
    are open; what the server held of them is printed."""
    with slow_connections(server.port, SLOW_CONNECTIONS, addresses) as held:
        time.sleep(0.2)  # let the server take in what it will of the flood
        answers = visits(server.port)
        kept = still_open(held)
    statuses, times = [s for s, _ in answers], sorted(t for _, t in answers)
    print(
        f"\n{server.kind}: {len(held)} slow connections from {len(addresses)} addresses, {kept} held open by the "
        f"server; {statuses.count(200)} of {VISITS} visitors answered 200; median {times[len(times) // 2]:.3f} s, "
        f"max {times[-1]:.3f} s"
    )
    return statuses, times


def test_thousands_of_slow_connections_from_one_address_do_not_cut_the_others_off(server):
    statuses, times = flooded_visits(server, (ATTACKER,))
    assert statuses == [200] * VISITS
    assert times[-1] < SANE_S


#: 40 attackers, 50 slow connections each: each under the per-address cap, 2,000 in all.
ATTACKERS = tuple(f"127.0.1.{n}" for n in range(1, 41))


def test_slow_connections_from_many_addresses_do_not_cut_the_others_off(server):
    """Each address under its share, together past the server's room: the connections that have
    waited longest for their request make way, and every visitor is answered within a second."""
    statuses, times = flooded_visits(server, ATTACKERS)
    assert statuses == [200] * VISITS
    assert times[-1] < 1.0


# -- one answer per request ----------------------------------------------------------

#: What follows the headers of a request with a body: a body that reads like a second request.
SMUGGLED = b"GET /api/v1/health HTTP/1.1\r\nHost: x\r\n\r\n"
#: An answer's status code, wherever it starts (a body need not end with a line break).
STATUS_LINE = re.compile(rb"HTTP/1\.[01] (\d{3}) ")


def answers_to(port: int, head: bytes, body: bytes) -> list[bytes]:
    """The status of every answer the server sends back to one request and its body, until it closes
    the connection or stays quiet for a while."""
    with socket.create_connection(("127.0.0.1", port), timeout=5, source_address=(VISITOR, 0)) as sock:
        sock.sendall(head + body)
        received = b""
        sock.settimeout(QUIET_S)
        try:
            while chunk := sock.recv(65536):
                received += chunk
        except TimeoutError:
            pass  # nginx keeps the connection open for the next request: quiet is the end
    return STATUS_LINE.findall(received)


@pytest.mark.parametrize(
    ("head", "status"),
    [
        (b"POST /api/v1/snapshot HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", b"405"),
        (b"GET /api/v1/snapshot HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", b"200"),
        (b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", b"405"),
    ],
)
def test_a_request_with_a_body_it_does_not_read_gets_one_answer(server, head, status):
    lines = answers_to(server.port, head % len(SMUGGLED), SMUGGLED)
    assert lines == [status]


def test_a_chunked_body_is_not_read_as_a_request_either(server):
    chunked = b"%x\r\n%s\r\n0\r\n\r\n" % (len(SMUGGLED), SMUGGLED)
    head = b"POST /api/v1/snapshot HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
    lines = answers_to(server.port, head, chunked)
    assert lines == [b"405"]


def test_requests_without_a_body_still_share_a_connection(server):
    """Keep-alive is kept: two requests on one connection, two answers."""
    request = b"GET /api/v1/health HTTP/1.1\r\nHost: x\r\n\r\n"
    assert answers_to(server.port, request, request) == [b"200", b"200"]


# -- the preview server's deadlines ------------------------------------------------------


def test_a_request_sent_a_byte_at_a_time_is_cut_off_at_its_deadline():
    """Each byte arrives well within any one read's patience; the whole request still has one
    deadline, its headers' 0.3 s from their first byte. The bytes keep coming for 4 s: the reader
    gives up while they still come, neither on the connection's own wait (5 s) nor once they stop."""
    ours, theirs = socket.socketpair()
    stop, dripped = threading.Event(), threading.Event()

    def trickle() -> None:
        for _ in range(80):  # a byte every 50 ms for 4 s
            if stop.wait(0.05):
                return
            with suppress(OSError):
                theirs.send(b"X")
        dripped.set()

    dripper = threading.Thread(target=trickle, daemon=True)
    dripper.start()
    try:
        reader = DeadlineReader(ours, header_timeout=0.3)
        reader.expect_request(wait=5.0)
        started = time.monotonic()
        with pytest.raises(TimeoutError):
            io.BufferedReader(reader).readline(65537)
        assert not dripped.is_set(), "cut off only once the bytes stopped coming"
        assert time.monotonic() - started >= 0.3
    finally:
        stop.set()
        dripper.join()
        ours.close()
        theirs.close()


def test_a_connection_that_sends_nothing_waits_only_so_long():
    """Given 0.2 s for a request to begin, the reader gives up before the request line the peer
    sends 3 s later (its headers would have had a minute)."""
    ours, theirs = socket.socketpair()
    stop = threading.Event()
    sender = threading.Thread(target=lambda: stop.wait(3.0) or theirs.send(b"GET / HTTP/1.1\r\n"), daemon=True)
    with ours, theirs:
        sender.start()
        try:
            reader = DeadlineReader(ours, header_timeout=60)
            reader.expect_request(wait=0.2)
            started = time.monotonic()
            with pytest.raises(TimeoutError):
                io.BufferedReader(reader).readline(65537)
            assert time.monotonic() - started >= 0.2
        finally:
            stop.set()
            sender.join()


def test_the_preview_servers_limiter_forgets_idle_addresses() -> None:
    """Many addresses that each ask once must not grow its memory for ever."""
    from statusgen.web.serve import RateLimiter

    now = [0.0]
    limiter = RateLimiter(per_minute=120, clock=lambda: now[0])
    for n in range(3 * RateLimiter.CLIENTS):
        assert limiter.take(f"10.{n >> 16}.{(n >> 8) & 255}.{n & 255}") == 0.0
        now[0] += 0.001
    now[0] += RateLimiter.WINDOW
    limiter.take("192.0.2.1")
    assert len(limiter.seen) == 1
    assert max(len(t) for t in limiter.seen.values()) == 1
