"""``/metrics``: the site in Prometheus' text exposition format (version 0.0.4), for Prometheus,
Grafana Agent, VictoriaMetrics and the like to scrape like any other target.

A status is a state set, Prometheus' convention for an enumeration: one series per status,
1 for the current one and 0 for the others, so that ``statusgen_service_status{status=
"major_outage"} == 1`` selects the services in a major outage. Every figure is one the JSON
publishes (``last_day.summary`` of each record, the snapshot, health): the JSON is the source,
said in Prometheus' base units, as ``promtool check metrics`` wants them: its percentages as ratios
0-1, its milliseconds and minutes as seconds (each name says its unit). A figure we do not know (no
answer measured yet) is left out, not written as NaN.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime
from decimal import Decimal
from typing import Any

from statusgen.model import STATUSES
from statusgen.render.gather import SiteData

Document = dict[str, Any]
COLLECTION_STATES = ("ok", "degraded", "stale")
#: What a figure of the JSON is multiplied by to be in the base unit: a percentage to a ratio,
#: milliseconds and minutes to seconds.
PER_CENT, PER_MILLE, MINUTE = "0.01", "0.001", "60"


def _label(value: str) -> str:
    """A label value as the text format writes it: backslash, double quote and newline escaped."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _value(value: float) -> str:
    """A sample's value, every digit kept (a timestamp too): a whole number as one, else the
    shortest text that reads back as the same float."""
    number = float(value)
    return str(int(number)) if number.is_integer() and abs(number) < 2**53 else repr(number)


def _sample(name: str, labels: dict[str, str], value: float) -> str:
    inner = ",".join(f'{k}="{_label(v)}"' for k, v in labels.items())
    return f"{name}{{{inner}}} {_value(value)}" if inner else f"{name} {_value(value)}"


def _in_base_unit(value: float | bool | None, factor: str) -> float | None:
    """A figure of the JSON (a percentage, milliseconds, minutes) in the base unit, multiplied by
    ``factor`` in decimal, so that 99.792 % is 0.99792 and not 0.9979199999999999."""
    return None if value is None else float(Decimal(str(float(value))) * Decimal(factor))


def _family(name: str, kind: str, help_: str, samples: Iterator[str]) -> list[str]:
    return [f"# HELP {name} {help_}", f"# TYPE {name} {kind}", *samples]


def _states(name: str, key: str, words: tuple[str, ...], current: str, labels: dict[str, str]) -> Iterator[str]:
    """A state set: a sample per word (its label ``key``), 1 for ``current``."""
    for word in words:
        yield _sample(name, {**labels, key: word}, 1 if word == current else 0)


