"""``statusgen locations``: each location's last batch taken, its lag and age, and the last one
refused, as the store remembers them."""

from __future__ import annotations

from collections.abc import Iterator

from statusgen.config import Config
from statusgen.store import Store
from statusgen.timeutil import human_duration, iso, utcnow


def locations_lines(config: Config) -> Iterator[str]:
    now = utcnow()
    if not config.site.store.exists():
        yield f"{config.site.location} (this host): no store yet at {config.site.store}"
        return
    store = Store.reader(config.site.store)
    try:
        last_run, batches, refusals = store.last_finished_run(), store.last_batches(), store.last_refusals()
    finally:
        store.close()
    ran = f"last run {iso(last_run.finished_at)}" if last_run and last_run.finished_at else "no run yet"
    yield f"{config.site.location} (this host): {ran}"
    for loc in config.locations:
        taken, refused = batches.get(loc.name), refusals.get(loc.name)
        if taken is None:
            said = "no batch taken yet"
        else:
            lag, age = human_duration(taken.received_at - taken.sent_at), human_duration(now - taken.sent_at)
            said = f"last batch sent {iso(taken.sent_at)} ({age} ago), taken {lag} after, {taken.results} results"
        if refused is not None:
            said += f"; last refused {iso(refused.received_at)}: {refused.refused}"
        yield f"{loc.name}: {said}"
