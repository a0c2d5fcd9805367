"""A planned maintenance of two services, told once: one id listing both components in every
Statuspage v2 document, read as statuspage-prometheus-exporter reads it (maintenances by id, the
first of an id kept) and by our own vendor adapter; one VEVENT with one UID in the site's calendar
and in each of its services'. Its updates follow a real Statuspage capture's: scheduled (no
change), in progress (operational to under_maintenance), completed (back to operational)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import icalendar
import pytest

from statusgen import routes
from statusgen.config import load_config
from statusgen.cycle import run_cycle
from statusgen.timeutil import iso
from statusgen.vendors import parse_vendor
from tests.conftest import Clock, Targets, write_config

CAPTURE = Path(__file__).resolve().parent / "fixtures/vendors/statuspage/claude_scheduled_maintenances_lifecycle.json"
FILES = routes.STATUSPAGE_FILES
SERVICES = """
[categories]
cloud = "Cloud"
""" + "".join(
    f'\n[[services]]\nslug = "{slug}"\nname = "{name}"\ncategory = "cloud"\n[[services.checks]]\nurl = "{{url}}"\n'
    for slug, name in (("acme-api", "Acme API"), ("search", "Search"), ("mail", "Mail"))
)
BOTH = {"Acme API", "Search"}
#: The documents that tell a maintenance in each of its states (docs/api.md, "Statuspage v2").
TOLD_IN = {
    "scheduled": ("summary", "maintenances", "upcoming"),
    "in_progress": ("summary", "maintenances", "active"),
    "completed": ("maintenances",),
}


@pytest.fixture(scope="module")
def phases(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, dict[str, bytes]]]:
    """The site's v2 documents and calendars before the maintenance, during it and after it."""
    tmp = tmp_path_factory.mktemp("maintenance-once")
    targets = Targets()
    threading.Thread(target=targets.serve_forever, daemon=True).start()
    targets.set("/ok")
    path = write_config(tmp, SERVICES.replace("{url}", targets.url("/ok")))
    clock = Clock()
    start, end = clock() + timedelta(minutes=30), clock() + timedelta(minutes=90)
    (tmp / "notes").mkdir()
    (tmp / "notes" / "search-index-move.md").write_text(
        f'+++\ntitle = "Search index move"\nservices = ["acme-api", "search"]\n'
        f"start = {iso(start)}\nend = {iso(end)}\n+++\nQueries may be slow.\n"
    )
    found: dict[str, dict[str, bytes]] = {}
    after = timedelta(minutes=5)
    for phase, at in (("scheduled", clock()), ("in_progress", start + after), ("completed", end + after)):
        clock.t = at
        config = load_config(path)
        run_cycle(config, clock)
        site = config.site.output
        names = [*(FILES[n] for n in FILES), routes.CALENDAR]
        names += [routes.service_calendar_file(s) for s in ("acme-api", "search", "mail")]
        found[phase] = {name: (site / name).read_bytes() for name in names}
    yield found
    targets.shutdown()
    targets.server_close()


def maintenances(files: dict[str, bytes], name: str) -> list[dict[str, Any]]:
    return [m for m in json.loads(files[FILES[name]])["scheduled_maintenances"] if m["name"] == "Search index move"]


@pytest.mark.parametrize("phase", TOLD_IN)
def test_one_maintenance_one_id_listing_both_components(phases: dict[str, dict[str, bytes]], phase: str) -> None:
    files = phases[phase]
    ids = set()
    for name in TOLD_IN[phase]:
        (told,) = maintenances(files, name)  # once, not once per service
        assert told["status"] == phase, name
        assert {c["name"] for c in told["components"]} == BOTH, name
        ids.add(told["id"])
    assert len(ids) == 1, "the same id in every document"
    others = [n for n in ("upcoming", "active") if n not in TOLD_IN[phase]]
    assert all(maintenances(files, n) == [] for n in others), others


def test_the_exporter_keeps_both_services(phases: dict[str, dict[str, bytes]]) -> None:
    """statuspage-prometheus-exporter reads summary.json's scheduled_maintenances, drops those
    completed (or with a resolved_at), keeps the first of each id and publishes the names of its
    components: both services must be there."""
    for phase in ("scheduled", "in_progress"):
        kept: dict[str, dict[str, Any]] = {}
        for m in json.loads(phases[phase][FILES["summary"]])["scheduled_maintenances"]:
            if m["status"] not in ("completed", "cancelled") and not m["resolved_at"]:
                kept.setdefault(m["id"], m)
        affected = {c["name"] for m in kept.values() for c in m["components"]}
        assert affected == BOTH, phase


def capture_steps() -> dict[str, set[tuple[str, str]]]:
    """What each update of a real two-component maintenance (Claude's) says its components went
    from and to, by the update's status."""
    (real,) = [m for m in json.loads(CAPTURE.read_text())["scheduled_maintenances"] if len(m["components"]) == 2]
    steps: dict[str, set[tuple[str, str]]] = {}
    for u in real["incident_updates"]:
        for a in u["affected_components"] or []:
            steps.setdefault(u["status"], set()).add((a["old_status"], a["new_status"]))
    return steps


def test_its_updates_follow_statuspages_sequence(phases: dict[str, dict[str, bytes]]) -> None:
    real = capture_steps()
    assert real == {
        "scheduled": {("operational", "operational")},
        "in_progress": {("operational", "under_maintenance")},
        "completed": {("under_maintenance", "operational")},
    }
    sequence = ["scheduled", "in_progress", "completed"]
    for n, phase in enumerate(sequence):
        (told,) = maintenances(phases[phase], "maintenances")
        updates = told["incident_updates"]
        assert [u["status"] for u in updates] == sequence[: n + 1][::-1], "newest first"
        assert [u["created_at"] for u in updates] == sorted((u["created_at"] for u in updates), reverse=True)
        for u in updates:
            assert {a["name"] for a in u["affected_components"]} == BOTH
            assert {(a["old_status"], a["new_status"]) for a in u["affected_components"]} == real[u["status"]]
        assert told["updated_at"] == updates[0]["created_at"]
        assert told["scheduled_for"] < told["scheduled_until"]


def test_our_adapter_reads_one_window_of_both_components(phases: dict[str, dict[str, bytes]]) -> None:
    for phase, kind in (("scheduled", "maintenance_upcoming"), ("in_progress", "maintenance_active")):
        files = phases[phase]
        view = parse_vendor(files[FILES["summary"]])
        ids = {c.id for c in view.components if c.name in BOTH}
        (window,) = [m for m in getattr(view, kind) if m.title == "Search index move"]
        assert set(window.components) == ids and len(ids) == 2, phase


def events(data: bytes) -> list[icalendar.Event]:
    calendar = icalendar.Calendar.from_ical(data)
    calendar.validate()  # RFC 5545: a VERSION, a PRODID and at least one component
    return list(calendar.walk("VEVENT"))


@pytest.mark.parametrize("phase", TOLD_IN)
def test_one_event_in_the_sites_calendar_and_in_each_of_its_services(
    phases: dict[str, dict[str, bytes]], phase: str
) -> None:
    files = phases[phase]
    (event,) = [e for e in events(files[routes.CALENDAR]) if str(e["SUMMARY"]) == "Search index move"]
    uids = [str(e["UID"]) for e in events(files[routes.CALENDAR])]
    assert len(uids) == len(set(uids))
    for slug in ("acme-api", "search"):
        assert [str(e["UID"]) for e in events(files[routes.service_calendar_file(slug)])] == [str(event["UID"])], slug
    assert events(files[routes.service_calendar_file("mail")]) == []
