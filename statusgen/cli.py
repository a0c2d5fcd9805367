"""The command line: thin click commands over the core, one error boundary.

Exit codes: 0 success; 1 any other statusgen error; 2 invalid configuration
or usage; 3 store error; 4 the output tree could not be written; 5 another
run holds the lock.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from statusgen import __version__
from statusgen.config import load_config
from statusgen.errors import StatusgenError, StoreError
from statusgen.model import SEVERITIES, VENDOR_FORMATS
from statusgen.progress import Advance, untold

if TYPE_CHECKING:
    from statusgen.config import Config
    from statusgen.store import Store

DEFAULT_CONFIG = "services.toml"


class Boundary(click.Group):
    """Prints a StatusgenError as its message and exits with its code: no traceback."""

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except StatusgenError as exc:
            click.echo(
                f"statusgen: {exc}"
                if "\n" not in str(exc)
                else f"statusgen: {len(str(exc).splitlines())} problems:\n{exc}",
                err=True,
            )
            sys.exit(exc.exit_code)


config_option = click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=lambda: os.environ.get("STATUSGEN_CONFIG", DEFAULT_CONFIG),
    show_default=DEFAULT_CONFIG,
    help="The configuration file (or $STATUSGEN_CONFIG).",
)


@contextmanager
def progress(label: str, length: int) -> Iterator[Advance]:
    """A progress bar on stderr while it is a terminal; nothing at all in logs and CI."""
    if not sys.stderr.isatty():
        yield untold
        return
    with click.progressbar(length=length, label=label, file=sys.stderr) as bar:
        yield bar.update


new_store_option = click.option(
    "--new-store",
    is_flag=True,
    help="Start a new store where the one the site was built from is missing or empty (its history is lost).",
)


@click.group(cls=Boundary)
@click.version_option(__version__, prog_name="statusgen", message="%(prog)s %(version)s")
@click.option(
    "--log-format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="Logs on stderr: human-readable lines, or JSON lines.",
)
def main(log_format: str) -> None:
    """statusgen: probe services, merge what vendors say, and write a static status site and API."""
    from statusgen.logs import setup

    setup(log_format)


@main.command("check-config")
@config_option
@click.argument("config_file", metavar="[CONFIG]", type=click.Path(dir_okay=False, path_type=Path), required=False)
@click.option(
    "--online",
    is_flag=True,
    help="Then log in to [subscriptions]' mailbox and mail server (nothing is read or sent).",
)
def check_config(config_path: Path, config_file: Path | None, online: bool) -> None:
    """Validate a configuration file (CONFIG, or --config as for every other command) and its
    notes folder, and report every problem at once; with --online, also that the subscriptions'
    mailbox and mail server answer and take the login (exit 2 when not)."""
    from statusgen.notes import checked_config

    if config_file is not None:
        config_path = config_file

    cfg = checked_config(config_path)
    checks = sum(len(s.checks) for s in cfg.services)
    files = cfg.operator
    operator = f", {len(files.notes)} notes, {len(files.incidents)} manual incidents, {len(files.maintenance)} planned"
    click.echo(
        f"{config_path}: ok: {len(cfg.services)} services, {checks} checks, {len(cfg.categories)} categories{operator}"
    )
    if cfg.locations:  # the agents' key is set here too, and the inbox answers (a listing of it)
        from statusgen.batches import NAME
        from statusgen.inbox import config_inbox, location_keys

        keys = location_keys(cfg)
        listed = config_inbox(cfg).names()
        waiting = sum(1 for n in listed if (m := NAME.fullmatch(n)) and m["location"] in keys)
        names = ", ".join(cfg.location_names)
        others = (
            f"; {len(listed) - waiting} files that are not batches (left as they are)" if len(listed) > waiting else ""
        )
        click.echo(f"locations {names}: keys set; inbox {cfg.site.inbox} reachable, {waiting} batches waiting{others}")
    if online:
        _check_online(cfg)


def _check_online(cfg: Config) -> None:
    """What a run asks of the mailbox and the mail server first, asked now: a login refused is
    found before a visitor's request waits for an answer."""
    from statusgen.errors import ConfigError
    from statusgen.subscribe.online import check_online

    subs = cfg.subscriptions
    if subs is None:
        click.echo("--online: no [subscriptions] to check")
        return
    problems = check_online(subs, os.environ)
    if problems:
        raise ConfigError(problems)
    click.echo(f"[subscriptions]: mailbox {subs.mailbox.shown} and mail server {subs.smtp.shown}: ok")


