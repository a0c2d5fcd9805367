"""The probe engine under load (issue 5): concurrency, spread starts, honest latency, timeouts, TLS.

The targets are a real asyncio HTTP server on loopback, in a thread with its
own event loop, so that it does not share the engine's loop. Bounds on time
are generous (a loaded two-core machine must pass them); the strict figures
are in ``bench/bench_probe.py``.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from statusgen.config import CheckConfig, Config, ServiceConfig, SiteConfig
from statusgen.model import CheckResult, Outcome
from statusgen.probe import CheckTarget, probe_all, probe_run, start_order

HANG_CAP_S = 5.0

# A self-signed certificate for 127.0.0.1, valid from 2000 to 2100, and its key.
CERT = """-----BEGIN CERTIFICATE-----
MIIBhDCCASqgAwIBAgIBATAKBggqhkjOPQQDAjAgMR4wHAYDVQQDDBVzdGF0dXNn
ZW4gdGVzdCB0YXJnZXQwIBcNMDAwMTAxMDAwMDAwWhgPMjEwMDAxMDEwMDAwMDBa
MCAxHjAcBgNVBAMMFXN0YXR1c2dlbiB0ZXN0IHRhcmdldDBZMBMGByqGSM49AgEG
CCqGSM49AwEHA0IABNLanDdL6yFCgTnCR1d6veAQ9SXCApNzpE1Nan+QDtUse268
b73oOfDbRt7zq1YwSr1nGwy4xLu7Je3hqFe0p2+jUzBRMA8GA1UdEQQIMAaHBH8A
AAEwDwYDVR0TAQH/BAUwAwEB/zAOBgNVHQ8BAf8EBAMCAoQwHQYDVR0OBBYEFEhE
mZ/bI9khsT12FJnO36FZzZj+MAoGCCqGSM49BAMCA0gAMEUCIQC72yHCDzRWIxlf
iarROfBbVr7TgH5szg8G+MqPevbedAIgaeuZ1pWiE5UVpJm7zpJ0tdBpge7vzBu6
CIhueUWJhYw=
-----END CERTIFICATE-----
"""
KEY = """-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgTN4w2XtEHCpBl/aj
Z4syd8XAsOHOwHBAIJZfYPmi38WhRANCAATS2pw3S+shQoE5wkdXer3gEPUlwgKT
c6RNTWp/kA7VLHtuvG+96Dnw20be86tWMEq9ZxsMuMS7uyXt4ahXtKdv
-----END PRIVATE KEY-----
"""


# -- a loopback target on its own event loop ------------------------------------


@dataclass
class Target:
    """An asyncio HTTP/1.1 server in a thread. Paths:

    /delay/MS/...  answers "status: all good" after MS milliseconds
    /hang/...      never answers; closes when the client does, or after HANG_CAP_S
    /size/BYTES    answers a body of BYTES bytes at once
    """

    port: int = 0
    tls_port: int = 0
    arrivals: dict[str, float] = field(default_factory=dict)  # path -> time.monotonic() of the request
    answered: dict[str, float] = field(default_factory=dict)  # path -> time.monotonic() of its answer, sent
    given_up: dict[str, float] = field(default_factory=dict)  # /hang path -> time.monotonic() the client closed

    def url(self, path: str, tls: bool = False) -> str:
        return f"https://127.0.0.1:{self.tls_port}{path}" if tls else f"http://127.0.0.1:{self.port}{path}"

    async def answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            path = head.split(b" ", 2)[1].decode()
            self.arrivals[path] = time.monotonic()
            parts = path.split("/")
            if parts[1] == "hang":  # until the client gives up, or HANG_CAP_S: then closes, silent
                await asyncio.wait_for(reader.read(), HANG_CAP_S)
                self.given_up[path] = time.monotonic()
                return
            body = b"x" * int(parts[2]) if parts[1] == "size" else b"status: all good"
            if parts[1] == "delay":
                await asyncio.sleep(int(parts[2]) / 1000)
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % len(body) + body)
            await writer.drain()
            self.answered[path] = time.monotonic()
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, IndexError, ValueError, TimeoutError):
            pass
        finally:
            writer.close()


async def _serve(target: Target, tls: object, ready: threading.Event, stop: asyncio.Event) -> None:
    plain = await asyncio.start_server(target.answer, "127.0.0.1", 0, backlog=1024)
    secure = await asyncio.start_server(target.answer, "127.0.0.1", 0, ssl=tls)  # type: ignore[arg-type]
    target.port = plain.sockets[0].getsockname()[1]
    target.tls_port = secure.sockets[0].getsockname()[1]
    ready.set()
    await stop.wait()
    plain.close()
    secure.close()


@pytest.fixture(scope="module")
def cert_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("tls")
    (folder / "cert.pem").write_text(CERT)
    (folder / "key.pem").write_text(KEY)
    return folder / "cert.pem"


@pytest.fixture(scope="module")
def target(cert_file: Path) -> Iterator[Target]:
    import ssl

    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    tls.load_cert_chain(cert_file, cert_file.with_name("key.pem"))
    loop = asyncio.new_event_loop()
    found, ready, stop = Target(), threading.Event(), asyncio.Event()
    thread = threading.Thread(target=loop.run_until_complete, args=(_serve(found, tls, ready, stop),), daemon=True)
    thread.start()
    assert ready.wait(10)
    yield found
    loop.call_soon_threadsafe(stop.set)
    thread.join(10)


def config_for(checks: list[CheckConfig], concurrency: int = 100) -> Config:
    services = tuple(ServiceConfig(f"s{i}", f"S{i}", "c", (c,)) for i, c in enumerate(checks))
    return Config(
        path=None,
        site=SiteConfig(concurrency=concurrency),
        categories={"c": "C"},  # type: ignore[arg-type]
        services=services,
    )


def probe(checks: list[CheckConfig], concurrency: int = 100, spread_s: float = 0.0) -> tuple[list[CheckResult], float]:
    """The results and the seconds the whole run took."""
    start = time.perf_counter()
    results = asyncio.run(probe_all(config_for(checks, concurrency), spread_s=spread_s))
    return results, time.perf_counter() - start


# -- the tests ----------------------------------------------------------------


def test_two_hundred_checks_run_concurrently(target: Target) -> None:
    checks = [CheckConfig(target.url(f"/delay/50/many{i}"), keyword="all good") for i in range(200)]
    results, seconds = probe(checks)
    assert [r.outcome for r in results] == [Outcome.OK] * 200
    assert [r.service for r in results] == [f"s{i}" for i in range(200)]  # in the order of the checks
    assert seconds < 4.0  # one after another: 200 x 50 ms = 10 s at the very least


def test_spread_starts_each_check_in_its_slot(target: Target) -> None:
    """The s-th check to start starts no earlier than s * spread / n after the run began,
    and the starts span the window."""
    sent: dict[datetime, float] = {}
    epoch = datetime(2030, 1, 1, tzinfo=UTC)

    def clock() -> datetime:  # each call a distinct instant, remembered with the monotonic time
        ts = epoch + timedelta(seconds=len(sent))
        sent[ts] = time.monotonic()
        return ts

    checks = [CheckConfig(target.url(f"/delay/1/spread{i}")) for i in range(20)]
    before = time.monotonic()
    results = asyncio.run(probe_all(config_for(checks), clock=clock, spread_s=1.0))
    assert all(r.up for r in results)
    starts = sorted(sent[r.ts] - before for r in results)
    assert all(start >= s * 0.05 - 0.001 for s, start in enumerate(starts)), starts
    assert 0.95 <= starts[-1] < 3.0
    arrivals = sorted(target.arrivals[f"/delay/1/spread{i}"] - before for i in range(20))
    assert all(arrival >= s * 0.05 - 0.001 for s, arrival in enumerate(arrivals)), arrivals


def test_latency_is_the_request_not_the_wait_for_its_turn(target: Target) -> None:
    """A 200 ms target measures 200 ms and a little, whether its check started first or last,
    or waited for a free concurrency slot: never its wait as well. Each check's wait is measured
    here, on the target: the time from the first request of the run reaching it to this one's.
    A latency that counted the wait would be at least that wait plus the target's 200 ms; an honest
    one is 200 ms plus what one request costs, less than a slot (300 ms spread, 200 ms queued)."""
    for name, spread, concurrency in (("turn", 1.2, 100), ("queued", 0.0, 1)):
        paths = [f"/delay/200/{name}{i}" for i in range(4)]
        results, _ = probe([CheckConfig(target.url(p)) for p in paths], concurrency, spread_s=spread)
        first = min(target.arrivals[p] for p in paths)
        waits = [(target.arrivals[p] - first) * 1000 for p in paths]
        assert max(waits) >= 3 * 200, waits  # spread or one after another: three slots after the first
        for r, wait in zip(results, waits, strict=True):
            assert r.latency_ms is not None and r.latency_ms >= 200, (r.service, r.latency_ms)
            assert wait == 0 or r.latency_ms < 200 + wait, (name, r.service, r.latency_ms, wait)


def test_a_hanging_target_times_out_without_holding_up_the_others(target: Target) -> None:
    """Three targets that never answer time out after their 1 s and hold up nothing: the thirty
    checks beside them are all answered before the first hanging one is given up (the target sees
    its connection closed), and the run ends when they time out, not when the targets would let
    go (HANG_CAP_S). The tight figure, a run held at most its timeout plus 2 s, is
    bench/bench_probe.py's."""
    hanging = [CheckConfig(target.url(f"/hang/{i}"), timeout=1.0) for i in range(3)]
    answering = [CheckConfig(target.url(f"/delay/50/beside{i}"), timeout=1.0) for i in range(30)]
    results, seconds = probe(hanging + answering, concurrency=10)
    assert [(r.outcome, r.latency_ms, r.http_status) for r in results[:3]] == [(Outcome.TIMEOUT, None, None)] * 3
    assert all(r.up and r.latency_ms is not None and r.latency_ms >= 50 for r in results[3:])
    answered = max(target.answered[f"/delay/50/beside{i}"] for i in range(30))
    given_up = min(target.given_up.get(f"/hang/{i}", float("inf")) for i in range(3))
    assert answered < given_up, (answered, given_up)
    assert 1.0 <= seconds < HANG_CAP_S


