"""The JSON error bodies, written into the tree so every server answers alike.

Shape: {"error": {"status": 400, "code": "invalid_parameter", "message": "...",
"parameter": "range", "allowed": ["24h", ...]}}; ``parameter`` and ``allowed``
only where they help.
"""

from __future__ import annotations

from typing import Any

from statusgen import routes
from statusgen.config import Config
from statusgen.model import RANGES, STATUSES
from statusgen.policy import RATE_PER_MINUTE


def error_body(status: int, code: str, message: str, **extra: Any) -> dict[str, Any]:
    return {"error": {"status": status, "code": code, "message": message, **extra}}


def _invalid(parameter: str, allowed: list[str], what: str) -> dict[str, Any]:
    return error_body(
        400,
        "invalid_parameter",
        f"Invalid value for '{parameter}': it must be {what}: {', '.join(allowed)}.",
        parameter=parameter,
        allowed=allowed,
    )


def error_documents(config: Config) -> dict[str, Any]:
    cats = list(config.categories)
    return {
        routes.error_file("400-category"): _invalid("category", cats, "one of the declared categories"),
        routes.error_file("400-status"): _invalid("status", list(STATUSES), "one of the statuses"),
        routes.error_file("400-range"): _invalid("range", list(RANGES), "one of the history ranges"),
        routes.error_file("400-active"): _invalid(
            "active", list(routes.ACTIVE_VALUES), "1 (open incidents only) or 0 (closed only)"
        ),
        routes.error_file("404"): error_body(
            404, "not_found", "No resource at this path. The endpoints are described in /api/v1/openapi.json."
        ),
        routes.error_file("404-service"): error_body(
            404, "unknown_service", "No service has this slug. The list of services is at /api/v1/services."
        ),
        routes.error_file("405"): error_body(
            405, "method_not_allowed", "This API is read-only: only GET and HEAD are allowed.", allowed=["GET", "HEAD"]
        ),
        routes.error_file("429"): error_body(
            429,
            "rate_limited",
            f"More than {RATE_PER_MINUTE} requests in a minute from your address. Wait for the "
            f"number of seconds in Retry-After. For a higher limit, contact {config.site.contact}.",
        ),
    }
