"""Every real vendor sample, read by its adapter, against what the file itself says.

The expectations were written by reading each sample (see SOURCES.md beside
them), not by printing what the adapters return.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import orjson
import pytest

from statusgen.errors import VendorParseError
from statusgen.vendors import (
    FORMATS,
    VendorView,
    cachet,
    detect_format,
    feed,
    gcp,
    heroku,
    instatus,
    parse_vendor,
    slack,
    statusio,
    statuspage,
    upptime,
    uptimekuma,
)
from statusgen.vendors.kumapair import bundle

SAMPLES = Path(__file__).resolve().parent / "fixtures" / "vendors"

EXPECTED_FORMAT = {
    "cachet/yoti_cachet_v1_components.json": "cachet",
    "feeds/githubstatus_history_active_incident.atom": "feed",
    "feeds/parse_statuspage_history_2014.rss": "feed",
    "gcp/gcp_status_incidents_json_2022.json": "gcp",
    "heroku/heroku_current_status_incident.json": "heroku",
    "incidentio/openai_summary_compat_active_incidents.json": "statuspage",
    "slack/slack_current_active_incident.json": "slack",
    "statusio/gitlab_status_planned_maintenance.json": "statusio",
    "statuspage/claude_scheduled_maintenances_lifecycle.json": "statuspage",
    "statuspage/cloudamqp_summary_maintenance_in_progress.json": "statuspage",
    "statuspage/githubstatus_incidents_50_recent.json": "statuspage",
    "statuspage/githubstatus_summary_all_operational_2026.json": "statuspage",
    "statuspage/sendgrid_summary_active_incident_groups.json": "statuspage",
    "statuspage/claude_summary_major_incident_now_degraded.json": "statuspage",
    "instatus/recraft_summary_up.json": "instatus",
    "instatus/manychat_summary_up_with_incident.json": "instatus",
    "uptimekuma/slum_status-page.json": "uptimekuma",
    "upptime/con_history_summary.json": "upptime",
}
#: Read only with the payload they belong to (``kuma()`` bundles them).
PARTS = {"uptimekuma/slum_heartbeat.json"}


def sample(name: str) -> bytes:
    return (SAMPLES / name).read_bytes()


def at(text: str) -> datetime:
    """A UTC moment written as ``2026-07-31 03:29:01``."""
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def by_name(view: VendorView) -> dict[str, str]:
    return {c.name: c.status for c in view.components}


def test_every_sample_is_covered() -> None:
    on_disk = {str(p.relative_to(SAMPLES)) for p in SAMPLES.rglob("*") if p.is_file() and p.name != "SOURCES.md"}
    assert on_disk == set(EXPECTED_FORMAT) | PARTS


def kuma() -> bytes:
    """The Uptime Kuma page as a run reads it: its two answers bundled."""
    bundled = bundle(sample("uptimekuma/slum_status-page.json"), sample("uptimekuma/slum_heartbeat.json"))
    assert bundled is not None
    return bundled


def test_a_heartbeat_list_alone_names_the_url_to_configure() -> None:
    with pytest.raises(VendorParseError, match=r"Uptime Kuma heartbeat list; configure .*/api/status-page/<slug>"):
        detect_format(sample("uptimekuma/slum_heartbeat.json"))


@pytest.mark.parametrize("name", sorted(EXPECTED_FORMAT))
def test_detects_format(name: str) -> None:
    assert detect_format(sample(name)) == EXPECTED_FORMAT[name]
    assert parse_vendor(sample(name)).format == EXPECTED_FORMAT[name]


@pytest.mark.parametrize("name", sorted(EXPECTED_FORMAT))
def test_every_view_is_well_formed(name: str) -> None:
    view = parse_vendor(sample(name))
    assert view.status in (
        "operational",
        "maintenance",
        "degraded",
        "partial_outage",
        "major_outage",
        "unknown",
    )
    moments = [view.updated_at] + [i.started_at for i in view.incidents] + [i.updated_at for i in view.incidents]
    for moment in filter(None, moments):
        assert moment.tzinfo is UTC and moment.microsecond == 0
    assert orjson.loads(orjson.dumps(view.to_json())) == view.to_json()


def test_formats_are_the_documented_names() -> None:
    assert set(FORMATS) == {
        "statuspage", "statusio", "slack", "heroku", "cachet", "gcp", "feed", "instatus", "uptimekuma", "upptime",
    }  # fmt: skip


# -- Statuspage -------------------------------------------------------------


def test_github_summary_all_operational() -> None:
    view = statuspage.parse(sample("statuspage/githubstatus_summary_all_operational_2026.json"))
    assert view.status == "operational"
    assert view.description == "All Systems Operational"
    assert len(view.components) == 12
    assert set(by_name(view).values()) == {"operational"}
    assert view.components[0].name == "Git Operations"
    assert view.components[-1].name == "Copilot AI Model Providers"
    assert view.incidents == () and view.maintenance_active == () and view.maintenance_upcoming == ()
    assert view.updated_at == at("2026-07-31 03:29:01")
    assert view.page_url == "https://www.githubstatus.com"


def test_sendgrid_summary_with_groups_and_incident() -> None:
    view = statuspage.parse(sample("statuspage/sendgrid_summary_active_incident_groups.json"))
    assert view.status == "degraded"
    assert view.description == "Partially Degraded Service"
    assert len(view.components) == 12  # 15 entries, 3 of them groups
    assert by_name(view)["Partners"] == "degraded"
    assert [c.status for c in view.components if c.name != "Partners"] == ["operational"] * 11
    groups = {c.name: c.group for c in view.components}
    assert groups["API v3"] == groups["SMTP"] == groups["API v2"] == "Mail Sending"
    assert groups["Event Webhook"] == groups["Parse API"] == "Webhooks"
    assert groups["Marketing Campaigns"] == "Marketing Campaigns"
    assert groups["API"] is None and groups["Partners"] is None
    assert "Mail Sending" not in groups and "Webhooks" not in groups
    (incident,) = view.incidents
    assert incident.id == "wpm5jsqj24px"
    assert incident.title == "Login issues reported from Azure users starting on 10/10/23"
    assert (incident.impact, incident.status) == ("degraded", "investigating")
    assert incident.started_at == at("2023-10-11 15:30:44")  # 08:30:44.891-07:00
    assert incident.updated_at == at("2023-10-11 15:30:44")
    assert incident.url == "https://stspg.io/4r83jmqz4km7"
    assert incident.components == ("ylw5fnzv1r15",)
    assert view.maintenance_active == () and view.maintenance_upcoming == ()
    assert view.updated_at == at("2023-10-11 15:30:44")  # 08:30:44.953-07:00


def test_cloudamqp_maintenance_in_progress() -> None:
    view = statuspage.parse(sample("statuspage/cloudamqp_summary_maintenance_in_progress.json"))
    assert view.status == "maintenance"
    assert view.description == "Service Under Maintenance"
    assert len(view.components) == 23
    assert by_name(view)["Shared servers"] == "maintenance"
    assert by_name(view)["Dedicated servers"] == "operational"
    assert sum(s == "operational" for s in by_name(view).values()) == 22
    assert view.incidents == () and view.maintenance_upcoming == ()
    (window,) = view.maintenance_active
    quoted = "\u201cjellyfish\u201d, \u201cwildboar\u201d, and \u201creindeer\u201d"
    assert window.title == f"Upgrade of shared servers {quoted}"
    assert window.status == "in_progress"
    assert (window.starts_at, window.ends_at) == (
        at("2020-07-16 21:00:00"),
        at("2020-07-16 23:00:00"),
    )
    assert window.components == ("m9jl6sdbs4vb",)
    assert window.url == "http://stspg.io/3crfld0dxr87"
    assert view.updated_at == at("2020-07-16 21:10:37")


def test_claude_scheduled_maintenances_all_completed() -> None:
    view = statuspage.parse(sample("statuspage/claude_scheduled_maintenances_lifecycle.json"))
    assert view.status == "operational"
    assert view.description is None
    assert view.maintenance_active == () and view.maintenance_upcoming == ()
    assert by_name(view) == {
        "claude.ai": "operational",
        "Claude Console (platform.claude.com)": "operational",
    }
    assert view.updated_at == at("2026-09-15 11:14:48")
    assert view.page_url == "https://status.claude.com"


def test_claude_maintenance_in_its_in_progress_stage() -> None:
    """The same capture, with the first window set back to the stage its updates went through."""
    payload = orjson.loads(sample("statuspage/claude_scheduled_maintenances_lifecycle.json"))
    payload["scheduled_maintenances"][0]["status"] = "in_progress"
    payload["scheduled_maintenances"][1]["status"] = "scheduled"
    view = statuspage.parse(payload)
    assert view.status == "maintenance"
    assert [m.title for m in view.maintenance_active] == ["Upgrades to Connector Auth Storage"]
    assert view.maintenance_active[0].starts_at == at("2025-08-29 01:25:00")
    assert view.maintenance_active[0].ends_at == at("2025-08-29 02:40:00")
    assert [m.title for m in view.maintenance_upcoming] == ["Scheduled maintenance for Claude.ai and Anthropic Console"]
    assert view.maintenance_upcoming[0].components == ("rwppv331jlwc", "0qbwn08sd68x")


def test_github_incidents_all_resolved() -> None:
    view = statuspage.parse(sample("statuspage/githubstatus_incidents_50_recent.json"))
    assert view.status == "operational"
    assert view.incidents == ()
    assert len(view.components) == 10  # the components the 50 incidents name
    assert "Git Operations" not in by_name(view)
    assert by_name(view)["Actions"] == "operational"
    assert view.updated_at == at("2026-07-31 03:29:01")


def test_github_incident_reopened_is_open() -> None:
    payload = orjson.loads(sample("statuspage/githubstatus_incidents_50_recent.json"))
    payload["incidents"][0]["status"] = "monitoring"
    (incident,) = statuspage.parse(payload).incidents
    assert incident.title == "Copilot model Claude Fable 5 experiencing elevated errors"
    assert (incident.impact, incident.status) == ("degraded", "monitoring")
    assert incident.components == ("cnnb39dkkk82",)


def test_openai_incident_io_compatible_summary() -> None:
    view = statuspage.parse(sample("incidentio/openai_summary_compat_active_incidents.json"))
    assert view.status == "degraded"
    assert view.description == "Partial System Degradation"
    assert len(view.components) == 25
    operational = sorted(n for n, s in by_name(view).items() if s == "operational")
    assert operational == ["Ads API", "Decisions", "dots"]
    assert sum(s == "degraded" for s in by_name(view).values()) == 22
    first, second = view.incidents
    assert first.title == "Elevated errors across ChatGPT, Codex, and the API including the Agents API"
    assert (first.impact, first.status) == ("degraded", "investigating")
    assert first.started_at == at("2026-09-29 17:52:52")  # no started_at: created_at
    assert first.updated_at == at("2026-09-29 18:24:17")
    assert first.components == ()
    assert first.url == "https://status.openai.com/incidents/01M3Q4RK1SM4EMK445GGPG7C0N"
    assert (second.title, second.impact) == ("Support chat unavailable", "none")
    assert view.maintenance_active == () and view.maintenance_upcoming == ()
    assert view.updated_at == at("2026-09-29 18:29:41")


# -- other vendors ----------------------------------------------------------


def test_gitlab_statusio_planned_maintenance() -> None:
    view = statusio.parse(sample("statusio/gitlab_status_planned_maintenance.json"))
    assert view.status == "maintenance"
    assert view.description == "Planned Maintenance"
    assert len(view.components) == 15
    assert by_name(view)["dashboards.gitlab.com"] == "maintenance"
    assert by_name(view)["Website"] == "operational"
    (incident,) = view.incidents
    assert incident.title == "500 Error - User Notification Settings"
    assert (incident.impact, incident.status) == ("partial_outage", "identified")
    assert incident.started_at == at("2020-09-04 21:56:00")
    assert incident.updated_at == at("2020-09-05 09:23:23")
    assert incident.components == ("5b36dc6502d06804c0834a07",)
    (window,) = view.maintenance_active
    assert window.title == "Maintenance on dashboards.gitlab.com"
    assert (window.starts_at, window.ends_at) == (
        at("2020-09-02 17:55:00"),
        at("2020-09-07 17:55:00"),
    )
    assert window.components == ("5f4e8819413cdd04b6882c94",)
    assert view.maintenance_upcoming == ()
    assert view.updated_at == at("2020-09-05 09:45:32")


def test_slack_two_active_incidents() -> None:
    view = slack.parse(sample("slack/slack_current_active_incident.json"))
    assert view.status == "degraded"
    first, second = view.incidents
    assert first.id == "878"
    assert first.title == "We are investigating an issue with notification settings"
    assert (first.impact, first.status) == ("degraded", "active")
    assert first.started_at == at("2020-07-30 22:12:34")  # 15:12:34-07:00
    assert first.url == "https://status.slack.com/2020-07/ea58a170d343b2ad"
    assert first.components == ("Notifications",)
    assert second.title == "We're looking into an issue with certain API calls"
    assert second.started_at == at("2020-07-24 17:45:08")
    assert second.components == ("Apps/Integrations/APIs",)
    statuses = by_name(view)
    assert statuses["Notifications"] == statuses["Apps/Integrations/APIs"] == "degraded"
    assert statuses["Messaging"] == "operational"
    assert view.updated_at == at("2020-07-30 22:12:34")


def test_heroku_yellow_systems_and_open_incident() -> None:
    view = heroku.parse(sample("heroku/heroku_current_status_incident.json"))
    assert view.status == "degraded"
    assert by_name(view) == {"Apps": "degraded", "Data": "degraded", "Tools": "degraded"}
    (incident,) = view.incidents
    assert incident.id == "1918"
    assert incident.title == "Connection timeouts to applications and Heroku Postgres"
    assert (incident.impact, incident.status) == (
        "degraded",
        "issue",
    )  # newest update: issue, yellow
    assert incident.started_at == at("2019-10-24 18:39:30")
    assert incident.updated_at == at("2019-10-24 18:49:50")
    assert incident.url == "https://status.heroku.com/incidents/1918"
    assert view.maintenance_upcoming == ()
    assert view.updated_at == at("2019-10-24 18:49:50")


def test_cachet_components() -> None:
    view = cachet.parse(sample("cachet/yoti_cachet_v1_components.json"))
    assert view.status == "operational"
    assert len(view.components) == 7
    assert [c.id for c in view.components] == ["1", "2", "3", "9", "6", "5", "4"]
    assert [c.name for c in view.components].count("Yoti Doc Scan") == 2
    assert set(by_name(view).values()) == {"operational"}
    assert view.updated_at == at("2020-10-12 12:20:02")  # zone-less: taken as UTC


def test_cachet_status_codes() -> None:
    payload = orjson.loads(sample("cachet/yoti_cachet_v1_components.json"))
    payload["data"][0]["status"] = 4
    payload["data"][1]["status"] = "2"
    payload["data"][2]["enabled"] = False
    view = cachet.parse(payload)
    assert view.status == "major_outage"
    assert by_name(view)["Yoti Age Scan"] == "degraded"
    assert "Yoti App" not in by_name(view)


def test_gcp_history_all_closed() -> None:
    view = gcp.parse(sample("gcp/gcp_status_incidents_json_2022.json"))
    assert view.status == "operational"
    assert view.incidents == ()
    assert len(view.components) == 60
    assert by_name(view)["Google Compute Engine"] == "operational"
    assert view.updated_at == at("2022-07-01 19:25:45")


def test_gcp_incident_without_end_is_open() -> None:
    payload = orjson.loads(sample("gcp/gcp_status_incidents_json_2022.json"))
    del payload[0]["end"]
    view = gcp.parse(payload)
    (incident,) = view.incidents
    assert incident.title == "[Google BigQuery] Lower throughput from the Read API"
    assert incident.impact == "degraded"  # SERVICE_INFORMATION
    assert incident.status == "available"  # its newest update
    assert incident.started_at == at("2022-07-01 13:37:44")
    assert incident.url == "https://status.cloud.google.com/incidents/TaA75H7XA1DQyM2ReK2f"
    assert incident.components == ("9CcrhHUcFevXPSVaSxkf",)
    assert by_name(view)["Google BigQuery"] == "degraded"
    assert view.status == "degraded"


def test_gcp_open_outage_affects_its_products() -> None:
    payload = orjson.loads(sample("gcp/gcp_status_incidents_json_2022.json"))
    payload[12]["end"] = None
    view = gcp.parse(payload)
    (incident,) = view.incidents
    assert incident.title == "Google Cloud Networking packet loss issue"
    assert incident.impact == "major_outage"  # SERVICE_OUTAGE
    assert incident.started_at == at("2022-06-16 08:11:00")
    assert len(incident.components) == 4
    assert by_name(view)["Cloud NAT"] == by_name(view)["Hybrid Connectivity"] == "major_outage"
    assert by_name(view)["Google BigQuery"] == "operational"
    assert view.status == "major_outage"
    narrowed = parse_vendor(orjson.dumps(payload), components=["Google BigQuery"])
    assert (narrowed.status, narrowed.incidents) == ("operational", ())


def test_github_atom_feed_with_unresolved_entry() -> None:
    view = feed.parse(sample("feeds/githubstatus_history_active_incident.atom"))
    assert view.status == "degraded"
    assert view.components == ()
    (incident,) = view.incidents
    assert incident.id == "tag:www.githubstatus.com,2005:Incident/29998148"
    assert incident.title == "CCR and CCA failing to start for PR comments"
    assert incident.status == "monitoring"  # newest label "Update" carries the Monitoring status on
    assert incident.impact == "degraded"
    assert incident.url == "https://www.githubstatus.com/incidents/qp0lxr014sw8"
    assert incident.started_at == at("2026-05-07 05:02:00")  # oldest update, "May 7, 05:02 UTC"
    assert incident.updated_at == at("2026-05-07 06:14:57")
    assert view.updated_at == at("2026-05-07 06:14:57")
    assert view.page_url == "https://www.githubstatus.com"


def test_parse_rss_feed_all_resolved_including_postmortem() -> None:
    view = feed.parse(sample("feeds/parse_statuspage_history_2014.rss"))
    assert view.status == "operational"
    assert view.incidents == () and view.maintenance_active == () and view.maintenance_upcoming == ()
    assert view.updated_at == at("2014-01-10 00:00:23")  # Thu, 09 Jan 2014 16:00:23 -0800
    assert view.page_url == "http://status.parse.com"


MAINTENANCE_FEED = b"""<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0"><channel><title>Example Status</title><link>https://status.example.com</link>
<item><title>Database upgrade</title><guid>https://status.example.com/incidents/a1</guid>
<description>&lt;p&gt;&lt;small&gt;Nov 22, 19:00 UTC&lt;/small&gt;&lt;br&gt;&lt;strong&gt;In progress&lt;/strong&gt; - Under way.&lt;/p&gt;</description>
<pubDate>Sun, 22 Nov 2026 19:00:00 +0000</pubDate></item>
<item><title>Network work</title><guid>https://status.example.com/incidents/a2</guid>
<description>&lt;strong&gt;Scheduled&lt;/strong&gt; - Next week.</description>
<pubDate>Sun, 22 Nov 2026 18:00:00 +0000</pubDate></item>
<item><title>Old upgrade</title><guid>https://status.example.com/incidents/a3</guid>
<description>&lt;strong&gt;Completed&lt;/strong&gt; - Done. &lt;strong&gt;In progress&lt;/strong&gt; - Under way.</description>
</item></channel></rss>"""


def test_feed_maintenance_entries() -> None:
    view = feed.parse(MAINTENANCE_FEED)
    assert view.status == "maintenance"
    assert [m.title for m in view.maintenance_active] == ["Database upgrade"]
    assert [m.title for m in view.maintenance_upcoming] == ["Network work"]
    assert view.incidents == ()
    assert view.updated_at == at("2026-11-22 19:00:00")


# -- narrowing to components ------------------------------------------------


def test_narrow_to_a_group_selects_its_members() -> None:
    view = parse_vendor(
        sample("statuspage/sendgrid_summary_active_incident_groups.json"),
        components=["Mail Sending"],
    )
    assert [c.name for c in view.components] == ["API v3", "SMTP", "API v2"]
    assert view.status == "operational"
    assert view.incidents == ()  # the incident affects Partners only


def test_narrow_by_name_case_insensitive_keeps_its_incident() -> None:
    view = parse_vendor(sample("statuspage/sendgrid_summary_active_incident_groups.json"), components=["partners"])
    assert [c.name for c in view.components] == ["Partners"]
    assert view.status == "degraded"
    assert [i.id for i in view.incidents] == ["wpm5jsqj24px"]


def test_narrow_by_id_and_mixed_names() -> None:
    body = sample("statuspage/sendgrid_summary_active_incident_groups.json")
    view = parse_vendor(body, "statuspage", ["vgl8t6wflyjt", "WEBHOOKS", "Marketing Campaigns"])
    assert [c.name for c in view.components] == [
        "Marketing Campaigns",
        "Event Webhook",
        "Parse API",
        "API",
    ]


def test_narrow_unknown_names_lists_available() -> None:
    body = sample("statuspage/sendgrid_summary_active_incident_groups.json")
    with pytest.raises(VendorParseError) as caught:
        parse_vendor(body, components=["Mail Sending", "Nope", "Fax"])
    message = str(caught.value)
    assert '"Nope", "Fax"' in message and "statuspage" in message
    assert '"Partners"' in message and '"Mail Sending"' in message
    assert "\n" not in message


def test_narrow_whole_page_incidents_are_kept_but_the_component_says_its_status() -> None:
    view = parse_vendor(sample("incidentio/openai_summary_compat_active_incidents.json"), components=["Ads API"])
    assert [c.status for c in view.components] == ["operational"]
    assert len(view.incidents) == 2  # they name no components, so they touch the whole page
    assert view.status == "operational"  # as the vendor's page shows Ads API now


def test_narrow_maintenance_follows_its_components() -> None:
    body = sample("statuspage/cloudamqp_summary_maintenance_in_progress.json")
    assert parse_vendor(body, components=["Dedicated servers"]).status == "operational"
    assert parse_vendor(body, components=["Dedicated servers"]).maintenance_active == ()
    assert parse_vendor(body, components=["shared servers"]).status == "maintenance"


def test_narrow_statusio_component_keeps_its_own_status_beside_the_incident() -> None:
    body = sample("statusio/gitlab_status_planned_maintenance.json")
    website = parse_vendor(body, components=["Website"])
    assert website.status == "operational"  # its status_code 100, though the incident's message says 400
    (incident,) = website.incidents
    assert incident.impact == "partial_outage"
    assert [(a.name, a.status) for a in incident.affected] == [("Website", "partial_outage")]
    assert parse_vendor(body, components=["API"]).status == "operational"
    assert parse_vendor(body, components=["dashboards.gitlab.com"]).status == "maintenance"


def test_narrow_slack_heroku_cachet_gcp() -> None:
    slack_body = sample("slack/slack_current_active_incident.json")
    assert parse_vendor(slack_body, components=["Messaging"]).status == "operational"
    narrowed = parse_vendor(slack_body, components=["notifications"])
    assert (narrowed.status, [i.id for i in narrowed.incidents]) == ("degraded", ["878"])
    assert parse_vendor(sample("heroku/heroku_current_status_incident.json"), components=["Data"]).status == "degraded"
    doc_scan = parse_vendor(sample("cachet/yoti_cachet_v1_components.json"), components=["Yoti Doc Scan"])
    assert [c.id for c in doc_scan.components] == ["9", "6"]
    gce = parse_vendor(sample("gcp/gcp_status_incidents_json_2022.json"), components=["Google Compute Engine"])
    assert [c.id for c in gce.components] == ["L3ggmi3Jy4xJmgodFA9K"]


def test_narrow_feed_has_no_components() -> None:
    with pytest.raises(VendorParseError, match="available: none"):
        parse_vendor(sample("feeds/githubstatus_history_active_incident.atom"), components=["Actions"])


# -- the JSON shape ---------------------------------------------------------


def test_to_json_snake_case_and_utc_z() -> None:
    doc = parse_vendor(sample("statuspage/sendgrid_summary_active_incident_groups.json")).to_json()
    assert list(doc) == [
        "format", "status", "description", "components", "incidents",
        "maintenance_active", "maintenance_upcoming", "updated_at", "page_url",
    ]  # fmt: skip
    assert doc["updated_at"] == "2023-10-11T15:30:44Z"
    assert doc["incidents"][0]["started_at"] == "2023-10-11T15:30:44Z"
    assert doc["incidents"][0]["components"] == ["ylw5fnzv1r15"]
    assert doc["components"][0] == {
        "id": "0srpdt598t37",
        "name": "Marketing Campaigns",
        "status": "operational",
        "group": "Marketing Campaigns",
        "uptime": {},
    }


def test_unknown_format_name() -> None:
    with pytest.raises(VendorParseError, match="unknown vendor format 'pagerduty'"):
        parse_vendor(b"{}", fmt="pagerduty")


# -- a component's current word ---------------------------------------------

STATUSPAGE_WORDS = {
    "operational": "operational",
    "degraded_performance": "degraded",
    "partial_outage": "partial_outage",
    "major_outage": "major_outage",
    "under_maintenance": "maintenance",
}


def vendor_words(name: str) -> dict[str, str]:
    """Each component's current status, read straight from the payload's own status field."""
    fmt = EXPECTED_FORMAT[name]
    if fmt == "feed":
        return {}
    raw = orjson.loads(kuma() if name.startswith("uptimekuma/") else sample(name))
    if fmt == "statuspage" and "components" in raw:
        return {c["id"]: STATUSPAGE_WORDS[c["status"]] for c in raw["components"] if not c.get("group")}
    if fmt == "statusio":
        codes = {100: "operational", 200: "maintenance", 300: "degraded", 400: "partial_outage", 500: "major_outage"}
        return {c["id"]: codes[c["status_code"]] for c in raw["result"]["status"]}
    if fmt == "heroku":
        return {s["system"]: {"green": "operational", "yellow": "degraded"}[s["status"]] for s in raw["status"]}
    if fmt == "cachet":
        return {str(c["id"]): "operational" for c in raw["data"] if c["status"] == 1}
    if fmt == "uptimekuma":
        beats = raw["heartbeat"]["heartbeatList"]
        return {mid: ("operational" if b[-1]["status"] == 1 else "major_outage") for mid, b in beats.items()}
    if fmt == "upptime":
        return {s["slug"]: {"up": "operational", "down": "major_outage"}[s["status"]] for s in raw}
    return {}  # Slack, Google Cloud, feeds and incidents.json: no status of a component's own


WITH_WORDS = [n for n in sorted(EXPECTED_FORMAT) if vendor_words(n)]


@pytest.mark.parametrize("name", WITH_WORDS)
def test_a_narrowed_component_says_what_the_vendor_says_of_it_now(name: str) -> None:
    body = kuma() if name.startswith("uptimekuma/") else sample(name)
    for cid, word in vendor_words(name).items():
        narrowed = parse_vendor(body, components=[cid])
        assert [c.id for c in narrowed.components] == [cid], cid
        assert narrowed.status == word, (name, cid)


def test_claude_major_incident_now_monitoring_leaves_the_console_degraded() -> None:
    """The case of issue 34: impact major (partial outage at worst), the latest update moved the
    Console from partial_outage down to degraded_performance, which its page now shows."""
    body = sample("statuspage/claude_summary_major_incident_now_degraded.json")
    view = parse_vendor(body)
    assert (view.status, view.description) == ("degraded", "Partially Degraded Service")
    (incident,) = view.incidents
    assert (incident.title, incident.impact, incident.status) == (
        "Elevated errors on platform.claude.com",
        "partial_outage",
        "monitoring",
    )
    assert [(a.id, a.name, a.status) for a in incident.affected] == [
        ("0qbwn08sd68x", "Claude Console (platform.claude.com)", "degraded")
    ]
    assert incident.updated_at == at("2026-10-07 21:45:27")
    console = parse_vendor(body, components=["Claude Console (platform.claude.com)"])
    assert console.status == "degraded"
    assert [i.id for i in console.incidents] == ["978mjkgw6mh7"]  # so the reason can name it
    api = parse_vendor(body, components=["Claude API (api.anthropic.com)"])
    assert (api.status, api.incidents) == ("operational", ())


def test_incident_json_shape_lists_impact_and_affected_separately() -> None:
    doc = parse_vendor(sample("statuspage/claude_summary_major_incident_now_degraded.json")).to_json()
    incident = doc["incidents"][0]
    assert incident["impact"] == "partial_outage"
    assert incident["components"] == ["0qbwn08sd68x"]
    assert incident["affected_components"] == [
        {"id": "0qbwn08sd68x", "name": "Claude Console (platform.claude.com)", "status": "degraded"}
    ]


def test_an_incident_naming_its_components_does_not_raise_the_page_beyond_them() -> None:
    """Without the page indicator, the page is what its components say now."""
    payload = orjson.loads(sample("statuspage/claude_summary_major_incident_now_degraded.json"))
    del payload["status"]
    assert statuspage.parse(payload).status == "degraded"


# -- Instatus ---------------------------------------------------------------


def test_instatus_healthy_page_without_incident_keys() -> None:
    view = instatus.parse(sample("instatus/recraft_summary_up.json"))
    assert view.status == "operational"
    assert view.components == () and view.incidents == ()
    assert view.maintenance_active == () and view.maintenance_upcoming == ()
    assert view.page_url == "https://recraft.instatus.com"


def test_instatus_page_up_with_an_open_incident_is_degraded() -> None:
    view = instatus.parse(sample("instatus/manychat_summary_up_with_incident.json"))
    assert view.status == "degraded"  # the page says UP; its incident says otherwise
    (incident,) = view.incidents
    assert incident.id == "cmmxljn3s01ntuud42lsa7zud"
    assert (incident.title, incident.impact, incident.status) == (
        "Delays in Instagram automation",
        "degraded",
        "identified",
    )
    assert incident.started_at == at("2026-03-17 03:00:00")
    assert incident.updated_at == at("2026-05-06 15:19:52")
    assert incident.url == "https://status.manychat.com/cmmxljn3s01ntuud42lsa7zud"
    assert view.page_url == "https://status.manychat.com"


def test_instatus_maintenance_and_resolved_incident() -> None:
    payload = orjson.loads(sample("instatus/manychat_summary_up_with_incident.json"))
    payload["page"]["status"] = "UNDERMAINTENANCE"
    payload["activeIncidents"][0]["status"] = "RESOLVED"
    payload["activeMaintenances"] = [
        {"id": "m1", "name": "Database", "start": "2026-05-06T15:00:00.000Z", "status": "INPROGRESS",
         "duration": "90", "url": "https://status.manychat.com/m1"},
        {"id": "m2", "name": "Later", "start": "2026-05-09T15:00:00.000Z", "status": "NOTSTARTEDYET",
         "duration": 30},
    ]  # fmt: skip
    view = instatus.parse(payload)
    assert view.status == "maintenance" and view.incidents == ()
    (active,) = view.maintenance_active
    assert (active.title, active.starts_at, active.ends_at) == (
        "Database",
        at("2026-05-06 15:00:00"),
        at("2026-05-06 16:30:00"),
    )
    assert [m.title for m in view.maintenance_upcoming] == ["Later"]


def test_instatus_components_list() -> None:
    """The /v2/components.json shape (no capture of one was found: built from the shape pages serve)."""
    body = b"""{"components": [
      {"id": "c1", "name": "API", "status": "OPERATIONAL", "group": {"id": "g", "name": "Core"}},
      {"id": "c2", "name": "Dashboard", "status": "MAJOROUTAGE"},
      {"id": "c3", "name": "Webhooks", "status": "MINOROUTAGE", "group": {"id": "g", "name": "Core"}}]}"""
    assert detect_format(body) == "instatus"
    view = parse_vendor(body)
    assert view.status == "major_outage"
    assert by_name(view) == {"API": "operational", "Dashboard": "major_outage", "Webhooks": "partial_outage"}
    assert parse_vendor(body, components=["Core"]).status == "partial_outage"


# -- Uptime Kuma ------------------------------------------------------------


def test_uptimekuma_monitors_from_their_latest_beats() -> None:
    view = uptimekuma.parse(kuma())
    assert len(view.components) == 19
    down = sorted(c.name for c in view.components if c.status == "major_outage")
    assert len(down) == 9 and "Z-Library SK" in down and "Anna's Archive VG" in down
    assert by_name(view)["Liber3"] == "operational"
    assert {c.group for c in view.components} == {
        "Overall Health Summary",
        "Anna's Archive",
        "Library Genesis+ (beware of popups)",
        "Z-Library",
        "Others",
    }
    libgen = {c.name: c for c in view.components}["Libgen+ VG"]
    assert libgen.id == "7" and libgen.uptime == (("day", 96.15),)
    assert (view.status, view.description) == ("partial_outage", "Partially Degraded Service")
    assert view.updated_at == at("2026-06-22 04:16:28")  # UTC by default
    (incident,) = view.incidents
    assert (incident.id, incident.title, incident.impact) == ("22", "Unstable due to high traffic", "degraded")
    assert incident.started_at == at("2026-01-05 14:45:42")
    assert view.maintenance_active == () and view.maintenance_upcoming == ()


def test_uptimekuma_times_in_the_configured_zone() -> None:
    view = parse_vendor(kuma(), zone=ZoneInfo("America/New_York"))
    assert view.updated_at == at("2026-06-22 08:16:28")  # 04:16:28 EDT
    assert view.incidents[0].started_at == at("2026-01-05 19:45:42")  # 14:45:42 EST


def test_uptimekuma_status_page_alone_has_unknown_monitors() -> None:
    view = parse_vendor(sample("uptimekuma/slum_status-page.json"))
    assert {c.status for c in view.components} == {"unknown"}
    assert view.status == "degraded"  # the pinned warning still speaks


def test_uptimekuma_maintenance_and_pending() -> None:
    page = orjson.loads(sample("uptimekuma/slum_status-page.json"))
    page["incident"] = None  # unpinned: a pinned warning would outweigh maintenance on our scale
    page["maintenanceList"] = [
        {"id": 4, "title": "Moving servers", "status": "under-maintenance",
         "timeslotList": [{"startDate": "2026-06-22 04:00:00", "endDate": "2026-06-22 06:00:00"}]},
    ]  # fmt: skip
    beats = orjson.loads(sample("uptimekuma/slum_heartbeat.json"))
    beats["heartbeatList"]["7"][-1]["status"] = 3
    view = uptimekuma.parse({"status_page": page, "heartbeat": beats})
    assert view.status == "maintenance" and by_name(view)["Libgen+ VG"] == "maintenance"
    (window,) = view.maintenance_active
    assert (window.title, window.starts_at, window.ends_at) == (
        "Moving servers",
        at("2026-06-22 04:00:00"),
        at("2026-06-22 06:00:00"),
    )
    beats["heartbeatList"]["7"][-1]["status"] = 2
    page["maintenanceList"] = []
    assert by_name(uptimekuma.parse({"status_page": page, "heartbeat": beats}))["Libgen+ VG"] == "degraded"


# -- Upptime ----------------------------------------------------------------


def test_upptime_sites_and_uptime_figures() -> None:
    view = upptime.parse(sample("upptime/con_history_summary.json"))
    assert len(view.components) == 11
    assert sum(c.status == "major_outage" for c in view.components) == 6
    assert (view.status, view.description) == ("partial_outage", "6 of 11 sites down")
    first = view.components[0]
    assert (first.id, first.name, first.status) == (
        "centerforopenneuroscience-org",
        "centerforopenneuroscience.org",
        "major_outage",
    )
    assert dict(first.uptime) == {"all": 99.56, "day": 89.81, "week": 98.54, "month": 99.66, "year": 99.8}
    assert by_name(view)["datalad.org"] == "operational"
    assert view.incidents == () and view.updated_at is None
    assert view.to_json()["components"][0]["uptime"]["day"] == 89.81


def test_upptime_all_up_and_all_down() -> None:
    sites = orjson.loads(sample("upptime/con_history_summary.json"))
    for site in sites:
        site["status"] = "up"
    assert (upptime.parse(sites).status, upptime.parse(sites).description) == ("operational", "All 11 sites up")
    for site in sites:
        site["status"] = "down"
    assert upptime.parse(sites).status == "major_outage"
    sites[0]["status"] = "degraded"
    sites[1:] = [dict(s, status="up") for s in sites[1:]]
    assert (upptime.parse(sites).status, upptime.parse(sites).description) == ("degraded", "1 of 11 sites degraded")
