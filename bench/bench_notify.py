"""How long notifiers that never answer hold a run (docs/notifications.md: "a run is never held
longer than the slowest timeout and two seconds").

A loopback target fails, so each run opens an incident and queues a message for each of three
notifiers (timeouts 1, 2 and 3 s) whose servers take the connection and never answer. The run's
time is measured against the same run with notifiers that answer at once; the difference, the
median of three, is printed beside its budget (PASS/FAIL): at most the slowest timeout + 2 s. The
test suite holds the same promise with a generous bound (tests/test_promises_timebound.py).

    python -m bench notify                       # or: make bench (runs every bench)
"""

from __future__ import annotations

import http.server
import socket
import statistics
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from statusgen.config import load_config
from statusgen.cycle import run_cycle

TIMEOUTS_S = (1, 2, 3)
BUDGET_S = max(TIMEOUTS_S) + 2.0
RUNS = 3


class _Handler(http.server.BaseHTTPRequestHandler):
    status = 200

    def do_GET(self) -> None:
        self._answer()

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self._answer()

    def _answer(self) -> None:
        self.send_response(self.status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


class _Failing(_Handler):
    status = 503


@contextmanager
def _http(handler: type[_Handler]) -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def _hanging() -> Iterator[str]:
    listener = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                held.append(listener.accept()[0])
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield f"127.0.0.1:{listener.getsockname()[1]}"
    finally:
        listener.close()
        for conn in held:
            conn.close()


def _run(folder: Path, target: str, hooks: list[str]) -> float:
    folder.mkdir()
    notify = "".join(
        f'\n[[notify]]\nname = "hook{i}"\nurl = "statusgen://{host}/hook"\ntimeout = {t}\n'
        for i, (host, t) in enumerate(zip(hooks, TIMEOUTS_S, strict=True))
    )
    path = folder / "services.toml"
    path.write_text(
        '[site]\ntitle = "Bench"\nbase_url = "https://status.example.org"\ninterval = 60\nconfirm = 0\n\n'
        '[categories]\napis = "APIs"\n\n[[services]]\nslug = "alpha"\nname = "Alpha"\ncategory = "apis"\n'
        f'failures_to_open = 1\n[[services.checks]]\nurl = "http://{target}/"\n{notify}',
        encoding="utf-8",
    )
    config = load_config(path)
    now = datetime.now(UTC).replace(microsecond=0)
    started = time.monotonic()
    run_cycle(config, lambda: now)
    return time.monotonic() - started


def main() -> None:
    print(f"notifiers with timeouts {', '.join(f'{t} s' for t in TIMEOUTS_S)} that never answer; median of {RUNS}")
    held = []
    with tempfile.TemporaryDirectory(prefix="bench-notify-") as tmp, _http(_Failing) as target:
        for n in range(RUNS):
            with _http(_Handler) as fast:
                baseline = _run(Path(tmp) / f"fast-{n}", target, [fast] * len(TIMEOUTS_S))
            with _hanging() as a, _hanging() as b, _hanging() as c:
                hanging = _run(Path(tmp) / f"hanging-{n}", target, [a, b, c])
            held.append(hanging - baseline)
            print(f"  run {n + 1}: {hanging:.2f} s, against {baseline:.2f} s with notifiers that answer")
    value = statistics.median(held)
    name = "a run held by notifiers that never answer"
    budget = f"<= {BUDGET_S:g} s"
    ok = value <= BUDGET_S
    print(f"  {name:<56} {value:>8.2f} s   budget {budget:<9} {'PASS' if ok else 'FAIL'}", flush=True)
