"""Decision: what the operator's files (``operatorfiles``) make of incidents and statuses. Pure.

* A **note** becomes an update of kind ``note`` of its incident, its ``ref`` the note's file:
  appended after the updates the incident has (a new note is news, told in the order it comes,
  and the notifications number an incident's updates by their place), so the incident's
  ``updated_at`` moves to it. Editing the file edits the update in place; removing the file
  removes it: the folder, kept in git, is the record of the operator's words.
* A **manual incident** is an ``Incident`` like ours: the text before its first heading (or its
  title) opens it, each later update is a note, ``resolved`` closes it. Its id follows its file's
  name, so it stays put while its times are corrected.
* While a manual incident is open, its service is at least as bad as the operator says: its
  status is the operator's when that is worse than what our checks and the vendor found (a
  service our checks cannot see is otherwise unknown or operational), never better.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from datetime import datetime

from statusgen.config.operatorfiles import ManualIncident, OperatorNote
from statusgen.decide.incidents import SEVERITY, Incident, IncidentUpdate
from statusgen.decide.state import ServiceState
from statusgen.i18n import said
from statusgen.model import BAD, Status

RESOLVED_MESSAGE = said("Resolved.")
WORSE = (Status.DEGRADED, Status.PARTIAL_OUTAGE, Status.MAJOR_OUTAGE)  # least bad first


def with_notes(incident: Incident, notes: Iterable[OperatorNote]) -> Incident:
    """The incident with exactly these notes among its updates (``notes``: those on it, oldest first)."""
    files = {n.file: n for n in notes}
    kept: list[IncidentUpdate] = []
    for u in incident.updates:
        if u.kind != "note" or u.ref is None:
            kept.append(u)
        elif u.ref in files:  # the file may have been edited: the update follows it
            kept.append(note_update(files.pop(u.ref), u.status))
    status = kept[-1].status if kept else Status.UNKNOWN.value
    kept += [note_update(n, status) for n in files.values()]
    updates = tuple(kept)
    return incident if updates == incident.updates else replace(incident, updates=updates)


def note_update(note: OperatorNote, status: str) -> IncidentUpdate:
    """A note as an update: the status the incident reported when it was written."""
    return IncidentUpdate(note.at, "note", status, note.message, None, note.file)


def manual_incident(m: ManualIncident, service_name: str) -> Incident:
    """The incident a manual incident's file records."""
    opens = bool(m.updates) and m.updates[0].at == m.started  # text before the first heading
    opening, rest = (m.updates[0].message, m.updates[1:]) if opens else (m.title, m.updates)
    updates = [IncidentUpdate(m.started, "opened", m.status, opening)]
    updates += [IncidentUpdate(u.at, "note", m.status, u.message) for u in rest]
    if m.resolved is not None:
        last = updates[-1]
        if len(updates) > 1 and last.at == m.resolved:  # the last words are the resolution's
            updates[-1] = replace(last, kind="resolved", status=Status.OPERATIONAL.value)
        else:
            updates.append(IncidentUpdate(m.resolved, "resolved", Status.OPERATIONAL.value, RESOLVED_MESSAGE))
    return Incident(
        m.id,
        m.service,
        f"{service_name}: {m.title}",
        SEVERITY[Status(m.status)],
        m.started,
        m.resolved,
        tuple(updates),
    )


def operator_state(state: ServiceState, incidents: Iterable[ManualIncident], now: datetime) -> ServiceState:
    """The service's state once the open manual incidents about it (``incidents``) are counted."""
    open_now = [m for m in incidents if m.resolved is None and m.started <= now]
    if not open_now:
        return state
    worst = max(open_now, key=lambda m: WORSE.index(Status(m.status)))
    status = Status(worst.status)
    if state.status in BAD and WORSE.index(state.status) >= WORSE.index(status):
        return state
    return replace(
        state,
        status=status,
        since=worst.started if state.status is not status else state.since,
        reason=said("Reported by the operator: %(title)s.", title=worst.title),
        sources=(*[s for s in state.sources if s != "operator"], "operator"),
    )
