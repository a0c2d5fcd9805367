"""``statusgen subscribers`` (counts, --export, remove) and ``check-config --online``, on a real
SQLite store whose subscribers are made through the Store API, as a run makes them."""

from __future__ import annotations

import csv
import hashlib
import stat
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from statusgen.cli import main
from statusgen.decide.subscribers import CONFIRMED, PENDING, Subscriber
from statusgen.store import Store
from statusgen.store.records import MailEvent
from statusgen.store.subscribers import queue_mail
from tests.checkservers import closed_port

NOW = datetime(2026, 12, 5, 1, 0, tzinfo=UTC)
SERVICES = """
[[services]]
slug = "api"
name = "Public API"
category = "web"
[[services.checks]]
url = "http://127.0.0.1:9/"

[[services]]
slug = "web"
name = "Website"
category = "web"
[[services.checks]]
url = "http://127.0.0.1:9/"
"""


def config_for(folder: Path, subscriptions: str = "") -> Path:
    path = folder / "services.toml"
    path.write_text(
        '[site]\ntitle = "Subscribers"\nbase_url = "https://status.example.org"\ninterval = 60\n'
        f'store = "data/statusgen.db"\n[categories]\nweb = "Web"\n{SERVICES}{subscriptions}',
        encoding="utf-8",
    )
    return path


def subscriber(address: str, state: str = CONFIRMED, services: tuple[str, ...] = ()) -> Subscriber:
    """A subscriber as a run saves one: confirmed, or waiting for its first confirmation."""
    token = hashlib.sha256(address.encode()).hexdigest()[:32]
    created = NOW - timedelta(days=1)
    if state == CONFIRMED:
        return Subscriber(address, token, CONFIRMED, services, "en", created, confirmed_at=NOW)
    return Subscriber(
        address, token, PENDING, (), "en", created, asked_services=services, asked_language="en", asked_at=NOW
    )


SUBSCRIBERS = (
    subscriber("whole@example.net"),
    subscriber("api-and-web@example.net", services=("api", "web")),
    subscriber('=HYPERLINK("http://x")@example.net', services=("api",)),
    subscriber("+1-555@example.net", services=("gone",)),
    subscriber("waiting@example.net", PENDING, ("web",)),
)


@pytest.fixture
def site(tmp_path: Path) -> Path:
    """A configuration and its store holding SUBSCRIBERS and one event queued for them."""
    config = config_for(tmp_path)
    with Store(tmp_path / "data" / "statusgen.db") as store:
        store.save_subscribers(SUBSCRIBERS, [], ["digest-1"], NOW)
        with store.transaction() as db:
            queue_mail(db, [MailEvent("incident-1.opened", "api", "{}")], NOW)
    return config


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def test_counts_name_each_service_the_whole_site_and_the_outbox(site: Path) -> None:
    done = run("subscribers", "--config", str(site))
    assert done.exit_code == 0, done.output
    lines = done.output.splitlines()
    assert lines[0].endswith("statusgen.db: 5 addresses; confirmed, by service:")
    assert lines[1:5] == [
        "  the whole site: 1",
        "  Public API (api): 2",
        "  Website (web): 1",
        "  gone (not configured): 1",
    ]
    assert lines[5] == "waiting for confirmation: 1 new addresses, 0 subscribers asking for a change"
    # The whole site's, the api's two: the one waiting is queued nothing.
    assert lines[6] == "outbox: 3 pending, 0 sending, 0 sent, 0 refused, 0 uncertain, 0 expired"
    assert "@" not in done.output


