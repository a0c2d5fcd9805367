"""What to send, and to whom: the pure decisions of notify/events.py, with a fixed clock and no
I/O; the messages made of them; the [[notify]] configuration and every problem it can have."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson
import pytest

from statusgen.config import Config, MaintenanceWindow, NotifyConfig, ServiceConfig, SiteConfig, parse_config
from statusgen.decide.incidents import Incident, IncidentUpdate
from statusgen.errors import ConfigError
from statusgen.model import Outcome
from statusgen.notify.events import (
    Event,
    cycle_events,
    incident_events,
    maintenance_events,
    plan,
    queue,
    vendor_events,
    vendor_maintenance_ended,
    wants,
)
from statusgen.notify.messages import digest_message, escaped, event_message
from statusgen.store import Notification
from statusgen.vendors import VendorIncident, VendorMaintenance, VendorView
from statusgen.vendors.model import VendorObservation

T0 = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
MIN = timedelta(minutes=1)
API = ServiceConfig("api", "Example API", "cloud", ())
PAY = ServiceConfig("pay", "Payments", "money", ())
NAMES = {s.slug: s.name for s in (API, PAY)}


def config(*notifiers: NotifyConfig, services: tuple[ServiceConfig, ...] = (API, PAY)) -> Config:
    return Config(
        path=Path("services.toml"),
        site=SiteConfig(base_url="https://status.example.org", title="Example status"),
        categories={"cloud": "Cloud", "money": "Money"},
        services=services,
        notifiers=notifiers,
    )


def opened(service: str = "api", severity: str = "major") -> Incident:
    update = IncidentUpdate(T0, "opened", "partial_outage", "Opened after 3 failed cycles in a row: HTTP 503.")
    return Incident(f"{service}-20261122t120000", service, "Example API: partial outage", severity, T0, None, (update,))


def resolved(incident: Incident, at: datetime) -> Incident:
    end = IncidentUpdate(at, "resolved", "operational", "Recovered after 5 min.")
    return replace(incident, ended_at=at, updates=(*incident.updates, end))


def test_each_update_a_run_adds_is_one_event_and_its_id_names_it_for_good():
    inc = opened()
    first = incident_events({}, [inc], NAMES)
    assert [(e.id, e.kind, e.status, e.severity) for e in first] == [
        ("api-20261122t120000/0", "incident.opened", "partial_outage", "major")
    ]
    assert first[0].link == "/services/api/incidents/#inc-api-20261122t120000"
    assert first[0].incident == inc.to_json()
    later = resolved(inc, T0 + 5 * MIN)
    second = incident_events({"api": inc}, [later], NAMES)
    assert [(e.id, e.kind, e.title) for e in second] == [
        ("api-20261122t120000/1", "incident.resolved", "Example API: resolved")
    ]
    # a run that decides the whole incident again (nothing known before) makes the same ids
    assert [e.id for e in incident_events({}, [later], NAMES)] == [first[0].id, second[0].id]


def test_vendor_updates_are_not_incident_events_and_notes_are():
    inc = opened()
    vendor = IncidentUpdate(T0 + MIN, "vendor", "partial_outage", "The vendor acknowledged it.", "https://v", "v1")
    note = IncidentUpdate(T0 + 2 * MIN, "note", "partial_outage", "We are on it.")
    found = incident_events({"api": inc}, [replace(inc, updates=(*inc.updates, vendor, note))], NAMES)
    assert [(e.kind, e.message) for e in found] == [("incident.noted", "We are on it.")]


def view(*incidents: VendorIncident) -> VendorView:
    return VendorView("statuspage", "degraded", None, (), incidents, (), (), None, None)


def vendor_incident(id_: str, impact: str = "partial_outage") -> VendorIncident:
    return VendorIncident(id_, "Elevated <errors>", impact, "investigating", T0, T0, f"https://v.example/{id_}", ())


def test_a_vendor_incident_is_told_the_first_time_a_fresh_view_shows_it():
    cfg = config()
    fresh = {"api": VendorObservation(view(vendor_incident("a"), vendor_incident("b", "none")), Outcome.OK, T0)}
    before = {"api": {"incidents": [{"id": "a"}]}}
    (event,) = vendor_events(cfg, before, fresh)
    assert (event.id, event.kind, event.severity, event.link) == (
        "vendor/api/b",
        "vendor.incident",
        "minor",
        "https://v.example/b",
    )
    stale = {"api": VendorObservation(view(vendor_incident("c")), Outcome.TIMEOUT, T0 - MIN)}
    assert vendor_events(cfg, before, stale) == []  # a failed fetch shows nothing new


def test_maintenance_is_announced_ahead_then_told_when_it_begins_between_two_runs():
    window = MaintenanceWindow(start=T0 + 2 * MIN, end=T0 + 60 * MIN, title="Database upgrade")
    cfg = config(services=(replace(API, maintenance=(window,)),))
    ahead = [maintenance_events(cfg, T0 - MIN, T0, {}, {}), maintenance_events(cfg, T0, T0 + MIN, {}, {})]
    assert [len(found) for found in ahead] == [1, 1]
    assert ahead[0] == [replace(ahead[1][0], at=T0)]  # found again each run: one id, the outbox keeps it once
    announced = ahead[1][0]
    assert (announced.id, announced.kind, announced.since, announced.severity) == (
        "maintenance/api/schedule/2026-11-22T12:02:00Z/announced",
        "maintenance.announced",
        T0 + 2 * MIN,
        None,
    )
    assert announced.message == "Database upgrade, from 2026-11-22T12:02:00Z until 2026-11-22T13:00:00Z."
    far = MaintenanceWindow(start=T0 + timedelta(days=15), end=T0 + timedelta(days=15, hours=1), title="Later")
    assert maintenance_events(config(services=(replace(API, maintenance=(far,)),)), T0, T0 + MIN, {}, {}) == []
    (event,) = maintenance_events(cfg, T0 + MIN, T0 + 3 * MIN, {}, {})
    assert (event.kind, event.at, event.severity) == ("maintenance.started", T0 + 2 * MIN, None)
    assert event.message == "Database upgrade until 2026-11-22T13:00:00Z."
    assert maintenance_events(cfg, T0 + 3 * MIN, T0 + 4 * MIN, {}, {}) == []


def test_a_configured_maintenance_is_told_when_it_ends_with_the_status_found():
    window = MaintenanceWindow(start=T0 - 60 * MIN, end=T0, title="Database upgrade")
    cfg = config(services=(replace(API, maintenance=(window,)),))
    assert maintenance_events(cfg, T0 - 2 * MIN, T0 - MIN, {}, {"api": "maintenance"}) == []
    (event,) = maintenance_events(cfg, T0 - MIN, T0 + MIN, {}, {"api": "partial_outage"})
    assert (event.kind, event.at, event.since, event.status) == (
        "maintenance.ended",
        T0,
        T0 - 60 * MIN,
        "partial_outage",
    )
    assert event.id == "maintenance/api/schedule/2026-11-22T11:00:00Z/ended"
    assert event.message == "Database upgrade, from 2026-11-22T11:00:00Z."
    assert maintenance_events(cfg, T0 + MIN, T0 + 2 * MIN, {}, {"api": "operational"}) == []  # told once
    body = event_message(config(), event).body
    assert body.startswith("**Maintenance** ended ") and "; now: partial outage." in body


def test_a_vendor_maintenance_is_told_ended_when_a_fresh_view_no_longer_shows_it():
    def window(id_: str, status: str = "in_progress") -> VendorMaintenance:
        return VendorMaintenance(id_, f"Database <{id_}>", status, T0 - 60 * MIN, T0, f"https://v.example/{id_}", ())

    before = {"api": replace(view(), maintenance_active=(window("a"), window("b"), window("c"))).to_json()}
    after = replace(view(), maintenance_active=(window("b"),), maintenance_upcoming=(window("c", "scheduled"),))
    fresh = {"api": VendorObservation(after, Outcome.OK, T0 + MIN)}
    (event,) = vendor_maintenance_ended(config(), before, fresh, {"api": "operational"})
    assert (event.id, event.kind, event.at, event.since, event.status, event.link) == (
        "maintenance/api/vendor/a/ended",
        "maintenance.ended",
        T0 + MIN,
        T0 - 60 * MIN,
        "operational",
        "https://v.example/a",
    )
    assert event.message == "Database <a> (the vendor's page no longer shows it)."
    failed = {"api": VendorObservation(after, Outcome.TIMEOUT, T0)}  # the last good view, not a fresh one
    assert vendor_maintenance_ended(config(), before, failed, {}) == []
    assert vendor_maintenance_ended(config(), {"api": None}, fresh, {}) == []  # nothing known before


def test_cycle_events_come_in_time_order():
    later = replace(opened("pay"), started_at=T0 - MIN, updates=(replace(opened().updates[0], at=T0 - MIN),))
    found = cycle_events(config(), {}, [opened(), later], {}, {}, {}, T0, T0 + MIN)
    assert [e.service for e in found] == ["pay", "api"]


HOOK = NotifyConfig("hook", "statusgen://hooks.example.org/x")


@pytest.mark.parametrize(
    ("notifier", "event", "wanted"),
    [
        (HOOK, "api", True),
        (replace(HOOK, services=("pay",)), "api", False),
        (replace(HOOK, categories=("cloud",)), "api", True),
        (replace(HOOK, categories=("money",)), "api", False),
        (replace(HOOK, events=("incident.resolved",)), "api", False),
        (replace(HOOK, min_severity="critical"), "api", False),
        (replace(HOOK, min_severity="major"), "api", True),
    ],
)
def test_a_notifier_gets_the_events_it_asked_for(notifier, event, wanted):
    (e,) = incident_events({}, [opened(event)], NAMES)
    assert wants(notifier, e, "cloud") is wanted
    assert [n.notifier for n in queue(config(notifier), [e], T0)] == (["hook"] if wanted else [])


def test_maintenance_passes_every_least_severity():
    window = MaintenanceWindow(start=T0, end=T0 + MIN)
    (event,) = maintenance_events(config(services=(replace(API, maintenance=(window,)),)), T0 - MIN, T0, {}, {})
    assert wants(replace(HOOK, min_severity="critical"), event, "cloud")


def waiting(n: int, age: timedelta = MIN) -> list[Notification]:
    return [Notification(f"e{i}", "hook", T0 - age, "{}") for i in range(n)]


def test_plan_one_message_each_a_digest_past_the_bound_and_give_up_after_a_week():
    assert [len(b) for b in plan(HOOK, waiting(5), T0).batches] == [1] * 5
    assert [len(b) for b in plan(HOOK, waiting(6), T0).batches] == [6]
    late = plan(HOOK, waiting(2, timedelta(hours=25)), T0)
    assert [len(b) for b in late.batches] == [2]  # missed for longer than catch_up: one summary
    gone = plan(HOOK, waiting(2, timedelta(days=8)) + waiting(1), T0)
    assert (len(gone.dropped), [len(b) for b in gone.batches]) == (2, [1])
    assert plan(HOOK, [], T0).batches == ()


def test_an_event_survives_the_outbox_as_json():
    (event,) = incident_events({}, [opened()], NAMES)
    assert Event.from_json(orjson.loads(orjson.dumps(event.to_json()))) == event


def test_messages_say_what_since_when_why_and_where_and_escape_what_they_quote():
    cfg = config()
    (event,) = incident_events({}, [opened()], NAMES)
    message = event_message(cfg, event)
    assert message.title == "Example API: partial outage"
    assert message.body.splitlines()[0] == "**Partial outage** since 2026-11-22 12:00 UTC, severity major."
    assert "<https://status.example.org/services/api/incidents/#inc-api-20261122t120000>" in message.body
    hostile = vendor_events(cfg, {}, {"api": VendorObservation(view(vendor_incident("x")), Outcome.OK, T0)})
    assert "Elevated &lt;errors&gt;" in event_message(cfg, hostile[0]).body
    assert escaped("*bold* [link](http://x) <b>") == r"\*bold\* \[link\](http://x) &lt;b&gt;"
    digest = digest_message(cfg, [event] * 25)
    assert digest.body.count("\n- ") == 20 and "- and 5 more" in digest.body


NOTIFY_OK = """
[categories]
cloud = "Cloud"
[[services]]
slug = "api"
name = "API"
category = "cloud"
[[services.checks]]
url = "https://api.example.com/"
"""


def test_every_problem_of_the_notifiers_is_reported_at_once(monkeypatch):
    monkeypatch.delenv("UNSET_TOKEN", raising=False)
    text = (
        NOTIFY_OK
        + """
