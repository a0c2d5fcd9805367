"""Other tools' formats, mapped from our documents (docs/integrations.md).

statuspage         Atlassian Statuspage's public v2 API, as documents
statuspage_shapes  their shapes (JSON Schema)
statuspage_openapi their OpenAPI document
metrics            ``/metrics``: Prometheus' text exposition format
calendar           the maintenance calendars (iCalendar, RFC 5545)
feeds              the Atom feeds of incidents (RFC 4287)
badges             a badge per service: shields.io's endpoint JSON and an SVG
"""