def metrics_text(
    data: SiteData, snapshot: Document, health: Document, days: dict[str, Document], months: dict[str, Document]
) -> bytes:
    """The exposition: per service (labels ``service`` and ``category``) its status, its 24-hour
    availability and latency (``days``: each record's ``last_day.summary``), its open incident and
    its vendor's status, this month's availability and, with a target, whether it is met and the
    error budget left (``months``: each record's ``this_month``); for the site its status, health
    index, last run and collection state."""
    services = data.config.services
    by_slug = {s["slug"]: s for s in snapshot["services"]}
    labels = {s.slug: {"service": s.slug, "category": s.category} for s in services}
    open_ = {row.service for row in data.incidents if row.ended is None}

    def figure(name: str, key: str, factor: str) -> Iterator[str]:
        for s in services:
            value = _in_base_unit(days.get(s.slug, {}).get(key), factor)
            if value is not None:
                yield _sample(name, labels[s.slug], value)

    def monthly(name: str, value: Callable[[Document], float | bool | None], factor: str = "1") -> Iterator[str]:
        for s in services:
            got = _in_base_unit(value(months[s.slug]), factor) if s.slug in months else None
            if got is not None:
                yield _sample(name, labels[s.slug], got)

    def sla(key: str) -> Callable[[Document], float | bool | None]:
        return lambda month: (month["sla"] or {}).get(key)

    def vendors() -> Iterator[str]:
        for s in services:
            row = data.vendors.get(s.slug)
            view = data.vendor_views.get(s.slug) if row else None
            if s.vendor is not None and view is not None:
                yield from _states("statusgen_vendor_status", "status", STATUSES, view["status"], labels[s.slug])

    def one(name: str, value: float | None) -> Iterator[str]:
        return iter([] if value is None else [_sample(name, {}, value)])

    last = health["collection"]["last_run"]
    lines = [
        *_family(
            "statusgen_service_status",
            "gauge",
            "The service's status as a state set: 1 for the current status, 0 for the others.",
            (
                line
                for s in services
                for line in _states(
                    "statusgen_service_status", "status", STATUSES, by_slug[s.slug]["status"], labels[s.slug]
                )
            ),
        ),
        *_family(
            "statusgen_service_availability_24h_ratio",
            "gauge",
            "Share (0-1) of counted results that were good over the last 24 hours (the record's last day).",
            figure("statusgen_service_availability_24h_ratio", "availability", PER_CENT),
        ),
        *_family(
            "statusgen_service_latency_p50_24h_seconds",
            "gauge",
            "Median latency of good answers over the last 24 hours, in seconds.",
            figure("statusgen_service_latency_p50_24h_seconds", "latency_p50_ms", PER_MILLE),
        ),
        *_family(
            "statusgen_service_latency_p95_24h_seconds",
            "gauge",
            "95th percentile latency of good answers over the last 24 hours, in seconds.",
            figure("statusgen_service_latency_p95_24h_seconds", "latency_p95_ms", PER_MILLE),
        ),
        *_family(
            "statusgen_service_open_incident",
            "gauge",
            "1 while the service has an open incident of ours, else 0.",
            (_sample("statusgen_service_open_incident", labels[s.slug], s.slug in open_) for s in services),
        ),
        *_family(
            "statusgen_service_month_availability_ratio",
            "gauge",
            "Availability of the current UTC month so far, as a share (0-1) of the counted time (the reports' rules).",
            monthly("statusgen_service_month_availability_ratio", lambda month: month["availability"], PER_CENT),
        ),
        *_family(
            "statusgen_service_sla_target_ratio",
            "gauge",
            "The service's availability target (sla) as a share (0-1), for those that have one.",
            monthly("statusgen_service_sla_target_ratio", sla("target"), PER_CENT),
        ),
        *_family(
            "statusgen_service_sla_met",
            "gauge",
            "1 while the current month's availability meets the target, else 0.",
            monthly("statusgen_service_sla_met", sla("met")),
        ),
        *_family(
            "statusgen_service_error_budget_left_seconds",
            "gauge",
            "Seconds of down time the target still allows this month (negative: overspent).",
            monthly("statusgen_service_error_budget_left_seconds", sla("error_budget_left_minutes"), MINUTE),
        ),
        *_family(
            "statusgen_vendor_status",
            "gauge",
            "The status the service's vendor publishes, as a state set (services with a vendor source).",
            vendors(),
        ),
        *_family(
            "statusgen_site_status",
            "gauge",
            "The site's overall status as a state set.",
            _states("statusgen_site_status", "status", STATUSES, snapshot["status"], {}),
        ),
        *_family(
            "statusgen_health_index",
            "gauge",
            "The health index, 0-100 (docs/api.md says how it is made).",
            one("statusgen_health_index", snapshot["health_index"]),
        ),
        *_family(
            "statusgen_collection_state",
            "gauge",
            "Our own data collection, as a state set: ok, degraded or stale.",
            _states("statusgen_collection_state", "state", COLLECTION_STATES, health["collection"]["state"], {}),
        ),
        *_family(
            "statusgen_last_run_timestamp_seconds",
            "gauge",
            "When the last collection run finished, in seconds since the epoch.",
            one(
                "statusgen_last_run_timestamp_seconds",
                datetime.fromisoformat(last["finished_at"]).timestamp() if last else None,
            ),
        ),
    ]
    return ("\n".join(lines) + "\n").encode()