[[notify]]
name = "hook"
url = "statusgen://hooks.example.org/x"
services = ["nope"]
categories = ["money"]
events = ["incident.opened", "incident.exploded"]
min_severity = "high"
colour = "red"

[[notify]]
name = "hook"
url = "slack://${UNSET_TOKEN}"

[[notify]]
name = "bad"
url = "nosuchservice://x"
timeout = 600

[[notify]]
url = "hooks.example.org"
"""
    )
    with pytest.raises(ConfigError) as caught:
        parse_config(text, Path("services.toml"))
    assert caught.value.problems == [
        'services.toml: notifier "hook": events must be a list of events from incident.opened, incident.escalated, '
        "incident.noted, incident.resolved, vendor.incident, maintenance.announced, maintenance.started, "
        "maintenance.ended, got "
        "['incident.opened', 'incident.exploded']",
        'services.toml: notifier "hook": min_severity must be one of minor, major, critical, got "high"',
        'services.toml: notifier "hook": unknown key "colour"; allowed keys: name, url, services, categories, '
        "events, min_severity, timeout, digest_after, catch_up",
        'services.toml: notifier "hook": services names "nope", which is not a declared service',
        'services.toml: notifier "hook": categories names "money", which is not declared; declared: cloud',
        'services.toml: notifier "hook": url names ${UNSET_TOKEN}, which is not set in the environment; export it',
        'services.toml: notifier "bad": timeout must be a number of seconds, greater than 0 and at most 60, got 600',
        'services.toml: notifier "bad": url (a "nosuchservice://" URL) is not one Apprise can send to; see '
        "https://github.com/caronc/apprise/wiki for the form of each service's URL",
        "services.toml: notifier 4: name is required (Identifier of the notifier (in logs, the store and "
        "`statusgen notify --test NAME`).)",
        "services.toml: notifier 4: url must be an Apprise URL (slack://..., mailto://..., json://...) or "
        'statusgen:// for the generic webhook, got "hooks.example.org"',
        'services.toml: notifier "hook": name is used by more than one notifier; names must be unique',
    ]


def test_a_valid_notifier_reads_with_its_defaults(monkeypatch):
    monkeypatch.setenv("SLACK_TOKEN", "T1/B2/C3")
    cfg = parse_config(NOTIFY_OK + '[[notify]]\nname = "chat"\nurl = "slack://${SLACK_TOKEN}"\n', Path("x.toml"))
    assert cfg.notifiers == (NotifyConfig("chat", "slack://${SLACK_TOKEN}"),)


DOC = (Path(__file__).resolve().parents[1] / "docs" / "notifications.md").read_text(encoding="utf-8")


def test_the_documented_configurations_are_valid_and_the_example_body_follows_the_schema(monkeypatch):
    import json
    import re

    from jsonschema import Draft202012Validator

    from statusgen.notify.shape import webhook_schema

    for name in ("SLACK_TOKENS", "SMTP_PASSWORD", "HOOK_KEY"):
        monkeypatch.setenv(name, "T1JJ3T3L2/A1BRTD4JD/TIiajkdnlazkcOXrIdevi7FQ" if name == "SLACK_TOKENS" else "x-1")
    toml = re.search(r"```toml\n(.*?)```", DOC, re.S).group(1)  # type: ignore[union-attr]
    cfg = parse_config(NOTIFY_OK.replace("cloud", "payments") + toml, Path("services.toml"))
    assert [n.name for n in cfg.notifiers] == ["slack", "oncall-mail", "hook"]
    body = json.loads(re.search(r"```json\n(.*?)```", DOC, re.S).group(1))  # type: ignore[union-attr]
    Draft202012Validator(webhook_schema()).validate(body)
