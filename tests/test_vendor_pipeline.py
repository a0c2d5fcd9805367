"""End to end with vendors: a loopback server serves real vendor samples (and broken ones);
the run's JSON shows the merged status and reason, and nothing breaks the run."""

from __future__ import annotations

import json
import threading
import time
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from statusgen.config import load_config
from statusgen.cycle import run_cycle
from tests.conftest import Targets, loopback_server, write_config

SAMPLES = Path(__file__).resolve().parent / "fixtures" / "vendors"
SENDGRID = (SAMPLES / "statuspage/sendgrid_summary_active_incident_groups.json").read_bytes()
HOSTILE = json.loads(SENDGRID)
HOSTILE["incidents"][0]["name"] = 'Login <script>alert("x")</script> \x07broken & "quoted"'
PAGES = {
    "/github.json": (SAMPLES / "statuspage/githubstatus_summary_all_operational_2026.json").read_bytes(),
    "/sendgrid.json": SENDGRID,
    "/openai.json": (SAMPLES / "incidentio/openai_summary_compat_active_incidents.json").read_bytes(),
    "/html.json": b"<html><body>Maintenance page</body></html>",
    "/truncated.json": SENDGRID[:700],
    "/huge.json": b'{"page": "' + b"x" * 3_000_000 + b'"}',
    "/hostile.json": json.dumps(HOSTILE).encode(),
    "/manychat/summary.json": (SAMPLES / "instatus/manychat_summary_up_with_incident.json").read_bytes(),
    "/api/status-page/slum": (SAMPLES / "uptimekuma/slum_status-page.json").read_bytes(),
    "/api/status-page/heartbeat/slum": (SAMPLES / "uptimekuma/slum_heartbeat.json").read_bytes(),
    "/con/history/summary.json": (SAMPLES / "upptime/con_history_summary.json").read_bytes(),
}


