"""Shared fixtures: real loopback HTTP targets, real config files, a real preview server."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

from statusgen.config import Config, load_config
from statusgen.render.tree import gens_dir
from statusgen.web.serve import PreviewServer


@dataclass
class Behaviour:
    status: int = 200
    body: bytes = b"OK all good"
    delay: float = 0.0


class TargetHandler(BaseHTTPRequestHandler):
    server: Targets
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out at once, no 40 ms delayed-ACK stall

    def do_GET(self) -> None:
        b = self.server.behaviour.get(self.path, Behaviour(404, b"no such target"))
        self.server.hits[self.path] = self.server.hits.get(self.path, 0) + 1
        if b.delay:
            time.sleep(b.delay)
        self.send_response(b.status)
        self.send_header("Content-Length", str(len(b.body)))
        self.end_headers()
        self.wfile.write(b.body)

    def log_message(self, format: str, *args: object) -> None:
        pass


class Targets(ThreadingHTTPServer):
    """Loopback HTTP targets whose behaviour per path a test can change between runs."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), TargetHandler)
        self.behaviour: dict[str, Behaviour] = {}
        self.hits: dict[str, int] = {}

    def handle_error(self, request: object, client_address: object) -> None:
        """A client that gave up (a check that timed out) is expected here: no traceback."""

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}{path}"

    def set(self, path: str, status: int = 200, body: bytes = b"OK all good", delay: float = 0.0) -> None:
        self.behaviour[path] = Behaviour(status, body, delay)


@pytest.fixture
def targets() -> Iterator[Targets]:
    server = Targets()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


@contextmanager
def loopback_server(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """A threaded HTTP server on loopback answering with ``handler``; yields its base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class Clock:
    """An injected clock: a minute per run, starting two hours ago."""

    def __init__(self) -> None:
        self.t = datetime.now(UTC).replace(microsecond=0) - timedelta(hours=2)

    def __call__(self) -> datetime:
        return self.t

    def tick(self) -> None:
        self.t += timedelta(minutes=1)


@dataclass
class Site:
    """A config file in a temporary folder, with its store and output tree."""

    path: Path
    text: str
    extra: dict[str, str] = field(default_factory=dict)

    def load(self) -> Config:
        return load_config(self.path)


def write_config(tmp: Path, body: str, site: str = "") -> Path:
    path = tmp / "services.toml"
    interval = "" if "interval" in site else "interval = 60\n"
    # tries again within a run take 10 s apart by default: a test that is not about them runs without
    interval += "" if "confirm" in site else "confirm = 0\n"
    path.write_text(
        f'[site]\ntitle = "Test status"\nbase_url = "https://status.example.org"\n{interval}{site}\n{body}',
        encoding="utf-8",
    )
    return path


@dataclass
class Served:
    server: PreviewServer
    base: str

    def get(self, path: str, **kw: object) -> httpx.Response:
        return httpx.get(self.base + path, **kw)  # type: ignore[arg-type]


def start_preview(site: Path, per_minute: int = 120) -> Served:
    server = PreviewServer(site, "127.0.0.1", 0, quiet=True, per_minute=per_minute)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return Served(server, f"http://127.0.0.1:{server.server_address[1]}")


def generations(output: Path) -> list[Path]:
    """The generation folders of an output (not what else statusgen keeps beside them)."""
    return [g for g in gens_dir(output).iterdir() if g.is_dir() and not g.name.startswith(".")]
