"""The values a configuration holds: each key's converter, and the bounds they enforce.

A converter takes what TOML gave and returns the value, or raises ``Invalid`` with a message
that completes "<key> must ...". The key tables (``keys``) pair each key with its converter.
"""

from __future__ import annotations

import ipaddress
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import parse_qs, urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from statusgen.config.conditions import Condition, ConditionError, parse
from statusgen.config.cron import CronError, parse_cron
from statusgen.i18n import SHIPPED
from statusgen.model import SEVERITIES, SLUG_RE, VENDOR_FORMATS
from statusgen.policy import MAX_GRANTED_PER_MINUTE, RATE_PER_MINUTE
from statusgen.text import one_line, outside_link, without_controls
from statusgen.timeutil import offset_time

METHODS = ("GET", "HEAD", "POST", "OPTIONS")

# Bounds that keep a typo from turning into a denial of service (a 0.001 s loop, a 1 TB read).
DAY = 86_400.0
MAX_INTERVAL = DAY
MAX_TIMEOUT = 300.0
MAX_CONFIRM_EVERY = 60.0  # seconds between a check's tries within one run
MAX_STALE_AFTER = 90 * DAY
MAX_REPORT_MONTHS = 120  # ten years of monthly reports, some 120 rows a service
MAX_WINDOW = 31 * DAY
MAX_SPREAD = 3_600.0
MAX_MILLISECONDS = 600_000
MAX_BYTES = 1 << 30
MAX_FILE_BYTES = 4 << 20  # the configuration file itself
MAX_NESTING = 16  # arrays, inline tables and table headers inside one another; parts of a dotted key
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


def show(value: Any) -> str:
    """A value as a problem quotes it."""
    return f'"{value}"' if isinstance(value, str) else repr(value)


