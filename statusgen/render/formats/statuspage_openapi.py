"""Render: the OpenAPI 3.1 document of the Statuspage v2 documents (``statuspage_shapes.py``), a
second document since its shapes are Atlassian's and a client of one needs none of the other's
types."""

from __future__ import annotations

from typing import Any

from statusgen import routes
from statusgen.config import Config
from statusgen.i18n import N_
from statusgen.render.api.openapi import document, get_operation, json_answer
from statusgen.render.formats import statuspage_shapes

#: The Statuspage v2 documents: (operationId, summary), by their name in ``routes.STATUSPAGE_FILES``.
STATUSPAGE_OPERATIONS = {
    "summary": ("getSummary", N_("The page, its components, unresolved incidents and maintenance, and its status.")),
    "status": ("getStatus", N_("The page's status indicator and description.")),
    "components": ("listComponents", N_("Every component: each group (a category), then its components (services).")),
    "incidents": ("listIncidents", N_("The most recent incidents, resolved ones included, newest first.")),
    "unresolved": ("listUnresolvedIncidents", N_("The incidents not yet resolved.")),
    "maintenances": (
        "listScheduledMaintenances",
        N_("Scheduled maintenance: upcoming, in progress, lately completed."),
    ),
    "upcoming": ("listUpcomingScheduledMaintenances", N_("Scheduled maintenance not yet started.")),
    "active": ("listActiveScheduledMaintenances", N_("Scheduled maintenance in progress.")),
}


def statuspage_openapi_document(config: Config) -> dict[str, Any]:
    paths = {
        f"/{routes.STATUSPAGE_FILES[name]}": get_operation(
            operation, summary, json_answer(statuspage_shapes.DOCUMENTS[name], N_("The document.")), [], ()
        )
        for name, (operation, summary) in STATUSPAGE_OPERATIONS.items()
    }
    return document(
        config,
        "Statuspage v2 API",
        "Atlassian Statuspage's public v2 API, read side, for the tools that read it.",
        paths,
        statuspage_shapes.SCHEMAS,
    )
