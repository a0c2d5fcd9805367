"""Merge rules, as pure functions: our checks and the vendor's view."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

from statusgen.config import CheckConfig, ServiceConfig, VendorConfig
from statusgen.decide.incidents import advance, link_vendor
from statusgen.decide.merge import merge
from statusgen.decide.state import Evidence, ServiceState
from statusgen.model import MAINTENANCE_FLAG, Outcome, Status
from statusgen.vendors import parse_vendor
from statusgen.vendors.model import VendorObservation

SAMPLES = Path(__file__).resolve().parent / "fixtures" / "vendors"
NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
SVC = ServiceConfig(
    "github",
    "GitHub",
    "dev",
    (CheckConfig("https://api.github.com"),),
    vendor=VendorConfig("https://www.githubstatus.com/api/v2/summary.json"),
)
VENDOR_ONLY = ServiceConfig("openai", "OpenAI", "ai", (), vendor=VendorConfig("https://status.openai.com/x"))


def sample(path: str, components=None):
    return parse_vendor((SAMPLES / path).read_bytes(), None, components)


OPERATIONAL = "statuspage/githubstatus_summary_all_operational_2026.json"
TROUBLE = "statuspage/sendgrid_summary_active_incident_groups.json"
MAINT = "statuspage/cloudamqp_summary_maintenance_in_progress.json"


def own(status: Status, reason: str = "Own reason.") -> ServiceState:
    return ServiceState(
        status=status,
        own_status=status,
        incident_basis=status,
        since=NOW - timedelta(minutes=5),
        reason=reason,
        sources=("checks",),
    )


def obs(path: str | None, outcome: Outcome = Outcome.OK, age: timedelta = timedelta(0)) -> VendorObservation:
    return VendorObservation(sample(path) if path else None, outcome, NOW - age)


def test_agree_both_fine():
    st = merge(ServiceState(), own(Status.OPERATIONAL, "All fine."), SVC, obs(OPERATIONAL), NOW)
    assert st.status is Status.OPERATIONAL and st.sources == ("checks", "vendor")
    assert st.reason == "All fine."


def test_our_checks_fail_vendor_silent():
    st = merge(ServiceState(), own(Status.MAJOR_OUTAGE, "Check timed out."), SVC, obs(OPERATIONAL), NOW)
    assert st.status is Status.MAJOR_OUTAGE
    assert st.reason == "Check timed out. The vendor has not acknowledged a problem."
    assert st.incident_basis is Status.MAJOR_OUTAGE


def test_vendor_trouble_while_our_checks_pass_follows_the_vendor_without_an_incident():
    st = merge(ServiceState(), own(Status.OPERATIONAL), SVC, obs(TROUBLE), NOW)
    assert st.status is Status.DEGRADED
    assert st.reason == (
        "Vendor reports: Login issues reported from Azure users starting on 10/10/23 "
        "(degraded performance, investigating); our checks pass."
    )
    assert st.since == datetime(2023, 10, 11, 15, 30, 44, tzinfo=UTC)
    assert advance(None, ServiceState(), st, SVC, NOW) is None  # not confirmed by us: no incident


def test_both_in_trouble_reason_gives_both():
    st = merge(ServiceState(), own(Status.PARTIAL_OUTAGE, "Check failed."), SVC, obs(TROUBLE), NOW)
    assert st.status is Status.PARTIAL_OUTAGE
    assert st.reason.startswith("Check failed. Vendor reports: Login issues")


def test_vendor_maintenance():
    failed = Evidence(1, "GET", "https://api.github.com", "timeout", None, None, False, NOW, MAINTENANCE_FLAG)
    held = replace(own(Status.MAINTENANCE, "Maintenance."), evidence=(failed,))
    st = merge(ServiceState(), held, SVC, obs(MAINT), NOW)
    assert st.status is Status.MAINTENANCE and st.incident_basis is Status.MAINTENANCE
    assert st.reason.startswith("Vendor reports maintenance in progress: ")
    assert st.reason.endswith("Our checks fail, as expected during maintenance.")


def test_stale_vendor_view_is_set_aside_with_a_note():
    st = merge(
        ServiceState(),
        own(Status.OPERATIONAL, "Fine."),
        SVC,
        obs(TROUBLE, Outcome.TIMEOUT, age=timedelta(hours=2)),
        NOW,
    )
    assert st.status is Status.OPERATIONAL
    read = f"{(NOW - timedelta(hours=2)).astimezone(UTC):%Y-%m-%d %H:%M} UTC"  # our last good read
    assert st.reason == (
        f"Fine. The vendor status page could not be read since {read}: timed out; its last view is too old and is "
        "set aside."
    )


def test_failing_source_with_a_recent_view_still_counts():
    st = merge(ServiceState(), own(Status.OPERATIONAL), SVC, obs(TROUBLE, Outcome.CONNECT, timedelta(minutes=5)), NOW)
    assert st.status is Status.DEGRADED and "its last view is used" in st.reason


def test_never_read_source_falls_back_to_our_checks():
    failed = VendorObservation(None, Outcome.PARSE, None, "statuspage payload: not JSON")
    st = merge(ServiceState(), own(Status.OPERATIONAL, "Fine."), SVC, failed, NOW)
    assert st.status is Status.OPERATIONAL
    assert st.reason == "Fine. The vendor status page has never been read: statuspage payload: not JSON."
    assert "too old" not in st.reason  # a view never read is not old


def test_vendor_only_service_follows_the_vendor_without_an_incident_of_ours():
    view = obs("incidentio/openai_summary_compat_active_incidents.json")
    st = merge(ServiceState(), ServiceState(), VENDOR_ONLY, view, NOW)
    assert st.status is Status.DEGRADED and st.sources == ("vendor",)
    assert st.reason.count("Vendor reports") == 1
    assert advance(None, ServiceState(), st, VENDOR_ONLY, NOW) is None  # never copied from the vendor


def test_vendor_acknowledgement_is_linked_once():
    st = merge(ServiceState(), own(Status.PARTIAL_OUTAGE), SVC, obs(TROUBLE), NOW)
    inc = advance(None, ServiceState(), st, SVC, NOW)
    linked = link_vendor(inc, sample(TROUBLE), NOW)
    assert [u.kind for u in linked.updates] == ["opened", "vendor"]
    assert linked.updates[-1].link == "https://stspg.io/4r83jmqz4km7"
    assert link_vendor(linked, sample(TROUBLE), NOW + timedelta(minutes=1)) == linked


def test_a_narrowed_component_follows_its_current_status_not_the_incidents_peak():
    """Issue 34: the incident's impact is major (its peak); the Console is degraded now."""
    console = ["Claude Console (platform.claude.com)"]
    view = sample("statuspage/claude_summary_major_incident_now_degraded.json", console)
    st = merge(ServiceState(), own(Status.OPERATIONAL), SVC, VendorObservation(view, Outcome.OK, NOW), NOW)
    assert st.status is Status.DEGRADED
    assert st.reason.startswith("Vendor reports: Elevated errors on platform.claude.com (")
    assert st.reason.endswith("; our checks pass.")
