"""What every stage shares: the vocabulary of outcomes and statuses, a check's result, and
the history ranges the API publishes.

Nothing here does I/O or imports another statusgen module but ``i18n``'s
marker ``N_`` (the words are translated where they are shown): the probe makes
``CheckResult``s, the decisions read them, the store keeps them, and the
renderer names statuses and ranges with these words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from statusgen.i18n import N_

#: A slug names a service, a category, a notifier and a notes file in URLs and ids. Always
#: ``fullmatch``: "$" would let a final newline in.
SLUG = r"[a-z0-9][a-z0-9-]{0,62}"
SLUG_RE = re.compile(SLUG)

#: The vendor payload formats, each read by the adapter module of the same name in ``vendors``.
VENDOR_FORMATS = (
    "statuspage",
    "statusio",
    "slack",
    "heroku",
    "cachet",
    "gcp",
    "feed",
    "instatus",
    "uptimekuma",
    "upptime",
)


class Outcome(StrEnum):
    """What happened when we fetched something. httpx exceptions are mapped to these once, at
    the probe and vendor-fetch boundary (``neterrors``); the store keeps outcomes, never
    exception strings."""

    OK = "ok"  # answered as expected
    TIMEOUT = "timeout"  # no complete answer within the timeout
    DNS = "dns"  # the host name did not resolve
    CONNECT = "connect"  # TCP connection refused or unreachable
    TLS = "tls"  # TLS handshake or certificate failure
    HTTP_STATUS = "http_status"  # answered with a status we did not expect
    KEYWORD = "keyword"  # body lacks the expected keyword
    TOO_LARGE = "too_large"  # body larger than the byte cap
    REDIRECTS = "redirects"  # too many redirects
    PRIVATE_REDIRECT = "private_redirect"  # redirected from a public address to a private one
    PROTOCOL = "protocol"  # broken HTTP (reset mid-answer, bad framing)
    PARSE = "parse"  # (vendor sources) payload not in the expected shape
    CONDITION = "condition"  # the answer failed one of the check's conditions
    CERT_EXPIRED = "cert_expired"  # the server's certificate has expired (or is not valid yet)
    CERT_NAME = "cert_name"  # the server's certificate does not cover the name we asked for
    NO_SUCH_NAME = "no_such_name"  # (DNS checks) the name does not exist (NXDOMAIN)
    NO_RECORDS = "no_records"  # (DNS checks) the name exists but has no record of the type asked
    WRONG_ANSWER = "wrong_answer"  # (DNS and TCP checks) answered, but not with the value expected
    ERROR = "error"  # anything else; details go to the log only


DESCRIPTIONS: dict[Outcome, str] = {
    Outcome.OK: N_("answered as expected"),
    Outcome.TIMEOUT: N_("timed out"),
    Outcome.DNS: N_("host name did not resolve"),
    Outcome.CONNECT: N_("connection failed"),
    Outcome.TLS: N_("TLS handshake failed"),
    Outcome.HTTP_STATUS: N_("answered with an unexpected HTTP status"),
    Outcome.KEYWORD: N_("answer lacked the expected keyword"),
    Outcome.TOO_LARGE: N_("answer exceeded the size cap"),
    Outcome.REDIRECTS: N_("too many redirects"),
    Outcome.PRIVATE_REDIRECT: N_("was redirected to a private address"),
    Outcome.PROTOCOL: N_("broke the HTTP protocol"),
    Outcome.PARSE: N_("payload could not be read"),
    Outcome.CONDITION: N_("answer failed a condition"),
    Outcome.CERT_EXPIRED: N_("certificate has expired"),
    Outcome.CERT_NAME: N_("certificate does not match the name"),
    Outcome.NO_SUCH_NAME: N_("name does not exist"),
    Outcome.NO_RECORDS: N_("name has no record of that type"),
    Outcome.WRONG_ANSWER: N_("answered, but not what was expected"),
    Outcome.ERROR: N_("failed"),
}


class Status(StrEnum):
    """A service's status, as the API publishes it (the words of Statuspage-style pages)."""

    OPERATIONAL = "operational"
    DEGRADED = "degraded"
    PARTIAL_OUTAGE = "partial_outage"
    MAJOR_OUTAGE = "major_outage"
    MAINTENANCE = "maintenance"
    UNKNOWN = "unknown"


