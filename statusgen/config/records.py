"""The configuration as the rest of statusgen reads it: frozen records, one per table."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

from statusgen.config.brand import THEME_STYLESHEET, Accent, BrandFile
from statusgen.config.conditions import Condition
from statusgen.config.cron import last_fire
from statusgen.config.operatorfiles import OperatorFiles
from statusgen.config.secrets import public_url
from statusgen.config.values import MAILBOX_SCHEMES, NOTIFY_EVENTS, SMTP_SCHEMES
from statusgen.i18n import said

#: A site's data is out of date once no run has finished for this many intervals (by default).
STALE_INTERVALS = 3
#: What the site says where the operator set no ``site.description``, ``site.vantage_point`` or
#: ``site.contact``: each page in its language (the templates' ``say`` filter); the text itself is
#: English (the error bodies).
# Translators: the line under the site's title on every page, where the operator wrote none
DEFAULT_DESCRIPTION = said("Current state of the services we depend on.")
# Translators: where the checks run from, where the operator did not say ("Measured from a single host")
DEFAULT_VANTAGE_POINT = said("a single host")
# Translators: whom to ask for a higher limit, where the operator named no one ("contact the operator of this site")
DEFAULT_CONTACT = said("the operator of this site")


@dataclass(frozen=True)
class CheckConfig:
    url: str
    method: str = "GET"  # "TCP" and "DNS" for those kinds
    expect_status: tuple[int, ...] = (200,)
    keyword: str | None = None
    timeout: float = 10.0
    degraded_ms: float = 2000.0
    max_bytes: int = 1_048_576
    headers: tuple[tuple[str, str], ...] = ()  # values may name ${VARIABLES}: see secrets.expand
    label: str | None = None
    body: str | None = None  # may name ${VARIABLES}
    follow_redirects: bool = True
    conditions: tuple[Condition, ...] = ()
    cert_expiry_days: int = 14
    ca_file: Path | None = None
    send: str | None = None  # may name ${VARIABLES}
    expect: str | None = None
    resolver: str | None = None
    locations: tuple[str, ...] = ()  # the agents' locations that run it; all by default (this host: always)
    confirm: int = 2  # tries again within a run, to confirm a change (site.confirm by default)
    confirm_every: float = 10.0  # seconds between their starts

    def runs_at(self, agent: str) -> bool:
        """Whether the probe agent of location ``agent`` runs this check (this host runs every one)."""
        return not self.locations or agent in self.locations

    @property
    def name(self) -> str:
        """What a reader sees of this check: its label, or its URL's host."""
        return self.label or urlsplit(self.url).hostname or "the check"

    @property
    def kind(self) -> str:
        """``http`` (http and https), ``tcp`` or ``dns``."""
        scheme = urlsplit(self.url).scheme
        return scheme if scheme in ("tcp", "dns") else "http"

    @property
    def dns_type(self) -> str:
        """The record type a dns:// check asks for."""
        return parse_qs(urlsplit(self.url).query).get("type", ["A"])[-1].upper()

    @property
    def public_url(self) -> str:
        """The URL as it is published: no userinfo, query or fragment, but a DNS check's type."""
        shown = public_url(self.url)
        return f"{shown.rstrip('/')}?type={self.dns_type}" if self.kind == "dns" else shown


@dataclass(frozen=True)
class MaintenanceWindow:
    """One-off (start, end) or recurring (schedule, duration) maintenance."""

    start: datetime | None = None
    end: datetime | None = None
    title: str = "Scheduled maintenance"
    schedule: str | None = None
    duration: float | None = None
    source: str = "schedule"  # or "operator": a planned maintenance of the notes folder
    message: str | None = None  # the operator's Markdown about it
    ref: str | None = None  # the file of the notes folder it comes from

    def occurrence(self, at: datetime) -> tuple[datetime, datetime] | None:
        """The (start, end) of the occurrence that covers ``at``, if any."""
        if self.start is not None and self.end is not None:
            return (self.start, self.end) if self.start <= at < self.end else None
        if self.schedule is None or self.duration is None:
            return None
        began = last_fire(self.schedule, at, self.duration)
        return (began, began + timedelta(seconds=self.duration)) if began else None

    def covers(self, at: datetime) -> bool:
        return self.occurrence(at) is not None


