"""Decision: merge our own checks with what the vendor says. Pure.

Inputs: the service's own state, decided from our counted results alone
(``state.decide``, never fed the published state back), and a
``VendorObservation`` (the last good view, the outcome of this cycle's fetch,
and when a fetch last succeeded). The rules:

1. No usable vendor view (none configured, never read, or stale): our own
   checks alone; a failing or stale source adds a note to the reason.
2. Vendor maintenance in progress: ``maintenance``; our results count toward
   nothing then (``decide/run.py`` flags them) and open no incident.
3. Our checks fail while the vendor says operational: we report what we see,
   and the reason says the vendor has not acknowledged it.
4. The vendor reports trouble while our checks pass: the status follows the
   vendor's impact, the reason quotes the vendor; no incident of ours opens
   (we have not confirmed it).
5. Both agree (both fine, or both in trouble): the worse of the two; the
   reason gives both.
6. A service with no checks of its own (or paused) follows the vendor's
   status; no incident of ours opens from the vendor's word alone.

Our incidents follow ``incident_basis``, which only our own state sets: the
merge never changes it. A view is stale when our last successful fetch is
older than the source's ``stale_after`` (a quiet vendor page may go months
without an update of its own): it is set aside, with a note.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from statusgen.config import ServiceConfig
from statusgen.decide.state import ServiceState
from statusgen.i18n import SENTENCES, Said, said, said_plural, said_time
from statusgen.model import BAD, DESCRIPTIONS, STATUS_WORDS, Outcome, Status
from statusgen.vendors import VendorView
from statusgen.vendors.model import VendorObservation

ORDER = (Status.OPERATIONAL, Status.MAINTENANCE, Status.DEGRADED, Status.PARTIAL_OUTAGE, Status.MAJOR_OUTAGE)


def worse(a: Status, b: Status) -> Status:
    return max(a, b, key=ORDER.index) if a in ORDER and b in ORDER else (a if b is Status.UNKNOWN else b)


def vendor_says(view: VendorView) -> Said:
    """'Vendor reports: Elevated error rates (partial outage, identified)' and the like (the
    vendor's own words as written)."""
    if view.maintenance_active:
        return said("Vendor reports maintenance in progress: %(title)s", title=view.maintenance_active[0].title)
    if view.incidents:
        inc = max(view.incidents, key=lambda i: ORDER.index(Status(i.impact)) if i.impact in ORDER else 0)
        impact = said(STATUS_WORDS[Status(inc.impact)] if inc.impact in ORDER else "no visible impact")
        told = {"title": inc.title, "impact": impact, "status": inc.status}
        if len(view.incidents) > 1:
            more = len(view.incidents) - 1
            return said_plural(
                "Vendor reports: %(title)s (%(impact)s, %(status)s) and %(more)s more",
                "Vendor reports: %(title)s (%(impact)s, %(status)s) and %(more)s more",
                more,
                more=more,
                **told,
            )
        return said("Vendor reports: %(title)s (%(impact)s, %(status)s)", **told)
    status = Status(view.status) if view.status in Status.__members__.values() else Status.UNKNOWN
    if status is Status.OPERATIONAL:
        return said("Vendor reports all systems operational")
    words = said(STATUS_WORDS[status])
    if view.description:
        return said("Vendor reports %(status)s: %(description)s", status=words, description=view.description)
    return said("Vendor reports %(status)s", status=words)


def _note(obs: VendorObservation, stale: bool) -> Said | None:
    if obs.outcome is not Outcome.OK:
        what = obs.detail if obs.outcome is Outcome.PARSE and obs.detail else said(DESCRIPTIONS[obs.outcome])
        if obs.view is None or obs.last_ok_at is None:  # never read: there is no view to be too old
            return said("The vendor status page has never been read: %(what)s.", what=what)
        since = said_time(obs.last_ok_at)
        if stale:
            return said(
                "The vendor status page could not be read since %(since)s: %(what)s; its last view is too old "
                "and is set aside.",
                since=since,
                what=what,
            )
        return said(
            "The vendor status page could not be read since %(since)s: %(what)s; its last view is used.",
            since=since,
            what=what,
        )
    return said("The vendor's view is too old and is set aside.") if stale else None


def _then(*parts: Said | str | None) -> Said:
    """Sentences one after another, those there are."""
    return Said.joined(SENTENCES, [p for p in parts if p is not None])


def _since(prev: ServiceState, status: Status, candidate: datetime | None, now: datetime) -> datetime:
    if prev.status is status and prev.since:
        return prev.since
    return candidate or now


def usable_view(obs: VendorObservation | None, svc: ServiceConfig, now: datetime) -> VendorView | None:
    """The vendor's view the merge may use: read at least once, and not stale."""
    if obs is None or svc.vendor is None or obs.stale(now, svc.vendor.stale_after):
        return None
    return obs.view


def view_status(view: VendorView) -> Status:
    return Status(view.status) if view.status in Status.__members__.values() else Status.UNKNOWN


def merge(
    prev: ServiceState, own: ServiceState, svc: ServiceConfig, obs: VendorObservation | None, now: datetime
) -> ServiceState:
    """The published state: ``own`` (our checks, just decided) merged with the vendor's view."""
    if obs is None or svc.vendor is None:
        return own
    note = _note(obs, obs.stale(now, svc.vendor.stale_after))
    view = usable_view(obs, svc, now)
    if view is None:
        return replace(own, reason=_then(own.reason, note))
    vstatus = view_status(view)
    says = vendor_says(view)
    if not svc.checks or svc.paused:
        return replace(
            own,
            status=vstatus,
            since=_since(prev, vstatus, _vendor_start(view), now),
            reason=_then(said("%(vendor)s.", vendor=says), note),
            sources=("vendor",),
        )
    sources = ("checks", "vendor")
    if vstatus is Status.MAINTENANCE:
        failing = any(e.outcome != Outcome.OK.value for e in own.evidence)
        expected = said("Our checks fail, as expected during maintenance.") if failing else None
        return replace(
            own,
            status=Status.MAINTENANCE,
            since=_since(prev, Status.MAINTENANCE, _vendor_start(view), now),
            reason=_then(said("%(vendor)s.", vendor=says), expected, note),
            sources=sources,
        )
    if own.status in BAD and vstatus is Status.OPERATIONAL:
        unacknowledged = said("The vendor has not acknowledged a problem.")
        return replace(own, reason=_then(own.reason, unacknowledged, note), sources=sources)
    if vstatus in BAD and own.status not in BAD:
        if own.status is Status.MAINTENANCE:
            return replace(own, reason=_then(own.reason, said("%(vendor)s.", vendor=says), note), sources=sources)
        passing = own.status is Status.OPERATIONAL and all(e.counted for e in own.evidence)
        told = (
            said("%(vendor)s; our checks pass.", vendor=says)
            if passing
            else _then(said("%(vendor)s.", vendor=says), own.reason)
        )
        return replace(
            own,
            status=vstatus,
            since=_since(prev, vstatus, _vendor_start(view), now),
            reason=_then(told, note),
            sources=sources,
        )
    status = worse(own.status, vstatus)
    vendor = None if vstatus is Status.OPERATIONAL else said("%(vendor)s.", vendor=says)
    since = own.since if status is own.status else _since(prev, status, _vendor_start(view), now)
    return replace(own, status=status, since=since, reason=_then(own.reason, vendor, note), sources=sources)


def _vendor_start(view: VendorView) -> datetime | None:
    starts = [i.started_at for i in view.incidents if i.started_at] + [
        m.starts_at for m in view.maintenance_active if m.starts_at
    ]
    return min(starts) if starts else None
