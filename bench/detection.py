"""Seeded detection scenarios through the real decisions (vantage, state, merge, incidents).

Used by `make bench` (bench_detection.py prints the figures) and by
tests/test_detection.py (asserts them). No I/O: results are synthesized.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from statusgen.config import CheckConfig, Config, ServiceConfig, SiteConfig
from statusgen.decide.incidents import Incident
from statusgen.decide.run import decide_cycle
from statusgen.decide.state import ServiceState
from statusgen.decide.vantage import judge_vantage
from statusgen.model import CheckResult, Outcome

T0 = datetime(2026, 1, 1, tzinfo=UTC)

# up(service index, cycle) -> does the check answer?
Behaviour = Callable[[int, int], bool]


@dataclass
class Tally:
    opened: dict[str, list[int]] = field(default_factory=dict)  # incident id -> [cycle opened, cycle resolved?]
    suspect_cycles: list[int] = field(default_factory=list)
    collection_notes: list[str] = field(default_factory=list)

    @property
    def incidents(self) -> int:
        return len(self.opened)


def config(services: int, canaries: int = 0) -> Config:
    svcs = tuple(
        ServiceConfig(f"s{i}", f"Service {i}", "c", (CheckConfig(f"https://s{i}.example/"),)) for i in range(services)
    )
    return Config(
        path=None,
        site=SiteConfig(),
        categories={"c": "C"},
        services=svcs,  # type: ignore[arg-type]
        canaries=tuple(CheckConfig(f"https://canary{i}.example/") for i in range(canaries)),
    )


def simulate(cfg: Config, cycles: int, up: Behaviour, canary_up: Callable[[int], bool] = lambda c: True) -> Tally:
    states: dict[str, ServiceState] = {}
    open_: dict[str, Incident] = {}
    out = Tally()
    for c in range(cycles):
        at = T0 + timedelta(minutes=c)
        results = [
            CheckResult(
                s.slug,
                0,
                at,
                Outcome.OK if up(i, c) else Outcome.TIMEOUT,
                40.0 if up(i, c) else None,
                200 if up(i, c) else None,
                False,
            )
            for i, s in enumerate(cfg.services)
        ]
        canaries = [
            CheckResult("", i, at, Outcome.OK if canary_up(c) else Outcome.CONNECT, None, None, False)
            for i in range(len(cfg.canaries))
        ]
        vantage = judge_vantage(results, canaries, cfg.site)
        if vantage.suspect:
            out.suspect_cycles.append(c)
            out.collection_notes.append(vantage.reason or "")
        d = decide_cycle(cfg, states, open_, results, at, None, vantage)
        states = d.states
        for inc in d.incidents:
            out.opened.setdefault(inc.id, [c, -1])
            if inc.open:
                open_[inc.service] = inc
            else:
                out.opened[inc.id][1] = c
                open_.pop(inc.service, None)
    return out


def isolated_failures(seed: int = 7, services: int = 20, cycles: int = 1000, rate: float = 0.02) -> Tally:
    rng = random.Random(seed)
    table = [[rng.random() >= rate for _ in range(cycles)] for _ in range(services)]
    return simulate(config(services), cycles, lambda i, c: table[i][c])


def hard_outage(start: int = 100, end: int = 160, services: int = 10) -> Tally:
    return simulate(config(services), 200, lambda i, c: not (i == 0 and start <= c < end))


def network_down(start: int = 50, end: int = 70, services: int = 20, canaries: int = 2) -> Tally:
    down = range(start, end)
    return simulate(config(services, canaries), 100, lambda i, c: c not in down, lambda c: c not in down)


def flapping(cycles: int = 60, services: int = 10) -> Tally:
    return simulate(config(services), cycles + 10, lambda i, c: not (i == 0 and 5 <= c < 5 + cycles and c % 2))
