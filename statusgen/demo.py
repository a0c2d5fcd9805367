"""The bundled demo: loopback targets that behave like real services, a config
pointing at them, 150 days of simulated past, a first cycle, then the preview
server while a few quick cycles and then a live loop go on. It says what it
does at each step (with a progress bar on a terminal).

    make run            # or: python -m statusgen.demo [--port 8080] [--cycles 8]

Targets (all on 127.0.0.1, a free port): one service up, one with two checks
up, one slow (degraded), one half failing (partial outage), one failing
(major outage, an open incident), one that fails four cycles then recovers
(a closed incident), one in a maintenance window, one paused (unknown).
Before the first cycle, the store is given 150 days of simulated history for
the services that are not paused (``statusgen.simulate``), with a few past
incidents, so the bars and charts have a past and the monthly reports at
least three whole months (past 90 days as the monthly rollups alone, as a real
store keeps them). One visitor is subscribed by email before the first cycle, as any
would be (a request in the mailbox folder, its confirmation answered), so the
messages the incidents make are there to read in ``demo-data/mail/sent``. The
site's ``base_url`` is the address it is served at. Works offline; writes ``demo-data/`` and
``site/`` in the current folder.
"""

from __future__ import annotations

import argparse
import mailbox
import os
import secrets
import shutil
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass
from datetime import timedelta
from email.message import EmailMessage
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import click

from statusgen import mailto
from statusgen.agent.run import agent_run
from statusgen.config import Config, load_config
from statusgen.cycle import run_cycle
from statusgen.i18n import SHIPPED
from statusgen.simulate import Simulated, fill
from statusgen.store import Store
from statusgen.subscribe.run import mail_turn
from statusgen.timeutil import iso, utcnow
from statusgen.web.serve import PreviewServer

RECOVER_AFTER = 4  # the "search" target fails its first four requests
HISTORY_DAYS = 150  # past 90 days, monthly rollups only: at least three whole months of reports
OUTAGES_PER_DAY = 1 / 45  # two or so a service in 90 days: a past with a few incidents, not a disaster


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
        elif self.path == "/web/login" and self.client_address[0] == BROKEN_PATH:
            self._send(504, b"Gateway Timeout")  # the path from one location alone is broken
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


@dataclass(frozen=True)
class DemoService:
    slug: str
    name: str
    category: str
    paths: tuple[str, ...]
    check_keys: str = ""  # TOML lines added to each check
    service_keys: str = ""  # TOML lines added to the service
    median_ms: float | None = None  # its typical latency in the simulated past (drawn when None)


SERVICES = (
    DemoService("acme-api", "Acme API", "apis", ("/api/ok",), 'keyword = "ok"\n', "sla = 99.95\n"),
    DemoService("acme-web", "Acme Web", "web", ("/web/home", "/web/login")),
    DemoService("slowpoke", "Slowpoke Search", "apis", ("/slow",), "degraded_ms = 300\n", median_ms=240),
    DemoService("payments-eu", "Payments EU", "payments", ("/pay/charge", "/pay/refund")),
    DemoService("legacy-gateway", "Legacy Gateway", "web", ("/down",)),
    DemoService("search", "Search", "apis", ("/recovering",)),
    DemoService("billing-db", "Billing DB", "payments", ("/billing",)),
    DemoService("beta-region", "Beta Region", "web", ("/beta",), service_keys="paused = true\n"),
)
MAINTAINED = "billing-db"  # in a maintenance window now
#: With --locations: three probe agents on loopback, each leaving from its own address, and the
#: one whose path to Acme Web's login is broken.
AGENTS = {"eu-west": "127.0.0.2", "us-east": "127.0.0.3", "ap-south": "127.0.0.4"}
BROKEN_PATH = AGENTS["ap-south"]
KEY_VARIABLE = "STATUSGEN_DEMO_INBOX_KEY"
DEMO_ADDRESS = "status@demo.example"  # the subscription address (docs/subscriptions.md)
DEMO_VISITOR = "visitor@demo.example"