def test_the_export_is_every_address_with_formulas_inert_and_private(site: Path, tmp_path: Path) -> None:
    out = tmp_path / "export" / "subscribers.csv"
    out.parent.mkdir()
    out.write_text("an older export\n")
    out.chmod(0o644)
    done = run("subscribers", "--config", str(site), "--export", str(out))
    assert done.exit_code == 0, done.output
    assert done.output == f"{out}: 5 addresses\n"
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    assert [p.name for p in out.parent.iterdir()] == ["subscribers.csv"]  # no partial file left
    with out.open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert [r["address"] for r in rows] == [
        "whole@example.net",
        "api-and-web@example.net",
        '\'=HYPERLINK("http://x")@example.net',
        "'+1-555@example.net",
        "waiting@example.net",
    ]
    assert rows[1] == {
        "address": "api-and-web@example.net",
        "state": "confirmed",
        "services": "api web",
        "language": "en",
        "created_at": "2026-12-04T01:00:00Z",
        "confirmed_at": "2026-12-05T01:00:00Z",
    }
    assert rows[0]["services"] == "" and rows[4]["state"] == "pending" and rows[4]["confirmed_at"] == ""
    assert not any(cell.startswith(("=", "+", "-", "@", "\t", "\r")) for r in rows for cell in r.values())


def test_an_export_to_a_missing_folder_is_one_line(site: Path, tmp_path: Path) -> None:
    done = run("subscribers", "--config", str(site), "--export", str(tmp_path / "no" / "such.csv"))
    assert done.exit_code == 1
    assert done.output.startswith(f"statusgen: {tmp_path / 'no' / 'such.csv'}: cannot write the export")
    assert len(done.output.splitlines()) == 1


def test_remove_deletes_one_address_in_any_case_and_its_queued_mail(site: Path) -> None:
    done = run("subscribers", "--config", str(site), "remove", "API-and-Web@Example.NET")
    assert done.exit_code == 0, done.output
    assert done.output.endswith("statusgen.db: removed that subscriber\n")
    with Store(site.parent / "data" / "statusgen.db") as store:
        assert store.subscriber("api-and-web@example.net") is None
        assert store.subscriber_count() == 4
        assert store.mail_counts() == {"pending": 2}
    again = run("subscribers", "remove", "--config", str(site), "api-and-web@example.net")
    assert again.exit_code == 1
    assert "no subscriber has that address" in again.output
    assert "api-and-web" not in again.output  # the address is not repeated where logs may keep it


def test_export_goes_without_a_subcommand(site: Path, tmp_path: Path) -> None:
    done = run("subscribers", "--config", str(site), "--export", str(tmp_path / "x.csv"), "remove", "a@example.net")
    assert done.exit_code == 2
    assert "--export writes the list" in done.output


def test_a_missing_store_is_the_stores_error(tmp_path: Path) -> None:
    done = run("subscribers", "--config", str(config_for(tmp_path)))
    assert done.exit_code == 3
    assert len(done.output.splitlines()) == 1


def test_check_config_online_reports_a_closed_port_for_each_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STATUSGEN_MAIL_USER", "status@example.org")
    monkeypatch.setenv("STATUSGEN_MAIL_PASSWORD", "app-password")
    imap, smtp = closed_port(), closed_port()
    config = config_for(
        tmp_path,
        f'\n[subscriptions]\naddress = "status@example.org"\nmailbox = "imaps://127.0.0.1:{imap}/INBOX"\n'
        'mailbox_user = "${STATUSGEN_MAIL_USER}"\nmailbox_password = "${STATUSGEN_MAIL_PASSWORD}"\n'
        f'smtp = "smtps://127.0.0.1:{smtp}"\ntimeout = 5\n',
    )
    offline = run("check-config", "--config", str(config))
    assert offline.exit_code == 0, offline.output
    done = run("check-config", "--config", str(config), "--online")
    assert done.exit_code == 2, done.output
    assert done.output.startswith(offline.output)  # the offline checks first, as they were
    problems = done.output[len(offline.output) :].splitlines()
    assert problems[0] == "statusgen: 2 problems:"
    assert problems[1].startswith("[subscriptions] mailbox: ") and f"127.0.0.1:{imap}" in problems[1]
    assert problems[2].startswith("[subscriptions] smtp: ") and f"127.0.0.1:{smtp}" in problems[2]
    assert "app-password" not in done.output and "Traceback" not in done.output


