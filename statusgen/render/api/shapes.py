"""The one definition of every JSON shape, as JSON Schema (2020-12): the OpenAPI document
(``openapi.py``) is made from them, and the tests validate every file of a build against them."""

from __future__ import annotations

from statusgen.model import RANGES, SEVERITIES, SLUG, STATUSES
from statusgen.render.api.location_shapes import DAY_BY_LOCATION, INBOX, LOCATIONS, by_location
from statusgen.render.api.report_shapes import REPORT, REPORTS, THIS_MONTH
from statusgen.render.api.schema_base import (
    INT,
    OPT_NUM,
    OPT_STR,
    OPT_TIME,
    STALE_AFTER,
    STATUS,
    TIME,
    Schema,
    obj,
    ref,
)

__all__ = ["INT", "OPT_NUM", "OPT_STR", "OPT_TIME", "STALE_AFTER", "STATUS", "TIME", "Schema", "obj", "ref"]


def listing(key: str, item: Schema, filters: Schema, present: bool = False) -> Schema:
    """A list document; ``present``: it describes the present, and says when it is out of date."""
    stale = {"stale_after": STALE_AFTER} if present else {}
    return obj({"as_of": OPT_TIME, **stale, "filters": filters, "count": INT, key: {"type": "array", "items": item}})


LINKS = obj(
    {
        "self": {"type": "string"},
        "history": {"type": "string"},
        "feed": {"type": "string"},
        "page": {"type": "string"},
        "incidents": {"type": "string", "description": "The service's incidents: /api/v1/incidents?service={slug}."},
    }
)

CERTIFICATE = obj(
    {
        "days_left": {"type": "integer", "description": "Whole days from the result until the certificate expires."},
        "not_after": TIME,
        "issuer": {"type": "string", "description": "Who signed it: its organisation, else its common name."},
        "names": {"type": "array", "items": {"type": "string"}, "description": "The names it covers."},
    },
    description="The TLS certificate of the server that answered an HTTPS check, as the check saw it.",
)

EVIDENCE_FIELDS: Schema = {
    "check": {"type": "integer", "minimum": 1},
    "method": {"type": "string"},
    "url": {"type": "string"},
    "outcome": {"type": "string"},
    "latency_ms": OPT_NUM,
    "http_status": {"type": ["integer", "null"]},
    "slow": {"type": "boolean"},
    "at": TIME,
    "label": {"type": "string", "description": "The check's public name (its label, or its URL's host)."},
    "flag": {
        "enum": [None, "maintenance", "excluded", "quorum"],
        "description": "null when the result counted; maintenance (inside a maintenance window, configured "
        "or announced by the vendor), excluded (set aside because our own vantage point looked at fault) or "
        "quorum (set aside because fewer locations than the quorum see the service failing) when it counted "
        "toward nothing.",
    },
    "certificate": {"oneOf": [CERTIFICATE, {"type": "null"}]},
    "condition": {
        **OPT_STR,
        "description": "The condition the answer failed (outcome condition), as configured; else null.",
    },
}
EVIDENCE = obj(
    EVIDENCE_FIELDS,
    properties={
        **EVIDENCE_FIELDS,
        "location": {"type": "string", "description": "Only a result another location saw: its name."},
    },
    description="The latest result of one check.",
)

POINT = obj(
    {
        "start": TIME,
        "availability": OPT_NUM,
        "latency_p50_ms": OPT_NUM,
        "latency_p95_ms": OPT_NUM,
        "checks": INT,
        "failed": INT,
        "slow": INT,
        "maintenance": INT,
        "excluded": INT,
        "incident_minutes": INT,
    }
)

SOURCES: Schema = {"type": "array", "items": {"type": "string", "enum": ["checks", "vendor", "schedule", "operator"]}}

SERVICE_SUMMARY = obj(
    {
        "slug": {"type": "string", "pattern": f"^{SLUG}$"},
        "name": {"type": "string"},
        "category": {"type": "string"},
        "description": OPT_STR,
        "url": OPT_STR,
        "status": STATUS,
        "since": OPT_TIME,
        "reason": {"type": "string"},
        "sources": SOURCES,
        "links": LINKS,
    },
    description="A service as listed: its status, since when, and the reason behind it.",
)

