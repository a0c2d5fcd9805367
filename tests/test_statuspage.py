"""Statuspage's public v2 API, as a statusgen site publishes it: every key real pages carry, only
their enumerations, stable ids; read back by our own vendor adapter, and by a second statusgen
site that takes the first as its vendor, over loopback."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest
from jsonschema import Draft202012Validator

from statusgen import routes
from statusgen.config import load_config
from statusgen.cycle import run_cycle
from statusgen.store import Store
from statusgen.timeutil import iso
from statusgen.vendors import parse_vendor
from statusgen.web.serve import PreviewServer
from tests.conftest import Clock, Targets, write_config
from tests.pinned import build_pinned_site

CAPTURES = Path(__file__).resolve().parent / "fixtures" / "vendors" / "statuspage"
FILES = routes.STATUSPAGE_FILES
ENUMS = {
    "component": {"operational", "degraded_performance", "partial_outage", "major_outage", "under_maintenance"},
    "indicator": {"none", "minor", "major", "critical", "maintenance"},
    "incident": {"investigating", "identified", "monitoring", "resolved", "postmortem"},
    "impact": {"none", "minor", "major", "critical", "maintenance"},
    "maintenance": {"scheduled", "in_progress", "verifying", "completed"},
}
ID = re.compile(r"[a-z0-9]{12}")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_pinned_site(tmp_path_factory.mktemp("v2")).resolve()


def document(site: Path, name: str) -> dict[str, Any]:
    return orjson.loads((site / FILES[name]).read_bytes())


def captured() -> dict[str, list[dict[str, Any]]]:
    """Every object of the real captures, by kind."""
    kinds: dict[str, list[dict[str, Any]]] = {
        k: [] for k in ("page", "status", "group", "component", "incident", "update", "affected", "maintenance")
    }
    for path in CAPTURES.glob("*.json"):
        doc = json.loads(path.read_text())
        if "page" in doc:
            kinds["page"].append(doc["page"])
        if "status" in doc:
            kinds["status"].append(doc["status"])
        for c in doc.get("components", []):
            kinds["group" if c.get("group") else "component"].append(c)
        for key, kind in (("incidents", "incident"), ("scheduled_maintenances", "maintenance")):
            for i in doc.get(key, []):
                kinds[kind].append(i)
                for u in i.get("incident_updates", []):
                    kinds["update"].append(u)
                    kinds["affected"] += u.get("affected_components") or []
    return kinds


def ours(site: Path) -> dict[str, list[dict[str, Any]]]:
    summary, every = document(site, "summary"), document(site, "maintenances")
    incidents = document(site, "incidents")["incidents"]
    kinds: dict[str, list[dict[str, Any]]] = {
        "page": [summary["page"]],
        "status": [summary["status"]],
        "group": [c for c in summary["components"] if c["group"]],
        "component": [c for c in summary["components"] if not c["group"]],
        "incident": incidents,
        "maintenance": every["scheduled_maintenances"],
    }
    kinds["update"] = [u for i in incidents + kinds["maintenance"] for u in i["incident_updates"]]
    kinds["affected"] = [a for u in kinds["update"] for a in u["affected_components"]]
    return kinds


def test_every_key_real_pages_carry_we_carry(site: Path) -> None:
    real, mine = captured(), ours(site)
    for kind, objects in real.items():
        assert objects and mine[kind], kind  # the captures and the site both have this kind of object
        theirs = set().union(*(o.keys() for o in objects))
        missing = {k: sorted(theirs - o.keys()) for k, o in enumerate(mine[kind]) if theirs - o.keys()}
        assert missing == {}, (kind, missing)


def test_only_statuspages_words_and_ids(site: Path) -> None:
    mine = ours(site)
    assert {c["status"] for c in mine["component"] + mine["group"]} <= ENUMS["component"]
    assert {a["new_status"] for a in mine["affected"]} | {a["old_status"] for a in mine["affected"]} <= ENUMS[
        "component"
    ]
    assert mine["status"][0]["indicator"] in ENUMS["indicator"]
    assert {i["status"] for i in mine["incident"]} <= ENUMS["incident"]
    assert {i["impact"] for i in mine["incident"] + mine["maintenance"]} <= ENUMS["impact"]
    assert {m["status"] for m in mine["maintenance"]} <= ENUMS["maintenance"]
    ids = [o["id"] for kind in ("page", "group", "component", "incident", "update", "maintenance") for o in mine[kind]]
    assert all(ID.fullmatch(i) for i in ids), ids
    groups = {g["id"]: set(g["components"]) for g in mine["group"]}
    assert all(c["group_id"] in groups and c["id"] in groups[c["group_id"]] for c in mine["component"])


def test_the_documents_are_views_of_one_page(site: Path) -> None:
    summary = document(site, "summary")
    assert {name: set(document(site, name)) for name in FILES} == {
        "summary": {"page", "components", "incidents", "scheduled_maintenances", "status", "stale_after"},
        "status": {"page", "status", "stale_after"},
        "components": {"page", "components", "stale_after"},
        "incidents": {"page", "incidents"},  # the past too: never out of date
        "unresolved": {"page", "incidents", "stale_after"},
        "maintenances": {"page", "scheduled_maintenances"},
        "upcoming": {"page", "scheduled_maintenances", "stale_after"},
        "active": {"page", "scheduled_maintenances", "stale_after"},
    }
    assert all(document(site, name)["page"] == summary["page"] for name in FILES)
    unresolved = document(site, "unresolved")["incidents"]
    assert unresolved == summary["incidents"] and all(i["status"] != "resolved" for i in unresolved)
    recent = document(site, "incidents")["incidents"]
    assert any(i["status"] == "resolved" for i in recent)  # its cap: test_incidents_json_holds_the_50_most_recent
    active = document(site, "active")["scheduled_maintenances"]
    assert [m["name"] for m in active] == ["Database <upgrade>"] and active[0]["status"] == "in_progress"


def test_every_document_matches_the_shape_its_openapi_document_declares(site: Path) -> None:
    """The schemas of /api/v2/openapi.json, applied to the files: a field the renderer adds, drops
    or retypes without the shapes fails here."""
    served = orjson.loads((site / routes.STATUSPAGE / "openapi.json").read_bytes())
    schemas = served["components"]["schemas"]
    assert set(served["paths"]) == {f"/{path}" for path in FILES.values()}
    for name, path in FILES.items():
        answer = served["paths"][f"/{path}"]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
        schema = {**answer, "components": {"schemas": schemas}}
        Draft202012Validator(schema).validate(document(site, name))
        wrong = document(site, name)
        wrong["page"]["time_zone"] = None  # the schemas are strict enough to see one wrong type
        assert not Draft202012Validator(schema).is_valid(wrong), name


def test_ids_stay_from_build_to_build(site: Path, tmp_path: Path) -> None:
    again = build_pinned_site(tmp_path).resolve()
    for name in FILES:
        assert (again / FILES[name]).read_bytes() == (site / FILES[name]).read_bytes(), name


def test_our_adapter_reads_the_statuses_we_publish(site: Path) -> None:
    view = parse_vendor((site / FILES["summary"]).read_bytes())  # format detected, as `statusgen vendor` does
    assert view.format == "statuspage"
    snapshot = orjson.loads((site / "api/v1/snapshot.json").read_bytes())
    known = {s["name"]: s["status"] for s in snapshot["services"] if s["status"] != "unknown"}
    read = {c.name: c.status for c in view.components if c.name in known}
    assert read == known
    assert view.status == snapshot["status"]
    assert {i.title for i in view.incidents} == {
        i["title"] for i in orjson.loads((site / "api/v1/incidents.json").read_bytes())["incidents"] if i["open"]
    }


@pytest.fixture
def served(site: Path) -> Iterator[str]:
    server = PreviewServer(site, "127.0.0.1", 0, quiet=True, per_minute=100_000)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_a_second_site_takes_the_first_as_its_vendor(site: Path, served: str, tmp_path: Path) -> None:
    """Two statusgen sites on loopback: the second reads the first's v2 summary as a vendor page,
    one of the first's services a component, and tells its status."""
    first = orjson.loads((site / "api/v1/snapshot.json").read_bytes())
    by_name = {s["name"]: s["status"] for s in first["services"]}
    chosen = ["Service 0001", "Service 0002"]  # a major outage, a degraded service
    body = '[categories]\nupstream = "Upstream"\n' + "".join(
        f'[[services]]\nslug = "up-{n}"\nname = "Up {n}"\ncategory = "upstream"\n'
        f'[services.vendor]\nurl = "{served}/{FILES["summary"]}"\ncomponents = ["{name}"]\n'
        for n, name in enumerate(chosen)
    )
    config = load_config(write_config(tmp_path, body, 'output = "site"\nstore = "data/s.db"'))
    run_cycle(config)
    for n, name in enumerate(chosen):
        record = orjson.loads((config.site.output / f"api/v1/services/up-{n}.json").read_bytes())["service"]
        assert record["vendor"]["view"]["status"] == by_name[name] != "operational", name
        assert record["status"] == by_name[name]


