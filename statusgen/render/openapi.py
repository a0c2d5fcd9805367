"""Render: the OpenAPI 3.1 document of the API, from the shapes in ``shapes.py``."""

from __future__ import annotations

from typing import Any

from statusgen import __version__
from statusgen.config import Config
from statusgen.model import DEFAULT_RANGE, RANGES, SLUG, STATUSES
from statusgen.policy import MAX_AGE, RATE_PER_MINUTE
from statusgen.render.shapes import SCHEMAS, ref

HEADERS = {
    "ETag": {"description": "Changes exactly when the bytes of the answer change.", "schema": {"type": "string"}},
    "Cache-Control": {"description": f"max-age={MAX_AGE}", "schema": {"type": "string"}},
    "Access-Control-Allow-Origin": {"description": "*", "schema": {"type": "string"}},
}
JSON = "application/json"


def _json(schema: str, description: str) -> dict[str, Any]:
    return {"description": description, "headers": HEADERS, "content": {JSON: {"schema": ref(schema)}}}


def _errors(*codes: int) -> dict[str, Any]:
    texts = {
        400: "Invalid value of a known parameter; the body lists the allowed values.",
        404: "Unknown slug or path.",
        405: "Method other than GET or HEAD; see the Allow header.",
    }
    out: dict[str, Any] = {str(c): _json("Error", texts[c]) for c in codes}
    out["304"] = {"description": "Not modified: If-None-Match matched the current ETag. No body."}
    out["429"] = {
        "description": f"More than {RATE_PER_MINUTE} requests in a minute from one client.",
        "headers": {"Retry-After": {"description": "Whole seconds to wait.", "schema": {"type": "integer"}}},
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
        "description": description + " An empty value counts as absent.",
    }


SLUG_PARAMETER = {
    "name": "slug",
    "in": "path",
    "required": True,
    "description": "The service's slug.",
    "schema": {"type": "string", "pattern": f"^{SLUG}$"},
}


def _get(
    operation: str, summary: str, ok: dict[str, Any], params: list[dict[str, Any]], errors: tuple[int, ...]
) -> dict[str, Any]:
    """A GET operation; ``operation`` its operationId (a generated client's method name)."""
    responses = {"200": ok, **_errors(*errors)}
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


def _atom(description: str) -> dict[str, Any]:
    return {
        "description": description,
        "headers": HEADERS,
        "content": {"application/atom+xml": {"schema": {"type": "string"}}},
    }


def openapi_document(config: Config) -> dict[str, Any]:
    cats = list(config.categories)
    names = {id(schema): name for name, schema in SCHEMAS.items()}
    paths = {
        "/api/v1/snapshot": _get(
            "getSnapshot",
            "All services, the health index, counts by status and by category.",
            _json("Snapshot", "The snapshot."),
            [],
            (),
        ),
        "/api/v1/services": _get(
            "listServices",
            "The list of services, optionally filtered.",
            _json("ServiceList", "Services."),
            [
                _query("category", cats, "Only services of this category."),
                _query("status", list(STATUSES), "Only services with this status."),
            ],
            (400,),
        ),
        "/api/v1/services/{slug}": _get(
            "getService",
            "One service: current state, reason, checks, the last day of measurements.",
            _json("ServiceDetail", "The service."),
            [SLUG_PARAMETER],
            (404,),
        ),
        "/api/v1/services/{slug}/history": _get(
            "getServiceHistory",
            "Availability and latency over time for one service.",
            _json("History", "The history."),
            [SLUG_PARAMETER, _query("range", list(RANGES), "The range; 24h when absent.", DEFAULT_RANGE)],
            (400, 404),
        ),
        "/api/v1/incidents": _get(
            "listIncidents",
            "statusgen's own incidents, newest first.",
            _json("IncidentList", "Incidents."),
            [
                _query("active", ["1", "0"], "1: open incidents only; 0: closed only."),
                _query(
                    "service",
                    [svc.slug for svc in config.services],
                    "One service's incidents only (its slug); an unknown one is 404.",
                ),
            ],
            (400, 404),
        ),
        "/api/v1/health": _get(
            "getHealth", "The health index and the state of our own collection.", _json("Health", "Health."), [], ()
        ),
        "/feed/incidents.xml": _get(
            "getIncidentsFeed", "Atom feed of every incident, newest first.", _atom("Atom 1.0"), [], ()
        ),
        "/feed/services/{slug}.xml": _get(
            "getServiceFeed", "Atom feed of one service's incidents.", _atom("Atom 1.0"), [SLUG_PARAMETER], (404,)
        ),
    }
    return {
        "openapi": "3.1.0",
        "info": {
            "title": f"{config.site.title} API",
            "version": __version__,
            "description": "Public read-only API of a service-status monitor. No key, no cost. "
            f"{RATE_PER_MINUTE} requests per minute per client; answers are fresh for {MAX_AGE} seconds. "
            "The data is not a guarantee and not an SLA. Data may be reused freely.",
            "license": {"name": "Data may be reused freely", "identifier": "CC0-1.0"},
        },
        "servers": [{"url": config.site.base_url}],
        "paths": paths,
        "security": [],  # no key: every operation is open to anyone
        "components": {"schemas": {name: referenced(schema, names) for name, schema in SCHEMAS.items()}},
    }
