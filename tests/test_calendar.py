"""The maintenance calendars, read by ``icalendar`` as calendar applications read them: RFC 5545
lines (CRLF, folded at 75 octets), a stable UID, UTC times; a changed event gets a higher
SEQUENCE and one gone while still to come is CANCELLED, from the calendar's own memory."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import icalendar
import pytest

from statusgen import routes
from statusgen.decide.maintenance import Notice
from statusgen.render.formats import calendar
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


def notice(title: str, start: datetime, hours: int = 2, ref: str | None = None) -> Notice:
    return Notice("api", title, start, start + timedelta(hours=hours), "schedule", ref=ref)


def served(notices: list[Notice], before: bytes | None, now: datetime) -> bytes:
    told = calendar.events(notices, "https://status.example.org", "status.example.org")
    return calendar.calendar("Test: maintenance", calendar.with_memory(told, calendar.remembered(before), now))


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
