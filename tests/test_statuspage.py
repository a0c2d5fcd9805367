"""Statuspage's public v2 API, as a statusgen site publishes it: every key real pages carry, only
their enumerations, stable ids; read back by our own vendor adapter, and by a second statusgen
site that takes the first as its vendor, over loopback."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from jsonschema import Draft202012Validator

from statusgen import routes
from statusgen.config import load_config
from statusgen.cycle import run_cycle
from statusgen.vendors import parse_vendor
from statusgen.web.serve import PreviewServer
from tests.conftest import write_config
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
    assert any(i["status"] == "resolved" for i in recent) and len(recent) <= 50
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