# -- promises of docs/api.md, "Statuspage v2", on sites of real runs -----------------------------------

ONE = """
[categories]
cloud = "Cloud"

[[services]]
slug = "alpha"
name = "Alpha"
category = "cloud"
failures_to_open = 2
successes_to_resolve = 2
[[services.checks]]
url = "{a}"
[[services.checks]]
url = "{b}"
"""


def v2(config_output: Path, name: str) -> Any:
    return orjson.loads((config_output / FILES[name]).read_bytes())


def test_incidents_json_holds_the_50_most_recent(tmp_path: Path, targets: Targets) -> None:
    """ "incidents.json (the 50 most recent, resolved ones included)", newest first as Statuspage's:
    a site of 60 incidents, the operator's (docs/notes.md), one an hour over the last three days."""
    targets.set("/a")
    targets.set("/b")
    clock = Clock()
    notes = tmp_path / "notes"
    notes.mkdir()
    starts = {n: clock() - timedelta(days=3) + timedelta(hours=n) for n in range(60)}
    for n, started in starts.items():
        resolved = f"resolved = {iso(started + timedelta(minutes=10))}\n" if n != 59 else ""  # the newest is open
        (notes / f"incident-{n:02}.md").write_text(
            f'+++\nservice = "alpha"\ntitle = "Incident {n:02}"\nseverity = "minor"\nstarted = {iso(started)}\n'
            f"{resolved}+++\nSomething {n:02} happened.\n",
            encoding="utf-8",
        )
    config = load_config(write_config(tmp_path, ONE.format(a=targets.url("/a"), b=targets.url("/b"))))
    run_cycle(config, clock)
    recent = v2(config.site.output, "incidents")["incidents"]
    assert len(recent) == 50
    newest = sorted(starts, key=starts.__getitem__, reverse=True)[:50]
    assert [i["created_at"] for i in recent] == [iso(starts[n]) for n in newest]
    assert [i["name"].endswith(f"Incident {n:02}") for i, n in zip(recent, newest, strict=True)] == [True] * 50
    assert [i["status"] for i in recent] == ["investigating"] + ["resolved"] * 49
    (unresolved,) = v2(config.site.output, "unresolved")["incidents"]
    assert unresolved["name"].endswith("Incident 59")