HISTORY_SUMMARY = obj(
    {
        "availability": OPT_NUM,
        "latency_p50_ms": OPT_NUM,
        "latency_p95_ms": OPT_NUM,
        "checks": INT,
        "failed": INT,
        "maintenance": INT,
        "excluded": INT,
        "incident_minutes": {"type": ["integer", "null"]},
    },
    description="Availability in % (0-100) over counted results; latency in ms.",
)

LAST_DAY_ROW = {
    "type": "array",
    "description": "One result, its fields in the order of columns.",
    "prefixItems": [
        {**TIME, "description": "at: when the check ran"},
        {"type": "integer", "minimum": 1, "description": "check: the check's number"},
        {"type": "string", "description": "outcome: ok, timeout, http_status..."},
        {"type": ["number", "null"], "description": "latency_ms: null when no answer came"},
        {"type": ["integer", "null"], "description": "http_status: null when no answer came"},
        {"type": "boolean", "description": "slow: answered above the check's degraded_ms"},
        {"enum": [None, "maintenance", "excluded", "quorum"], "description": "flag: null when the result counted"},
    ],
    "minItems": 7,
    "maxItems": 7,  # not "items": false, which client generators do not read
    "items": {"type": ["string", "number", "boolean", "null"]},  # what a reader of items alone sees
}

CHECK_FIELDS: Schema = {
    "check": {"type": "integer"},
    "label": {"type": "string", "description": "How readers see the check: its label, or its URL's host."},
    "method": {"type": "string"},
    "url": {"type": "string", "description": "Published without userinfo, query or fragment."},
    "expect_status": {"type": "array", "items": {"type": "integer"}},
    "keyword": OPT_STR,
    "timeout_s": {"type": "number"},
    "degraded_ms": {"type": "number"},
    "max_bytes": INT,
    "kind": {"type": "string", "enum": ["http", "tcp", "dns"], "description": "What the check does."},
    "conditions": {
        "type": "array",
        "items": {"type": "string"},
        "description": "Conditions the answer must meet (HTTP), in their canonical form.",
    },
    "follow_redirects": {"type": "boolean"},
    "cert_expiry_days": {
        "type": "integer",
        "description": "HTTPS: a certificate expiring within this many days degrades the service (0: never).",
    },
    "expect": {**OPT_STR, "description": "TCP: the text the server must send; DNS: a value an answer must be."},
    "resolver": {**OPT_STR, "description": "DNS: the server asked; null for the system's resolvers."},
    "last_result": {"oneOf": [EVIDENCE, {"type": "null"}]},
}
CHECK = obj(
    CHECK_FIELDS,
    properties={**CHECK_FIELDS, "locations": by_location(EVIDENCE)},
)

VENDOR_MAINTENANCE = obj(
    {
        "id": {"type": "string"},
        "title": {"type": "string"},
        "status": {"type": "string", "description": "The vendor's own word (scheduled, in_progress...)."},
        "starts_at": OPT_TIME,
        "ends_at": OPT_TIME,
        "url": OPT_STR,
        "components": {"type": "array", "items": {"type": "string"}},
    },
    description="A maintenance the vendor announces.",
)

VENDOR_VIEW = obj(
    {
        "format": {"type": "string"},
        "status": STATUS,
        "description": OPT_STR,
        "components": {
            "type": "array",
            "items": obj(
                {
                    "id": {"type": "string"},
                    "name": {"type": "string"},
                    "status": STATUS,
                    "group": OPT_STR,
                    "uptime": {
                        "type": "object",
                        "additionalProperties": {"type": "number"},
                        "description": "Uptime figures the vendor publishes (Upptime, Uptime Kuma), in %, by period.",
                    },
                }
            ),
        },
        "incidents": {
            "type": "array",
            "items": obj(
                {
                    "id": {"type": "string"},
                    "title": {"type": "string"},
                    "impact": {"type": "string", "enum": ["none", "degraded", "partial_outage", "major_outage"]},
                    "status": {"type": "string"},
                    "started_at": OPT_TIME,
                    "updated_at": OPT_TIME,
                    "url": OPT_STR,
                    "components": {"type": "array", "items": {"type": "string"}},
                    "affected_components": {
                        "type": "array",
                        "items": obj({"id": {"type": "string"}, "name": {"type": "string"}, "status": STATUS}),
                        "description": "Where the incident's latest update says each component stands now.",
                    },
                }
            ),
        },
        "maintenance_active": {"type": "array", "items": VENDOR_MAINTENANCE},
        "maintenance_upcoming": {"type": "array", "items": VENDOR_MAINTENANCE},
        "updated_at": OPT_TIME,
        "page_url": OPT_STR,
    },
    description="What the vendor says, normalized to our status scale; open incidents only.",
)