STATUSES: tuple[str, ...] = tuple(s.value for s in Status)
#: An incident's severities, least first (``decide.incidents.SEVERITY`` maps statuses to them).
SEVERITIES = ("minor", "major", "critical")
BAD = frozenset({Status.DEGRADED, Status.PARTIAL_OUTAGE, Status.MAJOR_OUTAGE})
OUTAGES = frozenset({Status.PARTIAL_OUTAGE, Status.MAJOR_OUTAGE})
STATUS_WORDS = {
    Status.OPERATIONAL: N_("operational"),
    Status.DEGRADED: N_("degraded performance"),
    Status.PARTIAL_OUTAGE: N_("partial outage"),
    Status.MAJOR_OUTAGE: N_("major outage"),
    Status.MAINTENANCE: N_("under maintenance"),
    Status.UNKNOWN: N_("status unknown"),
}

CheckId = tuple[str, int]  # a check: its service's slug and its index in the service


@dataclass(frozen=True)
class Certificate:
    """What a TLS server's certificate says, as a check saw it: public facts, published as they are."""

    not_after: datetime  # when it expires (UTC)
    issuer: str  # who signed it: its organisation, else its common name
    names: tuple[str, ...]  # the names it covers (subjectAltName)


@dataclass(frozen=True)
class CheckResult:
    service: str
    check_index: int  # 0-based position of the check in the service's config
    ts: datetime  # when the check was sent (UTC)
    outcome: Outcome
    latency_ms: float | None  # time to the complete (capped) answer; None when none came
    http_status: int | None
    slow: bool  # answered well, but slower than the check's degraded_ms
    certificate: Certificate | None = None  # the TLS certificate of the server that answered
    detail: str | None = None  # public words the outcome needs, from the configuration (a failed condition)
    location: str | None = None  # where another location's agent saw it (``decide.quorum``); None: here

    @property
    def up(self) -> bool:
        return self.outcome is Outcome.OK


@dataclass(frozen=True)
class Range:
    """A published history range: ``buckets`` buckets of ``resolution_s`` seconds."""

    name: str
    resolution_s: int
    buckets: int

    @property
    def resolution(self) -> str:
        s = self.resolution_s
        return f"{s // 86400}d" if s % 86400 == 0 else f"{s // 3600}h" if s % 3600 == 0 else f"{s // 60}m"


RANGES: dict[str, Range] = {
    "24h": Range("24h", 300, 288),
    "7d": Range("7d", 3600, 168),
    "30d": Range("30d", 21600, 120),
    "90d": Range("90d", 86400, 90),
}
DEFAULT_RANGE = "24h"


# Why a result was not counted (see decide/run.py): inside a maintenance window (configured or
# announced by the vendor), set aside because our own vantage point was suspect, or set aside
# because the quorum of locations sees the service up (decide/quorum.py).
MAINTENANCE_FLAG = "maintenance"
EXCLUDED_FLAG = "excluded"
QUORUM_FLAG = "quorum"
FLAG_WORDS = {
    MAINTENANCE_FLAG: N_("inside a maintenance window"),
    EXCLUDED_FLAG: N_("set aside because our own vantage point looked at fault"),
    QUORUM_FLAG: N_("set aside because fewer locations than the quorum see it failing"),
}
#: The flags of results set aside (counted apart as excluded), not of maintenance.
SET_ASIDE = frozenset({EXCLUDED_FLAG, QUORUM_FLAG})
