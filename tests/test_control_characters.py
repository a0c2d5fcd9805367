"""Every control character and lone surrogates, in every kind of text that enters (the
configuration's names, the operator's files with pasted ANSI colours and lone CRs, a vendor's
page), through real runs of a real site: each format's own reader takes what the writers made.

Atom feeds by feedparser (no bozo) and lxml, SVG badges by lxml, the calendars by icalendar (and
RFC 5545's rule on control characters, which icalendar does not check), the monthly CSV by the
csv module, /metrics by prometheus_client's parser, every JSON document by json. A TOML file holds
a control character only as an escape and no lone surrogate at all, so the configuration is given
to ``parse_config`` as text: the surrogates reach the names as they would from any other caller.
"""

from __future__ import annotations

import csv
import io
import json
import threading
import unicodedata
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import feedparser
import icalendar
import lxml.etree
import pytest
from prometheus_client.parser import text_string_to_metric_families

from statusgen import routes
from statusgen.config import Config, load_config, parse_config
from statusgen.cycle import run_cycle
from statusgen.errors import ConfigError
from statusgen.render.formats.feeds import SITE_FEED
from statusgen.timeutil import iso
from tests.conftest import Clock, Targets, write_config

#: Every C0 control, DEL and every C1 control.
CONTROLS = "".join(chr(c) for c in (*range(0x00, 0x20), *range(0x7F, 0xA0)))
SURROGATES = "\ud800\udfff"
ANSI = "\x1b[31mred\x1b[0m"


def toml_escaped(text: str) -> str:
    """``text`` as the inside of a TOML basic string: each control character as a \\u escape."""
    return "".join(f"\\u{ord(c):04X}" if unicodedata.category(c) == "Cc" or c in '"\\' else c for c in text)


def forbidden(text: str) -> list[str]:
    """The code points of ``text`` no format may receive: controls but tab and newline, surrogates."""
    return [f"U+{ord(c):04X}" for c in text if unicodedata.category(c) in ("Cc", "Cs") and c not in "\t\n"]


def config_text(targets: Targets, vendor: str) -> str:
    nasty = toml_escaped(CONTROLS)
    return f"""
[site]
title = "Status{nasty}"
base_url = "https://status.example.org"
interval = 60
confirm_every = 0
description = "All{nasty}of it"
contact = "ops{nasty}@example.org"
vantage_point = "a{nasty}host"

[categories]
money = "Money{nasty}"
post = "{nasty}Post"

[[services]]
slug = "pay"
name = "Payments{nasty}{SURROGATES}API"
category = "money"
description = "Takes{nasty}cards"
[[services.checks]]
url = "{targets.url("/pay")}"
label = "front{nasty}door"
[[services.maintenance]]
schedule = "0 3 * * *"
duration = 3600
title = "Swap{nasty}disks"

[[services]]
slug = "mail"
name = "Mail{nasty}"
category = "post"
failures_to_open = 1
[[services.checks]]
url = "{targets.url("/mail")}"
[services.vendor]
url = "{vendor}"
format = "statuspage"
"""


def vendor_page(now: str, soon: str, later: str) -> bytes:
    """A Statuspage summary whose every word holds control characters (JSON escapes them)."""
    component = {"id": "c1", "name": f"Relays{CONTROLS}", "status": "degraded_performance", "group": False}
    return json.dumps(
        {
            "page": {"id": "p", "name": "Vendor", "url": "https://status.vendor.example", "updated_at": now},
            "status": {"indicator": "minor", "description": f"Minor{CONTROLS}outage"},
            "components": [component],
            "incidents": [
                {
                    "id": "i1",
                    "name": f"Slow{CONTROLS}relays {ANSI}",
                    "status": "investigating",
                    "impact": "minor",
                    "created_at": now,
                    "updated_at": now,
                    "shortlink": "https://stspg.example/i1",
                    "components": [component],
                    "incident_updates": [],
                }
            ],
            "scheduled_maintenances": [
                {
                    "id": "m1",
                    "name": f"Relay{CONTROLS}upgrade",
                    "status": "scheduled",
                    "scheduled_for": soon,
                    "scheduled_until": later,
                    "shortlink": "https://stspg.example/m1",
                    "components": [component],
                }
            ],
        }
    ).encode()