class VendorPages(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    seen: list[tuple[str, str | None]] = []

    def do_GET(self) -> None:
        self.seen.append((self.path, self.headers.get("If-None-Match")))
        if self.path == "/slow.json":
            time.sleep(5)
        body = PAGES.get(self.path, b"")
        etag = f'"v-{len(body)}"'
        if self.headers.get("If-None-Match") == etag:
            self.send_response(304)
            self.send_header("ETag", etag)
            self.end_headers()
            return
        self.send_response(200 if body else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("ETag", etag)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def service(slug: str, vendor: str, check: str | None, extra: str = "") -> str:
    checks = f'[[services.checks]]\nurl = "{check}"\n' if check else ""
    return (
        f'[[services]]\nslug = "{slug}"\nname = "{slug.title()}"\ncategory = "saas"\n{checks}'
        f'[services.vendor]\nurl = "{vendor}"\ntimeout = 2\n{extra}\n'
    )


@pytest.fixture(scope="module")
def vendor_site(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("vendors")
    with loopback_server(VendorPages) as v:
        yield from _vendor_site(tmp, v)


def _vendor_site(tmp: Path, v: str):
    targets = Targets()
    threading.Thread(target=targets.serve_forever, daemon=True).start()
    targets.set("/ok")
    ok = targets.url("/ok")
    body = '[categories]\nsaas = "SaaS"\n' + "".join(
        [
            service("github", f"{v}/github.json", ok),
            service("sendgrid", f"{v}/sendgrid.json", ok, 'components = ["Partners"]'),
            service("openai", f"{v}/openai.json", None),
            service("html", f"{v}/html.json", ok),
            service("truncated", f"{v}/truncated.json", ok),
            service("huge", f"{v}/huge.json", ok),
            service("slow", f"{v}/slow.json", ok),
            service("hostile", f"{v}/hostile.json", ok),
            service("local", str(SAMPLES / "statusio/gitlab_status_planned_maintenance.json"), ok),
            service("manychat", f"{v}/manychat/summary.json", ok),
            service("slum", f"{v}/api/status-page/slum", None, 'timezone = "America/New_York"'),
            service("liber3", f"{v}/api/status-page/slum", ok, 'format = "uptimekuma"\ncomponents = ["Liber3"]'),
            service("con", f"{v}/con/history/summary.json", None),
            service("datalad", f"{v}/con/history/summary.json", ok, 'components = ["datalad.org"]'),
        ]
    )
    cfg = load_config(write_config(tmp, body, "max_bytes = 2000000"))
    VendorPages.seen.clear()
    first = run_cycle(cfg)
    second = run_cycle(cfg)
    yield {"cfg": cfg, "site": cfg.site.output, "seen": list(VendorPages.seen), "runs": (first, second)}
    targets.shutdown()


def doc(site: Path, rel: str) -> dict:
    return json.loads((site / rel).read_bytes())


def test_merged_statuses_and_reasons(vendor_site):
    snap = doc(vendor_site["site"], "api/v1/snapshot.json")
    got = {s["slug"]: (s["status"], s["sources"]) for s in snap["services"]}
    assert got["github"] == ("operational", ["checks", "vendor"])
    assert got["sendgrid"] == ("degraded", ["checks", "vendor"])
    assert got["openai"] == ("degraded", ["vendor"])
    assert got["local"] == ("maintenance", ["checks", "vendor"])
    for slug in ("html", "truncated", "huge", "slow"):
        assert got[slug] == ("operational", ["checks"]), slug
    reasons = {s["slug"]: s["reason"] for s in snap["services"]}
    assert reasons["sendgrid"].startswith("Vendor reports: Login issues reported from Azure users")
    assert reasons["sendgrid"].endswith("; our checks pass.")
    assert "The vendor status page has never been read: timed out." in reasons["slow"]
    assert "has never been read: answer exceeded the size cap." in reasons["huge"]
    assert "has never been read: vendor payload: is an HTML page" in reasons["html"]
    assert not any("too old" in reasons[slug] for slug in ("slow", "huge", "html", "truncated"))


def test_service_record_carries_the_vendor_view(vendor_site):
    rec = doc(vendor_site["site"], "api/v1/services/sendgrid.json")["service"]["vendor"]
    assert rec["outcome"] == "ok" and rec["stale"] is False and rec["components"] == ["Partners"]
    assert [c["name"] for c in rec["view"]["components"]] == ["Partners"]
    assert rec["view"]["incidents"][0]["impact"] == "degraded"
    html = doc(vendor_site["site"], "api/v1/services/html.json")["service"]["vendor"]
    assert html["outcome"] == "parse" and html["view"] is None and html["detail"]
    assert doc(vendor_site["site"], "api/v1/services/huge.json")["service"]["vendor"]["outcome"] == "too_large"


def test_conditional_requests_on_the_second_run(vendor_site):
    seen = vendor_site["seen"]
    github = [inm for path, inm in seen if path == "/github.json"]
    assert github[0] is None and github[1] is not None and github[1].startswith('"v-')
    rec = doc(vendor_site["site"], "api/v1/services/github.json")["service"]["vendor"]
    assert rec["outcome"] == "ok" and rec["view"]["status"] == "operational"  # 304 reused the stored body


def test_health_counts_vendor_sources(vendor_site):
    run = doc(vendor_site["site"], "api/v1/health.json")["collection"]["last_run"]
    assert run["vendor_sources_attempted"] == 14
    assert run["vendor_sources_failed"] == 4  # html, truncated, huge, slow


def test_vendor_only_service_follows_the_vendor_without_an_incident_of_ours(vendor_site):
    incs = doc(vendor_site["site"], "api/v1/incidents.json")["incidents"]
    assert incs == []  # the vendor's incident is in the vendor view, never copied as ours
    rec = doc(vendor_site["site"], "api/v1/services/openai.json")["service"]
    assert rec["status"] == "degraded" and rec["vendor"]["view"]["incidents"]


def test_vendor_text_is_escaped_everywhere(vendor_site):
    site = vendor_site["site"]
    rec = doc(site, "api/v1/services/hostile.json")["service"]
    title = rec["vendor"]["view"]["incidents"][0]["title"]
    assert "\x07" not in title and "<script>" in title  # plain text in JSON, control chars gone
    for path in site.rglob("*.html"):
        assert "<script>alert" not in path.read_text(), path
    for path in site.rglob("*.xml"):
        assert "<script>alert" not in path.read_text(), path


class SwitchablePages(BaseHTTPRequestHandler):
    """A vendor page whose body a test changes between runs."""

    protocol_version = "HTTP/1.1"
    body = b""

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def switchable():
    with loopback_server(SwitchablePages) as base:
        yield f"{base}/summary.json"


def runs(cfg, start: datetime):
    """Run cycles a minute apart on a fixed clock; each call runs one."""
    n = 0

    def one() -> None:
        nonlocal n
        at = start + timedelta(minutes=n)
        run_cycle(cfg, clock=lambda: at, spread_s=0)
        n += 1

    return one


def test_our_network_down_while_the_vendor_reports_trouble(tmp_path, targets, switchable):
    """Defect 1 of issue 29, end to end: every check and the canary fail for three runs while one
    service's vendor reports an incident. No incident of ours; the results show as set aside."""
    SwitchablePages.body = SENDGRID
    for path in ("/a", "/b", "/c", "/d", "/e", "/canary"):
        targets.set(path)
    body = '[categories]\nsaas = "SaaS"\n[[canaries]]\nurl = "' + targets.url("/canary") + '"\n'
    body += service("mail", switchable, targets.url("/a"))
    for p in "bcde":
        body += f'[[services]]\nslug = "{p}"\nname = "{p}"\ncategory = "saas"\n'
        body += f'[[services.checks]]\nurl = "{targets.url("/" + p)}"\n'
    cfg = load_config(write_config(tmp_path, body))
    run = runs(cfg, datetime.now(UTC).replace(microsecond=0))
    run()
    for path in ("/a", "/b", "/c", "/d", "/e", "/canary"):
        targets.set(path, 503)
    for _ in range(3):
        run()
    site = cfg.site.output
    assert doc(site, "api/v1/incidents.json")["incidents"] == []
    rec = doc(site, "api/v1/services/mail.json")["service"]
    assert rec["status"] == "degraded" and rec["state"]["own_checks"] == "operational"
    assert rec["reason"].count("Vendor reports") == 1 and "Not counted" in rec["reason"]
    (evidence,) = rec["state"]["evidence"]
    assert evidence["flag"] == "excluded" and evidence["http_status"] == 503
    assert rec["checks"][0]["last_result"]["flag"] == "excluded"
    page = (site / "services/mail/index.html").read_text()
    assert "Not counted" in page  # the reason says so (the last result, with its flag, is the record's)


def test_no_incident_when_a_vendor_maintenance_ends(tmp_path, targets, switchable):
    """Defect 2 of issue 29, end to end: the check fails during the vendor's maintenance and
    answers again when the vendor says all is well. No incident opens."""
    SwitchablePages.body = (SAMPLES / "statuspage/cloudamqp_summary_maintenance_in_progress.json").read_bytes()
    targets.set("/a", 503)
    body = '[categories]\nsaas = "SaaS"\n' + service("mq", switchable, targets.url("/a"))
    cfg = load_config(write_config(tmp_path, body))
    run = runs(cfg, datetime.now(UTC).replace(microsecond=0))
    for _ in range(4):
        run()
    rec = doc(cfg.site.output, "api/v1/services/mq.json")["service"]
    assert rec["status"] == "maintenance" and rec["state"]["evidence"][0]["flag"] == "maintenance"
    SwitchablePages.body = PAGES["/github.json"]
    targets.set("/a")
    for _ in range(3):
        run()
    assert doc(cfg.site.output, "api/v1/incidents.json")["incidents"] == []
    rec = doc(cfg.site.output, "api/v1/services/mq.json")["service"]
    assert rec["status"] == "operational" and rec["state"]["evidence"][0]["flag"] is None


# -- Instatus, Uptime Kuma and Upptime ----------------------------------------


def test_instatus_page_up_with_an_incident_follows_the_incident(vendor_site):
    rec = doc(vendor_site["site"], "api/v1/services/manychat.json")["service"]
    assert rec["status"] == "degraded" and rec["sources"] == ["checks", "vendor"]
    assert rec["reason"] == (
        "Vendor reports: Delays in Instagram automation (degraded performance, identified); our checks pass."
    )
    assert rec["vendor"]["view"]["format"] == "instatus"


def test_uptime_kuma_reads_both_urls_in_the_configured_zone(vendor_site):
    rec = doc(vendor_site["site"], "api/v1/services/slum.json")["service"]
    assert rec["status"] == "partial_outage" and rec["sources"] == ["vendor"]  # 9 of its 19 monitors down
    view = rec["vendor"]["view"]
    assert view["format"] == "uptimekuma" and view["description"] == "Partially Degraded Service"
    assert view["updated_at"] == "2026-06-22T08:16:28Z"  # its server's 04:16:28, New York time
    assert view["incidents"][0]["title"] == "Unstable due to high traffic"
    liber3 = doc(vendor_site["site"], "api/v1/services/liber3.json")["service"]
    assert liber3["status"] == "operational"
    assert [(c["name"], c["status"], c["uptime"]) for c in liber3["vendor"]["view"]["components"]] == [
        ("Liber3", "operational", {"day": 99.65})
    ]
    assert doc(vendor_site["site"], "api/v1/incidents.json")["incidents"] == []


def test_uptime_kuma_heartbeats_are_asked_afresh_each_run(vendor_site):
    seen = vendor_site["seen"]
    page = [inm for path, inm in seen if path == "/api/status-page/slum"]
    beats = [inm for path, inm in seen if path == "/api/status-page/heartbeat/slum"]
    assert len(page) == len(beats) == 4  # two sources, two runs
    assert page[:2] == [None, None] and all(inm and inm.startswith('"v-') for inm in page[2:])
    assert beats == [None] * 4
    rec = doc(vendor_site["site"], "api/v1/services/slum.json")["service"]["vendor"]
    assert rec["outcome"] == "ok" and len(rec["view"]["components"]) == 19  # the 304 reused the kept page


def test_upptime_sites_with_their_uptime(vendor_site):
    con = doc(vendor_site["site"], "api/v1/services/con.json")["service"]
    assert con["status"] == "partial_outage" and con["reason"] == "Vendor reports partial outage: 6 of 11 sites down."
    datalad = doc(vendor_site["site"], "api/v1/services/datalad.json")["service"]
    assert datalad["status"] == "operational"
    (site,) = datalad["vendor"]["view"]["components"]
    assert site["uptime"] == {"all": 99.92, "day": 100.0, "week": 100.0, "month": 99.91, "year": 99.84}


class KumaPages(BaseHTTPRequestHandler):
    """An Uptime Kuma server whose answers a test changes between runs; a path it lacks is 404."""

    protocol_version = "HTTP/1.1"
    bodies: dict[str, bytes] = {}

    def do_GET(self) -> None:
        body = self.bodies.get(self.path, b"")
        self.send_response(200 if body else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def test_uptime_kuma_maintenance_is_merged_by_the_rules(tmp_path, targets):
    """Every monitor in maintenance (beat status 3): our failing check opens no incident; a
    heartbeat URL that fails keeps the last view and says so."""
    page = json.loads(PAGES["/api/status-page/slum"])
    page["incident"] = None
    beats = json.loads(PAGES["/api/status-page/heartbeat/slum"])
    for monitor in beats["heartbeatList"].values():
        monitor[-1]["status"] = 3
    KumaPages.bodies = {
        "/api/status-page/slum": json.dumps(page).encode(),
        "/api/status-page/heartbeat/slum": json.dumps(beats).encode(),
    }
    targets.set("/a", 503)
    with loopback_server(KumaPages) as base:
        body = '[categories]\nsaas = "SaaS"\n' + service("kuma", f"{base}/api/status-page/slum", targets.url("/a"))
        cfg = load_config(write_config(tmp_path, body))
        run = runs(cfg, datetime.now(UTC).replace(microsecond=0))
        for _ in range(4):
            run()
        rec = doc(cfg.site.output, "api/v1/services/kuma.json")["service"]
        assert rec["status"] == "maintenance" and rec["state"]["evidence"][0]["flag"] == "maintenance"
        assert rec["reason"] == (
            "Vendor reports under maintenance: Maintenance. Our checks fail, as expected during maintenance."
        )
        assert doc(cfg.site.output, "api/v1/incidents.json")["incidents"] == []
        del KumaPages.bodies["/api/status-page/heartbeat/slum"]
        run()
    rec = doc(cfg.site.output, "api/v1/services/kuma.json")["service"]
    assert rec["vendor"]["outcome"] == "http_status" and rec["status"] == "maintenance"
    assert "could not be read" in rec["reason"] and "its last view is used" in rec["reason"]