@dataclass(frozen=True)
class VendorConfig:
    url: str
    format: str = "auto"
    components: tuple[str, ...] = ()
    timeout: float = 10.0
    stale_after: float = 3600.0
    headers: tuple[tuple[str, str], ...] = ()  # values may name ${VARIABLES}: see secrets.expand
    timezone: str = "UTC"  # an IANA name, checked by time_zone


@dataclass(frozen=True)
class ServiceConfig:
    slug: str
    name: str
    category: str
    checks: tuple[CheckConfig, ...]
    description: str | None = None
    url: str | None = None
    failures_to_open: int = 3
    successes_to_resolve: int = 2
    vendor: VendorConfig | None = None
    paused: bool = False
    maintenance: tuple[MaintenanceWindow, ...] = ()
    sla: float | None = None  # its own target, else its category's (``Config.target``)
    calendar_events: int = 200  # at most this many of each of its sources in a calendar

    def maintenance_at(self, at: datetime) -> MaintenanceWindow | None:
        """The occurrence of a maintenance window covering ``at``, as a one-off window."""
        for window in self.maintenance:
            occurrence = window.occurrence(at)
            if occurrence:
                return MaintenanceWindow(occurrence[0], occurrence[1], window.title)
        return None


@dataclass(frozen=True)
class LocationConfig:
    """A place probe agents run from (``[[locations]]``)."""

    name: str
    description: str | None = None
    inbox_key: str | None = None  # "${VARIABLE}": its own key; the site's inbox_key when None


@dataclass(frozen=True)
class SiteConfig:
    title: str = "Service status"
    base_url: str = "http://127.0.0.1:8080"
    description: str = DEFAULT_DESCRIPTION
    interval: float = 60.0
    store: Path = Path("data/statusgen.db")
    output: Path = Path("site")
    notes: Path = Path("notes")
    concurrency: int = 100
    failures_to_open: int = 3
    successes_to_resolve: int = 2
    confirm: int = 2
    confirm_every: float = 10.0
    max_bytes: int = 1_048_576
    user_agent: str = "statusgen"  # load_config names the version and the operator's site
    vantage_point: str = DEFAULT_VANTAGE_POINT
    contact: str = DEFAULT_CONTACT
    mass_failure_ratio: float = 0.6
    mass_failure_min_checks: int = 5
    allow_private_targets: bool = False
    spread: float | None = None
    stale_after: float | None = None  # None: STALE_INTERVALS intervals
    report_months: int = 13
    location: str = "main"
    inbox: str | None = None  # an rclone remote (NAME:PATH) or an absolute folder
    inbox_key: str | None = None  # "${VARIABLE}": the key is read from the environment when used
    quorum: int | None = None  # None: a majority of the locations with fresh results
    minority_failure: str = "degraded"
    languages: tuple[str, ...] = ("en",)  # BCP 47 tags; the first at /, each other at /{tag lowercased}/
    # the operator's brand (docs/branding.md): files read and checked with the configuration
    logo: BrandFile | None = None
    favicon: BrandFile | None = None
    stylesheet: BrandFile | None = None
    accent: Accent | None = None
    powered_by: bool | None = None  # None: on a site with a brand of its own

    @property
    def stale_after_s(self) -> float:
        """Seconds after which the site's data is out of date (``stale_after``, or three intervals)."""
        return self.stale_after if self.stale_after is not None else STALE_INTERVALS * self.interval

    @property
    def branded(self) -> bool:
        """Whether the site carries a brand of its own (a logo, a favicon, a stylesheet, an accent)."""
        return any(x is not None for x in (self.logo, self.favicon, self.stylesheet, self.accent))

    @property
    def shows_powered_by(self) -> bool:
        """Whether the pages' footer links to statusgen: ``powered_by`` (on by default)."""
        return True if self.powered_by is None else self.powered_by

    @property
    def icon(self) -> BrandFile | None:
        """The operator's favicon: its own file, else the logo (None: statusgen's)."""
        return self.favicon or self.logo

    @property
    def brand_stylesheets(self) -> tuple[str, ...]:
        """The stylesheets the pages load after statusgen's, in order: the one made of the brand
        (the logo's place, the accent), then the operator's own, which may change anything."""
        made = ("/" + THEME_STYLESHEET,) if self.logo is not None or self.accent is not None else ()
        return made + ((self.stylesheet.url,) if self.stylesheet is not None else ())