def test_our_incident_goes_through_every_status_statuspage_has(tmp_path: Path, targets: Targets) -> None:
    """docs/api.md: "investigating as it opened, identified once it changed (a change of severity,
    an operator's note), monitoring while its service is back and the incident not yet closed,
    resolved"; its updates newest first, an operator's note an update (identified) with its words."""
    targets.set("/a")
    targets.set("/b")
    path = write_config(tmp_path, ONE.format(a=targets.url("/a"), b=targets.url("/b")))
    clock = Clock()

    def cycle() -> list[dict[str, Any]]:
        config = load_config(path)  # a run reads the notes folder with its configuration
        run_cycle(config, clock)
        clock.tick()
        return list(v2(config.site.output, "incidents")["incidents"])

    assert cycle() == []
    targets.set("/a", 503)  # one check of two: a partial outage once two cycles failed
    assert cycle() == []
    (opened,) = cycle()
    assert (opened["status"], opened["impact"], opened["monitoring_at"]) == ("investigating", "major", None)
    assert [u["status"] for u in opened["incident_updates"]] == ["investigating"]
    (affected,) = opened["incident_updates"][0]["affected_components"]
    assert (affected["name"], affected["old_status"], affected["new_status"]) == (
        "Alpha",
        "operational",
        "partial_outage",
    )

    targets.set("/b", 503)  # both: a major outage, a change of severity
    (worse,) = cycle()
    assert (worse["status"], worse["impact"]) == ("identified", "critical")
    assert [u["status"] for u in worse["incident_updates"]] == ["identified", "investigating"]

    with Store(load_config(path).site.store) as store:
        (ours,) = store.incidents()
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "dns.md").write_text(
        f'+++\nincident = "{ours.id}"\nat = {iso(clock())}\n+++\nWe think this is DNS at the provider.\n',
        encoding="utf-8",
    )
    (noted,) = cycle()
    assert noted["status"] == "identified"
    assert [u["status"] for u in noted["incident_updates"]] == ["identified", "identified", "investigating"]
    assert noted["incident_updates"][0]["body"] == "We think this is DNS at the provider."

    targets.set("/a")
    targets.set("/b")  # back: one good cycle of the two that close it
    (back,) = cycle()
    assert (back["status"], back["resolved_at"]) == ("monitoring", None)
    assert back["monitoring_at"] is not None
    assert back["created_at"] == opened["created_at"] and back["id"] == opened["id"]

    (closed,) = cycle()
    assert closed["status"] == "resolved" and closed["resolved_at"] is not None
    assert [u["status"] for u in closed["incident_updates"]] == [
        "resolved",
        "identified",
        "identified",
        "investigating",
    ]
    assert closed["impact"] == "critical"  # the worst it reached


