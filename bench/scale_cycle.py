"""One normal cycle's writes for the scale bench: one new result per check, through the real store."""

from __future__ import annotations

from datetime import timedelta

from statusgen.config import Config
from statusgen.decide.health import RunRecord
from statusgen.decide.run import decide_cycle
from statusgen.model import CheckResult, Outcome
from statusgen.store import Cycle, Store


def add_one_result_each(store: Store, config: Config, step: timedelta = timedelta(minutes=1)) -> None:
    """A run ``step`` after the last one, with one good result for every check."""
    last = store.last_finished_run()
    assert last is not None and last.finished_at is not None
    at = last.finished_at + step
    results = [CheckResult(s.slug, 0, at, Outcome.OK, 42.0, 200, False) for s in config.services]
    d = decide_cycle(config, store.states(), store.open_incidents(), results, at)
    run = RunRecord(0, at, at + timedelta(seconds=2), len(results), 0)
    store.save_cycle(Cycle(run, d.results, d.states, d.incidents))