VENDOR = obj(
    {
        "source": {"type": "string"},
        "format": {"type": "string"},
        "components": {"type": "array", "items": {"type": "string"}},
        "timeout_s": {"type": "number"},
        "stale_after_s": {"type": "number"},
        "outcome": OPT_STR,
        "detail": OPT_STR,
        "fetched_at": OPT_TIME,
        "last_ok_at": OPT_TIME,
        "stale": {"type": "boolean"},
        "view": {"oneOf": [{"type": "null"}, VENDOR_VIEW]},
    },
    description="A service's vendor source: the last fetch's outcome and the last good view. A stale view "
    "(no successful fetch within stale_after) is set aside by the merge.",
)

INCIDENT_REF = {
    "oneOf": [
        {"type": "null"},
        obj(
            {
                "id": {"type": "string"},
                "title": {"type": "string"},
                "severity": {"type": "string"},
                "started_at": TIME,
                "page": {"type": "string"},
            }
        ),
    ]
}

MAINTENANCE_NOTICE = obj(
    {
        "service": {"type": "string"},
        "service_name": {"type": "string"},
        "title": {"type": "string"},
        "status": {"enum": ["in_progress", "upcoming"]},
        "start": TIME,
        "end": OPT_TIME,
        "source": {
            "enum": ["schedule", "operator", "vendor"],
            "description": "schedule: a window the operator configured; operator: a planned maintenance the "
            "operator wrote in the notes folder; vendor: announced on the vendor's page.",
        },
        "url": OPT_STR,
        "message": {
            "type": ["string", "null"],
            "description": "The operator's words about it, as Markdown source (the pages show it sanitized); "
            "null but for source operator.",
        },
    },
    description="A maintenance window in progress, or starting within 14 days.",
)
UPCOMING_MAINTENANCE = {"type": "array", "items": MAINTENANCE_NOTICE}

SERVICE_DETAIL = obj(
    {
        "as_of": TIME,
        "stale_after": STALE_AFTER,
        "service": {
            "allOf": [
                SERVICE_SUMMARY,
                obj(
                    {
                        "state": obj(
                            {
                                "status": STATUS,
                                "since": OPT_TIME,
                                "reason": {"type": "string"},
                                "sources": SOURCES,
                                "own_checks": STATUS,
                                "evidence": {"type": "array", "items": EVIDENCE},
                            }
                        ),
                        "thresholds": obj({"failures_to_open": INT, "successes_to_resolve": INT}),
                        "maintenance": {
                            "type": "array",
                            "items": obj(
                                {
                                    "title": {"type": "string"},
                                    "start": OPT_TIME,
                                    "end": OPT_TIME,
                                    "schedule": OPT_STR,
                                    "duration_s": {"type": ["number", "null"]},
                                }
                            ),
                            "description": "Configured maintenance windows: "
                            "one-off (start, end) or recurring (schedule in cron form, UTC, and duration_s).",
                        },
                        "checks": {"type": "array", "items": CHECK},
                        "vendor": {"oneOf": [{"type": "null"}, VENDOR]},
                        "open_incident": INCIDENT_REF,
                        "upcoming_maintenance": UPCOMING_MAINTENANCE,
                        "last_day": obj(
                            {
                                "from": TIME,
                                "to": TIME,
                                "columns": {"type": "array", "items": {"type": "string"}},
                                "count": INT,
                                "rows": {"type": "array", "items": LAST_DAY_ROW},
                                "summary": HISTORY_SUMMARY,
                            },
                            description="Every result from the first bucket of the 24h history's window "
                            "(from) to the record's time (to), and what they add up to (summary): the 24h "
                            "history's closed buckets and the bucket in progress.",
                        ),
                        "in_progress": obj(
                            dict.fromkeys(RANGES, POINT),
                            description="The bucket in progress of each history range, so far: a history "
                            "holds closed buckets only and ends where this one begins.",
                        ),
                        "this_month": THIS_MONTH,
                    }
                ),
            ]
        },
    },
    description="One service: current state, the reason behind it, checks, and the last day of measurements "
    "(one row per result, in the order given by columns).",
)