def demo_config(
    targets_port: int,
    serve_port: int,
    workdir: Path,
    output: Path,
    interval: int,
    locations: bool = False,
    languages: tuple[str, ...] = ("en",),
) -> str:
    base = f"http://127.0.0.1:{targets_port}"
    now = utcnow()
    start, end = iso(now - timedelta(minutes=5)), iso(now + timedelta(hours=2))

    def svc(s: DemoService) -> str:
        checks = "".join(f'\n[[services.checks]]\nurl = "{base}{p}"\ntimeout = 2\n{s.check_keys}' for p in s.paths)
        text = (
            f'\n[[services]]\nslug = "{s.slug}"\nname = "{s.name}"\ncategory = "{s.category}"\n{s.service_keys}{checks}'
        )
        if s.slug == MAINTAINED:
            text += f'\n[[services.maintenance]]\nstart = "{start}"\nend = "{end}"\ntitle = "Database upgrade"'
        return text

    return "\n".join(
        [
            "# Written by the demo (statusgen.demo); targets run on loopback.",
            "[site]",
            'title = "statusgen demo"',
            f'base_url = "http://127.0.0.1:{serve_port}"',
            f"interval = {interval}",
            # A failing check is tried again within its run (site.confirm): a second apart here, as
            # the demo's first runs are, not ten (the first run would take twenty seconds).
            "confirm_every = 1",
            f'store = "{(workdir / "statusgen.db").resolve()}"',
            f'output = "{output.resolve()}"',
            'vantage_point = "this machine (loopback demo targets)"',
            f"languages = [{', '.join(f'{tag!r}' for tag in languages)}]".replace("'", '"'),
            *(
                [f'inbox = "{(workdir / "inbox").resolve()}"', f'inbox_key = "${{{KEY_VARIABLE}}}"']
                if locations
                else []
            ),
            "[categories]",
            'apis = "APIs"',
            'web = "Websites"',
            'payments = "Payments"',
            "[sla]",
            "payments = 99.9",
            *(
                f'[[locations]]\nname = "{name}"\ndescription = "an agent leaving from {address}"'
                for name, address in (AGENTS.items() if locations else [])
            ),
            *(svc(s) for s in SERVICES),
            # Visitors' email: the mailbox is a Maildir folder (as a host's own delivery writes it),
            # and what would be sent lands in another, to read with any mail program.
            "\n[subscriptions]",
            f'address = "{DEMO_ADDRESS}"',
            f'mailbox = "{(workdir / "mail" / "inbox").resolve()}"',
            f'smtp = "{(workdir / "mail" / "sent").resolve()}"',
        ]
    )


def visitor_subscribes(config: Config) -> None:
    """One visitor subscribed as any would be: the request their mail program writes delivered to
    the mailbox, a run's confirmation answered, the next run's welcome."""
    subs = config.subscriptions
    assert subs is not None and subs.mailbox.folder is not None and subs.smtp.folder is not None
    subs.mailbox.folder.parent.mkdir(parents=True, exist_ok=True)
    inbox, sent = mailbox.Maildir(subs.mailbox.folder, create=True), mailbox.Maildir(subs.smtp.folder, create=True)

    def write(subject: str) -> None:
        msg = EmailMessage()
        msg["From"], msg["To"], msg["Subject"] = DEMO_VISITOR, subs.address, subject
        msg.set_content("")
        inbox.add(msg)

    write(mailto.subject(mailto.SUBSCRIBE))
    with Store(config.site.store) as store:
        mail_turn(store, config, utcnow())
        asked = [m["Subject"] for m in sent if str(m["Subject"]).startswith(mailto.CONFIRM)]
        write(f"Re: {asked[-1]}")
        mail_turn(store, config, utcnow())