def text(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise Invalid(f"must be a non-empty string, got {show(value)}")
    return value


def words(value: Any) -> str:
    """Text readers see (a name, a title, a label): one line, its control characters gone
    (``statusgen.text``). TOML holds one only as an escape, which no format could show: a form
    feed in a name reads as the space it stands for, and a feed or a badge stays well-formed."""
    if not isinstance(value, str) or not one_line(value):
        raise Invalid(f"must be a non-empty string, got {show(value)}")
    return one_line(value)


def optional_words(value: Any) -> str | None:
    return None if value == "" else words(value)


def matched_text(value: Any) -> str:
    """Text a check looks for in an answer (a keyword, an expected banner or value): it is
    published too (the check's JSON, a failure's reason), so it may hold no control character;
    it is refused rather than cleaned, since cleaning would change what is checked."""
    given = text(value)
    found = _control_in(given)
    if found:
        raise Invalid(f"must hold no control character, got {found}; remove it {_PUBLISHED}")
    return given


_PUBLISHED = "(the text is published, where such a character breaks a feed)"


def _control_in(given: str) -> str | None:
    """The first control character of ``given`` (as U+XXXX), by the rule of ``statusgen.text``."""
    found = [c for c in given if without_controls(c) != c]
    return f"U+{ord(found[0]):04X}" if found else None


def optional_matched_text(value: Any) -> str | None:
    return None if value == "" else matched_text(value)


def slug(value: Any) -> str:
    if not isinstance(value, str) or not SLUG_RE.fullmatch(value):
        raise Invalid(f"must be a slug matching {SLUG_RE.pattern}, got {show(value)}")
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
            raise Invalid(f"must be a number of seconds, {low} and at most {limit:g}, got {show(value)}")
        return number

    return convert


def milliseconds(value: Any) -> float:
    number = _number(value)
    if number is None or not 0 < number <= MAX_MILLISECONDS:
        raise Invalid(
            f"must be a number of milliseconds greater than 0 and at most {MAX_MILLISECONDS}, got {show(value)}"
        )
    return number


def count(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 1000:
        raise Invalid(f"must be a whole number from 1 to 1000, got {show(value)}")
    return value


def byte_size(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1024 <= value <= MAX_BYTES:
        raise Invalid(f"must be a whole number of bytes, from 1024 to {MAX_BYTES}, got {show(value)}")
    return value


def http_url(value: Any) -> str:
    """A URL readers may follow: http(s) with a host, by the one rule of links (``outside_link``)."""
    link = outside_link(value) if isinstance(value, str) else None
    if link is None or not urlsplit(link).hostname:
        raise Invalid(f"must be an http:// or https:// URL, got {show(value)}")
    return link


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
        f"(TYPE one of {', '.join(DNS_TYPES)}), got {show(value)}"
    )


def base_url(value: Any) -> str:
    return http_url(value).rstrip("/")


def method(value: Any) -> str:
    if not isinstance(value, str) or value.upper() not in METHODS:
        raise Invalid(f"must be one of {', '.join(METHODS)}, got {show(value)}")
    return value.upper()


def status_codes(value: Any) -> tuple[int, ...]:
    codes = value if isinstance(value, list) else [value]
    if not codes or not all(isinstance(c, int) and not isinstance(c, bool) and 100 <= c <= 599 for c in codes):
        raise Invalid(f"must be an HTTP status code or a list of them (100-599), got {show(value)}")
    return tuple(codes)


def optional_text(value: Any) -> str | None:
    return None if value == "" else text(value)


def path_value(value: Any) -> str:
    return text(value)


def vendor_format(value: Any) -> str:
    if value != "auto" and value not in VENDOR_FORMATS:
        raise Invalid(f"must be one of auto, {', '.join(VENDOR_FORMATS)}, got {show(value)}")
    return str(value)


def string_list(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise Invalid(f"must be a list of non-empty strings, got {show(value)}")
    return tuple(value)


def url_or_path(value: Any) -> str:
    given = text(value)
    scheme = urlsplit(given).scheme
    if scheme and len(scheme) > 1 and scheme not in ("http", "https"):  # one letter: a Windows drive
        raise Invalid(f"must be an http:// or https:// URL or a local file, got {show(given)}")
    return given


HEADER_NAME_RE = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")


def headers(value: Any) -> tuple[tuple[str, str], ...]:
    """A table of request headers; values may name environment variables (``${TOKEN}``)."""
    if not isinstance(value, Mapping):
        example = '{ Authorization = "Bearer ${TOKEN}" }'
        raise Invalid(f"must be a table of header names and values, like {example}, got {show(value)}")
    out = []
    for name, v in value.items():
        if not HEADER_NAME_RE.fullmatch(name):
            raise Invalid(f"must have header names made of letters, digits and -, got {show(name)}")
        if not isinstance(v, str) or "\r" in v or "\n" in v:
            raise Invalid(f"must have one-line string values, got {show(v)} for {name}")
        out.append((name, v))
    return tuple(out)


def conditions(value: Any) -> tuple[Condition, ...]:
    """A list of conditions on the answer (``statusgen.config.conditions``), each checked here."""
    if not isinstance(value, list) or not value or len(value) > MAX_CONDITIONS:
        example = '["[STATUS] == 200", "[BODY].status == UP"]'
        raise Invalid(f"must be a list of 1 to {MAX_CONDITIONS} conditions, like {example}, got {show(value)}")
    out = []
    for i, line in enumerate(value, 1):
        found = _control_in(line) if isinstance(line, str) else None
        if found:
            raise Invalid(f"has a condition {i} holding a control character, {found}; remove it {_PUBLISHED}")
        try:
            out.append(parse(line))
        except ConditionError as exc:
            raise Invalid(f"has a condition {i} ({show(line)}) that does not read: {exc}") from None
    return tuple(out)


MAX_CONFIRM = 5  # tries again within a run: each holds the run up to confirm_every longer


def confirmations(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_CONFIRM:
        raise Invalid(f"must be a whole number of tries from 0 (none) to {MAX_CONFIRM}, got {show(value)}")
    return value


def days(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_CERT_DAYS:
        raise Invalid(f"must be a whole number of days from 0 (no warning) to {MAX_CERT_DAYS}, got {show(value)}")
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
        raise Invalid(f"must be an IP address, optionally with a port (127.0.0.1:5353, [::1]:53), got {show(value)}")
    return str(value)


_NETWORKS = 'addresses or networks in CIDR form, a list such as ["192.0.2.10", "10.0.0.0/8", "2001:db8::/32"]'


def networks(value: Any) -> tuple[str, ...]:
    """Client addresses or networks (an address alone is its own /32 or /128), each as ipaddress
    writes it: what nginx's geo map and the preview server match a client against."""
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise Invalid(f"must be {_NETWORKS}, got {show(value)}")
    out = []
    for given in value:
        try:
            out.append(str(ipaddress.ip_network(given.strip())))
        except ValueError:
            raise Invalid(f"must be {_NETWORKS}, got {show(given)}{_network_hint(given)}") from None
    return tuple(dict.fromkeys(out))


def _network_hint(given: str) -> str:
    """What a network with host bits set meant (10.0.0.1/8 is in 10.0.0.0/8)."""
    try:
        return f" (write its network, {ipaddress.ip_network(given.strip(), strict=False)})"
    except ValueError:
        return ""


def granted_rate(value: Any) -> int:
    """The requests a minute a grant allows: more than everyone's, and bounded."""
    if isinstance(value, bool) or not isinstance(value, int) or not RATE_PER_MINUTE < value <= MAX_GRANTED_PER_MINUTE:
        raise Invalid(
            f"must be a whole number of requests a minute, more than the {RATE_PER_MINUTE} everyone gets and at "
            f"most {MAX_GRANTED_PER_MINUTE}, got {show(value)}"
        )
    return value


def ratio(value: Any) -> float:
    number = _number(value)
    if number is None or not 0 < number <= 1:
        raise Invalid(f"must be a number above 0 and at most 1, got {show(value)}")
    return number


def target(value: Any) -> float:
    """An availability target, a percentage below 100 (99.9)."""
    number = _number(value)
    if number is None or not 0 < number < 100:
        raise Invalid(f"must be a percentage above 0 and below 100, such as 99.9, got {show(value)}")
    return number


def key_reference(value: Any) -> str:
    """A secret named by its environment variable alone (``${STATUSGEN_INBOX_KEY}``): the key itself
    is never written in the configuration, so it cannot reach the site, the store or the logs."""
    if not isinstance(value, str) or not re.fullmatch(r"\$\{[A-Za-z_][A-Za-z0-9_]*\}", value):
        got = (
            "a literal value (write the key in the environment, never here)" if isinstance(value, str) else show(value)
        )
        raise Invalid(f'must name an environment variable, such as "${{STATUSGEN_INBOX_KEY}}", got {got}')
    return value


MINORITY_FAILURE = ("degraded", "ignored")


def minority_failure(value: Any) -> str:
    if value not in MINORITY_FAILURE:
        raise Invalid(f"must be one of {', '.join(MINORITY_FAILURE)}, got {show(value)}")
    return str(value)


def languages(value: Any) -> tuple[str, ...]:
    shipped = ", ".join(f'"{t}"' for t in SHIPPED)
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise Invalid(f'must be a list of language tags, the first served at /, e.g. ["en", "de"], got {show(value)}')
    by_name = {t.lower().replace("_", "-"): t for t in SHIPPED}
    tags = []
    for v in value:
        tag = by_name.get(v.lower().replace("_", "-"))
        if tag is None:
            raise Invalid(f"{show(v)} is not a language statusgen speaks: one of {shipped} (docs/translating.md)")
        if tag in tags:
            raise Invalid(f"names {show(v)} twice")
        tags.append(tag)
    return tuple(tags)


def months(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_REPORT_MONTHS:
        raise Invalid(f"must be a whole number of months from 1 to {MAX_REPORT_MONTHS}, got {show(value)}")
    return value


def cron(value: Any) -> str:
    try:
        parse_cron(value if isinstance(value, str) else "")
    except CronError as exc:
        raise Invalid(f"must be a cron expression (minute hour day month weekday), got {show(value)}: {exc}") from None
    return str(value)


def boolean(value: Any) -> bool:
    if not isinstance(value, bool):
        raise Invalid(f"must be true or false, got {show(value)}")
    return value


def timestamp(value: Any) -> datetime:
    """A TOML offset date-time, or an RFC 3339 string with an offset."""
    at = offset_time(value)
    if at is None:
        raise Invalid(f"must be a date-time with an offset, like 2026-11-22T20:00:00Z, got {show(value)}")
    return at


def time_zone(value: Any) -> str:
    """An IANA time zone name (``Europe/Paris``), as the vendor key ``timezone`` takes it."""
    name = text(value)
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise Invalid(f"must be a time zone name such as UTC or Europe/Paris, got {show(value)}") from None
    return name


NOTIFY_EVENTS = (
    "incident.opened",
    "incident.escalated",
    "incident.noted",
    "incident.resolved",
    "vendor.incident",
    "maintenance.announced",
    "maintenance.started",
    "maintenance.ended",
)
MAX_NOTIFY_TIMEOUT = 60.0
MAX_CATCH_UP = 7 * DAY


def notify_events(value: Any) -> tuple[str, ...]:
    chosen = value if isinstance(value, list) else None
    if not chosen or not all(v in NOTIFY_EVENTS for v in chosen):
        raise Invalid(f"must be a list of events from {', '.join(NOTIFY_EVENTS)}, got {show(value)}")
    return tuple(chosen)


def severity(value: Any) -> str:
    if value not in SEVERITIES:
        raise Invalid(f"must be one of {', '.join(SEVERITIES)}, got {show(value)}")
    return str(value)


def notify_url(value: Any) -> str:
    given = text(value)
    if "://" not in given:
        raise Invalid(
            f"must be an Apprise URL (slack://..., mailto://..., json://...) or statusgen:// for the "
            f"generic webhook, got {show(given)}"
        )
    return given


# -- subscriptions by email ----------------------------------------------------------------------

#: An address as the subscriptions' messages are written from and to: no display name, no space,
#: no control character, one @ with a dotted domain (or a loopback one, for a host's own delivery).
EMAIL_ADDRESS = re.compile(r"[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?")


def email_address(value: Any) -> str:
    given = text(value)
    if not EMAIL_ADDRESS.fullmatch(given) or ".." in given:
        raise Invalid(f'must be an email address alone, such as "status@example.com", got {show(given)}')
    return given


#: The schemes of a mailbox and of a mail server, and their default ports. The plain ones (no TLS)
#: are for a server on this host only: credentials never cross a network in clear.
MAILBOX_SCHEMES = {"imaps": 993, "imap+starttls": 143, "imap": 143}
SMTP_SCHEMES = {"smtps": 465, "smtp+starttls": 587, "smtp": 25}
PLAIN_SCHEMES = ("imap", "smtp")


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def mail_server(schemes: Mapping[str, int], example: str) -> Callable[[Any], str]:
    """A mail server's URL (``schemes``), or a local folder (a Maildir): checked, kept as written."""
    names = ", ".join(f"{s}://" for s in schemes)

    def convert(value: Any) -> str:
        given = text(value)
        if "://" not in given:
            return given  # a folder: resolved against the configuration's folder by load
        parts = urlsplit(given)
        if parts.scheme not in schemes or not parts.hostname:
            raise Invalid(f"must be a {names} URL with a host, or a local Maildir folder, got {show(given)}")
        if parts.username or parts.password or parts.query or parts.fragment:
            raise Invalid(
                f"must hold no user, password or query (they go in their own keys, from the environment), "
                f'such as "{example}"'
            )
        try:
            _ = parts.port  # urlsplit checks the port only when it is read
        except ValueError:
            raise Invalid(f"has a port that is not a number from 1 to 65535: {show(given)}") from None
        if parts.scheme in PLAIN_SCHEMES and not _is_loopback(parts.hostname):
            raise Invalid(
                f"{parts.scheme}:// sends the login in clear, so it is only for a server on this host "
                f"(127.0.0.1, ::1, localhost); use {parts.scheme}s:// or {parts.scheme}+starttls:// for "
                f"{parts.hostname}"
            )
        return given

    return convert


def limit(low: int, high: int) -> Callable[[Any], int]:
    """A whole number from ``low`` to ``high``."""

    def convert(value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise Invalid(f"must be a whole number from {low} to {high}, got {show(value)}")
        return value

    return convert