HISTORY = obj(
    {
        "service": {"type": "string"},
        "range": {"type": "string", "enum": list(RANGES)},
        "resolution": {"type": "string"},
        "resolution_s": INT,
        "from": TIME,
        "to": TIME,
        "as_of": TIME,
        "summary": HISTORY_SUMMARY,
        "count": INT,
        "points": {"type": "array", "items": POINT},
    },
    description="Every closed bucket of the range, in order, ending where the bucket in progress (in the "
    "service's record) begins; null where nothing was measured. Resolutions: 24h 5 min, 7d 1 h, 30d 6 h, "
    "90d 1 day.",
)
HISTORY["properties"]["locations"] = DAY_BY_LOCATION  # optional: not in "required"

UPDATE = obj(
    {
        "at": TIME,
        "kind": {
            "type": "string",
            "enum": ["opened", "severity", "vendor", "resolved", "note"],
            "description": "note: the operator's words (Markdown source; ref names its file in the notes folder).",
        },
        "status": STATUS,
        "message": {"type": "string"},
        "link": OPT_STR,
        "ref": OPT_STR,
    }
)

INCIDENT = obj(
    {
        "id": {"type": "string"},
        "service": {"type": "string"},
        "service_name": {"type": "string"},
        "title": {"type": "string"},
        "severity": {"type": "string", "enum": list(SEVERITIES)},
        "started_at": TIME,
        "ended_at": OPT_TIME,
        "updated_at": TIME,
        "open": {"type": "boolean"},
        "duration_s": {"type": ["integer", "null"], "description": "Seconds from start to end; null while open."},
        "source": {
            "enum": ["checks", "operator"],
            "description": "checks: opened by statusgen from its checks; operator: a manual incident the operator "
            "wrote in the notes folder (its updates are Markdown source).",
        },
        "updates": {"type": "array", "items": UPDATE, "minItems": 1},
        "links": obj({"page": {"type": "string"}, "service": {"type": "string"}}),
    }
)

BY_STATUS = obj(dict.fromkeys(STATUSES, INT))
LAST_RUN = obj(
    {
        "started_at": TIME,
        "finished_at": TIME,
        "duration_ms": {"type": "number"},
        "checks_attempted": INT,
        "checks_failed": INT,
        "vendor_sources_attempted": INT,
        "vendor_sources_failed": INT,
        "canaries_attempted": INT,
        "canaries_failed": INT,
        "results_excluded": {
            **INT,
            "description": "Failed results set aside: our vantage point was suspect, or the quorum of locations "
            "saw the service up.",
        },
    },
    description="The last collection run: when, how long, and what it attempted and what failed.",
)
OPT_LAST_RUN = {"oneOf": [{"type": "null"}, LAST_RUN]}
OVERALL = {
    "status": {
        **STATUS,
        "description": "The worst status among the services (unknown only when none is measured).",
    },
    "summary": {
        "type": "string",
        "description": 'The front page\'s first line: "All services are operating normally." or how many services '
        "have which problem, worst first.",
    },
}

SNAPSHOT = obj(
    {
        "as_of": TIME,
        "stale_after": STALE_AFTER,
        "title": {"type": "string"},
        **OVERALL,
        "last_collection": OPT_LAST_RUN,
        "health_index": {"type": ["number", "null"], "minimum": 0, "maximum": 100},
        "counts": obj(
            {
                "by_status": BY_STATUS,
                "by_category": {
                    "type": "object",
                    "additionalProperties": obj({"name": {"type": "string"}, "total": INT, "by_status": BY_STATUS}),
                },
            }
        ),
        "open_incidents": INT,
        "upcoming_maintenance": UPCOMING_MAINTENANCE,
        "count": INT,
        "services": {"type": "array", "items": SERVICE_SUMMARY},
    },
    description="The site's status and its sentence, all services, the health index, counts by status and by category.",
)

SERVICES = listing(
    "services", SERVICE_SUMMARY, obj({"category": OPT_STR, "status": {"type": ["string", "null"]}}), present=True
)
INCIDENTS = listing(
    "incidents",
    INCIDENT,
    obj(
        {
            "active": {
                "type": ["string", "null"],
                "enum": [None, "0", "1"],
                "description": 'The query\'s active value, as the query gives it: "1" open incidents only, '
                '"0" closed ones only, null both.',
            },
            "service": {**OPT_STR, "description": "The service whose incidents these are; null for every service's."},
        }
    ),
)

