"""Render: the OpenAPI 3.1 document of the interface: the API's (``shapes.py``), with the
monthly reports (JSON and CSV), the feeds, the calendars, the badges, the embeddable status and
/metrics; and the parts every OpenAPI document of ours is made of (the Statuspage v2 documents'
own is ``formats.statuspage_openapi``).

Nothing in it names what only today's site holds where a client would be bound to it: a slug is a
string of the slugs' pattern, with today's as examples, so that a client generated from one site
reads another, or the same one once a service is added (categories stay an enum: any other value
is refused with 400). Its ``servers`` are the site's address and ``/``, the host the document was
read from (a mirror's too).
"""

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
HTML = "text/html"
#: Said of every query parameter, after its own description (the API page says them apart).
EMPTY = N_("An empty value counts as absent.")
#: The 429 answer's description, with the limit of its endpoint (the API page says it in its language).
TOO_MANY = N_("More than %(n)s requests in a minute from one client.")


def json_answer(schema: str, description: str) -> dict[str, Any]:
    return {"description": description, "headers": HEADERS, "content": {JSON: {"schema": ref(schema)}}}


def _errors(*codes: int, page: bool = False) -> dict[str, Any]:
    """The error answers of an operation: the interface's JSON bodies, or for a page (a file for
    people: counted in the pages' limit, ``page``) the HTML pages the site answers people with."""
    texts = {
        400: N_("Invalid value of a known parameter; the body lists the allowed values."),
        404: N_("Unknown slug or path."),
        405: N_("Method other than GET or HEAD; see the Allow header."),
    }
    body = {HTML: {"schema": {"type": "string"}}} if page else {JSON: {"schema": ref("Error")}}
    out: dict[str, Any] = {str(c): {"description": texts[c], "headers": HEADERS, "content": body} for c in codes}
    out["304"] = {"description": N_("Not modified: If-None-Match matched the current ETag. No body.")}
    out["429"] = {
        "description": TOO_MANY % {"n": PAGES_PER_MINUTE if page else RATE_PER_MINUTE},
        "headers": {"Retry-After": {"description": N_("Whole seconds to wait."), "schema": {"type": "integer"}}},
        "content": body,
    }
    return out


def _query(
    name: str, values: list[str], description: str, default: str | None = None, schema: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A query parameter: one of ``values``, or of ``schema`` (a slug's)."""
    schema = schema or {"type": "string", "enum": values}
    if default:
        schema = schema | {"default": default}
    return {
        "name": name,
        "in": "query",
        "required": False,
        "schema": schema,
        "allowEmptyValue": True,
        "description": f"{description} {EMPTY}",
    }


def slug_schema(config: Config) -> dict[str, Any]:
    """A service's slug: any string of the pattern (a service added tomorrow has one), today's
    first few as examples."""
    return {"type": "string", "pattern": f"^{SLUG}$", "examples": [s.slug for s in config.services[:3]]}


def slug_parameter(config: Config) -> dict[str, Any]:
    return {
        "name": "slug",
        "in": "path",
        "required": True,
        "description": N_("The service's slug."),
        "schema": slug_schema(config),
    }


MONTH_PARAMETER = {
    "name": "month",
    "in": "path",
    "required": True,
    "description": N_("The month, YYYY-MM in UTC; a month not kept is 404."),
    "schema": {"type": "string", "pattern": f"^{routes.MONTH}$"},
}


def get_operation(
    operation: str,
    summary: str,
    ok: dict[str, Any],
    params: list[dict[str, Any]],
    errors: tuple[int, ...],
    page: bool = False,
) -> dict[str, Any]:
    """A GET operation; ``operation`` its operationId (a generated client's method name); ``page``:
    a file for people, whose errors are the pages' (``_errors``)."""
    responses = {"200": ok, **_errors(*errors, page=page)}
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
    media = "; ".join(p for p in content_type.split("; ") if p != "charset=utf-8")
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
        "servers": [
            {"url": config.site.base_url, "description": "The site."},
            {"url": "/", "description": "The host this document was read from: the site, or a mirror of it."},
        ],
        "paths": paths,
        "security": [],  # no key: every operation is open to anyone
        "components": {"schemas": {name: referenced(schema, names) for name, schema in schemas.items()}},
    }


def openapi_document(config: Config) -> dict[str, Any]:
    cats = list(config.categories)
    slug = slug_parameter(config)
    html = _text(CONTENT_TYPES["html"], "HTML")
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
            [slug],
            (404,),
        ),
        "/api/v1/services/{slug}/history": get_operation(
            "getServiceHistory",
            N_("Availability and latency over time for one service."),
            json_answer("History", N_("The history.")),
            [slug, _query("range", list(RANGES), N_("The range; 24h when absent."), DEFAULT_RANGE)],
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
                    [],
                    N_("One service's incidents only (its slug); an unknown one is 404."),
                    schema=slug_schema(config),
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
        f"/{routes.API}/reports": get_operation(
            "listReports",
            N_("The months reported, newest first, with the site's availability of each."),
            json_answer("ReportList", N_("The months.")),
            [],
            (),
        ),
        f"/{routes.API}/reports/{{month}}": get_operation(
            "getReport",
            N_("A month's report: the site, each category and each service, and the rules it counts by."),
            json_answer("Report", N_("The report.")),
            [MONTH_PARAMETER],
            (404,),
        ),
        "/" + routes.report_csv_file("{month}"): get_operation(
            "getReportCsv",
            N_("A month's report as CSV, a row per service."),
            _text(CONTENT_TYPES["csv"], "CSV (RFC 4180)"),
            [MONTH_PARAMETER],
            (404,),
            page=True,
        ),
        "/feed/incidents.xml": get_operation(
            "getIncidentsFeed", N_("Atom feed of every incident, newest first."), _text(ATOM, "Atom 1.0"), [], ()
        ),
        "/feed/services/{slug}.xml": get_operation(
            "getServiceFeed",
            N_("Atom feed of one service's incidents."),
            _text(ATOM, "Atom 1.0"),
            [slug],
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
            [slug],
            (404,),
        ),
        "/" + routes.badge_file("{slug}", "json"): get_operation(
            "getBadge",
            N_("A service's status as a shields.io endpoint badge; counted as a page, not the API."),
            json_answer("Badge", "shields.io endpoint"),
            [slug],
            (404,),
            page=True,
        ),
        "/" + routes.badge_file("{slug}", "svg"): get_operation(
            "getBadgeImage",
            N_("A service's status as an SVG badge; counted as a page, not the API."),
            _text(CONTENT_TYPES["svg"], "SVG"),
            [slug],
            (404,),
            page=True,
        ),
        "/" + routes.embed_file().removesuffix("index.html"): get_operation(
            "getEmbed",
            N_("The site's status in one line: a page any site may frame."),
            html,
            [],
            (),
            page=True,
        ),
        "/" + routes.embed_file("{slug}").removesuffix("index.html"): get_operation(
            "getServiceEmbed",
            N_("One service's status in one line: a page any site may frame."),
            html,
            [slug],
            (404,),
            page=True,
        ),
        f"/{routes.METRICS}": get_operation(
            "getMetrics",
            N_("The site's and each service's state for Prometheus to scrape; counted as a page, not the API."),
            _text(PROMETHEUS, "Prometheus text exposition format 0.0.4"),
            [],
            (),
            page=True,
        ),
    }
    return document(config, "API", "Public read-only API of a service-status monitor.", paths, SCHEMAS)
