"""``/metrics``, read by Prometheus' own parser of the text exposition (``prometheus_client``)
and checked by its linter (``promtool check metrics``): every figure is the JSON's in Prometheus'
base units, every status a state set with one series at 1; served by both servers with the
exposition's content type, and gzipped like other text."""

from __future__ import annotations

import gzip
import subprocess
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pytest
from prometheus_client.parser import text_string_to_metric_families

from statusgen import routes
from statusgen.model import STATUSES
from tests.conformance import Server, served
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


def test_the_24_hour_figures_are_the_records_in_base_units(site: Path) -> None:
    """Availability a ratio 0-1 (the JSON's percentage over 100), latency in seconds (its
    milliseconds over 1,000)."""
    found = families(site)
    for name, key, per in (
        ("statusgen_service_availability_24h_ratio", "availability", 100),
        ("statusgen_service_latency_p50_24h_seconds", "latency_p50_ms", 1000),
        ("statusgen_service_latency_p95_24h_seconds", "latency_p95_ms", 1000),
    ):
        mine = {s.labels["service"]: s.value for s in found[name]}
        expected = {}
        for slug in (p.stem for p in (site / "api/v1/services").glob("*.json")):
            value = json_of(site, routes.service_file(slug))["service"]["last_day"]["summary"][key]
            if value is not None:
                expected[slug] = pytest.approx(value / per, rel=1e-12)
        assert mine == expected and mine, name


def test_promtool_accepts_the_exposition(site: Path) -> None:
    """Prometheus' own linter: base units, no percentages, ``_total`` only on counters, HELP and
    TYPE for every family (it exits 3 on any of these, 0 when all is well)."""
    checked = subprocess.run(
        ["promtool", "check", "metrics"], input=(site / routes.METRICS).read_bytes(), capture_output=True, timeout=60
    )
    assert checked.returncode == 0, checked.stdout.decode() + checked.stderr.decode()


def test_every_family_has_help_and_type_and_no_old_unit(site: Path) -> None:
    text = (site / routes.METRICS).read_text()
    names = {line.split()[2] for line in text.splitlines() if line.startswith("# TYPE ")}
    assert names == {line.split()[2] for line in text.splitlines() if line.startswith("# HELP ")}
    assert {"statusgen_service_error_budget_left_seconds", "statusgen_service_sla_target_ratio"} <= names
    for word in ("percent", "milliseconds", "minutes", "_total"):
        assert not [n for n in names if word in n], word


def test_metrics_has_a_gz_copy_like_other_text(site: Path) -> None:
    body = (site / routes.METRICS).read_bytes()
    assert len(body) >= 4096, "the pinned site's exposition is past the size that gets a copy"
    assert gzip.decompress((site / f"{routes.METRICS}.gz").read_bytes()) == body


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
    # the pinned store's last run: its third cycle, at START + 3 min 5 s, finished 2 s later (tests/pinned.py)
    finished = datetime(2026, 11, 20, 12, 33, 7, tzinfo=UTC)
    assert health["collection"]["last_run"]["finished_at"] == "2026-11-20T12:33:07Z"
    assert last.value == finished.timestamp() == 1795177987.0, "to the second, every digit kept"


def test_a_label_value_is_escaped(site: Path) -> None:
    """A category slug cannot hold a quote, but the writer escapes what the format asks all the same."""
    from statusgen.render.formats.metrics import _sample

    line = _sample("x", {"service": 'a"b\\c\nd'}, 1)
    (family,) = text_string_to_metric_families(line + "\n")
    assert family.samples[0].labels == {"service": 'a"b\\c\nd'}


# -- /metrics and the rate limit (docs/integrations.md, docs/api.md "HTTP rules") --------------------

INTERFACE_PER_MINUTE = 120  # docs/api.md: the interface's limit per client address
PAGES_PER_MINUTE = 1200  # docs/api.md and docs/integrations.md: the pages' limit, /metrics among them


@pytest.fixture(scope="module", params=["serve", "nginx"])
def server(request: pytest.FixtureRequest, site: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    yield from served(request.param, site, tmp_path_factory.mktemp(f"metrics-{request.param}"))


def test_metrics_count_as_a_page_for_the_rate_limit(server: Server) -> None:
    """ "``/metrics`` counts as a page for the rate limit (1,200 requests a minute from one address)":
    a client that used up the interface's 120 still scrapes it; 1,200 scrapes use up the pages'
    limit, so a page is refused after them (nginx's bucket lets a few more through as it drains)
    and so is /metrics, with the HTML 429."""
    with server.client() as client:
        started = time.monotonic()
        assert [client.get("/api/v1/health").status_code for _ in range(INTERFACE_PER_MINUTE)] == [200] * 120
        # the interface's limit reached: the 429 of the interface (JSON), /metrics not among it
        extra = 0
        while client.get("/api/v1/health").status_code == 200:
            extra += 1
            assert extra <= 2 * (time.monotonic() - started) + 1
        started, rate = time.monotonic(), PAGES_PER_MINUTE / 60
        scrapes = [client.get("/metrics") for _ in range(PAGES_PER_MINUTE)]
        assert [r.status_code for r in scrapes] == [200] * PAGES_PER_MINUTE
        assert scrapes[-1].content == server.file(routes.METRICS)
        for url in ("/", "/metrics"):
            extra = 0
            while (r := client.get(url)).status_code == 200:
                extra += 1
                assert extra <= min(rate * (time.monotonic() - started) + 1, PAGES_PER_MINUTE), url
            assert r.status_code == 429 and r.headers["content-type"].startswith("text/html"), url
            assert int(r.headers["retry-after"]) >= 1
