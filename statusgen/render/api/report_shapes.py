"""The shapes of the monthly reports (``render.reports``), part of ``shapes.SCHEMAS``."""

from __future__ import annotations

from statusgen.model import STATUSES
from statusgen.render.api.schema_base import INT, OPT_NUM, OPT_TIME, TIME, Schema, obj

MINUTES: Schema = {"type": "number", "minimum": 0}
FIGURES: Schema = {
    "availability": {**OPT_NUM, "description": "% of the counted time up (the rules); null: nothing counted."},
    "minutes": obj(
        dict.fromkeys(STATUSES, MINUTES),
        description="Minutes of each status; unknown: no data (the job stopped, not yet configured) or not measured.",
    ),
    "down_minutes": MINUTES,
    "maintenance_minutes": MINUTES,
    "incidents": INT,
    "incident_minutes": MINUTES,
    "excluded_results": INT,
    "sla": {
        "oneOf": [
            {"type": "null"},
            obj(
                {
                    "target": {"type": "number"},
                    "met": {"type": ["boolean", "null"], "description": "So far, in the current month."},
                    "error_budget_minutes": MINUTES,
                    "error_budget_left_minutes": {"type": "number", "description": "Negative: overspent."},
                }
            ),
        ]
    },
}
MONTH: Schema = {"type": "string", "pattern": r"^[0-9]{4}-[0-9]{2}$"}
REPORT_PERIOD: Schema = {
    "month": MONTH,
    "from": TIME,
    "to": {**TIME, "description": "The month's end, or the data's time in the current month."},
    "complete": {"type": "boolean"},
}
REPORT_LINKS = obj({"self": {"type": "string"}, "csv": {"type": "string"}, "page": {"type": "string"}})
REPORT = obj(
    {
        **REPORT_PERIOD,
        "as_of": TIME,
        "rules": obj(
            {
                k: {"type": "string"}
                for k in (
                    "period",
                    "unknown",
                    "down",
                    "degraded",
                    "maintenance",
                    "availability",
                    "excluded",
                    "sla",
                    "categories",
                )
            }
        ),
        "site": obj(FIGURES),
        "categories": {
            "type": "array",
            "items": obj(
                {
                    "category": {"type": "string"},
                    "name": {"type": "string"},
                    "services": INT,
                    "services_missed": {
                        **INT,
                        "description": "Its services that missed their own target (so far, in the current month).",
                    },
                    **FIGURES,
                }
            ),
        },
        "services": {
            "type": "array",
            "items": obj(
                {"slug": {"type": "string"}, "name": {"type": "string"}, "category": {"type": "string"}, **FIGURES}
            ),
        },
        "links": REPORT_LINKS,
    },
    description="A month's report: the site, each category and each service, and the rules of its accounting.",
)
REPORTS = obj(
    {
        "as_of": OPT_TIME,
        "count": INT,
        "months": {
            "type": "array",
            "items": obj({**REPORT_PERIOD, "availability": OPT_NUM, "links": REPORT_LINKS}),
            "description": "Newest first: the months kept (site.report_months), the current one included.",
        },
    }
)
THIS_MONTH = obj(
    {**REPORT_PERIOD, **FIGURES, "links": REPORT_LINKS},
    description="The service's figures of the current month so far, as its report gives them.",
)
