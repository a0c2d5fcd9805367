"""Monthly reports, kept for a year: a store with outages placed by hand across three months gives
the figures computed by hand in the JSON, the CSV (read by the csv module), the pages and
/metrics; the months survive the 90-day prune and leave after site.report_months; a real run
credits each service's status for the time it speaks for; ``simulate --days 400`` fills the
months beyond the buckets' range."""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import lxml.html
import pytest
from prometheus_client.parser import text_string_to_metric_families

from statusgen.config import load_config
from statusgen.cycle import rebuild, run_cycle
from statusgen.decide.health import RunRecord
from statusgen.decide.incidents import Incident, IncidentUpdate, incident_id
from statusgen.decide.reports import Tally, credits, figures, month_bounds
from statusgen.model import Status
from statusgen.simulate import simulate
from statusgen.store import Store
from statusgen.store.migrations import MIGRATIONS
from statusgen.store.months import COLUMNS
from tests.conftest import Clock, Targets, write_config

NOW = datetime(2026, 11, 15, 12, 0, tzinfo=UTC)
MIN = 60
SERVICES = """
[categories]
core = "Core"
money = "Money"

[sla]
money = 99.5

[[services]]
slug = "api"
name = "API"
category = "core"
sla = 99.9
[[services.checks]]
url = "http://127.0.0.1:9/api"

[[services]]
slug = "web"
name = "Web <site>"
category = "core"
[[services.checks]]
url = "http://127.0.0.1:9/web"

[[services]]
slug = "pay"
name = "Pay"
category = "money"
[[services.checks]]
url = "http://127.0.0.1:9/pay"
"""


def tally(month: str, covered_min: float | None = None, **minutes: float) -> Tally:
    """A month's tally: ``minutes`` of the statuses named, the rest of ``covered_min`` (the whole
    month by default, up to NOW in November) operational."""
    start, end = month_bounds(month)
    covered = (min(end, int(NOW.timestamp())) - start) / MIN if covered_min is None else covered_min
    t = Tally()
    for status, n in minutes.items():
        t.seconds[status] = int(n * MIN)
    t.seconds["operational"] = int((covered - sum(minutes.values())) * MIN)
    return t


def incident(slug: str, start: datetime, end: datetime) -> Incident:
    updates = (
        IncidentUpdate(start, "opened", "major_outage", "Opened."),
        IncidentUpdate(end, "resolved", "operational", "Recovered."),
    )
    return Incident(incident_id(slug, start), slug, f"{slug}: major outage", "critical", start, end, updates)


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("reports")
    config = load_config(write_config(tmp, SERVICES, "report_months = 4\n"))
    months = {
        ("api", "2026-07"): tally("2026-07"),  # past report_months: pruned
        ("api", "2026-08"): tally("2026-08"),
        ("api", "2026-09"): tally("2026-09", major_outage=50, maintenance=120),
        ("web", "2026-09"): tally("2026-09", 43200 - 1440, partial_outage=100, degraded=60),  # a day unseen
        ("pay", "2026-09"): tally("2026-09"),
        ("api", "2026-10"): tally("2026-10", major_outage=10),
        ("web", "2026-10"): tally("2026-10"),
        ("pay", "2026-10"): tally("2026-10", major_outage=300),
        ("api", "2026-11"): tally("2026-11", major_outage=30),
        ("web", "2026-11"): tally("2026-11"),
    }
    months[("web", "2026-09")].excluded = 7
    incidents = [
        incident("api", at("2026-09-10 10:00"), at("2026-09-10 10:50")),
        incident("api", at("2026-10-31 23:50"), at("2026-11-01 00:20")),  # 10 minutes in October, 20 in November
        incident("api", at("2026-11-05 08:00"), at("2026-11-05 08:10")),
        incident("pay", at("2026-10-20 00:00"), at("2026-10-20 05:00")),
    ]
    old_bucket = (3600, int(at("2026-08-02 00:00").timestamp()), "api", 60, 0, 0, 0, 0, b"", None, None)
    with Store(config.site.store) as store:
        store.bulk_load([old_bucket], [], {}, incidents, months)
        store.record_run(RunRecord(0, NOW - timedelta(seconds=5), NOW, 3, 0))
        store.prune(NOW, config.site.report_months)  # the 90-day prune, and the months kept
        buckets = store.db.execute("SELECT count(*) FROM buckets").fetchone()[0]
    rebuild(config, lambda: NOW, new_store=True)
    return {"config": config, "root": config.site.output.resolve(), "buckets_left": buckets}