def test_tls_verified_against_the_trusted_certificate(
    target: Target, cert_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", str(cert_file))
    results, _ = probe([CheckConfig(target.url("/delay/1/tls", tls=True), keyword="all good")])
    assert [(r.outcome, r.http_status) for r in results] == [(Outcome.OK, 200)]


def test_tls_failures_are_tls(target: Target, targets, monkeypatch: pytest.MonkeyPatch) -> None:
    """An untrusted certificate, and https:// to a plain HTTP server (conftest's, which answers 400)."""
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    results, _ = probe(
        [
            CheckConfig(target.url("/delay/1/untrusted", tls=True), timeout=5),
            CheckConfig(targets.url("/plain").replace("http://", "https://"), timeout=5),
        ]
    )
    assert [(r.outcome, r.latency_ms) for r in results] == [(Outcome.TLS, None), (Outcome.TLS, None)]


@pytest.mark.parametrize(
    "size, cap, outcome",
    [
        (600_000, 1_048_576, Outcome.OK),  # more than the read buffer holds before it pauses
        (3_000_000, 1_048_576, Outcome.TOO_LARGE),
    ],
)
def test_large_bodies_read_in_full_or_capped(target: Target, size: int, cap: int, outcome: Outcome) -> None:
    results, _ = probe([CheckConfig(target.url(f"/size/{size}"), max_bytes=cap)])
    assert [(r.outcome, r.http_status) for r in results] == [(outcome, 200)]


# -- the start order -------------------------------------------------------------


def test_checks_that_timed_out_before_take_the_first_slots(target: Target) -> None:
    """Those in ``first`` start before the others; the others keep the fixed shuffle."""
    todo = [CheckTarget(f"s{i}", 0, CheckConfig(f"http://127.0.0.1:1/{i}")) for i in range(250)]
    plain = start_order(todo)
    assert plain == start_order(list(todo)) and plain != list(range(250))  # fixed, and shuffled
    first = {(todo[plain[-1]].service, 0), (todo[plain[-2]].service, 0)}  # the last two to start without it
    order = start_order(todo, first)
    assert {todo[i].service for i in order[:2]} == {service for service, _ in first}
    assert order[2:] == plain[:-2]


def test_a_check_that_timed_out_starts_first_in_the_next_run(target: Target, tmp_path: Path) -> None:
    """Through ``run_cycle`` and the store: the second run starts the check whose last result
    was a timeout before every other, though the fixed shuffle starts it last."""
    from statusgen.config import load_config
    from statusgen.cycle import run_cycle
    from tests.conftest import write_config

    slugs = [f"first{i}" for i in range(12)]
    hanging = slugs[start_order([CheckTarget(s, 0, CheckConfig("http://127.0.0.1:1/")) for s in slugs])[-1]]
    body = '[categories]\nc = "C"\n' + "".join(
        f'\n[[services]]\nslug = "{s}"\nname = "{s}"\ncategory = "c"\n[[services.checks]]\n'
        f'url = "{target.url(("/hang/" if s == hanging else "/delay/1/") + s)}"\ntimeout = 0.5\n'
        for s in slugs
    )
    config = load_config(write_config(tmp_path, body, site='spread = 0.6\nstore = "s.db"\noutput = "site"\n'))
    arrivals = []
    for _ in range(2):
        run_cycle(config)
        arrivals.append({s: target.arrivals[("/hang/" if s == hanging else "/delay/1/") + s] for s in slugs})
    assert max(arrivals[0], key=arrivals[0].__getitem__) == hanging  # started last, as the shuffle has it
    assert min(arrivals[1], key=arrivals[1].__getitem__) == hanging  # then first, having timed out


def test_a_run_reports_its_results_in_order_and_its_loop_lag(target: Target) -> None:
    """Every check answered, in the checks' order; times follow the given clock; the loop's lag
    is sampled while the run lasts."""
    checks = [CheckConfig(target.url(f"/delay/50/order{i}"), keyword="all good") for i in range(200)]
    frozen = datetime(2030, 1, 1, tzinfo=UTC)
    todo = [CheckTarget(f"s{i}", 0, c) for i, c in enumerate(checks)]
    run = asyncio.run(probe_run(todo, "ua", 100, clock=lambda: frozen, spread_s=0.5))
    assert [(r.service, r.outcome, r.ts) for r in run.results] == [(f"s{i}", Outcome.OK, frozen) for i in range(200)]
    assert all(r.latency_ms is not None and 50 <= r.latency_ms < 400 for r in run.results)
    assert run.loop_lag and max(at for at, _ in run.loop_lag) >= 0.5


def test_the_collector_is_kept_out_of_a_run_and_back_after_it(target: Target) -> None:
    import gc

    seen = []

    def clock() -> datetime:
        seen.append(gc.isenabled())
        return datetime(2030, 1, 1, tzinfo=UTC)

    todo = [CheckTarget(f"s{i}", 0, CheckConfig(target.url(f"/delay/1/gc{i}"))) for i in range(5)]
    asyncio.run(probe_run(todo, "ua", 10, clock=clock))
    assert seen == [False] * 5 and gc.isenabled()


def test_no_checks_no_work() -> None:
    run = asyncio.run(probe_run([], "ua", 10, spread_s=1.0))
    assert (run.results, run.loop_lag) == ([], [])