@main.command()
@click.argument("folder", type=click.Path(file_okay=False, path_type=Path), default=Path("."))
def init(folder: Path) -> None:
    """Start a site: a commented services.toml for three example services and the GitHub Actions
    workflow that runs it on a schedule, in FOLDER (default: here). Never overwrites a file."""
    import shlex

    from statusgen.scaffold import init as write

    for path in write(folder):
        click.echo(f"wrote {path}")
    config = folder / DEFAULT_CONFIG
    where = "" if folder.resolve() == Path.cwd().resolve() else f" --config {shlex.quote(str(config))}"
    click.echo(
        f"\nEdit {config} for your own services, then:\n"
        f"  statusgen run{where}      # check them once and write the site\n"
        f"  statusgen serve{where}    # look at it on http://127.0.0.1:8080/"
    )


@main.command("config-docs")
def config_docs() -> None:
    """Print the configuration reference (docs/configuration.md) generated from the schema."""
    from statusgen.config import config_reference

    click.echo(config_reference(), nl=False)


@main.command()
@config_option
@click.option("--location", required=True, help="The location this agent probes from: a name in [[locations]].")
@click.option("--loop", is_flag=True, help="Run every site.interval seconds until SIGTERM.")
@click.option("--max-runs", type=click.IntRange(1), default=None, help="With --loop: stop after N runs.")
@click.option("--bind", default=None, help="The local address the checks' connections leave from.")
def probe(config_path: Path, location: str, loop: bool, max_runs: int | None, bind: str | None) -> None:
    """A probe agent's run: check every service from this location, and deliver the results as
    one signed batch to the inbox (docs/locations.md). Needs the configuration and the key only."""
    from statusgen.agent.loop import agent_loop
    from statusgen.agent.run import agent_run
    from statusgen.inbox import InboxError
    from statusgen.logs import event

    cfg = load_config(config_path)
    if loop:
        sys.exit(agent_loop(cfg, location, bind, max_runs))
    done = agent_run(cfg, location, source=bind)
    event(done.line())
    if done.error:
        raise InboxError(f"{done.error}; {done.kept} batches kept to send by a later run")


@main.command()
@config_option
def locations(config_path: Path) -> None:
    """Each location's last batch taken and its lag, and the last one refused, from the store."""
    from statusgen.locations.report import locations_lines

    for line in locations_lines(load_config(config_path)):
        click.echo(line)


@main.command()
@config_option
@click.option("--loop", is_flag=True, help="Run a cycle every site.interval seconds until SIGTERM.")
@click.option("--max-cycles", type=click.IntRange(1), default=None, help="With --loop: stop after N cycles.")
@click.option(
    "--wait-lock",
    type=click.FloatRange(0),
    default=0.0,
    show_default=True,
    help="Seconds to wait when another run holds the lock (then exit 5).",
)
@new_store_option
def run(config_path: Path, loop: bool, max_cycles: int | None, wait_lock: float, new_store: bool) -> None:
    """One cycle: probe, store, decide, render (or, with --loop, one every interval)."""
    from statusgen.cycle import open_store, run_cycle
    from statusgen.logs import event
    from statusgen.loop import Loop, report_fields
    from statusgen.store import lock_store

    if loop:
        if new_store:  # made here, once: the loop's cycles then find it
            cfg = load_config(config_path)
            with lock_store(cfg.site.store, wait_lock):
                open_store(cfg, new_store=True).close()
        sys.exit(Loop(config_path, max_cycles).run())
    cfg = load_config(config_path)
    with lock_store(cfg.site.store, wait_lock):
        report = run_cycle(cfg, new_store=new_store)
    event(report.line(), **report_fields(report))


