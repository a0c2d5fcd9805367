"""Serving figures (issue 3): requests per second on loopback, measured with wrk.

Three servers of the same demo tree, asked for the same two files (the
snapshot, and one 24h history), without compression:

- nginx with the configuration ``statusgen nginx-conf`` writes, less the rate
  limit (``--no-rate-limit``) so that wrk measures the rules, not 429s;
- a bare nginx (root, sendfile and tcp_nopush as in the generated file, one
  location): the ceiling, asked for the
  files by their names; the ratio generated / bare is the cost of the rules;
- the preview server (``statusgen serve``), with a limit too high to reach.

Both nginx run without an access log and with ``worker_processes auto``;
wrk runs on the same machine, so the figures are for comparison, not
capacity planning.

    python -m bench serving        # or: make bench (runs every bench)
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx

from statusgen import demo
from statusgen.web.nginx import nginx_config
from statusgen.web.nginx_inputs import NginxOptions
from statusgen.web.serve import PreviewServer

DURATION_S = 3
ROUNDS = 3
CONNECTIONS = 32
THREADS = 2
GENERATED = "nginx, generated configuration"
BARE_NAME = "nginx, bare configuration"
PREVIEW = "statusgen serve (preview)"
SNAPSHOT = ("/api/v1/snapshot", "/api/v1/snapshot.json")
HISTORY = ("/api/v1/services/acme-api/history?range=24h", "/api/v1/services/acme-api/history/24h.json")
BARE = """pid nginx.pid;
error_log error.log;
worker_processes auto;
events {{ worker_connections 1024; }}
http {{
    client_body_temp_path client_body_temp;
    proxy_temp_path proxy_temp;
    fastcgi_temp_path fastcgi_temp;
    uwsgi_temp_path uwsgi_temp;
    scgi_temp_path scgi_temp;
    access_log off;
    sendfile on;
    tcp_nopush on;
    types {{ application/json json; }}
    server {{
        listen 127.0.0.1:{port};
        root "{root}";
        location / {{ }}
    }}
}}
"""


class QuietPreviewServer(PreviewServer):
    """The preview server, quiet about the connections wrk drops at the end of a run."""

    def handle_error(self, request: object, client_address: object) -> None:
        pass


@dataclass(frozen=True)
class Figure:
    server: str
    url: str
    rps: float


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(port: int, process: subprocess.Popen[bytes] | None = None) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"nginx exited: {process.stderr.read().decode() if process.stderr else ''}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.02)
    raise RuntimeError(f"nothing listens on port {port}")


def start_nginx(prefix: Path, conf_text: str, port: int) -> subprocess.Popen[bytes]:
    prefix.mkdir(parents=True, exist_ok=True)
    conf = prefix / "nginx.conf"
    conf.write_text(conf_text)
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    process = subprocess.Popen(
        [nginx, "-p", str(prefix), "-c", str(conf), "-e", str(prefix / "error.log"), "-g", "daemon off;"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    wait_for(port, process)
    return process


def stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    process.wait(timeout=10)


def wrk(url: str) -> float:
    """Requests per second wrk measured; every answer must have been a 200."""
    with httpx.Client() as client:
        status = client.get(url, headers={"Accept-Encoding": "identity"}).status_code
    assert status == 200, f"{url}: {status}"
    out = subprocess.run(
        ["wrk", f"-t{THREADS}", f"-c{CONNECTIONS}", f"-d{DURATION_S}s", url], capture_output=True, text=True, check=True
    ).stdout
    assert "Non-2xx" not in out, out
    return float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]


def build_tree(work: Path) -> Path:
    site = work / "site"
    demo.main(["--no-serve", "--cycles", "2", "--workdir", str(work / "demo"), "--output", str(site)])
    return site


@dataclass
class Servers:
    """The three servers of the tree, each a base URL and a way to stop it."""

    bases: dict[str, str]
    stops: list[Callable[[], object]]

    def stop(self) -> None:
        for stop_one in reversed(self.stops):
            stop_one()


def start_servers(site: Path, work: Path) -> Servers:
    user = "root" if os.geteuid() == 0 else None  # tests and benches may run as root in 0700 folders
    servers = Servers({}, [])
    port = free_port()
    generated = nginx_config(
        NginxOptions(site=site, listen=f"127.0.0.1:{port}", rate_limit=False, access_log="off", user=user)
    )
    process = start_nginx(work / "generated", generated, port)
    servers.stops.append(lambda p=process: stop(p))
    servers.bases[GENERATED] = f"http://127.0.0.1:{port}"
    port = free_port()
    process = start_nginx(work / "bare", ("user root;\n" if user else "") + BARE.format(port=port, root=site), port)
    servers.stops.append(lambda p=process: stop(p))
    servers.bases[BARE_NAME] = f"http://127.0.0.1:{port}"
    preview = QuietPreviewServer(site, "127.0.0.1", 0, quiet=True, per_minute=10**12, pages_per_minute=10**12)
    threading.Thread(target=preview.serve_forever, daemon=True).start()
    servers.stops.append(lambda: (preview.shutdown(), preview.server_close()))
    servers.bases[PREVIEW] = f"http://127.0.0.1:{preview.server_address[1]}"
    return servers


def cases(servers: Servers) -> list[tuple[str, str, str]]:
    """(server, file, url): the bare nginx is asked for the files by their names."""
    out = []
    for name, (url, path) in (("snapshot", SNAPSHOT), ("history", HISTORY)):
        for server, base in servers.bases.items():
            out.append((server, name, base + (path if server == BARE_NAME else url)))
    return out


def measure(servers: Servers) -> list[Figure]:
    """The best of ROUNDS runs of each case, the cases interleaved (the machine may be shared)."""
    best: dict[tuple[str, str], Figure] = {}
    for _ in range(ROUNDS):
        for server, name, url in cases(servers):
            rps = wrk(url)
            if (server, name) not in best or rps > best[(server, name)].rps:
                best[(server, name)] = Figure(server, url.split("/", 3)[3], rps)
    return list(best.values())


def report(figures: list[Figure], site: Path) -> None:
    sizes = {url: (site / rel.lstrip("/")).stat().st_size for url, rel in (SNAPSHOT, HISTORY)}
    print(
        f"\nwrk -t{THREADS} -c{CONNECTIONS} -d{DURATION_S}s on loopback, identity encoding, best of {ROUNDS} "
        f"(snapshot {sizes[SNAPSHOT[0]]} bytes, 24h history {sizes[HISTORY[0]]} bytes)"
    )
    for f in figures:
        print(f"  {f.server:32} {f.rps:>10,.0f} req/s  /{f.url}")
    rps = {(f.server, i // 3): f.rps for i, f in enumerate(figures)}
    for i, name in enumerate(("snapshot", "history")):
        gen, bare, preview = rps[(GENERATED, i)], rps[(BARE_NAME, i)], rps[(PREVIEW, i)]
        print(f"  {name}: generated / bare = {gen / bare:.2f}; generated / preview = {gen / preview:.1f}x")


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="statusgen-bench-") as tmp:
        work = Path(tmp)
        work.chmod(0o755)
        site = build_tree(work)
        servers = start_servers(site, work)
        try:
            report(measure(servers), site)
        finally:
            servers.stop()


if __name__ == "__main__":
    main()
