"""Render: the OpenAPI 3.1 document of the interface: the API's (``shapes.py``), with the
feeds, the calendars and /metrics; and the parts every OpenAPI document of ours is made of (the
Statuspage v2 documents' own is ``formats.statuspage_openapi``)."""

from __future__ import annotations

from typing import Any

from statusgen import __version__, routes
from statusgen.config import Config
from statusgen.i18n import N_
from statusgen.model import DEFAULT_RANGE, RANGES, SLUG, STATUSES
from statusgen.policy import ATOM, CONTENT_TYPES, MAX_AGE, PAGES_PER_MINUTE, PROMETHEUS, RATE_PER_MINUTE
from statusgen.render.api.shapes import SCHEMAS, Schema, ref

HEADERS = {
    "ETag": {"description": N_("Changes exactly when the bytes of the answer change."), "schema": {"type": "string"}},
    "Cache-Control": {"description": f"max-age={MAX_AGE}", "schema": {"type": "string"}},
    "Access-Control-Allow-Origin": {"description": "*", "schema": {"type": "string"}},
}
JSON = "application/json"
#: Said of every query parameter, after its own description (the API page says them apart).
EMPTY = N_("An empty value counts as absent.")
#: The 429 answer's description, with the limit of its endpoint (the API page says it in its language).
TOO_MANY = N_("More than %(n)s requests in a minute from one client.")


def json_answer(schema: str, description: str) -> dict[str, Any]:
    return {"description": description, "headers": HEADERS, "content": {JSON: {"schema": ref(schema)}}}


def _errors(*codes: int, per_minute: int = RATE_PER_MINUTE) -> dict[str, Any]:
    texts = {
        400: N_("Invalid value of a known parameter; the body lists the allowed values."),
        404: N_("Unknown slug or path."),
        405: N_("Method other than GET or HEAD; see the Allow header."),
    }
    out: dict[str, Any] = {str(c): json_answer("Error", texts[c]) for c in codes}
    out["304"] = {"description": N_("Not modified: If-None-Match matched the current ETag. No body.")}
    out["429"] = {
        "description": TOO_MANY % {"n": per_minute},
        "headers": {"Retry-After": {"description": N_("Whole seconds to wait."), "schema": {"type": "integer"}}},
        "content": {JSON: {"schema": ref("Error")}},
    }
    return out