def read(site: dict[str, Any], rel: str) -> Any:
    data = (site["root"] / rel).read_bytes()
    return json.loads(data) if rel.endswith(".json") else data.decode()


def by_slug(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {s["slug"]: s for s in report["services"]}


def test_the_months_kept_are_listed_newest_first(site: dict[str, Any]) -> None:
    listing = read(site, "api/v1/reports.json")
    assert [m["month"] for m in listing["months"]] == ["2026-11", "2026-10", "2026-09", "2026-08"]
    assert [m["complete"] for m in listing["months"]] == [False, True, True, True]
    assert listing["months"][0]["to"] == "2026-11-15T12:00:00Z" and listing["months"][1]["to"] == "2026-11-01T00:00:00Z"
    assert site["buckets_left"] == 0  # the 90-day prune took the August bucket; August's month stays
    assert not (site["root"] / "api/v1/reports/2026-07.json").exists()  # past report_months


def test_a_month_gives_the_figures_computed_by_hand(site: dict[str, Any]) -> None:
    sept = read(site, "api/v1/reports/2026-09.json")
    api, web, pay = (by_slug(sept)[s] for s in ("api", "web", "pay"))
    # api: 50 minutes of major outage over 43,200 minus 120 of maintenance
    assert api["availability"] == round(100 * (43080 - 50) / 43080, 3) == 99.884
    assert (api["down_minutes"], api["maintenance_minutes"], api["minutes"]["unknown"]) == (50, 120, 0)
    assert (api["incidents"], api["incident_minutes"]) == (1, 50)
    assert api["sla"] == {"target": 99.9, "met": False, "error_budget_minutes": 43.1, "error_budget_left_minutes": -6.9}
    # web: a day no run spoke for is unknown, not up; a partial outage is 30% down; degraded is up
    assert web["availability"] == round(100 * (41760 - 30) / 41760, 3) == 99.928
    assert (web["down_minutes"], web["minutes"]["unknown"], web["minutes"]["degraded"]) == (30, 1440, 60)
    assert web["excluded_results"] == 7 and web["sla"] is None
    # pay: its category's target
    assert pay["availability"] == 100 and pay["sla"]["met"] is True and pay["sla"]["error_budget_minutes"] == 216
    core = {c["category"]: c for c in sept["categories"]}["core"]
    assert core["services"] == 2 and core["availability"] == round(100 * (84840 - 80) / 84840, 3) == 99.906
    assert core["minutes"]["unknown"] == 1440 and core["sla"] is None
    assert sept["site"]["availability"] == round(100 * (128040 - 80) / 128040, 3) == 99.938
    assert sept["site"]["incidents"] == 1 and sept["rules"]["down"].startswith("A major outage")


def test_incidents_are_cut_where_a_month_ends(site: dict[str, Any]) -> None:
    october, november = read(site, "api/v1/reports/2026-10.json"), read(site, "api/v1/reports/2026-11.json")
    assert (by_slug(october)["api"]["incidents"], by_slug(october)["api"]["incident_minutes"]) == (1, 10)
    assert (by_slug(november)["api"]["incidents"], by_slug(november)["api"]["incident_minutes"]) == (2, 30)
    pay = by_slug(october)["pay"]
    assert pay["availability"] == round(100 * (44640 - 300) / 44640, 3) == 99.328
    assert pay["sla"] == {
        "target": 99.5,
        "met": False,
        "error_budget_minutes": 223.2,
        "error_budget_left_minutes": -76.8,
    }


def test_the_current_month_so_far_and_its_error_budget(site: dict[str, Any]) -> None:
    november = read(site, "api/v1/reports/2026-11.json")
    api, pay = by_slug(november)["api"], by_slug(november)["pay"]
    assert not november["complete"]
    assert api["availability"] == round(100 * (20880 - 30) / 20880, 3) == 99.856
    # the budget is the whole month's: 0.1% of 43,200 minutes, less the 30 spent
    assert api["sla"] == {"target": 99.9, "met": False, "error_budget_minutes": 43.2, "error_budget_left_minutes": 13.2}
    assert pay["availability"] is None and pay["minutes"]["unknown"] == 20880 and pay["sla"]["met"] is None
    record = read(site, "api/v1/services/api.json")["service"]["this_month"]
    assert {k: record[k] for k in api if k in record} == {k: api[k] for k in api if k in record}
    assert record["links"]["page"] == "/reports/2026-11/"


def test_the_csv_is_one_row_a_service_as_the_json_says(site: dict[str, Any]) -> None:
    text = read(site, "reports/2026-09.csv")
    assert "\r\n" in text and text.count("\n") == 4  # RFC 4180: CRLF, a header and three rows
    rows = {r["service"]: r for r in csv.DictReader(io.StringIO(text, newline=""))}
    assert list(rows) == ["api", "web", "pay"]
    api, web = rows["api"], rows["web"]
    assert (api["month"], api["availability"], api["sla"], api["sla_met"], api["error_budget_left_minutes"]) == (
        "2026-09",
        "99.884",
        "99.9",
        "no",
        "-6.9",
    )
    assert (web["name"], web["unknown_minutes"], web["partial_outage_minutes"], web["excluded_results"]) == (
        "Web <site>",
        "1440.0",
        "100.0",
        "7",
    )
    assert web["sla"] == "" and web["sla_met"] == ""


def test_the_page_tells_the_same_figures_and_its_rules(site: dict[str, Any]) -> None:
    page = lxml.html.document_fromstring(read(site, "reports/2026-09/index.html"))
    api = page.get_element_by_id("svc-api").text_content()
    assert "99.884%" in api and "missed" in api and "-6.9 of 43.1 min" in api
    web = page.get_element_by_id("svc-web").text_content()
    assert "Web <site>" in web and "1,440 min" in web  # escaped in the HTML, read back as text
    rules = page.get_element_by_id("h-rules").getparent().text_content()
    assert "30%" in rules and "never counted as up" in rules and "Maintenance time is not counted" in rules
    listing = lxml.html.document_fromstring(read(site, "reports/index.html"))
    assert listing.xpath("//a[@href='/reports/2026-09/']") and listing.xpath("//a[@href='/reports/2026-09.csv']")
    front = lxml.html.document_fromstring(read(site, "index.html"))
    assert front.xpath("//a[@href='/reports/2026-11/']") and front.xpath("//a[@href='/reports/']")
    service = lxml.html.document_fromstring(read(site, "services/api/index.html"))
    assert service.xpath("//a[@href='/reports/2026-11/#svc-api']")
    assert "Availability target: 99.9% a month" in service.get_element_by_id("h-month").getparent().text_content()


def test_metrics_tell_the_target_and_the_budget_left(site: dict[str, Any]) -> None:
    found = {
        (s.name, s.labels.get("service")): s.value
        for family in text_string_to_metric_families(read(site, "metrics"))
        for s in family.samples
    }
    assert found[("statusgen_service_sla_target_ratio", "api")] == 0.999
    assert found[("statusgen_service_error_budget_left_seconds", "api")] == 792  # 13.2 minutes
    assert found[("statusgen_service_month_availability_ratio", "api")] == 0.99856
    assert found[("statusgen_service_sla_met", "api")] == 0
    assert ("statusgen_service_sla_target_ratio", "web") not in found


def test_a_run_credits_the_time_it_speaks_for_and_no_more(tmp_path: Path, targets: Targets) -> None:
    """Each run credits its status for the time since the run before, at most one interval; a
    stopped job's hour is unknown, not up."""
    targets.set("/ok")
    service = (
        f'[[services]]\nslug = "a"\nname = "A"\ncategory = "c"\n[[services.checks]]\nurl = "{targets.url("/ok")}"\n'
    )
    config = load_config(write_config(tmp_path, '[categories]\nc = "C"\n' + service))
    clock = Clock()
    for gap in (0, 60, 60, 3600):
        clock.t += timedelta(seconds=gap)
        run_cycle(config, clock, spread_s=0)
    with Store(config.site.store) as store:
        held = store.months("2000-01")["a"]
    assert sum(sum(t.seconds.values()) for t in held.values()) == 4 * 60  # one interval a run, at most


def test_credits_split_where_a_month_ends() -> None:
    end_of_october = int(at("2026-11-01 00:00").timestamp())
    added = credits({"a": Status.MAJOR_OUTAGE}, {"a": 2}, end_of_october - 20, end_of_october + 40, 60)
    assert added[("a", "2026-10")].seconds["major_outage"] == 20
    assert added[("a", "2026-11")].seconds["major_outage"] == 40 and added[("a", "2026-11")].excluded == 2
    later = credits({"a": Status.OPERATIONAL}, {}, end_of_october - 7200, end_of_october + 40, 60)
    assert sum(t.seconds["operational"] for t in later.values()) == 60  # at most one interval


def test_a_month_of_nothing_is_unknown_not_up() -> None:
    f = figures("2026-09", Tally(), [], int(NOW.timestamp()), 99.9)
    assert f.availability is None and f.minutes["unknown"] == 43200 and f.met is None


def test_the_rollup_table_has_a_column_for_every_status() -> None:
    (statements,) = [s for version, _, s in MIGRATIONS if version == 14]
    assert all(f"{column} INTEGER" in statements[0] for column in COLUMNS)


def test_simulate_400_days_fills_the_months_beyond_the_buckets(tmp_path: Path) -> None:
    db = tmp_path / "sim.db"
    simulate(3, 400, db, NOW)
    with Store(db) as store:
        months = store.months("2000-01")
        oldest_bucket = store.db.execute("SELECT min(start) FROM buckets").fetchone()[0]
        oldest_result = store.db.execute("SELECT min(ts) FROM results").fetchone()[0]
    assert sorted(months["service-0000"]) == [f"2025-{m:02d}" for m in range(10, 13)] + [
        f"2026-{m:02d}" for m in range(1, 12)
    ]
    assert oldest_bucket >= int((NOW - timedelta(days=92)).timestamp())  # as a real store: past 91 days, none
    assert oldest_result >= int((NOW - timedelta(days=3)).timestamp())
    september = months["service-0000"]["2026-09"]
    assert sum(september.seconds.values()) == 30 * 86400  # every second of a whole month told once


def test_simulate_days_400_then_a_build_reports_a_year(tmp_path: Path) -> None:
    """The command as an operator runs it: the store it fills builds reports of the months kept."""
    from click.testing import CliRunner

    from statusgen.cli import main

    config_path, db = tmp_path / "sim.toml", tmp_path / "sim.db"
    args = ["simulate", "--services", "2", "--days", "400", "--config-out", str(config_path), "--db", str(db)]
    made = CliRunner().invoke(main, [*args, "--output", str(tmp_path / "site")])
    assert made.exit_code == 0, made.output
    built = CliRunner().invoke(main, ["build", "--config", str(config_path)])
    assert built.exit_code == 0, built.output
    listing = json.loads((tmp_path / "site" / "api" / "v1" / "reports.json").read_bytes())
    assert listing["count"] == 13 and sum(m["complete"] for m in listing["months"]) == 12
    assert all(m["availability"] is not None for m in listing["months"])


def test_the_csv_neutralises_names_a_spreadsheet_would_run(tmp_path: Path) -> None:
    """OWASP's CSV injection: a text cell beginning with =, +, - or @ gets a leading single quote;
    our own numbers (a negative error budget) stay numbers."""
    formulas = {"api": '=HYPERLINK("https://evil.example","x")', "web": "+1+2", "pay": "-2+3", "ops": "@SUM(1,2)"}
    services = SERVICES.replace('name = "API"', f"name = '{formulas['api']}'")
    services = services.replace('name = "Web <site>"', f'name = "{formulas["web"]}"')
    services = services.replace('name = "Pay"', f'name = "{formulas["pay"]}"')
    services += f'\n[[services]]\nslug = "ops"\nname = "{formulas["ops"]}"\ncategory = "core"\n'
    services += '[[services.checks]]\nurl = "http://127.0.0.1:9/ops"\n'
    config = load_config(write_config(tmp_path, services))
    with Store(config.site.store) as store:
        store.bulk_load([], [], {}, [], {("api", "2026-09"): tally("2026-09", major_outage=50)})
        store.record_run(RunRecord(0, NOW - timedelta(seconds=5), NOW, 4, 0))
    rebuild(config, lambda: NOW, new_store=True)
    text = (config.site.output / "reports/2026-09.csv").read_text(encoding="utf-8")
    rows = {r["service"]: r for r in csv.DictReader(io.StringIO(text, newline=""))}
    assert {slug: r["name"] for slug, r in rows.items()} == {slug: "'" + name for slug, name in formulas.items()}
    assert rows["api"]["error_budget_left_minutes"] == "-6.8"  # 0.1% of 43,200 minutes, less the 50 down


def test_a_category_says_how_its_figure_is_made_and_how_many_of_its_services_missed(site: dict[str, Any]) -> None:
    """A category's availability is the mean of its services', each weighted by its counted time,
    and its target is judged on it alone: the report says so, and how many of its services
    missed their own target (a category without a target, as here, can hold one that missed)."""
    sept = read(site, "api/v1/reports/2026-09.json")
    core = {c["category"]: c for c in sept["categories"]}["core"]
    members = [s for s in sept["services"] if s["category"] == "core"]
    counted = [
        sum(s["minutes"][k] for k in ("operational", "degraded", "partial_outage", "major_outage")) for s in members
    ]
    weighted = sum(s["availability"] * c for s, c in zip(members, counted, strict=True)) / sum(counted)
    assert core["availability"] == pytest.approx(weighted, abs=0.001)
    assert core["services_missed"] == 1 and core["sla"] is None  # api missed its own 99.9
    october = {c["category"]: c for c in read(site, "api/v1/reports/2026-10.json")["categories"]}
    assert october["money"]["services_missed"] == 1 and october["money"]["sla"]["met"] is False
    assert october["core"]["services_missed"] == 0  # api's 10 minutes down left it at 99.978
    november = {c["category"]: c for c in read(site, "api/v1/reports/2026-11.json")["categories"]}
    assert (november["core"]["services_missed"], november["money"]["services_missed"]) == (1, 0)
    assert "weighted by its counted time" in sept["rules"]["categories"]
    page = lxml.html.document_fromstring(read(site, "reports/2026-09/index.html"))
    rows = {
        r.xpath("th")[0].text_content(): r.text_content() for r in page.xpath("//*[@id='h-categories']/..//tbody/tr")
    }
    assert "1 of its services missed its own target." in rows["Core (2)"]
    rules = page.get_element_by_id("h-rules").getparent().text_content()
    assert sept["rules"]["categories"] in rules
    current = lxml.html.document_fromstring(read(site, "reports/2026-11/index.html"))
    rows = {
        r.xpath("th")[0].text_content(): r.text_content() for r in current.xpath("//*[@id='h-categories']/..//tbody/tr")
    }
    assert "1 of its services missed its own target so far." in rows["Core (2)"]
    assert "0 of its services missed their own target so far." in rows["Money (1)"]  # its own target says
