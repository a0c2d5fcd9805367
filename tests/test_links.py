"""Links a vendor's page or the operator's words give are published only when they are http(s):
a real run of a site whose vendor (a loopback Statuspage page) and notes folder hold
``javascript:``, ``data:`` and ``vbscript:`` links, odd-cased, spaced and entity-encoded, leaves
none of them in any file of the tree (its .gz copies read too), and keeps the http(s) ones."""

from __future__ import annotations

import gzip
import json
import re
import threading
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import icalendar
import lxml.html
import pytest

from statusgen import routes
from statusgen.config import load_config
from statusgen.cycle import run_cycle
from statusgen.timeutil import iso
from tests.conftest import Clock, Targets, write_config

#: Whatever a hostile link leaves behind: its scheme, or the call it makes.
HOSTILE = re.compile(r"(?i)(java|vb)\s*script\s*:|data:text/html|alert\(|msgbox\(")


def vendor_page(now: str, soon: str) -> bytes:
    def window(ident: str, shortlink: str) -> dict[str, object]:
        return {"id": ident, "name": f"Window {ident}", "status": "scheduled", "shortlink": shortlink, "components": []}

    maintenances = [
        window("m1", "javascript:alert(1)"),
        window("m2", " JaVaScRiPt:alert(2)"),
        window("m3", "\tjavascript:alert(3)"),
        window("m4", "data:text/html;base64,PHNjcmlwdD5hbGVydCg0KTwvc2NyaXB0Pg=="),
        window("m5", "VBScript:msgbox(5)"),
        window("m6", "https:javascript:alert(6)"),
        window("ok", "https://stspg.example/ok"),
    ]
    for n, m in enumerate(maintenances):  # each its own start: each its own event
        m["scheduled_for"] = soon.replace(":00:00Z", f":{n:02d}:00Z")
        m["scheduled_until"] = soon.replace(":00:00Z", f":{n:02d}:30Z")
    incident = {
        "id": "i1",
        "name": "Slow relays",
        "status": "investigating",
        "impact": "minor",
        "created_at": now,
        "updated_at": now,
        "components": [],
        "incident_updates": [],
    }
    return json.dumps(
        {
            "page": {"id": "p", "name": "Vendor", "url": "vbscript:msgbox(7)", "updated_at": now},
            "status": {"indicator": "minor", "description": "Minor outage"},
            "components": [],
            "incidents": [incident, {**incident, "id": "i2", "shortlink": "javascript:alert(8)"}],
            "scheduled_maintenances": maintenances,
        }
    ).encode()


WORDS = (
    'Read [the plan](javascript:alert(9)), [this]( JAVASCRIPT:alert(10) "t"), <javascript:alert(11)>, '
    "[that](<vbscript:msgbox(12)>), [data](data:text/html;base64,PHNjcmlwdD4=), "
    "[encoded](java&#115;cript&#58;alert(13)), [escaped](javascript\\:alert(14)), [ref][r] and "
    "[the real plan](https://example.com/plan) or [mail us](mailto:ops@example.org).\n\n"
    "[r]: javascript:alert(15)\n"
)


def operator_files(folder: Path, clock: Clock) -> None:
    folder.mkdir()
    start = clock() + timedelta(days=2)
    (folder / "db-move.md").write_text(
        f'+++\ntitle = "Move the database"\nservices = ["mail"]\nstart = {iso(start)}\n'
        f"end = {iso(start + timedelta(hours=2))}\n+++\n{WORDS}",
        encoding="utf-8",
    )
    started = clock() - timedelta(minutes=30)
    (folder / "mail-down.md").write_text(
        f'+++\nservice = "mail"\ntitle = "Mail down"\nseverity = "major"\nstarted = {iso(started)}\n+++\n{WORDS}',
        encoding="utf-8",
    )
    (folder / "mail-note.md").write_text(
        f'+++\nincident = "mail-operator-mail-down"\nat = {iso(started + timedelta(minutes=5))}\n+++\n{WORDS}',
        encoding="utf-8",
    )


SERVICES = """
[categories]
post = "Post"

[[services]]
slug = "mail"
name = "Mail"
category = "post"
url = "https://mail.example.org/"
[[services.checks]]
url = "{check}"
[services.vendor]
url = "{vendor}"
format = "statuspage"
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    tmp = tmp_path_factory.mktemp("links")
    targets = Targets()
    threading.Thread(target=targets.serve_forever, daemon=True).start()
    clock = Clock()
    soon = (clock() + timedelta(days=1)).replace(minute=0, second=0)
    targets.set("/mail")
    targets.set("/vendor.json", 200, vendor_page(iso(clock()) or "", iso(soon) or ""))
    operator_files(tmp / "notes", clock)
    path = write_config(tmp, SERVICES.format(check=targets.url("/mail"), vendor=targets.url("/vendor.json")))
    try:
        for _ in range(2):
            run_cycle(load_config(path), clock)
            clock.tick()
        yield load_config(path).site.output.resolve()
    finally:
        targets.shutdown()
        targets.server_close()


def every_file(root: Path) -> Iterator[tuple[str, str]]:
    """Every file of the tree as text, each .gz copy read as what it holds."""
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        data = path.read_bytes()
        if path.suffix == ".gz":
            data = gzip.decompress(data)
        yield str(path.relative_to(root)), data.decode("utf-8", "replace")


def test_no_hostile_link_is_left_in_any_file_of_the_tree(site: Path) -> None:
    files = dict(every_file(site))
    assert len(files) > 50
    found = {name: HOSTILE.findall(text) for name, text in files.items() if HOSTILE.search(text)}
    assert found == {}


def test_the_http_links_stay(site: Path) -> None:
    events = icalendar.Calendar.from_ical((site / routes.CALENDAR).read_bytes()).walk("VEVENT")
    urls = {str(e["SUMMARY"]): str(e["URL"]) for e in events}
    assert urls["Window ok"] == "https://stspg.example/ok"
    assert urls["Window m1"] == "https://status.example.org/services/mail/"  # none of its own: its service's page
    v2 = json.loads((site / "api/v2/scheduled-maintenances.json").read_bytes())
    assert {m["name"]: m["shortlink"] for m in v2["scheduled_maintenances"]}["Window ok"] == "https://stspg.example/ok"
    incidents = json.loads((site / "api/v1/incidents.json").read_bytes())["incidents"]
    manual = next(i for i in incidents if i["source"] == "operator")
    assert (
        "[the real plan](https://example.com/plan) or [mail us](mailto:ops@example.org)"
        in manual["updates"][0]["message"]
    )
    page = lxml.html.document_fromstring((site / "services/mail/index.html").read_bytes())
    hrefs = set(page.xpath("//a/@href"))
    assert {"https://example.com/plan", "mailto:ops@example.org", "https://mail.example.org/"} <= hrefs
