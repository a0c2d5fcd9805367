"""10,000 confirmed subscribers of one service (issue 58's budgets).

A loopback target fails, so the run opens an incident and queues a message to each subscriber;
after the build, the run sends them through a loopback mail server (aiosmtpd, in this process).
Printed beside their budgets (PASS/FAIL):

* every message handed to the mail server within 60 s of the run's decision (its ``finished_at``);
* the run's peak memory (its own VmHWM) at most 300 MB;
* the run's build no slower than the same run's without subscriptions (median of the runs, within
  25 % and 0.2 s: the build is the same work, the sending comes after it).

    python -m bench subscribers                  # or: make bench (runs every bench)
"""

from __future__ import annotations

import re
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from aiosmtpd.controller import Controller

from bench.bench_notify import _Failing, _http
from statusgen.config import load_config
from statusgen.decide.subscribers import CONFIRMED, Subscriber
from statusgen.store import Store

SUBSCRIBERS = 10_000
RUNS = 2
SEND_BUDGET_S = 60.0
MEMORY_BUDGET_MB = 300.0
BUILD_SLACK = (1.25, 0.2)  # ratio, and seconds: a small site's build is a fraction of a second

RUN = r"""
import atexit, sys
# VmHWM is this program's own peak: ru_maxrss keeps the forking process's across exec.
peak = lambda: next(l.split()[1] for l in open("/proc/self/status") if l.startswith("VmHWM:"))
atexit.register(lambda: print(f"peak_kib={peak()}", file=sys.stderr))
from statusgen.cli import main
sys.argv = ["statusgen", "run", "--config", sys.argv[1]]
main()
"""


class _Counter:
    """The mail server's side: how many messages it took, and when the last one arrived."""

    def __init__(self) -> None:
        self.count = 0
        self.last = 0.0
        self.lock = threading.Lock()

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        with self.lock:
            self.count += 1
            self.last = time.time()
        return "250 OK"


@contextmanager
def _relay() -> Iterator[tuple[int, _Counter]]:
    counter = _Counter()
    with socket.socket() as probe:  # a free port: aiosmtpd's controller connects to the one it is given
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    controller = Controller(counter, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield port, counter
    finally:
        controller.stop()


def _site(folder: Path, target: str, smtp_port: int | None) -> Path:
    folder.mkdir()
    subscriptions = (
        f'\n[subscriptions]\naddress = "status@example.org"\nmailbox = "inbox"\nsmtp = "smtp://127.0.0.1:{smtp_port}"\n'
        if smtp_port
        else ""
    )
    path = folder / "services.toml"
    path.write_text(
        '[site]\ntitle = "Bench"\nbase_url = "https://status.example.org"\ninterval = 60\nconfirm = 0\n\n'
        '[categories]\napis = "APIs"\n\n[[services]]\nslug = "alpha"\nname = "Alpha"\ncategory = "apis"\n'
        f'failures_to_open = 1\n[[services.checks]]\nurl = "http://{target}/"\n{subscriptions}',
        encoding="utf-8",
    )
    for sub in ("new", "cur", "tmp"):
        (folder / "inbox" / sub).mkdir(parents=True)
    return path


def _subscribe(store_path: Path, n: int) -> None:
    now = datetime.now(UTC)
    people = [
        Subscriber(f"reader{i}@example.net", f"token{i:027d}", CONFIRMED, ("alpha",), "en", now, now) for i in range(n)
    ]
    with Store(store_path) as store:
        store.save_subscribers(people, [], [], now)


def _run(config: Path) -> tuple[float, float]:
    """The run's build time (s) and peak memory (MB)."""
    done = subprocess.run([sys.executable, "-c", RUN, str(config)], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"the run failed:\n{done.stderr[-3000:]}")
    built = re.search(r"built in ([0-9.]+) s", done.stdout + done.stderr)
    peak = re.search(r"peak_kib=(\d+)", done.stderr)
    assert built and peak, done.stdout + done.stderr
    return float(built.group(1)), int(peak.group(1)) / 1024


def _decided(store_path: Path) -> float:
    with sqlite3.connect(store_path) as db:
        return float(db.execute("SELECT finished_at FROM runs ORDER BY id DESC LIMIT 1").fetchone()[0])


def _line(name: str, value: float, unit: str, budget: str, ok: bool) -> None:
    print(f"  {name:<56} {value:>8.2f} {unit:<3} budget {budget:<12} {'PASS' if ok else 'FAIL'}", flush=True)


def main() -> None:
    print(f"{SUBSCRIBERS:,} confirmed subscribers of one service; an incident opens; {RUNS} runs each")
    sends, peaks, builds, bases = [], [], [], []
    with tempfile.TemporaryDirectory(prefix="bench-subscribers-") as tmp, _http(_Failing) as target:
        for n in range(RUNS):
            base_build, _ = _run(_site(Path(tmp) / f"plain-{n}", target, None))
            with _relay() as (port, counter):
                config = _site(Path(tmp) / f"subscribed-{n}", target, port)
                store = load_config(config).site.store
                _subscribe(store, SUBSCRIBERS)
                build, peak = _run(config)
                took = counter.last - _decided(store)
                if counter.count != SUBSCRIBERS:
                    raise SystemExit(f"the mail server took {counter.count} messages, not {SUBSCRIBERS}")
            sends.append(took)
            peaks.append(peak)
            builds.append(build)
            bases.append(base_build)
            print(
                f"  run {n + 1}: {counter.count:,} messages, the last {took:.1f} s after the decision; "
                f"peak {peak:.0f} MB; build {build:.2f} s against {base_build:.2f} s without subscriptions"
            )
    send, peak = max(sends), max(peaks)
    build, base = statistics.median(builds), statistics.median(bases)
    _line("every message handed over, after the decision", send, "s", f"<= {SEND_BUDGET_S:g} s", send <= SEND_BUDGET_S)
    _line("the run's peak memory", peak, "MB", f"<= {MEMORY_BUDGET_MB:g} MB", peak <= MEMORY_BUDGET_MB)
    ratio, slack = BUILD_SLACK
    limit = base * ratio + slack
    _line(f"the build with subscribers (without: {base:.2f} s)", build, "s", f"<= {limit:.2f} s", build <= limit)


if __name__ == "__main__":
    main()
