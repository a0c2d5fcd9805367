"""The shape of the locations that probe, as health tells them (docs/locations.md), part of
``shapes.SCHEMAS``."""

from __future__ import annotations

from statusgen.render.api.schema_base import INT, OPT_TIME, TIME, Schema, obj

LOCATION = obj(
    {
        "name": {"type": "string"},
        "this_host": {"type": "boolean"},
        "last_at": OPT_TIME,
        "results": INT,
        "fresh": {"type": "boolean"},
        "last_refused": {"oneOf": [{"type": "null"}, obj({"at": TIME, "reason": {"type": "string"}})]},
        "refused_24h": {**INT, "description": "Batches refused in the last 24 hours."},
    },
    description="A location that probes: this host's last run, or an agent's last batch taken; past "
    "site.stale_after it is not fresh, and set aside.",
)
INBOX = obj(
    {
        "listed_at": TIME,
        "not_batches": {**INT, "description": "Files in the inbox that are not batches: never read nor removed."},
        "left_for_next": {**INT, "description": "Batches the run had no time for: the next run takes them."},
    },
    description="Only on a site with [[locations]], once a run has listed the inbox: what its last "
    "listing held besides batches.",
)
LOCATIONS = {
    "type": "array",
    "items": LOCATION,
    "description": "Only on a site with [[locations]]: this host first, then each agent's location.",
}


def by_location(evidence: Schema) -> Schema:
    return {
        "type": "array",
        "items": obj({"location": {"type": "string"}, "last_result": {"oneOf": [evidence, {"type": "null"}]}}),
        "description": "Only on a site with [[locations]]: the check's latest fresh result from each location, "
        "this host first; null where a location has none.",
    }


DAY_BY_LOCATION = {
    "type": "array",
    "items": obj(
        {
            "location": {"type": "string"},
            "checks": INT,
            "failed": INT,
            "latency_p50_ms": {"type": ["number", "null"]},
            "latency_p95_ms": {"type": ["number", "null"]},
        }
    ),
    "description": "Only the 24h history of a site with [[locations]]: each location's results in the window "
    "(but those set aside), how many failed, and the latency of the good ones.",
}