@main.command()
@config_option
@click.option("--test", "test_message", is_flag=True, help="Send a test message (the only thing notify does for now).")
@click.argument("name", required=False)
def notify(config_path: Path, test_message: bool, name: str | None) -> None:
    """Send a test message to the notifier NAME, or to every [[notify]] notifier, and print what
    each answered. Exit 1 when any could not be sent to."""
    from statusgen.logs import printable
    from statusgen.notify.outbox import try_notifiers
    from statusgen.timeutil import utcnow

    if not test_message:
        raise click.UsageError("say what to do: statusgen notify --test [NAME]")
    cfg = load_config(config_path)
    known = [n.name for n in cfg.notifiers]
    if name is not None and name not in known:
        raise click.BadParameter(f'no notifier "{name}"; configured: {", ".join(known) or "none"}', param_hint="NAME")
    if not known:
        raise click.UsageError(f"{config_path} has no [[notify]] notifier; see docs/notifications.md")
    answers = try_notifiers(cfg, [name] if name else [], utcnow())
    for answer in answers:
        click.echo(f"{answer.notifier}: {'sent' if answer.sent else 'NOT SENT'}: {printable(answer.said)}")
    failed = [a.notifier for a in answers if not a.sent]
    if failed:
        raise StatusgenError(f"{len(failed)} of {len(answers)} notifiers could not be sent to: {', '.join(failed)}")


class Moment(click.ParamType[datetime]):
    """A time: ``now``, ``2026-11-25 14:02`` (UTC) or a date-time with an offset."""

    name = "TIME"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> datetime:
        from statusgen.config.operatorfiles import heading_time
        from statusgen.timeutil import utcnow

        if isinstance(value, datetime):
            return value
        at = utcnow().replace(microsecond=0) if value == "now" else heading_time(value)
        if at is None:
            self.fail(f'"{value}" is not a time: give now, 2026-11-25 14:02 (UTC) or 2026-11-25T14:02:00+01:00')
        return at


message_option = click.option("--message", "-m", default=None, help="The text, in Markdown (default: read from stdin).")


def _text(message: str | None) -> str:
    text = message if message is not None else sys.stdin.read()
    if not text.strip():
        raise click.UsageError("the text is empty: give --message or write it on stdin")
    return text


@main.command()
@config_option
@click.argument("incident_id")
@click.option("--at", type=Moment(), default="now", show_default=True, help="When the note was written.")
@message_option
def note(config_path: Path, incident_id: str, at: datetime, message: str | None) -> None:
    """Write a note on incident INCIDENT_ID into the notes folder (docs/notes.md)."""
    from statusgen.notes import write_note

    click.echo(f"wrote {write_note(config_path, incident_id, at, _text(message))}")


@main.command()
@config_option
@click.argument("service")
@click.option("--title", required=True, help="What happened, in a few words.")
@click.option("--severity", type=click.Choice(SEVERITIES), default="major", show_default=True)
@click.option("--started", type=Moment(), default="now", show_default=True, help="When it started.")
@click.option("--resolved", type=Moment(), default=None, help="When it ended (edit the file later to resolve it).")
@message_option
def incident(
    config_path: Path,
    service: str,
    title: str,
    severity: str,
    started: datetime,
    resolved: datetime | None,
    message: str | None,
) -> None:
    """Write a manual incident of SERVICE into the notes folder: one our checks cannot see."""
    from statusgen.notes import write_incident

    path = write_incident(config_path, service, title, severity, started, resolved, _text(message))
    click.echo(f"wrote {path}")


@main.command()
@config_option
@click.option("--title", required=True, help="What is being done.")
@click.option("--service", "services", multiple=True, required=True, help="A service it is about (repeat).")
@click.option("--start", type=Moment(), required=True, help="When it begins.")
@click.option("--end", type=Moment(), required=True, help="When it ends.")
@message_option
def maintenance(
    config_path: Path, title: str, services: tuple[str, ...], start: datetime, end: datetime, message: str | None
) -> None:
    """Write a planned maintenance into the notes folder: shown, and its services in maintenance."""
    from statusgen.notes import write_maintenance

    path = write_maintenance(config_path, title, services, start, end, _text(message))
    click.echo(f"wrote {path}")


