"""The generic webhook's body, as JSON Schema: docs/notify-webhook.schema.json is this, written by
``python -m statusgen.notify.shape`` (a test keeps the file current). The incident inside an event
is the API's incident document, described once in ``render.api.shapes``."""

from __future__ import annotations

from typing import Any

import orjson

from statusgen.config import NOTIFY_EVENTS
from statusgen.model import SEVERITIES, STATUSES
from statusgen.notify.messages import WEBHOOK_VERSION
from statusgen.render.api.shapes import INCIDENT, obj

TEXT = {"type": "string"}
OPTIONAL_TEXT = {"type": ["string", "null"]}
TIME = {"type": "string", "format": "date-time", "pattern": "Z$"}
OPTIONAL_TIME = {"type": ["string", "null"], "format": "date-time"}

EVENT = obj(
    {
        "id": {**TEXT, "description": "Names the event for good: the same event is never sent twice with one id."},
        "kind": {"type": "string", "enum": list(NOTIFY_EVENTS)},
        "service": {**TEXT, "description": "The service's slug."},
        "service_name": TEXT,
        "at": {**TIME, "description": "When it happened."},
        "status": {"type": "string", "enum": list(STATUSES), "description": "The service status it reports."},
        "severity": {
            "type": ["string", "null"],
            "enum": [*SEVERITIES, None],
            "description": "An incident's worst severity so far, or the vendor's impact; null for maintenance.",
        },
        "title": TEXT,
        "message": {**TEXT, "description": "The reason in public words, the operator's note, the vendor's title."},
        "since": {**OPTIONAL_TIME, "description": "When the incident or the window began."},
        "link": {**OPTIONAL_TEXT, "description": "The incident on the site, the vendor's page, or the service page."},
        "incident": {
            "oneOf": [{"type": "null"}, INCIDENT],
            "description": "Our incident's document as /api/v1/incidents/{service}/{id} published it then; "
            "null for vendor incidents and maintenance.",
        },
    }
)


def webhook_schema() -> dict[str, Any]:
    body = obj(
        {
            "version": {"const": WEBHOOK_VERSION, "description": "Changes only when a field changes meaning or goes."},
            "kind": {"type": "string", "enum": ["event", "digest", "test"]},
            "sent_at": TIME,
            "site": obj({"title": TEXT, "url": TEXT}),
            "title": TEXT,
            "markdown": {**TEXT, "description": "The message as a person reads it, in Markdown."},
            "events": {"type": "array", "items": EVENT, "description": "One for an event, several for a digest."},
        },
        description="The body statusgen POSTs to a statusgen:// (statusgens://) notifier.",
    )
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "statusgen webhook", **body}


if __name__ == "__main__":
    print(orjson.dumps(webhook_schema(), option=orjson.OPT_INDENT_2).decode())
