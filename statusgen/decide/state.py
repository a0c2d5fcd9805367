"""Decision: a service's status and state from its own checks.

Pure functions with the clock passed in. ``decide`` takes the previous state
and one cycle's observation and returns the next state:

* a cycle is ``down`` (every check failed), ``partial`` (some failed), ``slow``
  (all answered, some above their latency threshold) or ``ok``;
* an outage is declared after ``failures_to_open`` failed cycles in a row
  (``major_outage`` when every check fails, else ``partial_outage``) and
  resolved after ``successes_to_resolve`` good cycles in a row;
* ``degraded`` (slow) needs ``failures_to_open`` slow cycles in a row and
  ``successes_to_resolve`` fast ones to clear: the same hysteresis;
* a good cycle whose TLS certificate expires within its check's
  ``cert_expiry_days`` is ``degraded`` at once, and clears as soon as it is
  renewed (``certs``): a date, not a measure that may be noise;
* before the first good cycle, or while failures have not yet reached the
  threshold on a never-measured service, the status is ``unknown``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum
from typing import Any
from urllib.parse import urlsplit

from statusgen.config import CheckConfig, ServiceConfig
from statusgen.decide import certs
from statusgen.i18n import CLAUSES, N_, SENTENCES, Said, said, said_list, said_plural, said_time
from statusgen.model import (
    DESCRIPTIONS,
    FLAG_WORDS,
    MAINTENANCE_FLAG,
    OUTAGES,
    STATUS_WORDS,
    Certificate,
    CheckResult,
    Outcome,
    Status,
)
from statusgen.timeutil import iso, parse_iso, parse_time


class Verdict(StrEnum):
    """What one cycle of a service's own checks says."""

    OK = "ok"
    SLOW = "slow"
    PARTIAL = "partial"
    DOWN = "down"
    NONE = "none"  # no check ran