@main.command()
@config_option
@new_store_option
def build(config_path: Path, new_store: bool) -> None:
    """Re-render the whole tree from the store alone (no probing)."""
    from statusgen.cycle import rebuild
    from statusgen.store import lock_store

    cfg = load_config(config_path)
    with lock_store(cfg.site.store):
        result = rebuild(cfg, new_store=new_store, progress=progress)
    click.echo(f"{result.line()} -> {cfg.site.output}")


@main.command()
@click.option(
    "--site",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="The tree to serve; default: the output of --config, else ./site.",
)
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", type=int, default=lambda: int(os.environ.get("PORT", "8080")), show_default="8080 or $PORT")
@click.option("--quiet", is_flag=True, help="Do not log requests.")
@config_option
def serve(site: Path | None, host: str, port: int, quiet: bool, config_path: Path) -> None:
    """Preview server: serves the tree with every HTTP rule of the API."""
    from statusgen.web.serve import serve as run_server

    if site is None:
        site = load_config(config_path).site.output if config_path.exists() else Path("site")
    click.echo(f"Serving {site} at http://{host}:{port}/", err=True)
    run_server(site, host, port, quiet)


@main.command()
@click.argument("source")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(("auto", *VENDOR_FORMATS)),
    default="auto",
    show_default=True,
)
@click.option("--components", "-c", multiple=True, help="Narrow to these components or groups (repeatable).")
@click.option("--timeout", type=float, default=10.0, show_default=True)
def vendor(source: str, fmt: str, components: tuple[str, ...], timeout: float) -> None:
    """Print the normalized view of a vendor status source (a file or a URL) as JSON."""
    from statusgen.jsonout import dump_pretty
    from statusgen.vendors.once import read_vendor_source

    view = read_vendor_source(source, None if fmt == "auto" else fmt, list(components) or None, timeout)
    click.echo(dump_pretty(view.to_json()).decode(), nl=False)


@main.command()
@click.option("--services", "n", type=click.IntRange(1, 100_000), required=True, help="How many services.")
@click.option(
    "--days",
    type=click.IntRange(1, 3660),
    required=True,
    help="Days of history; past 90, the months before are kept as the monthly rollups alone, as a real "
    "store keeps them.",
)
@click.option(
    "--config-out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=Path("simulated.toml"),
    show_default=True,
    help="Where to write the matching configuration.",
)
@click.option(
    "--db",
    type=click.Path(dir_okay=False, path_type=Path),
    default=Path("data/simulated.db"),
    show_default=True,
    help="The store to fill (must not exist).",
)
@click.option(
    "--output",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("site"),
    show_default=True,
    help="The output tree named in the configuration.",
)
@click.option("--seed", type=int, default=1, show_default=True)
@click.option(
    "--interval",
    type=click.Choice(["60", "120", "300", "600", "900"]),
    default="60",
    show_default=True,
    help="Seconds between checks (the configuration's site.interval).",
)
def simulate(n: int, days: int, config_out: Path, db: Path, output: Path, seed: int, interval: str) -> None:
    """Fill a new store with realistic synthetic history, and write a matching configuration."""
    from statusgen.simulate import config_text
    from statusgen.simulate import simulate as fill
    from statusgen.timeutil import utcnow

    if db.exists():
        raise click.UsageError(f"--db {db} exists; simulate fills a new store only (remove it or pick another path)")
    config_out.write_text(config_text(n, db.resolve(), output.resolve(), int(interval)), encoding="utf-8")
    with progress(f"simulating {n} services x {days} days", n) as done:
        fill(n, days, db, utcnow(), seed, done, int(interval))
    click.echo(f"wrote {config_out} and {db}; now: statusgen build --config {config_out}")