def _query(name: str, values: list[str], description: str, default: str | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string", "enum": values}
    if default:
        schema["default"] = default
    return {
        "name": name,
        "in": "query",
        "required": False,
        "schema": schema,
        "allowEmptyValue": True,
        "description": f"{description} {EMPTY}",
    }


SLUG_PARAMETER = {
    "name": "slug",
    "in": "path",
    "required": True,
    "description": N_("The service's slug."),
    "schema": {"type": "string", "pattern": f"^{SLUG}$"},
}


def get_operation(
    operation: str,
    summary: str,
    ok: dict[str, Any],
    params: list[dict[str, Any]],
    errors: tuple[int, ...],
    per_minute: int = RATE_PER_MINUTE,
) -> dict[str, Any]:
    """A GET operation; ``operation`` its operationId (a generated client's method name)."""
    responses = {"200": ok, **_errors(*errors, per_minute=per_minute)}
    return {"get": {"operationId": operation, "summary": summary, "parameters": params, "responses": responses}}


def referenced(schema: Any, names: dict[int, str], top: bool = True) -> Any:
    """``schema`` with every named schema it holds (by identity: the shapes are built from the
    same objects) replaced by a reference to it, so that a generated client has one type each."""
    if not top and id(schema) in names:
        return ref(names[id(schema)])
    if isinstance(schema, dict):
        return {k: referenced(v, names, False) for k, v in schema.items()}
    if isinstance(schema, list):
        return [referenced(v, names, False) for v in schema]
    return schema


def _text(content_type: str, description: str) -> dict[str, Any]:
    """An answer that is not JSON: its media type without the charset, as OpenAPI names one."""
    media = content_type.removesuffix("; charset=utf-8")
    return {"description": description, "headers": HEADERS, "content": {media: {"schema": {"type": "string"}}}}


def document(
    config: Config, title: str, description: str, paths: dict[str, Any], schemas: dict[str, Schema]
) -> dict[str, Any]:
    names = {id(schema): name for name, schema in schemas.items()}
    return {
        "openapi": "3.1.0",
        "info": {
            "title": f"{config.site.title} {title}",
            "version": __version__,
            "description": f"{description} No key, no cost. "
            f"{RATE_PER_MINUTE} requests per minute per client; answers are fresh for {MAX_AGE} seconds. "
            "The data is not a guarantee and not an SLA. Data may be reused freely.",
            "license": {"name": "Data may be reused freely", "identifier": "CC0-1.0"},
        },
        "servers": [{"url": config.site.base_url}],
        "paths": paths,
        "security": [],  # no key: every operation is open to anyone
        "components": {"schemas": {name: referenced(schema, names) for name, schema in schemas.items()}},
    }


def openapi_document(config: Config) -> dict[str, Any]:
    cats = list(config.categories)
    paths = {
        "/api/v1/snapshot": get_operation(
            "getSnapshot",
            N_("All services, the health index, counts by status and by category."),
            json_answer("Snapshot", N_("The snapshot.")),
            [],
            (),
        ),
        "/api/v1/services": get_operation(
            "listServices",
            N_("The list of services, optionally filtered."),
            json_answer("ServiceList", N_("Services.")),
            [
                _query("category", cats, N_("Only services of this category.")),
                _query("status", list(STATUSES), N_("Only services with this status.")),
            ],
            (400,),
        ),
        "/api/v1/services/{slug}": get_operation(
            "getService",
            N_("One service: current state, reason, checks, the last day of measurements."),
            json_answer("ServiceDetail", N_("The service.")),
            [SLUG_PARAMETER],
            (404,),
        ),
        "/api/v1/services/{slug}/history": get_operation(
            "getServiceHistory",
            N_("Availability and latency over time for one service."),
            json_answer("History", N_("The history.")),
            [SLUG_PARAMETER, _query("range", list(RANGES), N_("The range; 24h when absent."), DEFAULT_RANGE)],
            (400, 404),
        ),
        "/api/v1/incidents": get_operation(
            "listIncidents",
            N_("statusgen's own incidents, newest first."),
            json_answer("IncidentList", N_("Incidents.")),
            [
                _query("active", ["1", "0"], N_("1: open incidents only; 0: closed only.")),
                _query(
                    "service",
                    [svc.slug for svc in config.services],
                    N_("One service's incidents only (its slug); an unknown one is 404."),
                ),
            ],
            (400, 404),
        ),
        "/api/v1/health": get_operation(
            "getHealth",
            N_("The health index and the state of our own collection."),
            json_answer("Health", N_("Health.")),
            [],
            (),
        ),
        "/feed/incidents.xml": get_operation(
            "getIncidentsFeed", N_("Atom feed of every incident, newest first."), _text(ATOM, "Atom 1.0"), [], ()
        ),
        "/feed/services/{slug}.xml": get_operation(
            "getServiceFeed",
            N_("Atom feed of one service's incidents."),
            _text(ATOM, "Atom 1.0"),
            [SLUG_PARAMETER],
            (404,),
        ),
        f"/{routes.CALENDAR}": get_operation(
            "getMaintenanceCalendar",
            N_("Every configured, planned and vendor maintenance, as a calendar to subscribe to."),
            _text(CONTENT_TYPES["ics"], "iCalendar (RFC 5545)"),
            [],
            (),
        ),
        "/" + routes.service_calendar_file("{slug}"): get_operation(
            "getServiceMaintenanceCalendar",
            N_("One service's maintenance, as a calendar to subscribe to."),
            _text(CONTENT_TYPES["ics"], "iCalendar (RFC 5545)"),
            [SLUG_PARAMETER],
            (404,),
        ),
        f"/{routes.METRICS}": get_operation(
            "getMetrics",
            N_("The site's and each service's state for Prometheus to scrape; counted as a page, not the API."),
            _text(PROMETHEUS, "Prometheus text exposition format 0.0.4"),
            [],
            (),
            PAGES_PER_MINUTE,
        ),
    }
    return document(config, "API", "Public read-only API of a service-status monitor.", paths, SCHEMAS)
