"""Our own checks: every HTTP check of a run, concurrently, with httpx.

    targets(config)            every check of the configuration, as a ``CheckTarget``
    probe_all(config, todo)    run them; a ``CheckResult`` per check, in order
    probe_run(...)             the same, with how late the event loop was (``ProbeRun``)

``check`` makes and judges one check; ``run`` spreads a run's starts and
keeps its timing honest.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from datetime import datetime

from statusgen.config import Config
from statusgen.model import CheckId, CheckResult
from statusgen.neterrors import Network, RedirectGuard
from statusgen.probe.check import CheckTarget
from statusgen.probe.run import Confirm, ProbeRun, probe_run, start_order
from statusgen.timeutil import utcnow

__all__ = ["CheckTarget", "Confirm", "ProbeRun", "probe_all", "probe_run", "start_order", "targets"]


def targets(config: Config) -> list[CheckTarget]:
    return [CheckTarget(s.slug, i, c) for s in config.services for i, c in enumerate(s.checks)]


async def probe_all(
    config: Config,
    todo: Sequence[CheckTarget] | None = None,
    clock: Callable[[], datetime] = utcnow,
    spread_s: float = 0.0,
    first: Collection[CheckId] = frozenset(),
    internal: Collection[Network] | None = None,
    source: str | None = None,
    confirm: Confirm | None = None,
) -> list[CheckResult]:
    """Run ``todo`` (by default every check of the configuration), at most ``site.concurrency`` at a
    time, their starts spread over ``spread_s`` seconds with those in ``first`` first; the results
    in the checks' order. A redirect from a public address to an internal one is refused unless
    ``site.allow_private_targets``; ``internal`` names the internal networks instead of every
    address that is not globally routable (``neterrors.is_public``). A check whose first result
    ``confirm`` wants confirmed is tried again within the run: its tries follow it, in order."""
    todo = targets(config) if todo is None else todo
    guard = RedirectGuard(config.site.allow_private_targets, internal)
    site = config.site
    run = await probe_run(todo, site.user_agent, site.concurrency, clock, spread_s, first, guard, source, confirm)
    return run.results
