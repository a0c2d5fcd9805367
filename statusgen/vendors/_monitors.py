"""The headline of a page of monitors (Uptime Kuma, Upptime), as those pages word it.

Such pages have no status of their own: they sum up their monitors. Uptime
Kuma writes "Partially Degraded Service" while some monitors are not up,
"Degraded Service" when none is, and "Maintenance" while any monitor is in
maintenance. On our scale: some monitors down is a partial outage, all of
them down a major one, and monitors that are only slow or pending (none
down) leave the page degraded.
"""

from __future__ import annotations

from collections.abc import Iterable

from statusgen.vendors.model import SEVERITY, worst_status

ALL_UP = "All Systems Operational"
SOME_DOWN = "Partially Degraded Service"
ALL_DOWN = "Degraded Service"
MAINTENANCE = "Maintenance"
NO_MONITORS = "No Services"


def headline(statuses: Iterable[str]) -> tuple[str, str]:
    """The page's status on our scale and its words, from its monitors' current statuses."""
    seen = list(statuses)
    known = [s for s in seen if s in SEVERITY]
    if not seen:
        return "operational", NO_MONITORS
    if not known:
        return worst_status(seen), NO_MONITORS
    if "maintenance" in known:
        return "maintenance", MAINTENANCE
    words = SOME_DOWN if "operational" in known else ALL_DOWN
    if "major_outage" in known:
        return ("partial_outage" if "operational" in known else "major_outage"), words
    if any(s != "operational" for s in known):
        return worst_status(known), words
    return "operational", ALL_UP
