"""Promises of docs/integrations.md about what a built site holds, on real runs (loopback targets,
a real store, the tree a build writes): a recurring maintenance window told as each occurrence an
event of its own, read by ``icalendar``, every event ``TRANSP:TRANSPARENT``; the embeddable status
pages, whose bytes "change only when a status does"."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import icalendar

from statusgen import routes
from statusgen.config import load_config
from statusgen.cycle import run_cycle
from tests.conftest import Clock, Targets, write_config

RECURRING = """
[categories]
apis = "APIs"

[[services]]
slug = "api"
name = "API"
category = "apis"
[[services.checks]]
url = "{target}"
[[services.maintenance]]
schedule = "0 2 * * *"
duration = 3600
title = "Nightly vacuum"
"""


def events(path: Path) -> list[icalendar.Event]:
    return list(icalendar.Calendar.from_ical(path.read_bytes()).walk("VEVENT"))


def test_each_occurrence_of_a_recurring_window_is_an_event_of_its_own(tmp_path: Path, targets: Targets) -> None:
    """docs/integrations.md: a recurring window is told as its occurrence in progress or its next
    one (within 14 days), each occurrence an event of its own, kept after it ended; events are
    TRANSP:TRANSPARENT. A run after the first night's window, then one during the second's: both
    calendars hold each night as its own event, 02:00 to 03:00 UTC, with its own UID that stays."""
    targets.set("/api")
    config = load_config(write_config(tmp_path, RECURRING.format(target=targets.url("/api"))))
    clock = Clock()
    first = clock.t.replace(hour=2, minute=0, second=0) - timedelta(days=2)
    nights = [first, first + timedelta(days=1)]
    expected = [(n, n + timedelta(hours=1)) for n in nights]
    uids: dict[str, list[str]] = {}
    for at in (first + timedelta(hours=1, minutes=30), nights[1] + timedelta(minutes=30)):  # after; during
        clock.t = at
        run_cycle(config, clock)
        for path in (routes.CALENDAR, routes.service_calendar_file("api")):
            told = sorted(events(config.site.output / path), key=lambda e: e.decoded("DTSTART"))
            assert [(e.decoded("DTSTART"), e.decoded("DTEND")) for e in told] == expected, (at, path)
            assert all(e.decoded("DTSTART").utcoffset() == timedelta(0) for e in told)
            assert [str(e["TRANSP"]) for e in told] == ["TRANSPARENT"] * 2, (at, path)
            assert [str(e["STATUS"]) for e in told] == ["CONFIRMED"] * 2, (at, path)
            assert [str(e["SUMMARY"]) for e in told] == ["Nightly vacuum"] * 2
            assert [int(e["SEQUENCE"]) for e in told] == [0, 0], (at, path)  # told alike: not changed
            mine = [str(e["UID"]) for e in told]
            assert len(set(mine)) == 2 and uids.setdefault(path, mine) == mine, (at, path)


EMBED = """
[categories]
apis = "APIs"

[[services]]
slug = "alpha"
name = "Alpha"
category = "apis"
failures_to_open = 1
successes_to_resolve = 1
[[services.checks]]
url = "{alpha}"

[[services]]
slug = "bravo"
name = "Bravo"
category = "apis"
failures_to_open = 1
successes_to_resolve = 1
[[services.checks]]
url = "{bravo}"
"""


def test_embeds_change_only_when_a_status_does(tmp_path: Path, targets: Targets) -> None:
    """docs/integrations.md: the embeddable status pages "change only when a status does". Runs
    whose results and time move (new latencies, minutes apart, a 5-minute bucket closing) leave
    their bytes as they were; bravo failing changes bravo's and the site's, never alpha's; bravo
    answering again changes them back."""
    targets.set("/alpha")
    targets.set("/bravo")
    config = load_config(write_config(tmp_path, EMBED.format(alpha=targets.url("/alpha"), bravo=targets.url("/bravo"))))
    clock = Clock()
    paths = {"site": "embed/index.html", "alpha": "embed/alpha/index.html", "bravo": "embed/bravo/index.html"}

    def embeds() -> dict[str, bytes]:
        run_cycle(config, clock)
        clock.t += timedelta(minutes=2)
        return {name: (config.site.output / rel).read_bytes() for name, rel in paths.items()}

    first = embeds()
    assert b"Alpha" in first["alpha"] and b"Bravo" in first["bravo"]
    for _ in range(3):  # six minutes: results, latencies and the clock move; no status does
        assert embeds() == first
    targets.set("/bravo", 503)
    failing = embeds()
    assert failing["alpha"] == first["alpha"]
    assert failing["bravo"] != first["bravo"] and failing["site"] != first["site"]
    assert embeds() == failing  # still failing: the same bytes
    targets.set("/bravo")
    back = embeds()
    assert back["alpha"] == first["alpha"] and back["bravo"] != failing["bravo"] and back["site"] != failing["site"]


def test_ended_occurrences_stay_14_days_after_their_end(tmp_path: Path, targets: Targets) -> None:
    """docs/integrations.md: each occurrence is "kept for 14 days after it ended", although a run
    tells only the last to have ended and the next: the calendar keeps the ones it served, as they
    were, until 14 days after their end, then leaves them out (not cancelled: they happened)."""
    targets.set("/api")
    config = load_config(write_config(tmp_path, RECURRING.format(target=targets.url("/api"))))
    clock = Clock()
    first = clock.t.replace(hour=2, minute=0, second=0) - timedelta(days=20)
    night = [first + timedelta(days=n) for n in range(20)]

    def told_at(at: datetime) -> list[tuple[datetime, str]]:
        clock.t = at
        run_cycle(config, clock)
        told = sorted(events(config.site.output / routes.CALENDAR), key=lambda e: e.decoded("DTSTART"))
        assert all(e.decoded("DTEND") - e.decoded("DTSTART") == timedelta(hours=1) for e in told)
        return [(e.decoded("DTSTART"), str(e["STATUS"])) for e in told]

    assert told_at(night[0] + timedelta(hours=1, minutes=30)) == [(night[0], "CONFIRMED"), (night[1], "CONFIRMED")]
    # no run for two nights: the one served as next (night 1) happened and stays
    after_third = told_at(night[2] + timedelta(hours=1, minutes=30))
    assert after_third == [(n, "CONFIRMED") for n in night[:4]]
    # 14 days and an hour after the first night ended: it is left out, the second is 13 days ago
    later = night[0] + timedelta(days=14, hours=4)
    assert [n for n, _ in told_at(later)] == [night[1], night[2], night[3], night[14], night[15]]
