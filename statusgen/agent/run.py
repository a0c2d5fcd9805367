"""``statusgen probe --location NAME``: an agent's run. It needs the configuration and the key,
no store and no tree: it runs the checks (those that name no location, or name its own), signs
their results as one batch, and delivers it with those an earlier run could not, oldest first.
What cannot be delivered is kept in the outbox beside the configuration (``.outbox/NAME/``, the
batches' own names), at most ``OUTBOX_KEEP`` batches: past
that the oldest go, as the builder would refuse them as too old anyway."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from statusgen.batches import Batch, batch_name, encode
from statusgen.config import Config
from statusgen.errors import ConfigError
from statusgen.inbox import FolderInbox, InboxError, config_inbox, inbox_key
from statusgen.probe import probe_all, targets
from statusgen.probe.check import CheckTarget
from statusgen.timeutil import utcnow

OUTBOX_KEEP = 1440  # a day of batches at one run a minute


@dataclass(frozen=True)
class AgentRun:
    """What one run did: its checks, how many failed, the batches sent, those kept, those dropped."""

    location: str
    checks: int
    failed: int
    sent: tuple[str, ...]
    kept: int
    dropped: int
    error: str | None  # why the inbox could not take them

    def line(self) -> str:
        told = f"probe {self.location}: {self.checks} checks ({self.failed} failed); sent {len(self.sent)} batches"
        if self.kept:
            told += f"; {self.kept} kept to send later ({self.error})"
        if self.dropped:
            told += f"; {self.dropped} oldest dropped (more than {OUTBOX_KEEP} unsent)"
        return told


def outbox_of(config: Config) -> FolderInbox:
    """Where an agent keeps what it could not deliver (each batch's name begins with its location)."""
    return FolderInbox(config.path.parent / ".outbox")


def agent_run(
    config: Config, location: str, clock: Callable[[], datetime] = utcnow, source: str | None = None
) -> AgentRun:
    if location not in (loc.name for loc in config.locations):
        known = ", ".join(loc.name for loc in config.locations) or "none"
        raise ConfigError([f'{config.path.name}: no [[locations]] named "{location}"; declared: {known}'])
    key, inbox, outbox = inbox_key(config, location), config_inbox(config), outbox_of(config)
    todo = [t for t in targets(config) if not config.by_slug[t.service].paused and t.check.runs_at(location)]
    canaries = [CheckTarget("", i, c) for i, c in enumerate(config.canaries)]
    done = asyncio.run(probe_all(config, todo + canaries, clock, source=source))
    results, canary_results = done[: len(todo)], done[len(todo) :]
    sent_at = clock()
    batch = Batch(location, batch_name(location, sent_at), sent_at, tuple(results), tuple(canary_results))
    outbox.put(batch.name, encode(batch, key))
    waiting = [name for name in outbox.names() if name.startswith(location + "/")]
    dropped = waiting[:-OUTBOX_KEEP] if len(waiting) > OUTBOX_KEEP else []
    for name in dropped:
        outbox.remove(name)
    sent: list[str] = []
    error = None
    for name in waiting[len(dropped) :]:  # oldest first: the builder applies them in time order
        try:
            inbox.put(name, outbox.get(name))
        except InboxError as exc:
            error = str(exc)
            break
        outbox.remove(name)
        sent.append(name)
    failed = sum(1 for r in results if not r.up)
    kept = len(waiting) - len(dropped) - len(sent)
    return AgentRun(location, len(results), failed, tuple(sent), kept, len(dropped), error)
