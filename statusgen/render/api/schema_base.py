"""The building blocks of the JSON shapes (``shapes``, ``report_shapes``): JSON Schema 2020-12."""

from __future__ import annotations

from typing import Any

from statusgen.model import STATUSES

Schema = dict[str, Any]

TIME: Schema = {"type": "string", "format": "date-time", "pattern": r"Z$"}
OPT_TIME: Schema = {"type": ["string", "null"], "format": "date-time"}
STATUS: Schema = {"type": "string", "enum": list(STATUSES)}
OPT_NUM: Schema = {"type": ["number", "null"]}
OPT_STR: Schema = {"type": ["string", "null"]}
INT: Schema = {"type": "integer", "minimum": 0}


def ref(name: str) -> Schema:
    return {"$ref": f"#/components/schemas/{name}"}


def obj(required: dict[str, Schema], **more: Any) -> Schema:
    return {"type": "object", "required": list(required), "properties": required, **more}


#: When a document of the present is out of date: a reader past this time should not take it as current
#: (the job that writes the site has stopped, or runs late). Null when the document holds no data yet.
STALE_AFTER: Schema = {**OPT_TIME, "description": "as_of plus site.stale_after (three intervals by default)."}