@dataclass(frozen=True)
class Evidence:
    """The latest result of one check, as published, with the flag that says whether it counted."""

    check: int
    method: str
    url: str
    outcome: str
    latency_ms: float | None
    http_status: int | None
    slow: bool
    at: datetime
    flag: str | None = None  # None (counted), MAINTENANCE_FLAG or EXCLUDED_FLAG
    label: str = ""  # the check's public name (CheckConfig.name)
    certificate: Certificate | None = None  # the TLS certificate of the server that answered
    condition: str | None = None  # the condition the answer failed (outcome condition)
    location: str | None = None  # another location that saw it (``decide.quorum``); None: this host

    @property
    def counted(self) -> bool:
        return self.flag is None

    def certificate_json(self) -> dict[str, Any] | None:
        c = self.certificate
        if c is None:
            return None
        left = certs.days_left(c, self.at)
        return {"days_left": left, "not_after": iso(c.not_after), "issuer": c.issuer, "names": list(c.names)}

    def to_json(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "method": self.method,
            "url": self.url,
            "outcome": self.outcome,
            "latency_ms": self.latency_ms,
            "http_status": self.http_status,
            "slow": self.slow,
            "at": iso(self.at),
            "flag": self.flag,
            "label": self.label,
            "certificate": self.certificate_json(),
            "condition": self.condition,
            **({"location": self.location} if self.location is not None else {}),
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Evidence:
        return cls(
            d["check"],
            d["method"],
            d["url"],
            d["outcome"],
            d["latency_ms"],
            d["http_status"],
            d["slow"],
            parse_time(d["at"]),
            d.get("flag"),
            d.get("label") or urlsplit(d["url"]).hostname or "",
            _certificate(d.get("certificate")),
            d.get("condition"),
            d.get("location"),
        )


def _certificate(d: dict[str, Any] | None) -> Certificate | None:
    return None if d is None else Certificate(parse_time(d["not_after"]), d["issuer"], tuple(d["names"]))


@dataclass(frozen=True)
class ServiceState:
    status: Status = Status.UNKNOWN
    since: datetime | None = None
    reason: str = said("Not measured yet.")
    sources: tuple[str, ...] = ()
    evidence: tuple[Evidence, ...] = ()
    observed_at: datetime | None = None
    # streaks of the own-check state machine
    fail_streak: int = 0
    slow_streak: int = 0
    good_streak: int = 0
    streak_since: datetime | None = None
    own_status: Status = Status.UNKNOWN
    own_since: datetime | None = None  # since when own_status holds
    incident_basis: Status = Status.UNKNOWN  # the status our incidents follow (see merge.py)
    history: str = ""  # recent cycle verdicts, oldest first: o(k) s(low) f(ailed)
    flapping: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status.value,
            "since": iso(self.since),
            "reason": self.reason.to_json() if isinstance(self.reason, Said) else self.reason,
            "sources": list(self.sources),
            "evidence": [e.to_json() for e in self.evidence],
            "observed_at": iso(self.observed_at),
            "fail_streak": self.fail_streak,
            "slow_streak": self.slow_streak,
            "good_streak": self.good_streak,
            "streak_since": iso(self.streak_since),
            "own_status": self.own_status.value,
            "own_since": iso(self.own_since),
            "incident_basis": self.incident_basis.value,
            "history": self.history,
            "flapping": self.flapping,
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> ServiceState:
        return cls(
            status=Status(d["status"]),
            since=parse_iso(d["since"]),
            reason=str(d["reason"]) if isinstance(d["reason"], str) else Said.from_json(d["reason"]),  # type: ignore[arg-type]
            sources=tuple(d["sources"]),
            evidence=tuple(Evidence.from_json(e) for e in d["evidence"]),
            observed_at=parse_iso(d["observed_at"]),
            fail_streak=d["fail_streak"],
            slow_streak=d["slow_streak"],
            good_streak=d["good_streak"],
            streak_since=parse_iso(d["streak_since"]),
            own_status=Status(d["own_status"]),
            own_since=parse_iso(d.get("own_since")),
            incident_basis=Status(d.get("incident_basis", d["status"])),
            history=d.get("history", ""),
            flapping=d.get("flapping", False),
        )


# -- one cycle ----------------------------------------------------------------


def verdict(results: Sequence[CheckResult]) -> Verdict:
    if not results:
        return Verdict.NONE
    failed = sum(1 for r in results if not r.up)
    if failed == len(results):
        return Verdict.DOWN
    if failed:
        return Verdict.PARTIAL
    return Verdict.SLOW if any(r.slow for r in results) else Verdict.OK


def evidence_for(
    service: ServiceConfig, counted: Sequence[CheckResult], set_aside: Sequence[tuple[CheckResult, str]] = ()
) -> tuple[Evidence, ...]:
    """The latest result of each check: the counted ones, and those set aside with their flag."""
    flagged: list[tuple[CheckResult, str | None]] = [(r, None) for r in counted]
    flagged += set_aside
    out = []
    for r, flag in sorted(flagged, key=lambda pair: pair[0].check_index):
        check = service.checks[r.check_index]
        out.append(
            Evidence(
                r.check_index + 1,
                check.method,
                check.public_url,
                r.outcome.value,
                r.latency_ms,
                r.http_status,
                r.slow,
                r.ts,
                flag,
                check.name if r.location is None else f"{check.name} (from {r.location})",
                r.certificate,
                r.detail,
                r.location,
            )
        )
    return tuple(out)


def _streaks(prev: ServiceState, v: Verdict, at: datetime) -> dict[str, Any]:
    failing = v in (Verdict.DOWN, Verdict.PARTIAL)
    slow = v is Verdict.SLOW
    good = v is Verdict.OK
    same_kind = (failing and prev.fail_streak) or (slow and prev.slow_streak) or (good and prev.good_streak)
    return {
        "fail_streak": prev.fail_streak + 1 if failing else 0,
        "slow_streak": prev.slow_streak + 1 if slow else 0,
        "good_streak": prev.good_streak + 1 if (good or (slow and prev.status in OUTAGES)) else 0,
        "streak_since": prev.streak_since if same_kind else at,
    }


def next_own_status(prev: Status, v: Verdict, streaks: dict[str, Any], svc: ServiceConfig) -> Status:
    """The state machine of own checks (see the module docstring)."""
    failed_enough = streaks["fail_streak"] >= svc.failures_to_open
    if v in (Verdict.DOWN, Verdict.PARTIAL):
        if failed_enough or prev in OUTAGES:
            return Status.MAJOR_OUTAGE if v is Verdict.DOWN else Status.PARTIAL_OUTAGE
        return prev
    if prev in OUTAGES:
        return prev if streaks["good_streak"] < svc.successes_to_resolve else _good(v)
    if v is Verdict.SLOW:
        if prev is Status.DEGRADED or streaks["slow_streak"] >= svc.failures_to_open:
            return Status.DEGRADED
        return Status.OPERATIONAL if prev is Status.UNKNOWN else prev
    if prev is Status.DEGRADED and streaks["good_streak"] < svc.successes_to_resolve:
        return Status.DEGRADED
    return Status.OPERATIONAL


def _good(v: Verdict) -> Status:
    return Status.OPERATIONAL if v is Verdict.OK else Status.DEGRADED


# -- flapping -------------------------------------------------------------------

FLAP_WINDOW = 30  # cycles of history kept
FLAP_CHANGES = 6  # changes between failing and not failing, within the window, to call it flapping
FLAP_FAIL_SHARE = 0.25  # ...and at least this share of the window failed
FLAP_CALM = 5  # good cycles in a row that end flapping
LETTERS = {Verdict.OK: "o", Verdict.SLOW: "s", Verdict.PARTIAL: "f", Verdict.DOWN: "f"}


def flap_changes(history: str) -> int:
    return sum(1 for a, b in zip(history, history[1:]) if (a == "f") != (b == "f"))


def is_flapping(was: bool, history: str, good_streak: int) -> bool:
    """Flapping starts when a service keeps failing and recovering; it ends after FLAP_CALM good cycles."""
    if was:
        return good_streak < FLAP_CALM
    return flap_changes(history) >= FLAP_CHANGES and history.count("f") >= FLAP_FAIL_SHARE * len(history)


def decide(
    prev: ServiceState,
    svc: ServiceConfig,
    results: Sequence[CheckResult],
    now: datetime,
    set_aside: Sequence[tuple[CheckResult, str]] = (),
    at: datetime | None = None,
) -> ServiceState:
    """The service's next own state from its previous one and this cycle's counted results.

    ``set_aside`` are this cycle's results that count toward nothing (with their flag): they are
    shown as the latest evidence, and the state is otherwise held as it was. ``at``: when the
    cycle was seen (by default its first result's time; a round of tries within a run, when its
    tries were made: ``decide.confirm``).
    """
    if prev.own_status is Status.MAINTENANCE:
        prev = ServiceState(observed_at=prev.observed_at)  # a window's end starts the count afresh
    v = verdict(results)
    evidence = evidence_for(svc, results, set_aside)
    if v is Verdict.NONE:
        return held(prev, svc, evidence)
    at = at or min(r.ts for r in results)
    streaks = _streaks(prev, v, at)
    history = (prev.history + LETTERS[v])[-FLAP_WINDOW:]
    flapping = is_flapping(prev.flapping, history, streaks["good_streak"])
    if prev.flapping and not flapping:
        history = history[-streaks["good_streak"] :]  # calm again: forget the bounces
    own = next_own_status(_machine_status(prev, svc), v, streaks, svc)
    if flapping and own not in OUTAGES:
        own = Status.DEGRADED
    since = _since(prev, own, streaks, at)
    if own is Status.OPERATIONAL and certs.warnings([e for e in evidence if e.counted], svc):
        own, since = Status.DEGRADED, prev.own_since if prev.own_status is Status.DEGRADED and prev.own_since else at
    state = replace(
        prev,
        status=own,
        own_status=own,
        own_since=since,
        incident_basis=own,
        since=since,
        evidence=evidence,
        observed_at=max(e.at for e in evidence),
        sources=("checks",),
        history=history,
        flapping=flapping,
        **streaks,
    )
    return replace(state, reason=explain(state, svc))


def _machine_status(prev: ServiceState, svc: ServiceConfig) -> Status:
    """The status the state machine left, before a certificate warning made it degraded: such a
    warning clears once the certificate is renewed, not after a streak of fast cycles."""
    warned = prev.own_status is Status.DEGRADED and not prev.slow_streak and not prev.flapping
    if warned and certs.warnings([e for e in prev.evidence if e.counted], svc):
        return Status.OPERATIONAL
    return prev.own_status


def held(prev: ServiceState, svc: ServiceConfig, evidence: tuple[Evidence, ...]) -> ServiceState:
    """No counted result this cycle: our own view as it was (never the published one, which may
    carry the vendor's), with the latest evidence, streaks untouched."""
    state = replace(
        prev,
        status=prev.own_status,
        since=prev.own_since,
        incident_basis=prev.own_status,
        sources=("checks",),
        evidence=evidence or prev.evidence,
        observed_at=max((e.at for e in evidence), default=prev.observed_at),
    )
    return replace(state, reason=explain(state, svc))


def _since(prev: ServiceState, own: Status, streaks: dict[str, Any], at: datetime) -> datetime:
    """When the current status began: the start of the streak that justified it."""
    if own is prev.own_status:
        return prev.own_since or prev.since or at
    if prev.own_status in OUTAGES and own in OUTAGES:
        return at  # a change of severity within one outage
    since: datetime = streaks["streak_since"]
    return since


# -- the reason, in words ------------------------------------------------------


#: What a failing check did, after its name, where the outcome's description does not read so.
CHECK_WORDS = {
    Outcome.DNS: N_("%(check)s could not be found (its name did not resolve)"),
    Outcome.CONNECT: N_("%(check)s could not be reached (the connection failed)"),
    Outcome.TLS: N_("%(check)s failed the TLS handshake"),
    Outcome.TOO_LARGE: N_("%(check)s answered more than the size cap"),
    Outcome.REDIRECTS: N_("%(check)s redirected too many times"),
    Outcome.CERT_EXPIRED: N_("%(check)s has an expired certificate (or one not valid yet)"),
    Outcome.CERT_NAME: N_("%(check)s has a certificate for other names than its own"),
    Outcome.NO_SUCH_NAME: N_("%(check)s does not exist in the DNS"),
}


def _describe(e: Evidence, check: CheckConfig) -> Said:
    """What one failing check did, in a reader's words: "api.example.com timed out after 10 s"."""
    outcome, name = Outcome(e.outcome), e.label or check.name
    if outcome is Outcome.TIMEOUT:
        seconds = format(check.timeout, "g")
        return said("%(check)s timed out after %(seconds)s s", check=name, seconds=seconds)
    if outcome is Outcome.HTTP_STATUS and e.http_status:
        expected = ", ".join(map(str, check.expect_status))
        return said(
            "%(check)s answered HTTP %(code)s (expected %(expected)s)",
            check=name,
            code=e.http_status,
            expected=expected,
        )
    if outcome is Outcome.KEYWORD or (outcome is Outcome.WRONG_ANSWER and check.kind != "dns"):
        text = check.keyword if outcome is Outcome.KEYWORD else check.expect
        return said('%(check)s answered without the text "%(text)s"', check=name, text=text or "")
    if outcome is Outcome.CONDITION and e.condition:
        return said("%(check)s answered, but failed the condition %(condition)s", check=name, condition=e.condition)
    if outcome is Outcome.NO_RECORDS:
        return said("%(check)s has no %(type)s record", check=name, type=check.dns_type)
    if outcome is Outcome.WRONG_ANSWER:
        return said("%(check)s resolved, but not to %(value)s", check=name, value=check.expect or "")
    if outcome in CHECK_WORDS:
        return said(CHECK_WORDS[outcome], check=name)
    return said("%(check)s %(what)s", check=name, what=said(DESCRIPTIONS[outcome]))


def failures(state: ServiceState, svc: ServiceConfig) -> Said:
    """What the failing checks did, e.g. "api.example.com timed out after 10 s"; "" if none."""
    failing = [e for e in state.evidence if e.counted and e.outcome != Outcome.OK.value]
    return Said.joined(CLAUSES, [_describe(e, svc.checks[e.check - 1]) for e in failing])


def explain(state: ServiceState, svc: ServiceConfig) -> Said:
    """A human reason for the state, worded to stay the same while nothing changes.

    e.g. "api.example.com timed out after 10 s, 2 of 3 failed cycles needed to declare an
    outage." then "api.example.com timed out after 10 s; failing since 2026-11-22 20:02 UTC."
    Results set aside are named after it, as not counted.
    """
    counted = [e for e in state.evidence if e.counted]
    if not counted and state.evidence:
        return Said.joined(SENTENCES, [_set_aside(state.evidence), _held(state)])
    reason = _explain_counted(state, svc, counted)
    if len(counted) < len(state.evidence):
        return Said.joined(SENTENCES, [reason, _set_aside([e for e in state.evidence if not e.counted])])
    return reason


def _set_aside(evidence: Sequence[Evidence]) -> Said:
    """ "Not counted: the latest result of check 2, set aside because ..." and the like."""
    flags = sorted({e.flag for e in evidence if e.flag})
    why = said_list([said(FLAG_WORDS[f]) if f in FLAG_WORDS else f for f in flags])
    checks = said_list([str(e.check) for e in evidence])
    return said_plural(
        "Not counted: the latest result of check %(checks)s, %(why)s.",
        "Not counted: the latest result of checks %(checks)s, %(why)s.",
        len(evidence),
        checks=checks,
        why=why,
    )


def _since_words(state: ServiceState) -> Said | str:
    return said_time(state.since) if state.since else said("the start")


def _held(state: ServiceState) -> Said:
    if state.own_status is Status.UNKNOWN:
        return said("Our own checks say nothing yet: the status stays unknown until a result counts.")
    status = said(STATUS_WORDS[state.own_status])
    return said("Our own checks still say %(status)s (since %(since)s).", status=status, since=_since_words(state))


def _explain_counted(state: ServiceState, svc: ServiceConfig, counted: Sequence[Evidence]) -> Said:
    failing = failures(state, svc)
    slow = [e for e in counted if e.slow]
    since = _since_words(state)
    if state.flapping and state.own_status not in OUTAGES:
        return said("Flapping: its checks keep failing and recovering, since %(since)s.", since=since)
    if failing:
        if state.own_status in OUTAGES:
            return said("%(failing)s; failing since %(since)s.", failing=failing, since=since)
        return said(
            "%(failing)s, %(streak)s of %(needed)s failed cycles needed to declare an outage.",
            failing=failing,
            streak=state.fail_streak,
            needed=svc.failures_to_open,
        )
    if state.own_status in OUTAGES:
        return said(
            "Recovering: checks answer again, %(streak)s of %(needed)s good cycles needed to resolve.",
            streak=state.good_streak,
            needed=svc.successes_to_resolve,
        )
    warned = certs.warnings(counted, svc)
    if warned and state.own_status is Status.DEGRADED and not state.slow_streak:
        return Said.joined(SENTENCES, warned)
    if slow:
        e = slow[0]
        check = svc.checks[e.check - 1]
        name, threshold = e.label or check.name, f"{check.degraded_ms:.0f}"
        if state.own_status is Status.DEGRADED:
            return said(
                "%(check)s answers slower than its %(ms)s ms threshold, since %(since)s.",
                check=name,
                ms=threshold,
                since=since,
            )
        return said(
            "%(check)s answers slower than its %(ms)s ms threshold, %(streak)s of %(needed)s slow cycles needed "
            "to declare it degraded.",
            check=name,
            ms=threshold,
            streak=state.slow_streak,
            needed=svc.failures_to_open,
        )
    if state.own_status is Status.DEGRADED:
        return said(
            "Latency back under the threshold, %(streak)s of %(needed)s fast cycles needed to clear.",
            streak=state.good_streak,
            needed=svc.successes_to_resolve,
        )
    n = len({e.check for e in counted})  # a check seen from several locations is one check
    if not n:
        return (
            said("No checks of our own: the vendor's page alone tells.") if not svc.checks else said("No result yet.")
        )
    return said("All %(n)s checks answer as expected.", n=n) if n > 1 else said("The check answers as expected.")


# -- states set by the operator -------------------------------------------------


def under_maintenance(
    prev: ServiceState,
    svc: ServiceConfig,
    results: Sequence[CheckResult],
    start: datetime,
    reason: Said,
    source: str,
) -> ServiceState:
    """A maintenance window is open (configured: ``source`` "schedule"; announced by the vendor:
    "vendor"): status maintenance, every result flagged and counted toward nothing, and the streaks
    start afresh when it ends (``decide``)."""
    since = prev.own_since if prev.own_status is Status.MAINTENANCE and prev.own_since else start
    evidence = evidence_for(svc, (), [(r, MAINTENANCE_FLAG) for r in results])
    return ServiceState(
        status=Status.MAINTENANCE,
        since=since,
        own_status=Status.MAINTENANCE,
        own_since=since,
        sources=(source,),
        incident_basis=Status.MAINTENANCE,
        reason=reason,
        evidence=evidence or prev.evidence,
        observed_at=max((r.ts for r in results), default=prev.observed_at),
    )


def paused(prev: ServiceState, now: datetime) -> ServiceState:
    since = prev.since if prev.status is Status.UNKNOWN and prev.since else now
    return ServiceState(
        status=Status.UNKNOWN,
        since=since,
        reason=said("Checks are paused by the operator."),
        evidence=prev.evidence,
        observed_at=prev.observed_at,
    )