def test_scheduled_maintenances_holds_those_completed_in_the_last_14_days(tmp_path: Path, targets: Targets) -> None:
    """docs/api.md: scheduled-maintenances.json holds the maintenance "in progress, upcoming and
    completed in the last 14 days"; a completed one is in neither upcoming.json nor active.json."""
    targets.set("/a")
    targets.set("/b")
    clock = Clock()
    now = clock()
    windows = {
        "Ended 15 days ago": (now - timedelta(days=15, hours=2), now - timedelta(days=15)),
        "Ended 13 days ago": (now - timedelta(days=13, hours=2), now - timedelta(days=13)),
        "Ended an hour ago": (now - timedelta(hours=3), now - timedelta(hours=1)),
        "Under way": (now - timedelta(minutes=30), now + timedelta(hours=1)),
        "Next week": (now + timedelta(days=7), now + timedelta(days=7, hours=2)),
    }
    body = ONE.format(a=targets.url("/a"), b=targets.url("/b")) + "".join(
        f'[[services.maintenance]]\nstart = {iso(start)}\nend = {iso(end)}\ntitle = "{title}"\n'
        for title, (start, end) in windows.items()
    )
    config = load_config(write_config(tmp_path, body))
    run_cycle(config, clock)
    every = {m["name"]: m for m in v2(config.site.output, "maintenances")["scheduled_maintenances"]}
    assert {name: m["status"] for name, m in every.items()} == {
        "Ended 13 days ago": "completed",
        "Ended an hour ago": "completed",
        "Under way": "in_progress",
        "Next week": "scheduled",
    }
    for name in ("Ended 13 days ago", "Ended an hour ago"):
        start, end = windows[name]
        m = every[name]
        assert (m["scheduled_for"], m["scheduled_until"], m["resolved_at"]) == (iso(start), iso(end), iso(end))
        assert [u["status"] for u in m["incident_updates"]] == ["completed", "in_progress", "scheduled"]
    assert [m["name"] for m in v2(config.site.output, "upcoming")["scheduled_maintenances"]] == ["Next week"]
    assert [m["name"] for m in v2(config.site.output, "active")["scheduled_maintenances"]] == ["Under way"]
