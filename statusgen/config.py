"""The configuration file: one TOML file, every key declared once.

Each key is declared with its type, default and one line of doc (``Key``).
``load_config`` validates the whole file and raises one ``ConfigError`` that
lists every problem, each naming the file, the service, the check and the key::

    services.toml: service "github", check 2: timeout must be a number of seconds, got "ten"

Unknown keys are reported, never silently ignored. docs/configuration.md is
generated from these declarations (``statusgen config-docs``) and a test keeps
it in step.
"""

from __future__ import annotations

import ipaddress
import math
import os
import re
import ssl
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from statusgen.conditions import Condition, ConditionError, parse
from statusgen.errors import ConfigError
from statusgen.model import SEVERITIES
from statusgen.operatorfiles import OperatorFiles, read_folder
from statusgen.secrets import public_url, references
from statusgen.timeutil import offset_time

SLUG_RE = re.compile(r"[a-z0-9][a-z0-9-]{0,62}")  # always fullmatch: "$" would let a final newline in
METHODS = ("GET", "HEAD", "POST", "OPTIONS")
VENDOR_FORMATS = (
    "auto",
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

# Bounds that keep a typo from turning into a denial of service (a 0.001 s loop, a 1 TB read).
DAY = 86_400.0
MAX_INTERVAL = DAY
MAX_TIMEOUT = 300.0
MAX_STALE_AFTER = 90 * DAY
MAX_WINDOW = 31 * DAY
MAX_SPREAD = 3_600.0
MAX_MILLISECONDS = 600_000
MAX_BYTES = 1 << 30
MAX_FILE_BYTES = 4 << 20  # the configuration file itself
MAX_NESTING = 16  # arrays and inline tables inside one another
MAX_CONDITIONS = 50  # conditions on one check
MAX_CERT_DAYS = 365
DNS_TYPES = ("A", "AAAA", "CNAME", "MX", "TXT")


class Invalid(ValueError):
    """Raised by a key's converter; the message completes "<key> must ..."."""


_REQUIRED: Any = object()


@dataclass(frozen=True)
class Key:
    name: str
    convert: Callable[[Any], Any]
    default: Any = _REQUIRED
    doc: str = ""

    @property
    def required(self) -> bool:
        return self.default is _REQUIRED


# -- converters: each returns the value or raises Invalid("must ...") ----------


def _show(value: Any) -> str:
    return f'"{value}"' if isinstance(value, str) else repr(value)


def text(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise Invalid(f"must be a non-empty string, got {_show(value)}")
    return value


def slug(value: Any) -> str:
    if not isinstance(value, str) or not SLUG_RE.fullmatch(value):
        raise Invalid(f"must be a slug matching {SLUG_RE.pattern}, got {_show(value)}")
    return value


def _number(value: Any) -> float | None:
    """A finite int or float (TOML's nan and inf are not numbers of anything), else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def seconds_up_to(limit: float, *, zero: bool = False) -> Callable[[Any], float]:
    """A number of seconds above 0 (or from 0) and at most ``limit``."""
    low = "0 or more" if zero else "greater than 0"

    def convert(value: Any) -> float:
        number = _number(value)
        if number is None or number > limit or number < 0 or (number == 0 and not zero):
            raise Invalid(f"must be a number of seconds, {low} and at most {limit:g}, got {_show(value)}")
        return number

    return convert


def milliseconds(value: Any) -> float:
    number = _number(value)
    if number is None or not 0 < number <= MAX_MILLISECONDS:
        raise Invalid(
            f"must be a number of milliseconds greater than 0 and at most {MAX_MILLISECONDS}, got {_show(value)}"
        )
    return number


def count(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 1000:
        raise Invalid(f"must be a whole number from 1 to 1000, got {_show(value)}")
    return value


def byte_size(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1024 <= value <= MAX_BYTES:
        raise Invalid(f"must be a whole number of bytes, from 1024 to {MAX_BYTES}, got {_show(value)}")
    return value


def http_url(value: Any) -> str:
    parts = urlsplit(value) if isinstance(value, str) else None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise Invalid(f"must be an http:// or https:// URL, got {_show(value)}")
    return str(value)


def check_url(value: Any) -> str:
    """What a check reaches: an http(s) URL, ``tcp://host:port`` or ``dns://name?type=A``."""
    parts = urlsplit(value) if isinstance(value, str) else None
    if parts is not None and parts.scheme in ("http", "https") and parts.hostname:
        return str(value)
    try:
        port = parts.port if parts is not None else None
    except ValueError:
        port = None
    if parts is not None and parts.scheme == "tcp" and parts.hostname and port and parts.path in ("", "/"):
        return str(value)
    if parts is not None and parts.scheme == "dns" and parts.hostname and parts.path in ("", "/") and not port:
        query = parse_qs(parts.query, keep_blank_values=True)
        if set(query) <= {"type"} and query.get("type", ["A"])[-1].upper() in DNS_TYPES:
            return str(value)
    raise Invalid(
        f"must be an http:// or https:// URL, tcp://host:port or dns://name?type=TYPE "
        f"(TYPE one of {', '.join(DNS_TYPES)}), got {_show(value)}"
    )


def base_url(value: Any) -> str:
    return http_url(value).rstrip("/")


def method(value: Any) -> str:
    if not isinstance(value, str) or value.upper() not in METHODS:
        raise Invalid(f"must be one of {', '.join(METHODS)}, got {_show(value)}")
    return value.upper()


def status_codes(value: Any) -> tuple[int, ...]:
    codes = value if isinstance(value, list) else [value]
    if not codes or not all(isinstance(c, int) and not isinstance(c, bool) and 100 <= c <= 599 for c in codes):
        raise Invalid(f"must be an HTTP status code or a list of them (100-599), got {_show(value)}")
    return tuple(codes)


def optional_text(value: Any) -> str | None:
    return None if value == "" else text(value)


def path_value(value: Any) -> str:
    return text(value)


def vendor_format(value: Any) -> str:
    if value not in VENDOR_FORMATS:
        raise Invalid(f"must be one of {', '.join(VENDOR_FORMATS)}, got {_show(value)}")
    return str(value)


def string_list(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise Invalid(f"must be a list of non-empty strings, got {_show(value)}")
    return tuple(value)


def url_or_path(value: Any) -> str:
    given = text(value)
    scheme = urlsplit(given).scheme
    if scheme and len(scheme) > 1 and scheme not in ("http", "https"):  # one letter: a Windows drive
        raise Invalid(f"must be an http:// or https:// URL or a local file, got {_show(given)}")
    return given


HEADER_NAME_RE = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")


def headers(value: Any) -> tuple[tuple[str, str], ...]:
    """A table of request headers; values may name environment variables (``${TOKEN}``)."""
    if not isinstance(value, Mapping):
        example = '{ Authorization = "Bearer ${TOKEN}" }'
        raise Invalid(f"must be a table of header names and values, like {example}, got {_show(value)}")
    out = []
    for name, v in value.items():
        if not HEADER_NAME_RE.fullmatch(name):
            raise Invalid(f"must have header names made of letters, digits and -, got {_show(name)}")
        if not isinstance(v, str) or "\r" in v or "\n" in v:
            raise Invalid(f"must have one-line string values, got {_show(v)} for {name}")
        out.append((name, v))
    return tuple(out)


def conditions(value: Any) -> tuple[Condition, ...]:
    """A list of conditions on the answer (``statusgen.conditions``), each checked here."""
    if not isinstance(value, list) or not value or len(value) > MAX_CONDITIONS:
        example = '["[STATUS] == 200", "[BODY].status == UP"]'
        raise Invalid(f"must be a list of 1 to {MAX_CONDITIONS} conditions, like {example}, got {_show(value)}")
    out = []
    for i, line in enumerate(value, 1):
        try:
            out.append(parse(line))
        except ConditionError as exc:
            raise Invalid(f"has a condition {i} ({_show(line)}) that does not read: {exc}") from None
    return tuple(out)


def days(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_CERT_DAYS:
        raise Invalid(f"must be a whole number of days from 0 (no warning) to {MAX_CERT_DAYS}, got {_show(value)}")
    return value


def resolver(value: Any) -> str:
    """A DNS server's IP address, with a port after it if not 53 (``10.0.0.2``, ``127.0.0.1:5353``, ``[::1]:53``)."""
    try:
        ipaddress.ip_address(text(value))
        return str(value)
    except (Invalid, ValueError):
        pass
    parts = urlsplit(f"//{value}")
    try:
        port = parts.port
        ipaddress.ip_address(parts.hostname or "")
    except ValueError:
        port = None
    if not port or parts.path or parts.username:
        raise Invalid(f"must be an IP address, optionally with a port (127.0.0.1:5353, [::1]:53), got {_show(value)}")
    return str(value)


def ratio(value: Any) -> float:
    number = _number(value)
    if number is None or not 0 < number <= 1:
        raise Invalid(f"must be a number above 0 and at most 1, got {_show(value)}")
    return number


def cron(value: Any) -> str:
    from statusgen.cron import CronError, parse_cron

    try:
        parse_cron(value if isinstance(value, str) else "")
    except CronError as exc:
        raise Invalid(f"must be a cron expression (minute hour day month weekday), got {_show(value)}: {exc}") from None
    return str(value)


def boolean(value: Any) -> bool:
    if not isinstance(value, bool):
        raise Invalid(f"must be true or false, got {_show(value)}")
    return value


def timestamp(value: Any) -> datetime:
    """A TOML offset date-time, or an RFC 3339 string with an offset."""
    at = offset_time(value)
    if at is None:
        raise Invalid(f"must be a date-time with an offset, like 2026-11-22T20:00:00Z, got {_show(value)}")
    return at


# -- declarations -------------------------------------------------------------

SITE_KEYS = (
    Key("title", text, "Service status", "Title shown on every page and feed."),
    Key("base_url", base_url, "http://127.0.0.1:8080", "Public URL the site is served at; used in feeds and links."),
    Key("description", text, "Current state of the services we depend on.", "One line under the title."),
    Key(
        "interval",
        seconds_up_to(MAX_INTERVAL),
        60.0,
        "Seconds between runs; data is stale after three intervals with no finished run.",
    ),
    Key("store", path_value, "data/statusgen.db", "SQLite store, relative to the configuration file."),
    Key("output", path_value, "site", "Output tree, relative to the configuration file."),
    Key(
        "notes",
        path_value,
        "notes",
        "Folder of the operator's notes, manual incidents and planned maintenance (Markdown files, "
        "docs/notes.md), relative to the configuration file; none if it does not exist.",
    ),
    Key("concurrency", count, 100, "How many checks may be in flight at once."),
    Key("failures_to_open", count, 3, "Default consecutive failed cycles before an outage is declared."),
    Key("successes_to_resolve", count, 2, "Default consecutive good cycles before an outage is resolved."),
    Key("max_bytes", byte_size, 1_048_576, "Default cap on the bytes read from one answer."),
    Key("user_agent", text, "statusgen/0.1 (+https://github.com/statusgen/statusgen)", "User-Agent sent by checks."),
    Key("vantage_point", text, "a single host", "Where our checks run from, shown on the method page."),
    Key("contact", text, "the operator of this site", "Who to contact for a higher rate limit."),
    Key(
        "mass_failure_ratio",
        ratio,
        0.6,
        "When more than this share of checks fail at once, the problem is "
        "probably ours: results are set aside and no incident opens.",
    ),
    Key(
        "mass_failure_min_checks",
        count,
        5,
        "The mass-failure rule applies only to runs with at least this many checks.",
    ),
    Key(
        "allow_private_targets",
        boolean,
        False,
        "Let checks and vendor fetches follow redirects from a public address to a loopback, link-local or "
        "private one (refused by default: an outcome of its own).",
    ),
    Key(
        "spread",
        seconds_up_to(MAX_SPREAD, zero=True),
        None,
        "Seconds over which a run's check starts are spread evenly, so a burst "
        "of starts does not delay the answers being timed; by default 4 s per 1,000 checks, and when checks timed "
        "out in the run before, until 1 s past their timeout (at most 10 s): those checks start first, and the run "
        "lasts that long anyway. --loop spreads over most of the interval instead.",
    ),
)

CHECK_KEYS = (
    Key(
        "url",
        check_url,
        doc="What to check: an http:// or https:// URL to request, tcp://host:port to connect to, or "
        "dns://name?type=TYPE to resolve (TYPE one of A, AAAA, CNAME, MX, TXT; A by default).",
    ),
    Key(
        "label",
        optional_text,
        None,
        "How readers see the check in reasons and pages (its URL is published without userinfo or query); "
        "defaults to the URL's host name.",
    ),
    Key("method", method, "GET", "HTTP method."),
    Key("expect_status", status_codes, (200,), "Status code or list of codes that count as up."),
    Key("keyword", optional_text, None, "Text the body must contain; none by default."),
    Key("timeout", seconds_up_to(MAX_TIMEOUT), 10.0, "Seconds before the check counts as timed out."),
    Key("degraded_ms", milliseconds, 2000.0, "Latency above which a good answer counts as slow (degraded)."),
    Key("max_bytes", byte_size, None, "Cap on bytes read; defaults to site.max_bytes."),
    Key(
        "headers",
        headers,
        (),
        "Request headers, a table; a value may name environment variables (${TOKEN}), read at run time and "
        "never published. The url may name them too; its userinfo and query are never published.",
    ),
    Key(
        "body",
        optional_text,
        None,
        'Request body, sent as it is (set method = "POST" and a Content-Type header); it may name '
        "environment variables like headers, and is never published.",
    ),
    Key(
        "follow_redirects",
        boolean,
        True,
        "Follow redirects (at most 5); when false, a redirect is the answer, judged by its status.",
    ),
    Key(
        "conditions",
        conditions,
        (),
        'Conditions the answer must meet, each a line like "[STATUS] == 200", "[RESPONSE_TIME] < 300", '
        '"[HEADER].Content-Type contains json", "[BODY] contains "ok"", "[BODY] matches "v[0-9]+"" or '
        '"[BODY].status == UP" (a path into a JSON body; operators ==, !=, <, >, in [a, b], contains, matches). '
        "The first one failed is the reason, and they are published: name no secret in them.",
    ),
    Key(
        "cert_expiry_days",
        days,
        14,
        "HTTPS: a certificate that expires within this many days makes the service degraded, with that reason "
        "(0: never); an expired one, or one for another name, is a failure.",
    ),
    Key(
        "ca_file",
        path_value,
        None,
        "HTTPS: a PEM file of the certificate authorities to trust instead of the system's, relative to the "
        "configuration file (a private CA).",
    ),
    Key(
        "send",
        optional_text,
        None,
        "tcp://: a line sent once connected (CR LF added); it may name environment variables and is never published.",
    ),
    Key(
        "expect",
        optional_text,
        None,
        "tcp://: text the server must send back (a banner such as SSH-2.0); dns://: a value one of the answers "
        "must be (an address, a host name, or the text of a TXT record).",
    ),
    Key(
        "resolver",
        resolver,
        None,
        "dns://: the DNS server to ask, an IP address with an optional port (10.0.0.2, 127.0.0.1:5353); "
        "the system's resolvers by default.",
    ),
)

#: The keys that belong to one kind of check only (the others apply to HTTP checks alone).
KIND_KEYS = {"send": ("tcp",), "expect": ("tcp", "dns"), "resolver": ("dns",)}
COMMON_KEYS = ("url", "label", "timeout", "degraded_ms")


def time_zone(value: Any) -> str:
    """An IANA time zone name (``Europe/Paris``), as the vendor key ``timezone`` takes it."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    name = text(value)
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise Invalid(f"must be a time zone name such as UTC or Europe/Paris, got {_show(value)}") from None
    return name


VENDOR_KEYS = (
    Key("url", url_or_path, doc="Vendor status URL (summary.json, incidents.json, a feed...)."),
    Key(
        "format",
        vendor_format,
        "auto",
        "Payload format; auto detects it from the payload. "
        "`statuspage`: https://www.githubstatus.com/api/v2/summary.json; "
        "`statusio`: https://api.status.io/1.0/status/5b36dc6502d06804c08349f7; "
        "`slack`: https://slack-status.com/api/v2.0.0/current; "
        "`heroku`: https://status.heroku.com/api/v4/current-status; "
        "`cachet`: https://status.example.com/api/v1/components; "
        "`gcp`: https://status.cloud.google.com/incidents.json; "
        "`feed`: https://www.githubstatus.com/history.atom; "
        "`instatus`: https://recraft.instatus.com/summary.json (or /v2/components.json); "
        "`uptimekuma`: https://status.example.com/api/status-page/SLUG (the heartbeats are read from "
        "/api/status-page/heartbeat/SLUG beside it); "
        "`upptime`: https://raw.githubusercontent.com/OWNER/REPO/HEAD/history/summary.json.",
    ),
    Key("components", string_list, (), "Vendor components or groups this service maps to; all by default."),
    Key("timeout", seconds_up_to(MAX_TIMEOUT), 10.0, "Seconds before the fetch counts as timed out."),
    Key("headers", headers, (), "Request headers, a table; values may name environment variables (${TOKEN})."),
    Key(
        "stale_after",
        seconds_up_to(MAX_STALE_AFTER),
        3600.0,
        "Seconds after our last successful fetch before the vendor's view is set aside "
        "(not its own last update: a quiet page may not change for months).",
    ),
    Key(
        "timezone",
        time_zone,
        "UTC",
        "Time zone of vendor times written without one (Uptime Kuma's beats and pinned incident: "
        "its server's local time), as an IANA name such as Europe/Paris.",
    ),
)

SERVICE_KEYS = (
    Key("slug", slug, doc="Identifier used in URLs."),
    Key("name", text, doc="Display name."),
    Key("category", slug, doc="One of the declared categories."),
    Key("description", optional_text, None, "One line about the service."),
    Key("url", http_url, None, "Public home page of the service."),
    Key(
        "failures_to_open",
        count,
        None,
        "Consecutive failed cycles before an outage; defaults to site.failures_to_open.",
    ),
    Key(
        "successes_to_resolve",
        count,
        None,
        "Consecutive good cycles before recovery; defaults to site.successes_to_resolve.",
    ),
    Key("paused", boolean, False, "Stop checking the service; its status is unknown while paused."),
)

MAINTENANCE_KEYS = (
    Key("start", timestamp, None, "A one-off window: when it opens (date-time with offset)."),
    Key("end", timestamp, None, "A one-off window: when it closes."),
    Key("schedule", cron, None, 'A recurring window: when it opens, in cron form in UTC ("0 2 * * sun").'),
    Key("duration", seconds_up_to(MAX_WINDOW), None, "A recurring window: how many seconds it lasts."),
    Key("title", text, "Scheduled maintenance", "What is being done, shown in the reason."),
)

NOTIFY_EVENTS = (
    "incident.opened",
    "incident.escalated",
    "incident.noted",
    "incident.resolved",
    "vendor.incident",
    "maintenance.started",
    "maintenance.ended",
)
MAX_NOTIFY_TIMEOUT = 60.0
MAX_CATCH_UP = 7 * DAY


def notify_events(value: Any) -> tuple[str, ...]:
    chosen = value if isinstance(value, list) else None
    if not chosen or not all(v in NOTIFY_EVENTS for v in chosen):
        raise Invalid(f"must be a list of events from {', '.join(NOTIFY_EVENTS)}, got {_show(value)}")
    return tuple(chosen)


def severity(value: Any) -> str:
    if value not in SEVERITIES:
        raise Invalid(f"must be one of {', '.join(SEVERITIES)}, got {_show(value)}")
    return str(value)


def notify_url(value: Any) -> str:
    given = text(value)
    if "://" not in given:
        raise Invalid(
            f"must be an Apprise URL (slack://..., mailto://..., json://...) or statusgen:// for the "
            f"generic webhook, got {_show(given)}"
        )
    return given


NOTIFY_KEYS = (
    Key("name", slug, doc="Identifier of the notifier (in logs, the store and `statusgen notify --test NAME`)."),
    Key(
        "url",
        notify_url,
        doc="Where to send: an Apprise URL (https://github.com/caronc/apprise/wiki: slack://, mailto://, "
        "msteams://, tgram://, ntfy://, matrix://, json://...) or statusgen:// (https: statusgens://) for the "
        "generic JSON webhook of docs/notifications.md. Secrets go in environment variables (${SLACK_TOKEN}), "
        "read when sending and never written to the site, the store or the logs.",
    ),
    Key("services", string_list, (), "Only these services (slugs); all by default."),
    Key("categories", string_list, (), "Only the services of these categories; all by default."),
    Key("events", notify_events, NOTIFY_EVENTS, "The events to send; all by default."),
    Key(
        "min_severity",
        severity,
        "minor",
        "Least severity of an incident (ours: its worst so far; a vendor's: its impact) that is sent: "
        "minor, major or critical. Maintenance is always sent.",
    ),
    Key("timeout", seconds_up_to(MAX_NOTIFY_TIMEOUT), 10.0, "Seconds a run gives this notifier to send."),
    Key(
        "digest_after",
        count,
        5,
        "When more events than this are due for the notifier in one run (a mass change, or what it "
        "missed while down), it gets one digest of them all instead of one message each.",
    ),
    Key(
        "catch_up",
        seconds_up_to(MAX_CATCH_UP),
        86400.0,
        "Seconds an event is kept for a notifier that could not be reached; past that it is told only "
        "in a digest, and after seven days it is given up.",
    ),
)


# -- records ------------------------------------------------------------------


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
        from statusgen.cron import last_fire

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

    def maintenance_at(self, at: datetime) -> MaintenanceWindow | None:
        """The occurrence of a maintenance window covering ``at``, as a one-off window."""
        for window in self.maintenance:
            occurrence = window.occurrence(at)
            if occurrence:
                return MaintenanceWindow(occurrence[0], occurrence[1], window.title)
        return None


@dataclass(frozen=True)
class SiteConfig:
    title: str = "Service status"
    base_url: str = "http://127.0.0.1:8080"
    description: str = "Current state of the services we depend on."
    interval: float = 60.0
    store: Path = Path("data/statusgen.db")
    output: Path = Path("site")
    notes: Path = Path("notes")
    concurrency: int = 100
    failures_to_open: int = 3
    successes_to_resolve: int = 2
    max_bytes: int = 1_048_576
    user_agent: str = "statusgen/0.1"
    vantage_point: str = "a single host"
    contact: str = "the operator of this site"
    mass_failure_ratio: float = 0.6
    mass_failure_min_checks: int = 5
    allow_private_targets: bool = False
    spread: float | None = None


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
class Config:
    path: Path
    site: SiteConfig
    categories: dict[str, str]  # slug -> display name, in declared order
    services: tuple[ServiceConfig, ...]
    canaries: tuple[CheckConfig, ...] = ()
    notifiers: tuple[NotifyConfig, ...] = ()
    operator: OperatorFiles = field(default_factory=OperatorFiles)  # the notes folder
    by_slug: dict[str, ServiceConfig] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        self.by_slug.update({s.slug: s for s in self.services})


# -- validation ---------------------------------------------------------------


class _Problems:
    def __init__(self, filename: str, folder: Path = Path(".")):
        self.filename = filename
        self.folder = folder  # where the file is: its relative paths start there
        self.items: list[str] = []

    def add(self, where: str, message: str) -> None:
        prefix = f"{self.filename}: {where}: " if where else f"{self.filename}: "
        self.items.append(prefix + message)


def _read_table(table: Any, keys: tuple[Key, ...], where: str, problems: _Problems) -> dict[str, Any]:
    """Convert one TOML table against its declared keys; record every problem."""
    if not isinstance(table, Mapping):
        problems.add(where, f"must be a table, got {_show(table)}")
        return {}
    known = {k.name for k in keys}
    out: dict[str, Any] = {}
    for key in keys:
        if key.name not in table:
            if key.required:
                problems.add(where, f"{key.name} is required ({key.doc})")
            elif key.default is not None:
                out[key.name] = key.default
            continue
        try:
            out[key.name] = key.convert(table[key.name])
        except Invalid as exc:
            problems.add(where, f"{key.name} {exc}")
    return out | {"_unknown": [k for k in table if k not in known]}


#: Keys of earlier versions, and what became of them.
REMOVED = {
    "probe_processes": "checks run in one process (worker processes cost CPU and bought no accuracy); delete the key",
}


def _report_unknown(values: dict[str, Any], where: str, problems: _Problems, allowed: list[str]) -> None:
    for name in values.pop("_unknown", []):
        if name in REMOVED:
            problems.add(where, f'"{name}" is no longer a key: {REMOVED[name]}')
        else:
            problems.add(where, f'unknown key "{name}"; allowed keys: {", ".join(allowed)}')


def _site(doc: Mapping[str, Any], base: Path, problems: _Problems) -> SiteConfig:
    values = _read_table(doc.get("site", {}), SITE_KEYS, "[site]", problems)
    _report_unknown(values, "[site]", problems, [k.name for k in SITE_KEYS])
    for key in ("store", "output", "notes"):
        if key in values:  # absolute, but symlinks kept: the output is a link to its current generation
            values[key] = Path(os.path.abspath(base / values[key]))
    return SiteConfig(**values)


def _categories(doc: Mapping[str, Any], problems: _Problems) -> dict[str, str]:
    table = doc.get("categories")
    if not isinstance(table, Mapping) or not table:
        problems.add("[categories]", 'at least one category is required, e.g. [categories] cloud = "Cloud"')
        return {}
    out: dict[str, str] = {}
    for key, name in table.items():
        if not SLUG_RE.fullmatch(key):
            problems.add("[categories]", f'category "{key}" must be a slug matching {SLUG_RE.pattern}')
        elif not isinstance(name, str) or not name.strip():
            problems.add("[categories]", f'category "{key}" must have a display name, e.g. {key} = "{key.title()}"')
        else:
            out[key] = name
    return out


def _named_variables_are_set(values: dict[str, Any], where: str, problems: _Problems) -> None:
    """Every ${NAME} in the url and header values is set now (its value is read again at each request)."""
    named = [("url", values.get("url", ""))] + [(f"headers.{n}", v) for n, v in values.get("headers", ())]
    named += [(key, values[key]) for key in ("body", "send") if values.get(key)]
    for key, value in named:
        for name in references(value):
            if name not in os.environ:
                problems.add(where, f"{key} names ${{{name}}}, which is not set in the environment; export it")


def _check(table: Any, where: str, site: SiteConfig, problems: _Problems) -> CheckConfig | None:
    values = _read_table(table, CHECK_KEYS, where, problems)
    _report_unknown(values, where, problems, [k.name for k in CHECK_KEYS])
    _named_variables_are_set(values, where, problems)
    values.setdefault("max_bytes", site.max_bytes)
    _kind_keys(table, values, where, problems)
    if "ca_file" in values:
        values["ca_file"] = _ca_file(values["ca_file"], where, problems)
    try:
        return CheckConfig(**values)
    except TypeError:
        return None


def _kind_keys(table: Any, values: dict[str, Any], where: str, problems: _Problems) -> None:
    """Keys that do not apply to the check's kind are reported; TCP and DNS checks get their method."""
    if "url" not in values or not isinstance(table, Mapping):
        return
    kind = CheckConfig(values["url"]).kind
    for key in table:
        kinds = KIND_KEYS.get(key, ("http",) if key not in COMMON_KEYS else ("http", "tcp", "dns"))
        if key in values and kind not in kinds:
            scheme = "http:// and https://" if kinds == ("http",) else " and ".join(f"{k}://" for k in kinds)
            problems.add(where, f"{key} applies to {scheme} checks only; remove it from this {kind}:// check")
    if kind != "http":
        values["method"] = kind.upper()


def _ca_file(given: str, where: str, problems: _Problems) -> Path | None:
    """The CA file, relative to the configuration's folder, read now as the checks will read it."""
    path = Path(os.path.abspath(problems.folder / given))
    try:
        ssl.create_default_context(cafile=path)
    except (OSError, ssl.SSLError) as exc:
        problems.add(where, f"ca_file {given} cannot be read as PEM certificates ({exc}); give a PEM file of CAs")
        return None
    return path


def _vendor(table: Any, where: str, problems: _Problems) -> VendorConfig | None:
    values = _read_table(table, VENDOR_KEYS, where, problems)
    _report_unknown(values, where, problems, [k.name for k in VENDOR_KEYS])
    _named_variables_are_set(values, where, problems)
    try:
        return VendorConfig(**values)
    except TypeError:
        return None


def _windows(raw: Any, where: str, problems: _Problems) -> tuple[MaintenanceWindow, ...]:
    if not isinstance(raw, list):
        problems.add(where, "maintenance must be a list of tables ([[services.maintenance]] with start and end)")
        return ()
    out = []
    for i, table in enumerate(raw, 1):
        here = f"{where}, maintenance {i}"
        values = _read_table(table, MAINTENANCE_KEYS, here, problems)
        _report_unknown(values, here, problems, [k.name for k in MAINTENANCE_KEYS])
        window = _window(values, table if isinstance(table, Mapping) else {}, here, problems)
        if window:
            out.append(window)
    return tuple(out)


def _window(
    values: dict[str, Any], raw: Mapping[str, Any], where: str, problems: _Problems
) -> MaintenanceWindow | None:
    one_off = "start" in raw or "end" in raw
    recurring = "schedule" in raw or "duration" in raw
    if one_off == recurring:
        problems.add(where, "give either start and end (one-off) or schedule and duration (recurring)")
        return None
    pair = ("start", "end") if one_off else ("schedule", "duration")
    missing = [k for k in pair if k not in raw]
    if missing:
        problems.add(where, f"{missing[0]} is required with {pair[0] if missing[0] == pair[1] else pair[1]}")
        return None
    if any(k not in values for k in pair):
        return None  # already reported as invalid
    if one_off and values["end"] <= values["start"]:
        problems.add(where, "end must be after start")
        return None
    return MaintenanceWindow(**values)


def _service_name(table: Any, index: int) -> str:
    if isinstance(table, Mapping) and isinstance(table.get("slug"), str):
        return f'service "{table["slug"]}"'
    return f"service {index}"


def _service(
    table: Any, index: int, site: SiteConfig, categories: dict[str, str], problems: _Problems
) -> ServiceConfig | None:
    where = _service_name(table, index)
    values = _read_table(table, SERVICE_KEYS, where, problems)
    nested = ("checks", "vendor", "maintenance")
    unknown = [k for k in values.pop("_unknown", []) if k not in nested]
    _report_unknown({"_unknown": unknown}, where, problems, [k.name for k in SERVICE_KEYS] + list(nested))
    if "category" in values and categories and values["category"] not in categories:
        problems.add(where, f'category "{values["category"]}" is not declared; declared: {", ".join(categories)}')
    raw_checks = table.get("checks") if isinstance(table, Mapping) else None
    vendor = table.get("vendor") if isinstance(table, Mapping) else None
    if not isinstance(raw_checks, list) or not raw_checks:
        if vendor is None:
            problems.add(where, "needs at least one check ([[services.checks]] with a url) or a vendor source")
        raw_checks = [] if not isinstance(raw_checks, list) else raw_checks
    checks = [_check(c, f"{where}, check {i}", site, problems) for i, c in enumerate(raw_checks, 1)]
    values["vendor"] = _vendor(vendor, f"{where}, vendor", problems) if vendor is not None else None
    values["maintenance"] = _windows(
        table.get("maintenance", []) if isinstance(table, Mapping) else [], where, problems
    )
    values.setdefault("failures_to_open", site.failures_to_open)
    values.setdefault("successes_to_resolve", site.successes_to_resolve)
    try:
        return ServiceConfig(checks=tuple(c for c in checks if c), **values)
    except TypeError:
        return None


def _services(
    doc: Mapping[str, Any], site: SiteConfig, categories: dict[str, str], problems: _Problems
) -> tuple[ServiceConfig, ...]:
    raw = doc.get("services")
    if not isinstance(raw, list) or not raw:
        problems.add("", "no services declared; add at least one [[services]] table")
        return ()
    services = [_service(t, i, site, categories, problems) for i, t in enumerate(raw, 1)]
    seen: set[str] = set()
    for svc in services:
        if svc and svc.slug in seen:
            problems.add(f'service "{svc.slug}"', "slug is used by more than one service; slugs must be unique")
        if svc:
            seen.add(svc.slug)
    return tuple(s for s in services if s)


TOP_LEVEL = ("site", "categories", "services", "canaries", "notify")


def _canaries(doc: Mapping[str, Any], site: SiteConfig, problems: _Problems) -> tuple[CheckConfig, ...]:
    raw = doc.get("canaries", [])
    if not isinstance(raw, list):
        problems.add("[[canaries]]", "must be a list of checks ([[canaries]] with a url)")
        return ()
    found = [_check(c, f"canary {i}", site, problems) for i, c in enumerate(raw, 1)]
    return tuple(c for c in found if c)


def _notifier(
    table: Any, index: int, services: tuple[ServiceConfig, ...], categories: dict[str, str], problems: _Problems
) -> NotifyConfig | None:
    name = table.get("name") if isinstance(table, Mapping) else None
    where = f'notifier "{name}"' if isinstance(name, str) else f"notifier {index}"
    values = _read_table(table, NOTIFY_KEYS, where, problems)
    _report_unknown(values, where, problems, [k.name for k in NOTIFY_KEYS])
    slugs = {s.slug for s in services}
    for slug_ in values.get("services", ()):
        if services and slug_ not in slugs:
            problems.add(where, f'services names "{slug_}", which is not a declared service')
    for cat in values.get("categories", ()):
        if categories and cat not in categories:
            problems.add(where, f'categories names "{cat}", which is not declared; declared: {", ".join(categories)}')
    if "url" in values and _variables_set(values["url"], where, problems):
        from statusgen.notifyurl import understood

        if not understood(values["url"], os.environ):
            shown = values["url"].split("://", 1)[0]  # the rest may hold a secret written in the file
            problems.add(
                where,
                f'url (a "{shown}://" URL) is not one Apprise can send to; see '
                "https://github.com/caronc/apprise/wiki for the form of each service's URL",
            )
    try:
        return NotifyConfig(**values)
    except TypeError:
        return None


def _variables_set(value: str, where: str, problems: _Problems) -> bool:
    missing = [name for name in references(value) if name not in os.environ]
    for name in missing:
        problems.add(where, f"url names ${{{name}}}, which is not set in the environment; export it")
    return not missing


def _notifiers(
    doc: Mapping[str, Any], services: tuple[ServiceConfig, ...], categories: dict[str, str], problems: _Problems
) -> tuple[NotifyConfig, ...]:
    raw = doc.get("notify", [])
    if not isinstance(raw, list):
        problems.add("[[notify]]", "must be a list of notifiers ([[notify]] with a name and a url)")
        return ()
    found = [_notifier(t, i, services, categories, problems) for i, t in enumerate(raw, 1)]
    names = [n.name for n in found if n]
    for name in sorted({n for n in names if names.count(n) > 1}):
        problems.add(f'notifier "{name}"', "name is used by more than one notifier; names must be unique")
    return tuple(n for n in found if n)


def nesting(text_: str) -> int:
    """The deepest nesting of arrays and inline tables (table headers count too), outside strings
    and comments: measured before parsing, since the parser recurses once per level."""
    depth = deepest = i = 0
    while i < len(text_):
        c = text_[i]
        if c == "#":
            end = text_.find("\n", i)
            i = len(text_) if end < 0 else end
        elif c in "\"'":
            i = _string_end(text_, i)
        else:
            if c in "[{":
                depth += 1
                deepest = max(deepest, depth)
            elif c in "]}":
                depth = max(depth - 1, 0)
            i += 1
    return deepest


def _string_end(text_: str, start: int) -> int:
    """Where the TOML string starting at ``start`` ends (just past its closing quote)."""
    quote = text_[start]
    mark = quote * 3 if text_.startswith(quote * 3, start) else quote
    i = start + len(mark)
    while i < len(text_):
        if quote == '"' and text_[i] == "\\":
            i += 2
        elif text_.startswith(mark, i) or (len(mark) == 1 and text_[i] == "\n"):
            return i + len(mark)
        else:
            i += 1
    return i


def parse_config(text_: str, path: Path) -> Config:
    """Validate the TOML text of ``path``; raise ConfigError listing every problem."""
    problems = _Problems(path.name, path.parent)
    if nesting(text_) > MAX_NESTING:
        raise ConfigError(
            [f"{path.name}: arrays and tables are nested more than {MAX_NESTING} deep; flatten the value"]
        )
    try:
        doc = tomllib.loads(text_)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError([f"{path.name}: not valid TOML: {exc}"]) from None
    for name in doc:
        if name not in TOP_LEVEL:
            problems.add("", f'unknown top-level key "{name}"; allowed: {", ".join(TOP_LEVEL)}')
    site = _site(doc, path.parent, problems)
    categories = _categories(doc, problems)
    services = _services(doc, site, categories, problems)
    canaries = _canaries(doc, site, problems)
    notifiers = _notifiers(doc, services, categories, problems)
    operator, found = read_folder(site.notes, shown_folder(site.notes, path.parent), [s.slug for s in services])
    problems.items += found
    if problems.items:
        raise ConfigError(problems.items)
    return Config(
        path=path.resolve(),
        site=site,
        categories=categories,
        services=with_planned(services, operator),
        canaries=canaries,
        notifiers=notifiers,
        operator=operator,
    )


def shown_folder(folder: Path, base: Path) -> str:
    """The notes folder as problems name it: relative to the configuration's folder if inside it."""
    try:
        return str(folder.relative_to(os.path.abspath(base)))
    except ValueError:
        return str(folder)


def with_planned(services: tuple[ServiceConfig, ...], operator: OperatorFiles) -> tuple[ServiceConfig, ...]:
    """The services, each with the planned maintenance of the notes folder that names it among
    its windows: it then counts as the configured ones do (results set aside, status maintenance)."""
    if not operator.maintenance:
        return services
    out = []
    for svc in services:
        planned = tuple(
            MaintenanceWindow(m.start, m.end, m.title, source="operator", message=m.message, ref=m.file)
            for m in operator.maintenance
            if svc.slug in m.services
        )
        out.append(replace(svc, maintenance=svc.maintenance + planned) if planned else svc)
    return tuple(out)


def load_config(path: str | Path) -> Config:
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise ConfigError([f"{path}: {size} bytes is larger than a configuration may be ({MAX_FILE_BYTES} bytes)"])
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError([f"{path}: file not found; pass --config FILE or create services.toml"]) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError([f"{path}: cannot be read: {exc}"]) from None
    return parse_config(raw, path)


def documented_keys() -> dict[str, tuple[Key, ...]]:
    """Every section and its keys, for the generated configuration reference."""
    return {
        "site": SITE_KEYS,
        "services": SERVICE_KEYS,
        "services.checks": CHECK_KEYS,
        "services.vendor": VENDOR_KEYS,
        "services.maintenance": MAINTENANCE_KEYS,
        "canaries": CHECK_KEYS,
        "notify": NOTIFY_KEYS,
    }


def _default_text(key: Key) -> str:
    if key.required:
        return "required"
    if key.default is None:
        return "none"
    value = key.default
    if isinstance(value, tuple):
        value = list(value)
    return f"`{value}`"


def config_reference() -> str:
    """docs/configuration.md, generated from the key declarations."""
    lines = [
        "# Configuration reference",
        "",
        "Generated by `statusgen config-docs` from `statusgen/config.py`; a test keeps it current.",
        "",
        "One TOML file (`services.toml` by default). Paths are relative to the file. "
        "`[categories]` maps each category slug to its display name, in the order pages show them. "
        "docs/checks.md shows a check of each kind (HTTP with conditions, HTTPS certificates, TCP, DNS).",
        "",
    ]
    headings = {
        "site": "[site]",
        "services": "[[services]]",
        "services.checks": "[[services.checks]]",
        "services.vendor": "[services.vendor]",
        "services.maintenance": "[[services.maintenance]]",
        "canaries": "[[canaries]] (very reliable targets that test our own vantage point; same keys as a check)",
        "notify": "[[notify]] (notifiers: who is told of incidents and maintenance; docs/notifications.md)",
    }
    for section, keys in documented_keys().items():
        lines += [f"## `{headings[section]}`", "", "| key | default | meaning |", "|---|---|---|"]
        lines += [f"| `{k.name}` | {_default_text(k)} | {k.doc} |" for k in keys]
        lines.append("")
    return "\n".join(lines)
