"""Decision: the whole site's status in one word and one sentence. Pure.

The front page opens with the sentence and the snapshot and health documents
carry both (in the site's first language; each page says it in its own, from
the snapshot's counts): "All services are operating normally.", or how many services
have which problem, worst first.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from statusgen.i18n import Gettext, Ngettext, said_list, say
from statusgen.model import Status

# Worst first: the order the sentence names problems in, and the overall status is the first found.
PROBLEMS = (Status.MAJOR_OUTAGE, Status.PARTIAL_OUTAGE, Status.DEGRADED, Status.MAINTENANCE)


def _count(n: int, status: Status, ngettext: Ngettext) -> str:
    """How many services have a status, in words: each its own message, as each language's plural
    forms differ (one form in Japanese, three in some others)."""
    if status is Status.MAJOR_OUTAGE:
        said = ngettext("%(n)d service has a major outage", "%(n)d services have a major outage", n)
    elif status is Status.PARTIAL_OUTAGE:
        said = ngettext("%(n)d service has a partial outage", "%(n)d services have a partial outage", n)
    elif status is Status.DEGRADED:
        said = ngettext("%(n)d service has degraded performance", "%(n)d services have degraded performance", n)
    elif status is Status.MAINTENANCE:
        said = ngettext("%(n)d service is under maintenance", "%(n)d services are under maintenance", n)
    else:
        said = ngettext("%(n)d service is not measured", "%(n)d services are not measured", n)
    return said % {"n": n}


@dataclass(frozen=True)
class Overall:
    status: Status
    summary: str


def worst(counts: Mapping[Status, int]) -> Status:
    """The worst status among the services (``unknown`` only when none is known)."""
    if not any(n for s, n in counts.items() if s is not Status.UNKNOWN):
        return Status.UNKNOWN
    return next((s for s in PROBLEMS if counts.get(s)), Status.OPERATIONAL)


def summary(counts: Mapping[Status, int], gettext: Gettext = str, ngettext: Ngettext | None = None) -> str:
    """The site's status in one sentence, in the language of ``gettext``/``ngettext`` (English
    without them): "All services are operating normally.", or how many services have which
    problem, worst first."""
    ngettext = ngettext or _english
    known = sum(n for s, n in counts.items() if s is not Status.UNKNOWN)
    unknown = counts.get(Status.UNKNOWN, 0)
    if not known:
        return gettext("No service is measured yet.") if unknown else gettext("No services are configured.")
    problems = [_count(counts[s], s, ngettext) for s in PROBLEMS if counts.get(s)]
    fine = counts.get(Status.OPERATIONAL, 0)
    if not problems:
        if unknown:
            return gettext("All measured services are operating normally (%(unmeasured)s).") % {
                "unmeasured": _count(unknown, Status.UNKNOWN, ngettext)
            }
        return gettext("All services are operating normally.")
    said = say(said_list(problems), gettext, ngettext)
    if fine:
        said = ngettext(
            "%(problems)s; the other one is operating normally",
            "%(problems)s; the other %(n)d are operating normally",
            fine,
        ) % {"problems": said, "n": fine}
    if unknown:
        said = gettext("%(said)s (%(unmeasured)s)") % {
            "said": said,
            "unmeasured": _count(unknown, Status.UNKNOWN, ngettext),
        }
    return gettext("%(sentence)s.") % {"sentence": said}


def overall(statuses: Iterable[Status], gettext: Gettext = str, ngettext: Ngettext | None = None) -> Overall:
    """The worst status among the services and its sentence (``summary``)."""
    counts = Counter(statuses)
    return Overall(worst(counts), summary(counts, gettext, ngettext))


def _english(one: str, many: str, n: int) -> str:
    return one if n == 1 else many
