"""Decide: which checks are tried again within a run, and how a run's tries are read. Pure.

A check that fails while its service is not in an outage, or answers while it is in one, is
tried again within the run (``confirm`` more times, ``confirm_every`` apart, until a try says
otherwise: ``probe.run``). Each round of tries counts as a cycle of the state machine
(``decide.state``), so the failures an outage needs (or the good answers a recovery needs) are
seen within the run that saw the first one; a blip the next try contradicts breaks the streak as
a good cycle would. History keeps each check's last try of the run: what the run concluded.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from statusgen.decide.state import ServiceState
from statusgen.model import OUTAGES, CheckResult, Status


def worth_confirming(states: Mapping[str, ServiceState]) -> Callable[[CheckResult], bool]:
    """Whether a first result changes what its service's state says, given the states before the
    run: a failure where there is no outage, an answer where there is one (canaries never)."""

    def wanted(result: CheckResult) -> bool:
        state = states.get(result.service)
        if not result.service or (state is not None and state.own_status is Status.MAINTENANCE):
            return False
        in_outage = state is not None and state.own_status in OUTAGES
        return result.up == in_outage

    return wanted


def _by_check(results: Sequence[CheckResult]) -> dict[tuple[str, int], list[CheckResult]]:
    tries: dict[tuple[str, int], list[CheckResult]] = {}
    for r in results:  # each check's tries in the order they were made
        tries.setdefault((r.service, r.check_index), []).append(r)
    return tries


@dataclass(frozen=True)
class Round:
    """One round of a service's tries within a run: when its new tries were made (the first
    round's, when the run began), and each check's latest result as of then."""

    at: datetime
    results: list[CheckResult]


def rounds(results: Sequence[CheckResult]) -> list[Round]:
    """One service's run as the cycles its tries make: the k-th holds each check's k-th try, or its
    last before (a check tried fewer times stands as it was), as of its new tries' time. A run of
    one try each is one round."""
    tries = list(_by_check(results).values())
    out = []
    for k in range(max((len(t) for t in tries), default=0)):
        made = [t[k] for t in tries if len(t) > k]
        out.append(Round(min(r.ts for r in made), [t[min(k, len(t) - 1)] for t in tries]))
    return out


def first_tries(results: Sequence[CheckResult]) -> list[CheckResult]:
    """Each check's first try: the run as every check saw it at once (the vantage point's judge)."""
    return [t[0] for t in _by_check(results).values()]


def last_tries(results: Sequence[CheckResult]) -> list[CheckResult]:
    """Each check's last try: what the run concluded, as history keeps it."""
    return [t[-1] for t in _by_check(results).values()]
