"""Decide: what several locations saw of a service, judged by a quorum (pure; docs/locations.md).

Each location with fresh results counts once: this host by this cycle's results, an agent by
its latest result of each check (the caller passes fresh ones only: a location without any is
set aside). A location sees the service failing when one of its latest results failed. The
service is failing when at least ``quorum`` locations see it so (by default a majority of the
locations with fresh results); a failure seen from fewer is labelled with where, and at most
degrades the service (``site.minority_failure``): it never makes an outage nor an incident.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from statusgen.decide.state import ServiceState
from statusgen.i18n import SENTENCES, Said, said_list, said_plural
from statusgen.model import CheckResult, Status


@dataclass(frozen=True)
class Seen:
    """What the locations with fresh results saw of one service this cycle."""

    fresh: tuple[str, ...]
    failing: tuple[str, ...]
    quorum: int
    latest: Mapping[str, tuple[CheckResult, ...]]  # each location's latest result of each check

    @property
    def outage(self) -> bool:
        """Enough locations see it failing to count it as failing."""
        return bool(self.failing) and len(self.failing) >= self.quorum

    @property
    def minority(self) -> bool:
        """Some location sees it failing, fewer than the quorum."""
        return bool(self.failing) and not self.outage

    def words(self) -> Said:
        """Where it fails, as it reads for any quorum and any count: "Failing from 3 of 4 locations:
        eu-west, us-east and ap-south.", "Failing from ap-south, fewer than the 2 locations needed
        to count it; the other 2 see it up." """
        where = said_list(list(self.failing))
        if self.outage:
            return said_plural(
                "Failing from %(failing)s of %(fresh)s location: %(where)s.",
                "Failing from %(failing)s of %(fresh)s locations: %(where)s.",
                len(self.fresh),
                failing=len(self.failing),
                fresh=len(self.fresh),
                where=where,
            )
        up = len(self.fresh) - len(self.failing)
        return said_plural(
            "Failing from %(where)s, fewer than the %(quorum)s locations needed to count it; the other "
            "location sees it up.",
            "Failing from %(where)s, fewer than the %(quorum)s locations needed to count it; the other "
            "%(up)s see it up.",
            up,
            where=where,
            quorum=self.quorum,
            up=up,
        )


def _latest(results: Sequence[CheckResult]) -> tuple[CheckResult, ...]:
    newest: dict[int, CheckResult] = {}
    for r in results:
        if r.check_index not in newest or r.ts >= newest[r.check_index].ts:
            newest[r.check_index] = r
    return tuple(newest[i] for i in sorted(newest))


def seen_by(
    here: str, mine: Sequence[CheckResult], elsewhere: Mapping[str, Sequence[CheckResult]], quorum: int | None
) -> Seen:
    """``mine``: this host's results of the service this cycle; ``elsewhere``: each other
    location's fresh results of it; ``quorum``: the configured one, else a majority."""
    latest = {here: _latest(mine)} if mine else {}
    latest |= {loc: _latest(rs) for loc, rs in elsewhere.items() if rs}
    failing = tuple(loc for loc, rs in latest.items() if any(not r.up for r in rs))
    need = quorum if quorum is not None else len(latest) // 2 + 1
    return Seen(tuple(latest), failing, need, latest)


def counted_from_elsewhere(seen: Seen, here: str) -> list[CheckResult]:
    """The other locations' results counted with this host's, so that the state follows the
    quorum: when it sees the service failing, the failed results of those that see it so; when
    it does not and this host does (its results then set aside), the results of those that see
    it up."""
    if seen.outage:
        chosen = [loc for loc in seen.failing if loc != here]
        return [replace(r, location=loc) for loc in chosen for r in seen.latest[loc] if not r.up]
    if seen.minority and here in seen.failing:
        chosen = [loc for loc in seen.fresh if loc not in seen.failing]
        return [replace(r, location=loc) for loc in chosen for r in seen.latest[loc]]
    return []


def labelled(state: ServiceState, prev: ServiceState, seen: Seen, degrade: bool, now: datetime) -> ServiceState:
    """The published state, saying which locations see the service failing. A minority's failure
    degrades an operational service (``degrade``), without touching what incidents follow
    (``incident_basis``): it never opens one."""
    if not seen.failing:
        return state
    told = replace(state, reason=Said.joined(SENTENCES, [state.reason, seen.words()]))
    if seen.minority and degrade and state.status is Status.OPERATIONAL:
        since = prev.since if prev.status is Status.DEGRADED and prev.since else now
        return replace(told, status=Status.DEGRADED, since=since)
    return told
