"""Decision: is our own vantage point at fault? Pure.

statusgen checks from one host, so that host is a suspect too. A cycle is
suspect when every canary (a few very reliable targets from the
configuration) fails, or when more than ``mass_failure_ratio`` of the checks
fail at once (with at least ``mass_failure_min_checks`` checks). Then the
failed results are set aside (flagged ``excluded``, left out of
availability), they count toward no incident, and the collection state is
``degraded`` with this reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from statusgen.config import SiteConfig
from statusgen.i18n import said, said_list
from statusgen.model import CheckResult


@dataclass(frozen=True)
class Vantage:
    suspect: bool
    reason: str | None
    canaries_attempted: int = 0
    canaries_failed: int = 0


def judge_vantage(results: Sequence[CheckResult], canaries: Sequence[CheckResult], site: SiteConfig) -> Vantage:
    failed = sum(1 for r in results if not r.up)
    canaries_failed = sum(1 for r in canaries if not r.up)
    all_canaries = bool(canaries) and canaries_failed == len(canaries)
    mass = len(results) >= site.mass_failure_min_checks and failed > site.mass_failure_ratio * len(results)
    if not (all_canaries or mass):
        return Vantage(False, None, len(canaries), canaries_failed)
    why = []
    if mass:
        why.append(said("%(failed)s of %(checks)s checks failed at once", failed=failed, checks=len(results)))
    if all_canaries:
        why.append(said("all %(canaries)s canary checks failed", canaries=len(canaries)))
    reason = said(
        "Our own vantage point looks at fault: %(why)s. %(failed)s failed results were set aside and no incident "
        "was opened for them.",
        why=said_list(why),
        failed=failed,
    )
    return Vantage(True, reason, len(canaries), canaries_failed)
