"""The maintenance calendars, read by ``icalendar`` as calendar applications read them: RFC 5545
lines (CRLF, folded at 75 octets), a stable UID, UTC times; a changed event gets a higher
SEQUENCE and one gone while still to come is CANCELLED, from the calendar's own memory; a vendor
that reshuffles hundreds of windows at every fetch leaves it bounded."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

import icalendar
import pytest

from statusgen import routes
from statusgen.config import load_config
from statusgen.cycle import run_cycle
from statusgen.decide.maintenance import Notice
from statusgen.render.formats import calendar
from statusgen.timeutil import iso
from tests.conftest import Clock, write_config
from tests.pinned import build_pinned_site

T0 = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_pinned_site(tmp_path_factory.mktemp("ics")).resolve()


def read(data: bytes) -> list[icalendar.Event]:
    return list(icalendar.Calendar.from_ical(data).walk("VEVENT"))


def test_the_sites_calendar_holds_its_configured_maintenance(site: Path) -> None:
    data = (site / routes.CALENDAR).read_bytes()
    assert data.endswith(b"\r\n") and b"\n" not in data.replace(b"\r\n", b"")
    assert all(len(line) <= 75 for line in data.split(b"\r\n"))
    (event,) = read(data)
    assert str(event["SUMMARY"]) == "Database <upgrade>"
    assert event.decoded("DTSTART") == T0 and event.decoded("DTEND") == T0 + timedelta(hours=2)
    assert event["UID"].endswith("@status.example.org") and int(event["SEQUENCE"]) == 0
    assert str(event["STATUS"]) == "CONFIRMED" and str(event["URL"]).endswith("/services/service-0005/")
    mine = read((site / routes.service_calendar_file("service-0005")).read_bytes())
    assert [e["UID"] for e in mine] == [event["UID"]]
    assert read((site / routes.service_calendar_file("service-0000")).read_bytes()) == []


def test_a_calendar_with_no_event_is_still_a_valid_calendar(site: Path) -> None:
    """RFC 5545, 3.6: at least one component. With no event, a VFREEBUSY that publishes no busy
    time (a form 3.6 names); no METHOD, so no iTIP rule (a PUBLISH has a VEVENT) applies to a
    snapshot."""
    data = (site / routes.service_calendar_file("service-0000")).read_bytes()
    parsed = icalendar.Calendar.from_ical(data)
    parsed.validate()
    assert [c.name for c in parsed.subcomponents] == ["VFREEBUSY"]
    (busy,) = parsed.subcomponents
    assert busy["UID"] and busy["DTSTAMP"] and "FREEBUSY" not in busy
    assert "METHOD" not in parsed
    for path in (routes.CALENDAR, routes.service_calendar_file("service-0005")):
        full = icalendar.Calendar.from_ical((site / path).read_bytes())
        full.validate()
        assert [c.name for c in full.subcomponents] == ["VEVENT"] and "METHOD" not in full, path


def notice(title: str, start: datetime, hours: int = 2, ref: str | None = None) -> Notice:
    return Notice("api", title, start, start + timedelta(hours=hours), "schedule", ref=ref)


def served(notices: list[Notice], before: bytes | None, now: datetime) -> bytes:
    told = calendar.events(notices, "https://status.example.org", "status.example.org")
    return calendar.calendar(
        "Test: maintenance",
        calendar.with_memory(told, calendar.remembered(before), now, {"api": 200}),
        "test@status.example.org",
        T0,
    )


def test_a_changed_event_gets_a_higher_sequence_and_a_gone_one_is_cancelled() -> None:
    later, other = T0 + timedelta(days=2), T0 + timedelta(days=3)
    now = T0 - timedelta(days=1)
    first = served([notice("Upgrade", later), notice("Move", other)], None, now)
    assert [(str(e["SUMMARY"]), int(e["SEQUENCE"])) for e in read(first)] == [("Upgrade", 0), ("Move", 0)]
    same = served([notice("Upgrade", later), notice("Move", other)], first, now)
    assert same == first  # nothing changed: the same bytes, the same sequences
    changed = served([notice("Upgrade, longer", later), notice("Move", other)], same, now)
    assert [(str(e["SUMMARY"]), int(e["SEQUENCE"])) for e in read(changed)] == [("Upgrade, longer", 1), ("Move", 0)]
    assert read(changed)[0]["UID"] == read(first)[0]["UID"]  # the same event, told differently
    longer = served([notice("Upgrade, longer", later, hours=4), notice("Move", other)], changed, now)
    assert [int(e["SEQUENCE"]) for e in read(longer)] == [2, 0]
    gone = served([notice("Upgrade", later, hours=4)], longer, now)
    events = {str(e["SUMMARY"]): e for e in read(gone)}
    assert str(events["Move"]["STATUS"]) == "CANCELLED" and int(events["Move"]["SEQUENCE"]) == 1
    assert int(events["Upgrade"]["SEQUENCE"]) == 3
    still = served([notice("Upgrade", later, hours=4)], gone, now)
    assert still == gone  # cancelled once: it stays as it was
    past = served([notice("Upgrade", later, hours=4)], still, other + timedelta(hours=3))
    assert [str(e["SUMMARY"]) for e in read(past)] == ["Upgrade"]  # its time has passed: no longer told


def test_text_is_escaped_and_long_lines_folded_without_splitting_a_character() -> None:
    title = "Réseau; routeurs, et \\ coupures\n" + "é" * 60
    data = served([notice(title, T0)], None, T0 - timedelta(days=1))
    assert all(len(line) <= 75 for line in data.split(b"\r\n"))
    (event,) = read(data)
    assert str(event["SUMMARY"]) == title


VENDOR_SERVICE = """
[categories]
saas = "SaaS"

