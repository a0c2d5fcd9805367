"""The JSON API (``/api/v1``), for programs and the people who read it (docs/api.md).

documents       every JSON document, as pure functions of ``SiteData``
shapes          the one definition of every document's shape (JSON Schema)
schema_base     the shapes' building blocks
location_shapes the locations that probe, as health tells them
report_shapes   the monthly reports' shapes
openapi         the OpenAPI 3.1 document made from the shapes, and its helpers
errorbodies     the JSON error bodies every server answers with
"""