def test_check_config_online_with_folders_and_without_subscriptions(tmp_path: Path) -> None:
    (tmp_path / "mailbox" / "new").mkdir(parents=True)
    for sub in ("cur", "tmp"):
        (tmp_path / "mailbox" / sub).mkdir()
    config = config_for(
        tmp_path, '\n[subscriptions]\naddress = "status@example.org"\nmailbox = "mailbox"\nsmtp = "sent"\n'
    )
    done = run("check-config", "--config", str(config), "--online")
    assert done.exit_code == 0, done.output
    assert done.output.splitlines()[-1].startswith(f"[subscriptions]: mailbox {tmp_path / 'mailbox'} and mail")
    (tmp_path / "plain").mkdir()
    none = run("check-config", "--config", str(config_for(tmp_path / "plain")), "--online")
    assert none.exit_code == 0, none.output
    assert none.output.splitlines()[-1] == "--online: no [subscriptions] to check"


def test_a_run_holding_the_lock_makes_remove_wait_for_it(site: Path) -> None:
    """The run reads the mailbox and changes the subscribers: remove takes the run lock (exit 5)."""
    from statusgen.store import lock_store

    with lock_store(site.parent / "data" / "statusgen.db"):
        done = run("subscribers", "--config", str(site), "remove", "whole@example.net")
    assert done.exit_code == 5, done.output
    with Store(site.parent / "data" / "statusgen.db") as store:
        assert store.subscriber("whole@example.net") is not None


def test_a_backup_carries_the_subscribers_their_outbox_and_the_messages_read(site: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copies" / "statusgen.db"
    done = run("backup", "--config", str(site), str(copy))
    assert done.exit_code == 0, done.output
    with Store(copy) as store:
        assert [s.address for s in store.subscribers()] == [s.address for s in SUBSCRIBERS]
        assert store.subscriber("waiting@example.net") == replace(SUBSCRIBERS[4], id=5)
        assert store.mail_counts() == {"pending": 3}
        assert store.already_read(["digest-1", "digest-2"]) == {"digest-1"}


def test_doctor_names_damaged_subscriptions_by_hash_and_repair_keeps_the_rest(site: Path) -> None:
    """A subscriber whose services do not read back is removed (nobody is sent what they did not
    choose); one whose request does not is kept without it; a damaged event goes with its
    messages; every other address, message and digest stays."""
    db = site.parent / "data" / "statusgen.db"
    with Store(db) as store, store.transaction() as tx:
        queue_mail(tx, [MailEvent("incident-2.opened", "web", "{}")], NOW)
        tx.execute("UPDATE subscribers SET services = '[\"api\"' WHERE key = 'api-and-web@example.net'")
        tx.execute(
            "UPDATE subscribers SET asked_services = '{}', asked_language = 'de', asked_at = 1 "
            "WHERE key = 'whole@example.net'"
        )
        tx.execute("UPDATE mail_events SET body = 'not json' WHERE event = 'incident-1.opened'")
    found = run("doctor", "--config", str(site))
    assert found.exit_code == 3, found.output
    damaged = [line for line in found.output.splitlines() if line.startswith("damaged: ")]
    assert len(damaged) == 3
    assert sum("(subscribers)" in line for line in damaged) == 2
    assert "@" not in found.output
    repaired = run("doctor", "--config", str(site), "--repair")
    assert repaired.exit_code == 0, repaired.output
    with Store(db) as store:
        assert [s.address for s in store.subscribers()] == [
            s.address for s in SUBSCRIBERS if "api-and" not in s.address
        ]
        whole = store.subscriber("whole@example.net")
        assert whole is not None and whole.confirmed and whole.asked_at is None and whole.services == ()
        assert store.subscriber("waiting@example.net") == replace(SUBSCRIBERS[4], id=5)
        assert store.mail_counts() == {"pending": 1}  # incident-2 to the whole site's subscriber
        assert store.already_read(["digest-1"]) == {"digest-1"}
    assert run("doctor", "--config", str(site)).exit_code == 0