def operator_files(folder: Path, clock: Clock) -> None:
    """A manual incident, a note on it and a planned maintenance, their words full of raw control
    characters (the front matter's as TOML escapes: TOML refuses them raw)."""
    folder.mkdir()
    nasty = toml_escaped(CONTROLS)
    started, later = clock() - timedelta(minutes=30), clock() - timedelta(minutes=10)
    (folder / "mail-down.md").write_text(
        f'+++\nservice = "mail"\ntitle = "Mail{nasty}down"\nseverity = "major"\nstarted = {iso(started)}\n+++\n'
        f"Queued{CONTROLS}mail.\n\n## {later:%Y-%m-%d %H:%M}\nStill {ANSI}.\rA lone CR.\r\nThe end.\n",
        encoding="utf-8",
    )
    (folder / "mail-note.md").write_text(
        f'+++\nincident = "mail-operator-mail-down"\nat = {iso(later)}\n+++\n'
        f"Pasted {ANSI} from a terminal{CONTROLS}.\n",
        encoding="utf-8",
    )
    start = clock() + timedelta(days=2)
    (folder / "db-move.md").write_text(
        f'+++\ntitle = "Move{nasty}the database"\nservices = ["pay"]\nstart = {iso(start)}\n'
        f"end = {iso(start + timedelta(hours=2))}\n+++\nExpect errors.\rA lone CR.{CONTROLS}{ANSI}\n",
        encoding="utf-8",
    )


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    tmp = tmp_path_factory.mktemp("controls")
    targets = Targets()
    threading.Thread(target=targets.serve_forever, daemon=True).start()
    clock = Clock()
    targets.set("/pay")
    targets.set("/mail", 503, b"down")
    soon = clock() + timedelta(days=1)
    targets.set(
        "/vendor.json", 200, vendor_page(iso(clock()) or "", iso(soon) or "", iso(soon + timedelta(hours=1)) or "")
    )
    operator_files(tmp / "notes", clock)
    path = tmp / "services.toml"
    config: Config = parse_config(config_text(targets, targets.url("/vendor.json")), path)
    try:
        for _ in range(3):
            run_cycle(config, clock)
            clock.tick()
        yield config.site.output.resolve()
    finally:
        targets.shutdown()
        targets.server_close()


