"""What the conformance suite runs against: a real tree and the two real servers.

- ``build_scenario`` (once per test run; ``scenario`` copies it) runs real cycles (loopback targets, an injected clock)
  into a tree with every status, an open and a closed incident, and three
  categories; and the operator's words: a manual incident, a planned
  maintenance, and a note on the closed incident (then ``statusgen build``).
- ``start_preview`` / ``start_nginx`` serve that tree: the preview server in
  a thread, and the Debian nginx with the configuration ``statusgen
  nginx-conf`` writes, in a prefix of its own (``-e`` error log, pid file),
  stopped by ``Server.stop``.
- Both apply the rate limit of production (120 per client address), so each
  test speaks from client addresses of its own: ``Server.client()`` binds a
  fresh 127.x.y.z source address (Linux routes all of 127/8 to loopback).
"""

from __future__ import annotations

import http.client
import itertools
import os
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from statusgen.config import Config, load_config
from statusgen.cycle import rebuild, run_cycle
from statusgen.render.tree import MANIFEST, write_tree
from statusgen.store import Store
from statusgen.web.nginx import nginx_config
from statusgen.web.nginx_inputs import NginxOptions
from statusgen.web.serve import PreviewServer
from tests.conftest import Targets, write_config

SERVICES = """
[categories]
apis = "APIs"
web = "Websites"
payments = "Payments"

[[services]]
slug = "alpha"
name = "Alpha API"
category = "apis"
[[services.checks]]
url = "{base}/up"

[[services]]
slug = "bravo"
name = "Bravo API"
category = "apis"
failures_to_open = 2
successes_to_resolve = 1
[[services.checks]]
url = "{base}/bravo"

[[services]]
slug = "charlie"
name = "Charlie Web"
category = "web"
failures_to_open = 2
[[services.checks]]
url = "{base}/down"

[[services]]
slug = "delta"
name = "Delta Web"
category = "web"
[[services.checks]]
url = "{base}/slow"
degraded_ms = 15

[[services]]
slug = "echo"
name = "Echo Pay"
category = "payments"
paused = true
[[services.checks]]
url = "{base}/up"

[[services]]
slug = "foxtrot"
name = "Foxtrot Pay"
category = "payments"
[[services.checks]]
url = "{base}/up"
[[services.maintenance]]
start = "{start}"
end = "{end}"
title = "Database upgrade"

[[services]]
slug = "golf"
name = "Golf Pay"
category = "payments"
failures_to_open = 2
[[services.checks]]
url = "{base}/up"
[[services.checks]]
url = "{base}/down"
"""
CYCLES = 4


# -- the tree ------------------------------------------------------------------


def build_scenario(tmp: Path) -> Path:
    """Real cycles into ``tmp/site``: every status, an open and a closed incident; returns the output link."""
    targets = Targets()
    threading.Thread(target=targets.serve_forever, daemon=True).start()
    try:
        for path in ("/up", "/bravo"):
            targets.set(path)
        targets.set("/down", 503, b"Service Unavailable")
        targets.set("/slow", delay=0.05)
        start = datetime.now(UTC).replace(microsecond=0) - timedelta(hours=1)
        window = {"start": (start - timedelta(minutes=5)).isoformat(), "end": (start + timedelta(hours=2)).isoformat()}
        write_operator_files(tmp / "notes", start)
        cfg = load_config(write_config(tmp, SERVICES.format(base=targets.url(""), **window)))
        for n in range(CYCLES):
            targets.set("/bravo", *((500, b"Internal Error") if n < 2 else (200, b"OK")))
            run_cycle(cfg, lambda n=n: start + timedelta(minutes=n))
        write_note(tmp / "notes", cfg, start + timedelta(minutes=CYCLES))
        rebuild(load_config(cfg.path), lambda: start + timedelta(minutes=CYCLES))
        return cfg.site.output
    finally:
        targets.shutdown()
        targets.server_close()


def write_operator_files(folder: Path, start: datetime) -> None:
    """The operator's words (docs/notes.md): an open manual incident of delta (degraded already:
    it stays so) and a maintenance of alpha in three days."""
    folder.mkdir()
    (folder / "delta-cdn.md").write_text(
        f'+++\nservice = "delta"\ntitle = "CDN slow in Asia"\nseverity = "minor"\nstarted = {start.isoformat()}\n+++\n'
        "Readers in **Asia** see slow pages.\n",
        encoding="utf-8",
    )
    begins = start + timedelta(days=3)
    (folder / "alpha-move.md").write_text(
        f'+++\ntitle = "Moving racks"\nservices = ["alpha"]\nstart = {begins.isoformat()}\n'
        f"end = {(begins + timedelta(hours=1)).isoformat()}\n+++\nExpect *one* minute of errors.\n",
        encoding="utf-8",
    )


def write_note(folder: Path, cfg: Config, at: datetime) -> None:
    """A note on bravo's closed incident, with hostile Markdown in it."""
    with Store(cfg.site.store) as store:
        [bravo] = [i.id for i in store.incidents() if i.service == "bravo"]
    (folder / "bravo-note.md").write_text(
        f'+++\nincident = "{bravo}"\nat = {at.isoformat()}\n+++\n'
        "It was the **database**. <script>alert(1)</script> [more](javascript:alert(1))\n",
        encoding="utf-8",
    )


_built: list[Path] = []


