"""Decision: the whole site's status in one word and one sentence. Pure.

The front page opens with the sentence and the snapshot and health documents
carry both: "All services are operating normally.", or how many services
have which problem, worst first.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from statusgen.model import Status

# Worst first: the order the sentence names problems in, and the overall status is the first found.
PROBLEMS = (Status.MAJOR_OUTAGE, Status.PARTIAL_OUTAGE, Status.DEGRADED, Status.MAINTENANCE)
# What a service "has" or "is", singular and plural.
PHRASES = {
    Status.MAJOR_OUTAGE: ("has a major outage", "have a major outage"),
    Status.PARTIAL_OUTAGE: ("has a partial outage", "have a partial outage"),
    Status.DEGRADED: ("has degraded performance", "have degraded performance"),
    Status.MAINTENANCE: ("is under maintenance", "are under maintenance"),
    Status.UNKNOWN: ("is not measured", "are not measured"),
}


@dataclass(frozen=True)
class Overall:
    status: Status
    summary: str


def overall(statuses: Iterable[Status]) -> Overall:
    """The worst status among the services (``unknown`` only when none is known) and its sentence."""
    counts = Counter(statuses)
    known = sum(n for s, n in counts.items() if s is not Status.UNKNOWN)
    unknown = counts[Status.UNKNOWN]
    if not known:
        return Overall(Status.UNKNOWN, "No service is measured yet." if unknown else "No services are configured.")
    worst = next((s for s in PROBLEMS if counts[s]), Status.OPERATIONAL)
    problems = [_count(counts[s], s) for s in PROBLEMS if counts[s]]
    fine = counts[Status.OPERATIONAL]
    if not problems:
        sentence = "All measured services are operating normally" if unknown else "All services are operating normally"
    else:
        sentence = _join(problems)
        if fine:
            others = "the other one is" if fine == 1 else f"the other {fine} are"
            sentence += f"; {others} operating normally"
    if unknown:
        sentence += f" ({_count(unknown, Status.UNKNOWN)})"
    return Overall(worst, sentence + ".")


def _count(n: int, status: Status) -> str:
    one, many = PHRASES[status]
    return f"1 service {one}" if n == 1 else f"{n} services {many}"


def _join(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