def json_strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, inner in value.items():
            yield key
            yield from json_strings(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from json_strings(inner)


def test_every_json_document_holds_the_words_without_their_controls(site: Path) -> None:
    documents = sorted(site.rglob("*.json"))
    assert len(documents) > 20
    for path in documents:
        found = [bad for s in json_strings(json.loads(path.read_bytes())) for bad in forbidden(s)]
        assert found == [], path
    pay = json.loads((site / routes.service_file("pay")).read_bytes())["service"]
    assert (pay["name"], pay["description"]) == ("Payments \ufffd\ufffdAPI", "Takes cards")
    assert [c["label"] for c in pay["checks"]] == ["front door"]
    snapshot = json.loads((site / "api/v1/snapshot.json").read_bytes())
    assert {k: c["name"] for k, c in snapshot["counts"]["by_category"].items()} == {"money": "Money", "post": "Post"}
    incidents = json.loads((site / "api/v1/incidents.json").read_bytes())["incidents"]
    manual = next(i for i in incidents if i["source"] == "operator")
    assert manual["title"] == "Mail: Mail down"
    messages = [u["message"] for u in manual["updates"]]
    assert "Still [31mred[0m.\nA lone CR.\nThe end." in messages
    # of CONTROLS, the tab and the newline stay, the CR after them is a newline too
    assert "Pasted [31mred[0m from a terminal\t\n\n." in messages


def test_the_atom_feeds_are_well_formed(site: Path) -> None:
    feeds = sorted((site / "feed").rglob("*.xml"))
    assert len(feeds) >= 3
    for path in feeds:
        data = path.read_bytes()
        lxml.etree.fromstring(data)
        parsed = feedparser.parse(data)
        assert not parsed.bozo, (path, parsed.get("bozo_exception"))
    site_feed = feedparser.parse((site / SITE_FEED).read_bytes())
    titles = [e.title for e in site_feed.entries]
    assert any("Mail down" in t for t in titles) and any("Move the database" in t for t in titles)
    assert site_feed.feed.title.startswith("Status")
    pay_feed = feedparser.parse((site / routes.service_feed_file("pay")).read_bytes())
    assert "Payments \ufffd\ufffdAPI" in pay_feed.feed.title


def test_the_svg_badges_are_well_formed(site: Path) -> None:
    svg = "{http://www.w3.org/2000/svg}"
    for slug, name in (("pay", "Payments \ufffd\ufffdAPI"), ("mail", "Mail")):
        badge = lxml.etree.fromstring((site / f"badges/{slug}.svg").read_bytes())
        assert badge.findtext(f"{svg}title").startswith(f"{name}: ")


def test_the_calendars_hold_no_control_character_but_their_line_ends(site: Path) -> None:
    calendars = [site / routes.CALENDAR, *(site / routes.service_calendar_file(s) for s in ("pay", "mail"))]
    for path in calendars:
        data = path.read_bytes()
        for line in data.decode("utf-8").split("\r\n"):
            assert forbidden(line.replace("\t", "")) == [], (path, line)
        icalendar.Calendar.from_ical(data)
    events = {
        str(e["SUMMARY"]): e for e in icalendar.Calendar.from_ical((site / routes.CALENDAR).read_bytes()).walk("VEVENT")
    }
    assert {"Swap disks", "Move the database", "Relay upgrade"} <= set(events)
    assert str(events["Move the database"]["DESCRIPTION"]) == "Expect errors.\nA lone CR.\t\n\n[31mred[0m"


def test_the_monthly_csv_reads_back_the_cleaned_names(site: Path) -> None:
    (report,) = sorted((site / "reports").glob("*.csv"))
    rows = list(csv.DictReader(io.StringIO(report.read_text(encoding="utf-8"), newline="")))
    assert [(r["service"], r["name"]) for r in rows] == [("pay", "Payments \ufffd\ufffdAPI"), ("mail", "Mail")]
    assert [bad for r in rows for cell in r.values() for bad in forbidden(cell)] == []


def test_the_metrics_read_back(site: Path) -> None:
    families = {f.name: f.samples for f in text_string_to_metric_families((site / routes.METRICS).read_text())}
    status = families["statusgen_service_status"]
    assert {(s.labels["service"], s.labels["category"]) for s in status} == {("pay", "money"), ("mail", "post")}
    assert sum(s.value for s in status) == 2


def test_what_a_check_looks_for_with_a_control_character_is_refused_naming_where(tmp_path: Path) -> None:
    """A keyword, an expected text and a condition are matched against the answer and published:
    cleaning them would change the check."""
    body = '[categories]\nweb = "Web"\n[[services]]\nslug = "api"\nname = "API"\ncategory = "web"\n'
    body += '[[services.checks]]\nurl = "https://api.example.org/"\nkeyword = "ok\\u000C"\n'
    body += '[[services.checks]]\nurl = "tcp://db.example.org:5432"\nexpect = "\\u001B[1mready"\n'
    body += '[[services.checks]]\nurl = "https://api.example.org/"\nconditions = ["[BODY] contains \\"\\u0085\\""]\n'
    with pytest.raises(ConfigError) as refused:
        load_config(write_config(tmp_path, body))
    fix = "remove it (the text is published, where such a character breaks a feed)"
    assert refused.value.problems == [
        f'services.toml: service "api", check 1: keyword must hold no control character, got U+000C; {fix}',
        f'services.toml: service "api", check 2: expect must hold no control character, got U+001B; {fix}',
        f'services.toml: service "api", check 3: conditions has a condition 1 holding a control character, '
        f"U+0085; {fix}",
    ]
