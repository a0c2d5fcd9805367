"""Decision: which certificates expire soon enough to warn of. Pure.

A certificate is judged as the check saw it, at the time of its result, so that a state can
be explained again from its evidence alone. One expiring within its check's
``cert_expiry_days`` makes the service degraded before anything breaks (``state.decide``):
readers learn of it while the operator of the service still has days to renew it. An expired
one, or one for another name, never gets here: its handshake fails, and the check with it
(outcomes ``cert_expired`` and ``cert_name``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from statusgen.config import ServiceConfig
from statusgen.i18n import Said, Value, said, said_plural, said_time
from statusgen.model import Certificate, Outcome

DAY_S = 86400


def days_left(certificate: Certificate, at: datetime) -> int:
    """Whole days from ``at`` until the certificate expires (negative once it has)."""
    return math.floor((certificate.not_after - at).total_seconds() / DAY_S)


def expiring(certificate: Certificate | None, at: datetime, warn_days: int) -> bool:
    """Whether a certificate seen at ``at`` expires within ``warn_days`` days (0: no warning)."""
    if certificate is None or warn_days <= 0:
        return False
    return (certificate.not_after - at).total_seconds() < warn_days * DAY_S


class Seen(Protocol):
    """What a warning needs of a result (an ``Evidence``): its check, outcome, time and certificate."""

    @property
    def check(self) -> int: ...
    @property
    def outcome(self) -> str: ...
    @property
    def at(self) -> datetime: ...
    @property
    def certificate(self) -> Certificate | None: ...
    @property
    def label(self) -> str: ...


def warnings(evidence: Sequence[Seen], svc: ServiceConfig) -> list[Said]:
    """A sentence per good result whose certificate expires within its check's warning, e.g.
    "The certificate of api.example.com expires in 3 days (2026-11-29 18:00 UTC), ..."."""
    out = []
    for e in evidence:
        if e.check > len(svc.checks):
            continue  # a check since removed from the configuration (the previous state's evidence)
        check = svc.checks[e.check - 1]
        if e.outcome == Outcome.OK.value and e.certificate and expiring(e.certificate, e.at, check.cert_expiry_days):
            left = days_left(e.certificate, e.at)
            told: dict[str, Value] = {"check": e.label or check.name, "at": said_time(e.certificate.not_after)}
            told["warning"] = check.cert_expiry_days
            if left < 1:
                out.append(
                    said(
                        "The certificate of %(check)s expires in less than a day (%(at)s), within its "
                        "%(warning)s-day warning.",
                        **told,
                    )
                )
            else:
                out.append(
                    said_plural(
                        "The certificate of %(check)s expires in %(days)s day (%(at)s), within its %(warning)s-day "
                        "warning.",
                        "The certificate of %(check)s expires in %(days)s days (%(at)s), within its %(warning)s-day "
                        "warning.",
                        left,
                        days=left,
                        **told,
                    )
                )
    return out