@dataclass(frozen=True)
class NotifyConfig:
    """A notifier: where to send (``url``, which may name ${VARIABLES}: see secrets.expand) and what."""

    name: str
    url: str
    services: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    events: tuple[str, ...] = NOTIFY_EVENTS
    min_severity: str = "minor"
    timeout: float = 10.0
    digest_after: int = 5
    catch_up: float = 86400.0


@dataclass(frozen=True)
class MailServer:
    """Where subscriptions' mail is read or sent: a server's URL (``imaps://``, ``smtp+starttls://``
    and the like: ``values.MAILBOX_SCHEMES``, ``values.SMTP_SCHEMES``), or a Maildir ``folder``
    (read: a host's own delivery; sent: what would be sent, for a trial or the demo). ``user`` and
    ``password`` name environment variables (``${NAME}``), read only when connecting."""

    url: str | None = None
    folder: Path | None = None
    user: str | None = None
    password: str | None = None

    @property
    def scheme(self) -> str:
        return urlsplit(self.url).scheme if self.url else "folder"

    @property
    def host(self) -> str:
        return urlsplit(self.url).hostname or "" if self.url else ""

    @property
    def port(self) -> int:
        """The URL's port, or its scheme's usual one."""
        parts = urlsplit(self.url or "")
        return parts.port or {**MAILBOX_SCHEMES, **SMTP_SCHEMES}.get(parts.scheme, 0)

    @property
    def path(self) -> str:
        """An IMAP URL's folder (INBOX when it names none)."""
        return unquote(urlsplit(self.url).path.strip("/")) or "INBOX" if self.url else ""

    @property
    def shown(self) -> str:
        """How messages and logs name it: the URL (it holds no secret) or the folder."""
        return self.url or str(self.folder)


@dataclass(frozen=True)
class SubscriptionsConfig:
    """``[subscriptions]``: visitors write to ``address``; each run reads ``mailbox`` and sends
    through ``smtp`` (docs/subscriptions.md)."""

    address: str
    mailbox: MailServer
    smtp: MailServer
    sender_name: str | None = None  # the From's name: the site's title by default
    max_subscribers: int = 10_000
    requests_per_day: int = 5
    messages_per_run: int = 100
    bounces: int = 3
    events: tuple[str, ...] = NOTIFY_EVENTS
    min_severity: str = "minor"
    timeout: float = 30.0
    send_per_run: int = 20_000

    @property
    def list_id(self) -> str:
        """The List-Id (RFC 2919) of the messages: the address, its @ made a dot."""
        return self.address.replace("@", ".").lower()


@dataclass(frozen=True)
class RateGrant:
    """A limit of the interface of its own for some client addresses (``[[rate_limit.grants]]``):
    the servers apply ``addresses`` and ``per_minute``; ``purpose`` and ``contact`` are the
    operator's record of why and for whom, published nowhere."""

    addresses: tuple[str, ...]  # CIDR networks, as ipaddress writes them
    per_minute: int
    purpose: str
    contact: str


@dataclass(frozen=True)
class Config:
    path: Path
    site: SiteConfig
    categories: dict[str, str]  # slug -> display name, in declared order
    services: tuple[ServiceConfig, ...]
    canaries: tuple[CheckConfig, ...] = ()
    notifiers: tuple[NotifyConfig, ...] = ()
    operator: OperatorFiles = field(default_factory=OperatorFiles)  # the notes folder
    by_slug: dict[str, ServiceConfig] = field(default_factory=dict, compare=False)
    sla: dict[str, float] = field(default_factory=dict)  # category -> its availability target ([sla])
    locations: tuple[LocationConfig, ...] = ()  # the other places that probe ([[locations]])
    grants: tuple[RateGrant, ...] = ()  # higher limits for some readers ([[rate_limit.grants]])
    subscriptions: SubscriptionsConfig | None = None  # visitors' email updates ([subscriptions])

    def __post_init__(self) -> None:
        self.by_slug.update({s.slug: s for s in self.services})

    @property
    def location_names(self) -> tuple[str, ...]:
        """Every location that probes: this host's first."""
        return (self.site.location, *(loc.name for loc in self.locations))

    def target(self, service: ServiceConfig) -> float | None:
        """A service's availability target: its own, else its category's."""
        return service.sla if service.sla is not None else self.sla.get(service.category)
