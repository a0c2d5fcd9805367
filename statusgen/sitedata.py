"""Gather: everything a build needs, read from the store in one place.

``gather`` is the only I/O of a build before the write; the documents,
feeds and pages are pure functions of the ``SiteData`` it returns.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from .config import Config, ServiceConfig
from .health import RunRecord
from .history import RANGES, SUMMARY_RESOLUTION, Bucket
from .incidents import Incident
from .state import ServiceState
from .store import BucketRow, Store, VendorRow
from .timeutil import to_epoch


@dataclass(frozen=True)
class SiteData:
    config: Config
    now: datetime                                  # used only to judge staleness
    states: dict[str, ServiceState]
    incidents: list[Incident]                      # newest first
    last_run: RunRecord | None                     # the last finished run
    last_day: dict[str, tuple[int, str]]           # raw results of the last day, per service: count, JSON rows
    buckets: dict[str, dict[str, list[Bucket]]]    # range name -> service -> buckets (no histograms)
    latency_buckets: dict[int, dict[str, list[BucketRow]]]  # resolution -> service -> rows with histograms
    epoch: datetime                                # when this site first ran; dates the feed ids
    vendors: dict[str, VendorRow] = field(default_factory=dict)  # service -> its vendor source as stored

    def state(self, slug: str) -> ServiceState:
        return self.states.get(slug) or ServiceState()

    def incidents_of(self, slug: str) -> list[Incident]:
        return [i for i in self.incidents if i.service == slug]

    def service(self, slug: str) -> ServiceConfig:
        return self.config.by_slug[slug]


def data_time(data: SiteData) -> datetime:
    """The time the data holds as of: the last finished run, else the newest observation."""
    if data.last_run and data.last_run.finished_at:
        return data.last_run.finished_at
    observed = [s.observed_at for s in data.states.values() if s.observed_at]
    return max(observed) if observed else data.now


def _span(coarse: int) -> int:
    """The longest range whose summary reads buckets of resolution ``coarse``, in seconds."""
    return max(RANGES[name].resolution_s * RANGES[name].buckets
               for name, res in SUMMARY_RESOLUTION.items() if res == coarse)


def gather(store: Store, config: Config, now: datetime) -> SiteData:
    last_run = store.last_finished_run()
    anchor = last_run.finished_at if last_run and last_run.finished_at else now
    buckets = {name: store.bucket_tuples(r.resolution_s, to_epoch(anchor) - r.resolution_s * r.buckets)
               for name, r in RANGES.items()}
    latency_buckets = {res: store.buckets(res, to_epoch(anchor) - _span(res) - res)
                       for res in set(SUMMARY_RESOLUTION.values())}
    return SiteData(
        config=config, now=now, states=store.states(), incidents=store.incidents(), last_run=last_run,
        last_day=store.last_day_json(config.by_slug, anchor - timedelta(days=1)), buckets=buckets, latency_buckets=latency_buckets,
        epoch=store.first_run_started() or now, vendors=store.vendor_rows(),
    )