# -- further commands: one block each, below this line ---------------------------


@main.command()
@config_option
@click.option("--repair", is_flag=True, help="Drop the damaged values and rebuild what the rest of the store holds.")
def doctor(config_path: Path, repair: bool) -> None:
    """Read every stored value back and name the damaged ones (exit 3 when there are any, until
    --repair has dropped them)."""
    from statusgen.store import Store, lock_store
    from statusgen.store.doctor import READINGS, examine
    from statusgen.store.doctor import repair as repaired

    cfg = load_config(config_path)
    with lock_store(cfg.site.store), Store(cfg.site.store, expected=True) as store:
        with progress(f"reading every stored value of {cfg.site.store}", len(READINGS)) as done:
            found = examine(store, done)
        for damage in found:
            click.echo(damage.line())
        if not found:
            click.echo(f"{cfg.site.store}: every stored value reads back")
            return
        if not repair:
            raise StoreError(f"{cfg.site.store}: {len(found)} damaged values; statusgen doctor --repair drops them")
        for line in repaired(store, found):
            click.echo(line)
        click.echo(f"{cfg.site.store}: repaired; the next run or build uses it as it is now")


@main.command()
@config_option
@click.argument("copy", metavar="FILE", type=click.Path(dir_okay=False, path_type=Path))
def backup(config_path: Path, copy: Path) -> None:
    """Copy the live store to FILE, consistent and safe while a run writes (SQLite's online
    backup); FILE is replaced only once the copy is whole. Restoring: docs/operations.md."""
    from statusgen.store.backup import backup_store

    click.echo(backup_store(load_config(config_path).site.store, copy).line())


@main.command()
@config_option
def health(config_path: Path) -> None:
    """Exit 0 while the site's health document says its data is fresh (a run finished within
    three intervals), 1 when it is stale or missing: a container's health check, a monitor's probe."""
    import orjson

    from statusgen.routes import API
    from statusgen.timeutil import parse_iso, utcnow

    path = load_config(config_path).site.output / API / "health.json"
    try:
        doc = orjson.loads(path.read_bytes())
        fresh_until, stale = parse_iso(doc["stale_after"]), doc["collection"]["stale"]
    except (OSError, orjson.JSONDecodeError, KeyError, TypeError) as exc:
        raise StatusgenError(
            f"{path}: no health document to read ({type(exc).__name__}); has a run finished?"
        ) from None
    if stale or fresh_until is None or fresh_until <= utcnow():
        raise StatusgenError(f"{path}: the data is stale (fresh until {doc['stale_after']}); is the run loop going?")
    click.echo(f"{path}: fresh until {doc['stale_after']}")


@main.group(invoke_without_command=True)
@config_option
@click.option(
    "--export",
    "export_to",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write every address to FILE as CSV (mode 0600): address, state, services (slugs, none for the "
    "whole site), language, created_at, confirmed_at.",
)
@click.pass_context
def subscribers(ctx: click.Context, config_path: Path, export_to: Path | None) -> None:
    """The visitors subscribed by email (docs/subscriptions.md): confirmed ones by service, the
    requests waiting for a confirmation, and the outbox's messages by state."""
    ctx.obj = config_path
    if ctx.invoked_subcommand is not None:
        if export_to is not None:
            raise click.UsageError("--export writes the list; give it without a subcommand")
        return
    from statusgen.subscribe.operator import export, report_lines

    cfg = load_config(config_path)
    with _subscriber_store(cfg) as store:
        if export_to is not None:
            rows = store.subscribers()
            export(rows, export_to)
            click.echo(f"{export_to}: {len(rows)} addresses")
            return
        for line in report_lines(cfg, store):
            click.echo(line)


@contextmanager
def _subscriber_store(cfg: Config) -> Iterator[Store]:
    """The store, under the run lock: a run reading the mailbox changes the subscribers."""
    from statusgen.store import Store, lock_store

    with lock_store(cfg.site.store), Store(cfg.site.store, expected=True) as store:
        yield store


@subscribers.command("remove")
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path), default=None, hidden=True)
@click.argument("address")
@click.pass_obj
def remove_subscriber(group_config: Path, config_path: Path | None, address: str) -> None:
    """Delete the subscriber ADDRESS at once, with what is queued for them; they are sent nothing.
    Exit 0 when removed, 1 when no subscriber has that address."""
    cfg = load_config(config_path or group_config)  # --config before or after "remove"
    with _subscriber_store(cfg) as store:
        if not store.remove_subscriber(address):
            raise StatusgenError(
                f"{cfg.site.store}: no subscriber has that address; statusgen subscribers --export FILE lists them"
            )
    click.echo(f"{cfg.site.store}: removed that subscriber")