def simulated_past(store: Path, days: int) -> None:
    """``days`` of simulated history for the demo's services that are not paused, ending now; with
    a progress bar on a terminal."""
    services = [
        Simulated(s.slug, s.name, s.median_ms, OUTAGES_PER_DAY) for s in SERVICES if "paused" not in s.service_keys
    ]
    label = f"demo: simulating {days} days of past for {len(services)} services"
    if not sys.stdout.isatty():
        say(label)
        fill(services, days, store, utcnow(), seed=27)
        return
    with click.progressbar(length=len(services), label=label) as bar:
        fill(services, days, store, utcnow(), seed=27, progress=bar.update)


def say(line: str) -> None:
    print(line, flush=True)


def cycle(config: Config) -> str:
    """One cycle of the demo: each agent's run, when there are locations, then the main host's."""
    said = [agent_run(config, loc.name, source=AGENTS[loc.name]).line() for loc in config.locations]
    return "\n".join([*said, run_cycle(config).line()])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="statusgen.demo", description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8080")))
    parser.add_argument("--cycles", type=int, default=8, help="quick cycles before serving")
    parser.add_argument("--interval", type=int, default=30, help="seconds between live cycles")
    parser.add_argument("--days", type=int, default=HISTORY_DAYS, help="days of simulated past (0: none)")
    parser.add_argument("--workdir", type=Path, default=Path("demo-data"))
    parser.add_argument("--output", type=Path, default=Path("site"))
    parser.add_argument("--pause", type=float, default=1.0, help="seconds between the quick cycles")
    parser.add_argument("--no-serve", action="store_true", help="run the quick cycles and stop")
    parser.add_argument("--locations", action="store_true", help="three probe agents on 127.0.0.2-4 and a folder inbox")
    args = parser.parse_args(argv)

    targets = DemoServer()
    threading.Thread(target=targets.serve_forever, daemon=True).start()
    shutil.rmtree(args.workdir, ignore_errors=True)
    args.workdir.mkdir(parents=True)
    cfg_path = args.workdir / "demo.toml"
    port = targets.server_address[1]
    every = demo_config(port, args.port, args.workdir, args.output, args.interval, args.locations, SHIPPED)
    cfg_path.write_text(every)  # the demo speaks every language shipped: / and /de/, /fr/...
    if args.locations:
        os.environ.setdefault(KEY_VARIABLE, secrets.token_hex(32))  # the agents' and the builder's key
    config = load_config(cfg_path)
    say(f"demo: {len(SERVICES)} services on http://127.0.0.1:{port} (loopback), configured in {cfg_path}")
    if args.days > 0:
        simulated_past(config.site.store, args.days)
    visitor_subscribes(config)
    assert config.subscriptions is not None and config.subscriptions.smtp.folder is not None
    say(
        f"demo: {DEMO_VISITOR} subscribed by email; what the site sends lands in "
        f"{config.subscriptions.smtp.folder}/new (a Maildir: mutt -f, or any mail program)"
    )
    if args.cycles > 0:
        say("demo: the first run: checking every service, then building the whole site (a few seconds)")
        say(cycle(config))
    server = None
    if not args.no_serve:  # served from the first build on: the quick runs go on meanwhile
        server = PreviewServer(args.output, "127.0.0.1", args.port, quiet=True)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        say(
            f"\nstatusgen demo: open http://127.0.0.1:{args.port}/ "
            f"(API: http://127.0.0.1:{args.port}/api/v1/snapshot). Ctrl-C stops.\n"
        )
    if args.cycles > 1:
        say(f"demo: {args.cycles - 1} more quick runs, {args.pause:g} s apart, then one every {args.interval} s")
    for _ in range(args.cycles - 1):
        time.sleep(args.pause)
        say(cycle(config))
    if server is None:
        return
    try:
        while True:
            time.sleep(args.interval)
            say(cycle(config))
    except KeyboardInterrupt:
        say("stopped")


if __name__ == "__main__":
    main()
