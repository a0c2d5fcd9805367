"""The one definition of the Statuspage v2 documents' shapes (``statuspage.py``), as JSON Schema.

Used by their OpenAPI document (``statuspage_openapi``) and by the tests, which
validate every v2 file of a build against these. The names, types and enumerations are
Statuspage's; where we have nothing to say, the value is null, as on real pages.
"""

from __future__ import annotations

from statusgen.render.api.shapes import ERROR, INT, OPT_STR, OPT_TIME, STALE_AFTER, TIME, Schema, obj

COMPONENT_STATUSES = ["operational", "degraded_performance", "partial_outage", "major_outage", "under_maintenance"]
INDICATORS = ["none", "minor", "major", "critical", "maintenance"]
INCIDENT_STATUSES = ["investigating", "identified", "monitoring", "resolved", "postmortem"]
MAINTENANCE_STATUSES = ["scheduled", "in_progress", "verifying", "completed"]
IMPACTS = ["none", "minor", "major", "critical", "maintenance"]

STR: Schema = {"type": "string"}
BOOL: Schema = {"type": "boolean"}
NULL: Schema = {"type": "null"}
ID: Schema = {"type": "string", "pattern": "^[a-z0-9]{12}$", "description": "Stable across builds and releases."}
COMPONENT_STATUS: Schema = {"type": "string", "enum": COMPONENT_STATUSES}

PAGE = obj({"id": ID, "name": STR, "url": STR, "time_zone": STR, "updated_at": TIME})
STATUS = obj(
    {"indicator": {"type": "string", "enum": INDICATORS}, "description": STR},
    description="The page's status: its worst component's, in Statuspage's words.",
)
COMPONENT_FIELDS: Schema = {
    "id": ID,
    "name": STR,
    "status": COMPONENT_STATUS,
    "created_at": TIME,
    "updated_at": TIME,
    "position": INT,
    "description": OPT_STR,
    "showcase": BOOL,
    "start_date": OPT_STR,
    "group_id": {"type": ["string", "null"]},
    "page_id": ID,
    "group": BOOL,
    "only_show_if_degraded": BOOL,
}
COMPONENT = obj(
    COMPONENT_FIELDS,
    properties={
        **COMPONENT_FIELDS,
        "components": {"type": "array", "items": ID, "description": "A group's components' ids."},
    },
    description="A service (group false) or a category (group true, with its components' ids).",
)
AFFECTED = obj({"code": ID, "name": STR, "old_status": COMPONENT_STATUS, "new_status": COMPONENT_STATUS})
UPDATE = obj(
    {
        "id": ID,
        "status": {"type": "string", "enum": INCIDENT_STATUSES + MAINTENANCE_STATUSES},
        "body": STR,
        "incident_id": ID,
        "created_at": TIME,
        "updated_at": TIME,
        "display_at": TIME,
        "affected_components": {"type": "array", "items": AFFECTED},
        "deliver_notifications": BOOL,
        "custom_tweet": NULL,
        "tweet_id": NULL,
    }
)


def _incident(statuses: list[str], **more: Schema) -> Schema:
    return obj(
        {
            "id": ID,
            "name": STR,
            "status": {"type": "string", "enum": statuses},
            "created_at": TIME,
            "updated_at": TIME,
            "monitoring_at": OPT_TIME,
            "resolved_at": OPT_TIME,
            "impact": {"type": "string", "enum": IMPACTS},
            "shortlink": STR,
            "started_at": TIME,
            "page_id": ID,
            "incident_updates": {"type": "array", "items": UPDATE, "description": "Newest first."},
            "components": {"type": "array", "items": COMPONENT},
            **more,
        }
    )


INCIDENT = _incident(INCIDENT_STATUSES, reminder_intervals=NULL)
MAINTENANCE = _incident(MAINTENANCE_STATUSES, scheduled_for=TIME, scheduled_until=OPT_TIME)


def _document(**parts: Schema) -> Schema:
    """A document of the present: it says when it is out of date."""
    return obj({"page": PAGE, **parts, "stale_after": STALE_AFTER})


def _list(**parts: Schema) -> Schema:
    """A list: of the present (unresolved, upcoming, active) with ``stale_after``, of the past too
    (every recent incident, every maintenance) without."""
    fields = {"page": PAGE, **parts}
    return obj(fields, properties={**fields, "stale_after": STALE_AFTER})


COMPONENTS = {"type": "array", "items": COMPONENT, "description": "Each group followed by its components."}
INCIDENTS = {"type": "array", "items": INCIDENT}
MAINTENANCES = {"type": "array", "items": MAINTENANCE}

SCHEMAS: dict[str, Schema] = {
    "Page": PAGE,
    "PageStatus": STATUS,
    "Component": COMPONENT,
    "AffectedComponent": AFFECTED,
    "IncidentUpdate": UPDATE,
    "Incident": INCIDENT,
    "ScheduledMaintenance": MAINTENANCE,
    "Summary": _document(
        components=COMPONENTS, incidents=INCIDENTS, scheduled_maintenances=MAINTENANCES, status=STATUS
    ),
    "StatusDocument": _document(status=STATUS),
    "ComponentList": _document(components=COMPONENTS),
    "IncidentList": _list(incidents=INCIDENTS),
    "ScheduledMaintenanceList": _list(scheduled_maintenances=MAINTENANCES),
    "Error": ERROR,
}

#: Each document's schema, by its name in ``routes.STATUSPAGE_FILES``.
DOCUMENTS = {
    "summary": "Summary",
    "status": "StatusDocument",
    "components": "ComponentList",
    "incidents": "IncidentList",
    "unresolved": "IncidentList",
    "maintenances": "ScheduledMaintenanceList",
    "upcoming": "ScheduledMaintenanceList",
    "active": "ScheduledMaintenanceList",
}
