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
from statusgen.policy import HEAD_BUFFERS, LINE_MAX_BYTES, RATE_PER_MINUTE


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
        # Requests a server refuses before reading their path (docs/deploy.md): their bodies for
        # the interface's addresses; a request line or path it cannot read at all is the 404's.
        routes.error_file("414"): error_body(
            414,
            "uri_too_long",
            f"The request line is longer than the {LINE_MAX_BYTES} bytes read: no address here is so long.",
        ),
        routes.error_file("431"): error_body(
            431,
            "headers_too_large",
            f"A header line is longer than {LINE_MAX_BYTES} bytes, or the request line and headers "
            f"more than {HEAD_BUFFERS} buffers of that size hold.",
        ),
        routes.error_file("505"): error_body(
            505, "http_version_not_supported", "Only HTTP/1.0 and HTTP/1.1 are spoken here."
        ),
        routes.error_file("429"): error_body(
            429,
            "rate_limited",
            f"More than {RATE_PER_MINUTE} requests in a minute from your address (or than the limit granted "
            f"to it). Wait for the number of seconds in Retry-After. No key raises the limit: for a higher "
            f"one, contact {config.site.contact}, saying what it is for and the addresses the requests come "
            f"from; the operator may grant those addresses a limit of their own.",
        ),
    }