COLLECTION = obj(
    {
        "state": {"type": "string", "enum": ["ok", "degraded", "stale"]},
        "stale": {"type": "boolean"},
        "interval_s": {"type": "number"},
        "reason": {"type": "string"},
        "collecting_since": {**OPT_TIME, "description": "When the site's first run began; null before any."},
        "last_run": OPT_LAST_RUN,
    }
)

HEALTH_FIELDS: Schema = {
    "as_of": TIME,
    "stale_after": STALE_AFTER,
    **OVERALL,
    "health_index": {"type": ["number", "null"]},
    "formula": {"type": "string"},
    "services_counted": INT,
    "services_total": INT,
    "languages": {"type": "array", "items": {"type": "string"}, "minItems": 1},
    "collection": COLLECTION,
    "notifications": obj(
        {"sent": INT, "failed": INT, "pending": INT, "uncertain": INT},
        description="The notifications of the last 30 days, as the last build found them: events sent, "
        "attempts that failed, events waiting, events a stopped run may or may not have sent.",
    ),
}
HEALTH = obj(
    HEALTH_FIELDS,
    properties={
        **HEALTH_FIELDS,
        "locations": LOCATIONS,
        "inbox": INBOX,
    },
    description="The health index (the number on the front page) and the state of our own collection.",
)

#: The machine codes of every error either server sends (the tree's bodies, and the answers to
#: requests a server cannot read).
ERROR_CODES = (
    "invalid_parameter",
    "not_found",
    "unknown_service",
    "method_not_allowed",
    "rate_limited",
    "bad_request",
    "uri_too_long",
    "headers_too_large",
    "http_version_not_supported",
)
ERROR = obj(
    {
        "error": {
            "type": "object",
            "required": ["status", "code", "message"],
            "properties": {
                "status": {"type": "integer"},
                "code": {"enum": list(ERROR_CODES)},
                "message": {"type": "string"},
                "parameter": {"type": "string", "description": "The query parameter that was invalid (400)."},
                "allowed": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "The values the parameter takes (400), or the methods allowed (405).",
                },
            },
        }
    },
    description="Every error: a machine code, a human message, and where it helps the allowed values.",
)

#: A service's badge as a shields.io endpoint (``formats.badges``): https://shields.io/badges/endpoint-badge
BADGE = obj(
    {
        "schemaVersion": {"type": "integer", "const": 1},
        "label": {"type": "string", "description": "The service's name."},
        "message": {"type": "string", "description": "Its status, in words."},
        "color": {"type": "string", "description": "A shields.io colour name."},
        "cacheSeconds": INT,
    },
    description="A service's status as a shields.io endpoint badge.",
)

SCHEMAS: dict[str, Schema] = {
    "Snapshot": SNAPSHOT,
    "ServiceList": SERVICES,
    "ServiceSummary": SERVICE_SUMMARY,
    "ServiceDetail": SERVICE_DETAIL,
    "History": HISTORY,
    "IncidentList": INCIDENTS,
    "Incident": INCIDENT,
    "Health": HEALTH,
    "ReportList": REPORTS,
    "Report": REPORT,
    "Error": ERROR,
    "Badge": BADGE,
}


def schema_for(tree_path: str) -> str | None:
    """Which schema a JSON file of the tree follows (None for files outside the API)."""
    if tree_path.startswith("_errors/"):
        return "Error"
    if tree_path.startswith("badges/"):
        return "Badge"
    if not tree_path.startswith("api/v1/") or tree_path.endswith("openapi.json"):
        return None
    rest = tree_path[len("api/v1/") :]
    fixed = {
        "snapshot.json": "Snapshot",
        "health.json": "Health",
        "reports.json": "ReportList",
        "services.json": "ServiceList",
        "incidents.json": "IncidentList",
    }
    if rest in fixed:
        return fixed[rest]
    if rest.startswith(("services/_filter/",)):
        return "ServiceList"
    if rest.startswith(("incidents/_active/", "incidents/_service/")):
        return "IncidentList"
    if rest.startswith("reports/"):
        return "Report"
    if "/history/" in rest:
        return "History"
    return "ServiceDetail" if rest.startswith("services/") else None
