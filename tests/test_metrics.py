"""``/metrics``, read by Prometheus' own parser of the text exposition (``prometheus_client``):
every figure is the JSON's, every status a state set with one series at 1; served by both
servers with the exposition's content type."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from prometheus_client.parser import text_string_to_metric_families

from statusgen import routes
from statusgen.model import STATUSES
from tests.pinned import build_pinned_site

PROMETHEUS = "text/plain; version=0.0.4; charset=utf-8"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_pinned_site(tmp_path_factory.mktemp("metrics")).resolve()


def families(site: Path) -> dict[str, list[Any]]:
    text = (site / routes.METRICS).read_text()
    return {f.name: f.samples for f in text_string_to_metric_families(text)}


def json_of(site: Path, rel: str) -> Any:
    return orjson.loads((site / rel).read_bytes())


def test_every_service_status_is_a_state_set_with_the_snapshots_status(site: Path) -> None:
    snapshot = json_of(site, "api/v1/snapshot.json")
    samples = families(site)["statusgen_service_status"]
    for svc in snapshot["services"]:
        mine = {s.labels["status"]: s.value for s in samples if s.labels["service"] == svc["slug"]}
        assert mine == {status: float(status == svc["status"]) for status in STATUSES}, svc["slug"]
        assert {s.labels["category"] for s in samples if s.labels["service"] == svc["slug"]} == {svc["category"]}
    site_status = {s.labels["status"]: s.value for s in families(site)["statusgen_site_status"]}
    assert site_status == {status: float(status == snapshot["status"]) for status in STATUSES}


def test_the_24_hour_figures_are_the_records(site: Path) -> None:
    found = families(site)
    for name, key in (
        ("statusgen_service_availability_24h_percent", "availability"),
        ("statusgen_service_latency_p50_24h_milliseconds", "latency_p50_ms"),
        ("statusgen_service_latency_p95_24h_milliseconds", "latency_p95_ms"),
    ):
        mine = {s.labels["service"]: s.value for s in found[name]}
        expected = {}
        for slug in (p.stem for p in (site / "api/v1/services").glob("*.json")):
            value = json_of(site, routes.service_file(slug))["service"]["last_day"]["summary"][key]
            if value is not None:
                expected[slug] = float(value)
        assert mine == expected and mine, name


def test_incidents_vendors_health_and_the_last_run(site: Path) -> None:
    found, health = families(site), json_of(site, "api/v1/health.json")
    open_ = {i["service"] for i in json_of(site, "api/v1/incidents.json")["incidents"] if i["open"]}
    assert {s.labels["service"]: s.value for s in found["statusgen_service_open_incident"]} == {
        p.stem: float(p.stem in open_) for p in (site / "api/v1/services").glob("*.json")
    }
    vendor = json_of(site, routes.service_file("service-0003"))["service"]["vendor"]["view"]["status"]
    assert {s.labels["status"]: s.value for s in found["statusgen_vendor_status"]} == {
        status: float(status == vendor) for status in STATUSES
    }
    assert found["statusgen_health_index"][0].value == health["health_index"]
    state = {s.labels["state"]: s.value for s in found["statusgen_collection_state"]}
    assert state[health["collection"]["state"]] == 1 and sum(state.values()) == 1
    (last,) = found["statusgen_last_run_timestamp_seconds"]
    assert last.value > 1.7e9


def test_a_label_value_is_escaped(site: Path) -> None:
    """A category slug cannot hold a quote, but the writer escapes what the format asks all the same."""
    from statusgen.render.formats.metrics import _sample

    line = _sample("x", {"service": 'a"b\\c\nd'}, 1)
    (family,) = text_string_to_metric_families(line + "\n")
    assert family.samples[0].labels == {"service": 'a"b\\c\nd'}