def scenario(factory: pytest.TempPathFactory, name: str) -> Path:
    """A copy of the scenario's folder (built once per test run) for one module to serve and change."""
    if not _built:
        _built.append(build_scenario(factory.mktemp("scenario")))
    built = _built[0]
    dest = factory.mktemp(name)
    shutil.copytree(built.parent, dest, symlinks=True, dirs_exist_ok=True)  # keeps the link and the mtimes
    return dest / built.name


def tree_files(site: Path) -> dict[str, bytes]:
    """The files of the current generation as ``write_tree`` takes them (no .gz copies, no manifest)."""
    root = site.resolve()
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.name != MANIFEST and not p.name.endswith(".gz")
    }


def rewrite(site: Path, changes: dict[str, bytes | None]) -> None:
    """A new generation of the tree with some files changed (bytes), added or removed (None)."""
    files = tree_files(site)
    for rel, data in changes.items():
        if data is None:
            files.pop(rel, None)
        else:
            files[rel] = data
    write_tree(site, files)


# -- client addresses ----------------------------------------------------------

_addresses = (f"127.{a}.{b}.{c}" for a in itertools.count(10) for b in range(256) for c in range(1, 255))
_lock = threading.Lock()


def fresh_address() -> str:
    """A loopback source address no test has used yet: a client the rate limit has not seen."""
    with _lock:
        return next(_addresses)


# -- the servers ---------------------------------------------------------------


@dataclass
class Server:
    """A server of the tree at ``site`` on 127.0.0.1:``port``."""

    kind: str
    site: Path
    port: int
    stop: Callable[[], None]
    prefix: Path | None = None
    log: list[str] = field(default_factory=list)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def client(self, address: str | None = None, **kw: object) -> httpx.Client:
        """An HTTP client speaking from a source address of its own."""
        transport = httpx.HTTPTransport(local_address=address or fresh_address())
        return httpx.Client(base_url=self.base, transport=transport, timeout=10, **kw)  # type: ignore[arg-type]

    def raw(
        self, path: str, method: str = "GET", headers: dict[str, str] | None = None, address: str | None = None
    ) -> tuple[int, dict[str, str], bytes]:
        """One request whose target goes on the wire exactly as given (no client normalization)."""
        conn = http.client.HTTPConnection(
            "127.0.0.1", self.port, timeout=10, source_address=(address or fresh_address(), 0)
        )
        try:
            conn.putrequest(method, path, skip_host=False, skip_accept_encoding=True)
            for name, value in (headers or {}).items():
                conn.putheader(name, value)
            conn.endheaders()
            response = conn.getresponse()
            body = response.read()
            return response.status, {k.lower(): v for k, v in response.getheaders()}, body
        finally:
            conn.close()

    def file(self, rel: str) -> bytes:
        """The bytes of a file of the tree as it is now."""
        return (self.site / rel).read_bytes()


def start_preview(site: Path) -> Server:
    server = PreviewServer(site, "127.0.0.1", 0, quiet=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()

    def stop() -> None:
        server.shutdown()
        server.server_close()

    return Server("serve", site, server.server_address[1], stop)


def nginx_binary() -> str:
    found = shutil.which("nginx") or ("/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else None)
    assert found, "nginx is not installed: run `make system` (scripts/system-packages.sh)"
    return found


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def worker_user() -> str | None:
    """Tests may run as root in 0700 temporary folders: then nginx's workers run as root too."""
    return "root" if os.geteuid() == 0 else None


def nginx_test(prefix: Path, conf: Path) -> subprocess.CompletedProcess[str]:
    """``nginx -t`` on a configuration file."""
    return subprocess.run(
        [nginx_binary(), "-t", "-p", str(prefix), "-c", str(conf), "-e", str(prefix / "error.log")],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


def run_nginx(prefix: Path, conf: Path, port: int) -> subprocess.Popen[bytes]:
    """nginx in the foreground on ``conf``, ready when its port accepts connections."""
    process = subprocess.Popen(
        [nginx_binary(), "-p", str(prefix), "-c", str(conf), "-e", str(prefix / "error.log"), "-g", "daemon off;"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if process.poll() is not None:
            log = (prefix / "error.log").read_text() if (prefix / "error.log").exists() else ""
            raise RuntimeError(f"nginx exited with {process.returncode}: {process.stderr.read().decode()}\n{log}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return process
        except OSError:
            time.sleep(0.02)
    process.kill()
    raise RuntimeError("nginx did not start listening within 10 s")


def stop_nginx(process: subprocess.Popen[bytes]) -> None:
    process.terminate()  # SIGTERM: fast shutdown of the master and its workers
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def start_nginx(site: Path, prefix: Path, **options: object) -> Server:
    """The real nginx serving ``site`` with the configuration statusgen writes (options: NginxOptions fields)."""
    prefix.mkdir(parents=True, exist_ok=True)
    for attempt in range(3):
        port = free_port()
        conf = prefix / "nginx.conf"
        conf.write_text(
            nginx_config(NginxOptions(site=site, listen=f"127.0.0.1:{port}", user=worker_user(), **options))
        )  # type: ignore[arg-type]
        try:
            process = run_nginx(prefix, conf, port)
        except RuntimeError:
            if attempt == 2:
                raise
            continue
        return Server("nginx", site, port, lambda p=process: stop_nginx(p), prefix=prefix)
    raise AssertionError("unreachable")


def start(kind: str, site: Path, prefix: Path) -> Server:
    return start_preview(site) if kind == "serve" else start_nginx(site, prefix)


def served(kind: str, site: Path, prefix: Path) -> Iterator[Server]:
    """A fixture body: the server of that kind, stopped afterwards."""
    server = start(kind, site, prefix)
    try:
        yield server
    finally:
        server.stop()
