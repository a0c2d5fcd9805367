"""``statusgen probe --location NAME --loop``: an agent's run every ``site.interval`` seconds, with
the loop of ``statusgen run --loop`` (its configuration reloads, its signals, its log lines)."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from statusgen.agent.run import agent_run
from statusgen.config import Config
from statusgen.errors import StatusgenError
from statusgen.logs import event
from statusgen.loop import Loop


@dataclass
class AgentLoop(Loop):
    location: str = ""
    source: str | None = None

    def _attempt(self, config: Config) -> None:
        try:
            done = agent_run(config, self.location, source=self.source)
        except StatusgenError as exc:
            self.failures += 1
            event(f"probe failed: {exc}", logging.ERROR, error=str(exc))
            return
        event(done.line(), location=self.location, sent=len(done.sent), kept=done.kept, checks=done.checks)
        if done.error:
            self.failures += 1


def agent_loop(config: Config, location: str, source: str | None, max_runs: int | None) -> int:
    return AgentLoop(config.path, max_runs, location=location, source=source).run()
