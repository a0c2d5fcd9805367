"""End to end with vendors: a loopback server serves real vendor samples (and broken ones);
the run's JSON shows the merged status and reason, and nothing breaks the run."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from statusgen.config import load_config
from statusgen.cycle import run_cycle
from tests.conftest import Targets, write_config

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
    pages = ThreadingHTTPServer(("127.0.0.1", 0), VendorPages)
    pages.daemon_threads = True
    threading.Thread(target=pages.serve_forever, daemon=True).start()
    targets = Targets()
    threading.Thread(target=targets.serve_forever, daemon=True).start()
    targets.set("/ok")
    v = f"http://127.0.0.1:{pages.server_address[1]}"
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
        ]
    )
    cfg = load_config(write_config(tmp, body, "max_bytes = 2000000"))
    VendorPages.seen.clear()
    first = run_cycle(cfg)
    second = run_cycle(cfg)
    yield {"cfg": cfg, "site": cfg.site.output, "seen": list(VendorPages.seen), "runs": (first, second)}
    pages.shutdown()
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
    assert "The vendor status page could not be read (timed out)" in reasons["slow"]
    assert "could not be read (answer exceeded the size cap)" in reasons["huge"]
    assert "could not be read (statuspage payload" in reasons["html"] or "could not be read (" in reasons["html"]


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
    assert run["vendor_sources_attempted"] == 9
    assert run["vendor_sources_failed"] == 4  # html, truncated, huge, slow


def test_vendor_only_service_opens_our_incident(vendor_site):
    incs = doc(vendor_site["site"], "api/v1/incidents.json")["incidents"]
    assert [i["service"] for i in incs] == ["openai"]


def test_vendor_text_is_escaped_everywhere(vendor_site):
    site = vendor_site["site"]
    rec = doc(site, "api/v1/services/hostile.json")["service"]
    title = rec["vendor"]["view"]["incidents"][0]["title"]
    assert "\x07" not in title and "<script>" in title  # plain text in JSON, control chars gone
    for path in site.rglob("*.html"):
        assert "<script>alert" not in path.read_text(), path
    for path in site.rglob("*.xml"):
        assert "<script>alert" not in path.read_text(), path
