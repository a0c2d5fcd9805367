"""The bundled demo: loopback targets that behave like real services, a config
pointing at them, a few quick cycles, then the preview server and a live loop.

    make run            # or: python -m statusgen.demo [--port 8080] [--cycles 8]

Targets (all on 127.0.0.1, a free port): one service up, one with two checks
up, one slow (degraded), one half failing (partial outage), one failing
(major outage, an open incident), one that fails four cycles then recovers
(a closed incident), one in a maintenance window, one paused (unknown).
Works offline.
"""

from __future__ import annotations

import argparse
import os
import shutil
import threading
import time
from collections import Counter
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from statusgen.config import load_config
from statusgen.cycle import run_cycle
from statusgen.timeutil import iso, utcnow
from statusgen.web.serve import PreviewServer

ROOT = Path(__file__).resolve().parent.parent
RECOVER_AFTER = 4  # the "search" target fails its first four requests


class DemoTargets(BaseHTTPRequestHandler):
    """The demo's fake services; behaviour depends on the path and how often it was asked."""

    server: DemoServer
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out at once, no 40 ms delayed-ACK stall

    def do_GET(self) -> None:
        n = self.server.count(self.path)
        if self.path == "/slow":
            time.sleep(0.6)
        if self.path in ("/pay/refund", "/down"):
            self._send(503, b"Service Unavailable")
        elif self.path == "/recovering" and n <= RECOVER_AFTER:
            self._send(502, b"Bad Gateway")
        else:
            self._send(200, b'{"ok": true, "service": "demo"}')

    def _send(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


class DemoServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), DemoTargets)
        self.hits: Counter[str] = Counter()
        self.lock = threading.Lock()

    def count(self, path: str) -> int:
        with self.lock:
            self.hits[path] += 1
            return self.hits[path]


def demo_config(port: int, workdir: Path, output: Path, interval: int) -> str:
    base = f"http://127.0.0.1:{port}"
    now = utcnow()
    start, end = iso(now - timedelta(minutes=5)), iso(now + timedelta(hours=2))

    def svc(slug: str, name: str, cat: str, *paths: str, extra: str = "", head: str = "") -> str:
        checks = "".join(f'\n[[services.checks]]\nurl = "{base}{p}"\ntimeout = 2\n{extra}' for p in paths)
        return f'\n[[services]]\nslug = "{slug}"\nname = "{name}"\ncategory = "{cat}"\n{head}{checks}'

    return "\n".join(
        [
            "# Written by the demo (statusgen.demo); targets run on loopback.",
            "[site]",
            'title = "statusgen demo"',
            'base_url = "http://127.0.0.1:8080"',
            f"interval = {interval}",
            f'store = "{workdir / "statusgen.db"}"',
            f'output = "{output}"',
            'vantage_point = "this machine (loopback demo targets)"',
            "[categories]",
            'apis = "APIs"',
            'web = "Websites"',
            'payments = "Payments"',
            svc("acme-api", "Acme API", "apis", "/api/ok", extra='keyword = "ok"\n'),
            svc("acme-web", "Acme Web", "web", "/web/home", "/web/login"),
            svc("slowpoke", "Slowpoke Search", "apis", "/slow", extra="degraded_ms = 300\n"),
            svc("payments-eu", "Payments EU", "payments", "/pay/charge", "/pay/refund"),
            svc("legacy-gateway", "Legacy Gateway", "web", "/down"),
            svc("search", "Search", "apis", "/recovering"),
            svc("billing-db", "Billing DB", "payments", "/billing"),
            f'[[services.maintenance]]\nstart = "{start}"\nend = "{end}"\ntitle = "Database upgrade"',
            svc("beta-region", "Beta Region", "web", "/beta", head="paused = true\n"),
        ]
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="statusgen.demo", description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8080")))
    parser.add_argument("--cycles", type=int, default=8, help="quick cycles before serving")
    parser.add_argument("--interval", type=int, default=30, help="seconds between live cycles")
    parser.add_argument("--workdir", type=Path, default=ROOT / "demo-data")
    parser.add_argument("--output", type=Path, default=ROOT / "site")
    parser.add_argument("--pause", type=float, default=1.0, help="seconds between the quick cycles")
    parser.add_argument("--no-serve", action="store_true", help="run the quick cycles and stop")
    args = parser.parse_args(argv)

    targets = DemoServer()
    threading.Thread(target=targets.serve_forever, daemon=True).start()
    shutil.rmtree(args.workdir, ignore_errors=True)
    args.workdir.mkdir(parents=True)
    cfg_path = args.workdir / "demo.toml"
    cfg_path.write_text(demo_config(targets.server_address[1], args.workdir, args.output, args.interval))
    config = load_config(cfg_path)
    print(f"demo targets on http://127.0.0.1:{targets.server_address[1]}; config {cfg_path}", flush=True)
    for _ in range(args.cycles):
        print(run_cycle(config).line(), flush=True)
        time.sleep(args.pause)
    if args.no_serve:
        return
    server = PreviewServer(args.output, "127.0.0.1", args.port, quiet=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(
        f"\nstatusgen demo: open http://127.0.0.1:{args.port}/ "
        f"(API: http://127.0.0.1:{args.port}/api/v1/snapshot). Ctrl-C stops.\n",
        flush=True,
    )
    try:
        while True:
            time.sleep(args.interval)
            print(run_cycle(config).line(), flush=True)
    except KeyboardInterrupt:
        print("stopped", flush=True)


if __name__ == "__main__":
    main()