[[services]]
slug = "relay"
name = "Relay"
category = "saas"
{extra}
[services.vendor]
url = "{vendor}"
format = "statuspage"
stale_after = 86400
"""


def reshuffled(now: datetime, start: datetime, rng: random.Random) -> bytes:
    """A Statuspage page of 500 maintenances, reshuffled at each fetch: 20 that stay (their ids and
    times, in progress from ``start``) and 480 moved to new times under new ids, in a new order."""
    stay = [
        (f"k{i}", f"Kept {i}", start + timedelta(hours=1, minutes=5 * i), start + timedelta(days=30)) for i in range(20)
    ]
    moved = [
        (f"{rng.getrandbits(64):x}", "Moved", now + timedelta(days=1, minutes=rng.randrange(12 * 24 * 60)), None)
        for _ in range(480)
    ]
    windows = [
        {
            "id": ident,
            "name": name,
            "status": "in_progress" if begins <= now else "scheduled",
            "scheduled_for": iso(begins),
            "scheduled_until": iso(ends) if ends else "2099-01-01T00:00:00Z",
            "components": [],
        }
        for ident, name, begins, ends in stay + moved
    ]
    rng.shuffle(windows)
    page = {"id": "p", "name": "Relay", "url": "https://status.relay.example", "updated_at": iso(now)}
    return json.dumps({"page": page, "scheduled_maintenances": windows}).encode()


def test_a_vendor_that_reshuffles_its_windows_leaves_the_calendars_bounded(tmp_path: Path) -> None:
    """20 runs, 12 hours apart, of a vendor page that moves 480 of its 500 windows every time: the
    calendars keep 200 of the source's events told and at most 200 cancelled ones, none cancelled
    for more than 7 days; the windows that stay keep their UID and their SEQUENCE."""
    rng, page, clock = random.Random(53), tmp_path / "relay.json", Clock()
    page.write_text("{}")  # a file source must be there when the configuration is read
    config = load_config(write_config(tmp_path, VENDOR_SERVICE.format(extra="", vendor=page)))
    clock.t = start = clock.t - timedelta(days=10)
    kept_uids = None
    for run in range(20):
        now = clock()
        page.write_bytes(reshuffled(now, start, rng))
        run_cycle(config, clock)
        for path in (routes.CALENDAR, routes.service_calendar_file("relay")):
            events = read((config.site.output / path).read_bytes())
            uids = [str(e["UID"]) for e in events]
            assert len(uids) == len(set(uids)), (run, path)
            told = [e for e in events if str(e["STATUS"]) == "CONFIRMED"]
            cancelled = [e for e in events if str(e["STATUS"]) == "CANCELLED"]
            assert len(told) == 200 and len(cancelled) <= 200, (run, path, len(told), len(cancelled))
            since = [datetime.strptime(str(e["X-STATUSGEN-CANCELLED"]), "%Y%m%dT%H%M%S%z") for e in cancelled]
            assert all(now - at < timedelta(days=7) for at in since), (run, path)
            kept = {str(e["SUMMARY"]): (str(e["UID"]), int(e["SEQUENCE"])) for e in told if "Kept" in e["SUMMARY"]}
            assert len(kept) == 20 and all(sequence == 0 for _, sequence in kept.values())
            kept_uids = kept_uids or kept
            assert kept == kept_uids, (run, path)
        clock.t += timedelta(hours=12)


def test_a_services_calendar_events_bounds_its_calendar(tmp_path: Path) -> None:
    rng, page, clock = random.Random(8), tmp_path / "relay.json", Clock()
    page.write_text("{}")  # a file source must be there when the configuration is read
    config = load_config(write_config(tmp_path, VENDOR_SERVICE.format(extra="calendar_events = 5", vendor=page)))
    page.write_bytes(reshuffled(clock(), clock(), rng))
    run_cycle(config, clock)
    told = read((config.site.output / routes.service_calendar_file("relay")).read_bytes())
    assert [str(e["SUMMARY"]) for e in told] == [f"Kept {i}" for i in range(5)]  # the first to start