@main.command("nginx-conf")
@click.option(
    "--site",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("site"),
    show_default=True,
    help="The output tree (the link): nginx's root, and where the query whitelists are read.",
)
@click.option("--listen", default="80", show_default=True, help="nginx listen address: PORT or ADDR:PORT.")
@click.option("--server-name", default="_", show_default=True, help="nginx server_name.")
@click.option("--server-block", is_flag=True, help="Print only the http-level lines and the server block.")
@click.option(
    "--no-rate-limit", is_flag=True, help="Leave out the 120-per-minute limit (benchmarks, a CDN that limits)."
)
@click.option("--real-ip-from", multiple=True, metavar="CIDR", help="A trusted proxy; repeat for several.")
@click.option(
    "--real-ip-header",
    default="X-Forwarded-For",
    show_default=True,
    help="Header with the client address, set by the trusted proxies.",
)
@click.option(
    "--user", default=None, help='The user (and group) of nginx\'s workers, e.g. "www-data" (a complete file only).'
)
@click.option(
    "--access-log",
    default="access.log",
    show_default=True,
    help="Access log path (relative to the prefix), or off (a complete file only).",
)
def nginx_conf(
    site: Path,
    listen: str,
    server_name: str,
    server_block: bool,
    no_rate_limit: bool,
    real_ip_from: tuple[str, ...],
    real_ip_header: str,
    user: str | None,
    access_log: str,
) -> None:
    """Print the nginx configuration that serves the tree with every HTTP rule of the API."""
    from statusgen.web.nginx import nginx_config
    from statusgen.web.nginx_inputs import NginxOptions

    click.echo(
        nginx_config(
            NginxOptions(
                site,
                listen,
                server_name,
                server_block,
                not no_rate_limit,
                real_ip_from,
                real_ip_header,
                user,
                access_log,
            )
        ),
        nl=False,
    )


@main.command()
@click.option(
    "--site",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="The tree to publish; default: the output of --config, else ./site.",
)
@click.option(
    "--remote",
    required=True,
    metavar="REMOTE:PATH",
    help="An rclone remote and path (configured in rclone's config or RCLONE_CONFIG_* variables).",
)
@click.option("--dry-run", is_flag=True, help="Show what would be uploaded and deleted; change nothing.")
@click.option("--rclone", "rclone_bin", default="rclone", show_default=True, help="The rclone binary.")
@click.option(
    "--precompressed",
    is_flag=True,
    help="Upload each file that has a .gz copy as its gzipped bytes, with Content-Encoding: gzip (for a "
    "target that serves objects as stored); by default .gz copies stay home and the CDN compresses.",
)
@config_option
def publish(
    site: Path | None, remote: str, dry_run: bool, rclone_bin: str, precompressed: bool, config_path: Path
) -> None:
    """Copy the tree to object storage or another host with rclone: changed files, entry documents last."""
    from statusgen.web.publish import publish_tree

    if config_path.exists():
        from statusgen.inbox import check_inbox_place

        cfg = load_config(config_path)
        check_inbox_place(cfg, remote)  # the agents' inbox is never among what is published
        site = site or cfg.site.output
    published = publish_tree(site or Path("site"), remote, rclone_bin, dry_run, precompressed, progress)
    for line in published.lines():
        click.echo(line)


if __name__ == "__main__":  # pragma: no cover
    main()
