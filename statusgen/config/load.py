"""Reading the configuration file: every table checked against its keys, every problem at once.

``load_config`` bounds the file, ``parse_config`` checks it and raises one ``ConfigError`` that
lists every problem, each naming the file, the service, the check and the key::

    services.toml: service "github", check 2: timeout must be a number of seconds, got "ten"

Unknown keys are reported, never silently ignored.
"""

from __future__ import annotations

import os
import ssl
import tomllib
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from statusgen import __version__
from statusgen.config.brand import KINDS, brand_file
from statusgen.config.keys import (
    CHECK_KEYS,
    COMMON_KEYS,
    GRANT_KEYS,
    KIND_KEYS,
    LOCATION_KEYS,
    MAINTENANCE_KEYS,
    NOTIFY_KEYS,
    SERVICE_KEYS,
    SITE_KEYS,
    SUBSCRIPTION_KEYS,
    VENDOR_KEYS,
)
from statusgen.config.notifyurl import understood
from statusgen.config.operatorfiles import OperatorFiles, read_folder
from statusgen.config.records import (
    CheckConfig,
    Config,
    LocationConfig,
    MailServer,
    MaintenanceWindow,
    NotifyConfig,
    RateGrant,
    ServiceConfig,
    SiteConfig,
    SubscriptionsConfig,
    VendorConfig,
)
from statusgen.config.secrets import references
from statusgen.config.tomlscan import too_deep
from statusgen.config.values import MAX_FILE_BYTES, MAX_NESTING, Invalid, Key, show, target, words
from statusgen.errors import ConfigError
from statusgen.model import SLUG_RE


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
        problems.add(where, f"must be a table, got {show(table)}")
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
    if values.get("user_agent") is None:  # our own name and the operator's page, never an address of ours
        base_url = str(values.get("base_url", SiteConfig.base_url))
        values["user_agent"] = f"statusgen/{__version__} (+{base_url.rstrip('/')}/method/)"
    inbox = values.get("inbox")
    if inbox and not is_remote(inbox):
        values["inbox"] = os.path.abspath(base / inbox)
    for key in KINDS:  # the brand's files: read now, once, and checked as the build will copy them
        if key in values:
            try:
                values[key] = brand_file(key, values[key], base)
            except Invalid as exc:
                problems.add("[site]", f"{key} {exc}")
                del values[key]
    return SiteConfig(**values)


def is_remote(inbox: str) -> bool:
    """An rclone remote (``NAME:PATH`` or ``:BACKEND:PATH``) rather than a folder."""
    head = inbox.split("/", 1)[0]
    return ":" in head and not inbox.startswith("/")


def _locations(doc: Mapping[str, Any], site: SiteConfig, problems: _Problems) -> tuple[LocationConfig, ...]:
    """[[locations]]: the other places probe agents run from; they need an inbox and its key."""
    raw = doc.get("locations", [])
    if not isinstance(raw, list):
        problems.add("[[locations]]", 'must be a list of tables, e.g. [[locations]] name = "eu-west"')
        return ()
    found: list[LocationConfig] = []
    for i, table in enumerate(raw, 1):
        where = f"location {i}"
        values = _read_table(table, LOCATION_KEYS, where, problems)
        _report_unknown(values, where, problems, [k.name for k in LOCATION_KEYS])
        if "name" in values:
            found.append(LocationConfig(**values))
    names = [site.location, *(loc.name for loc in found)]
    for name in sorted({n for n in names if names.count(n) > 1}):
        problems.add("[[locations]]", f'"{name}" is named more than once (site.location is "{site.location}")')
    if found and (site.inbox is None or (site.inbox_key is None and any(loc.inbox_key is None for loc in found))):
        problems.add(
            "[site]",
            "[[locations]] needs inbox and inbox_key: where agents deliver, and the key they sign with "
            "(or an inbox_key in each [[locations]])",
        )
    return tuple(found)


def _targets(doc: Mapping[str, Any], categories: dict[str, str], problems: _Problems) -> dict[str, float]:
    """[sla]: each category's availability target, by its slug."""
    table = doc.get("sla", {})
    if not isinstance(table, Mapping):
        problems.add("[sla]", "must be a table of category targets, e.g. [sla] payments = 99.95")
        return {}
    out: dict[str, float] = {}
    for key, value in table.items():
        if categories and key not in categories:
            problems.add("[sla]", f'category "{key}" is not declared; declared: {", ".join(categories)}')
            continue
        try:
            out[key] = target(value)
        except Invalid as exc:
            problems.add("[sla]", f"{key} {exc}")
    return out


def _check_locations(
    services: tuple[ServiceConfig, ...], locations: tuple[LocationConfig, ...], problems: _Problems
) -> None:
    """A check's ``locations`` name declared [[locations]]."""
    known = [loc.name for loc in locations]
    for svc in services:
        for i, check in enumerate(svc.checks, 1):
            for name in check.locations:
                if name not in known:
                    declared = ", ".join(known) or "none"
                    problems.add(f'service "{svc.slug}", check {i}', f'locations names "{name}"; declared: {declared}')


def _categories(doc: Mapping[str, Any], problems: _Problems) -> dict[str, str]:
    table = doc.get("categories")
    if not isinstance(table, Mapping) or not table:
        problems.add("[categories]", 'at least one category is required, e.g. [categories] cloud = "Cloud"')
        return {}
    out: dict[str, str] = {}
    for key, name in table.items():
        if not SLUG_RE.fullmatch(key):
            problems.add("[categories]", f'category "{key}" must be a slug matching {SLUG_RE.pattern}')
            continue
        try:
            out[key] = words(name)
        except Invalid:
            problems.add("[categories]", f'category "{key}" must have a display name, e.g. {key} = "{key.title()}"')
    return out


def _named_variables_are_set(values: dict[str, Any], where: str, problems: _Problems) -> None:
    """Every ${NAME} in the url and header values is set now (its value is read again at each request)."""
    named = [("url", values.get("url", ""))] + [(f"headers.{n}", v) for n, v in values.get("headers", ())]
    named += [(key, values[key]) for key in ("body", "send") if values.get(key)]
    for key, value in named:
        for name in references(value):
            if name not in os.environ:
                problems.add(where, f"{key} names ${{{name}}}, which is not set in the environment; export it")


def _one_authorization(values: dict[str, Any], where: str, problems: _Problems) -> None:
    """A URL's userinfo becomes an Authorization header (Basic), which would silently replace a
    configured one: the two are refused together."""
    parts = urlsplit(values.get("url", ""))
    given = [name for name, _ in values.get("headers", ()) if name.lower() == "authorization"]
    if given and (parts.username is not None or parts.password is not None):
        problems.add(
            where,
            f"url has a user name or password and headers has {given[0]}: the URL's would replace the "
            "header; keep one of them",
        )


def _check(table: Any, where: str, site: SiteConfig, problems: _Problems) -> CheckConfig | None:
    values = _read_table(table, CHECK_KEYS, where, problems)
    _report_unknown(values, where, problems, [k.name for k in CHECK_KEYS])
    _named_variables_are_set(values, where, problems)
    _one_authorization(values, where, problems)
    values.setdefault("max_bytes", site.max_bytes)
    values.setdefault("confirm", site.confirm)
    values.setdefault("confirm_every", site.confirm_every)
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
    _one_authorization(values, where, problems)
    try:
        return VendorConfig(**values)
    except TypeError:
        return None


def _vendor_files(
    services: tuple[ServiceConfig, ...], base: Path, name: str, problems: _Problems
) -> tuple[ServiceConfig, ...]:
    """A vendor source that is a local file, found relative to the configuration file (as every
    path of it is), and refused at once when it cannot be read: a run would otherwise say only,
    and quietly, that the vendor's page was never read."""
    out = []
    for svc in services:
        vendor = svc.vendor
        if vendor is not None and not urlsplit(vendor.url).netloc:
            found = Path(os.path.abspath(base / vendor.url))
            if not found.is_file() or not os.access(found, os.R_OK):
                why = "is not a file" if found.exists() else "does not exist"
                problems.add(
                    f'service "{svc.slug}", vendor',
                    f"url {found} {why} (or cannot be read): give the vendor's status URL, or the path of a "
                    f"payload file relative to {name}",
                )
            svc = replace(svc, vendor=replace(vendor, url=str(found)))
        out.append(svc)
    return tuple(out)


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


TOP_LEVEL = (
    "site",
    "categories",
    "sla",
    "services",
    "canaries",
    "locations",
    "notify",
    "rate_limit",
    "subscriptions",
)


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
    url_set = "url" in values and _variables_set(values["url"], where, problems)
    if url_set and not understood(values["url"], os.environ):
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


def _subscriptions(doc: Mapping[str, Any], base: Path, problems: _Problems) -> SubscriptionsConfig | None:
    """[subscriptions]: visitors' email updates; the credentials' variables must be set."""
    if "subscriptions" not in doc:
        return None
    where = "[subscriptions]"
    values = _read_table(doc["subscriptions"], SUBSCRIPTION_KEYS, where, problems)
    _report_unknown(values, where, problems, [k.name for k in SUBSCRIPTION_KEYS])
    servers = {}
    for key in ("mailbox", "smtp"):
        given = values.pop(key, None)
        user, password = values.pop(f"{key}_user", None), values.pop(f"{key}_password", None)
        for name, ref in ((f"{key}_user", user), (f"{key}_password", password)):
            for variable in references(ref or ""):
                if variable not in os.environ:
                    problems.add(where, f"{name} names ${{{variable}}}, which is not set in the environment; export it")
        if given is None:
            continue
        if "://" in given:
            servers[key] = MailServer(url=given, user=user, password=password)
        else:
            servers[key] = MailServer(folder=Path(os.path.abspath(base / given)))
            if user or password:
                problems.add(where, f"{key}_user and {key}_password are for a server; {key} is a folder")
    mailbox = servers.get("mailbox")
    if mailbox is not None and mailbox.url and not (mailbox.user and mailbox.password):
        problems.add(where, "mailbox_user and mailbox_password are required to log in to an IMAP mailbox")
    smtp = servers.get("smtp")
    if smtp is not None and smtp.url and bool(smtp.user) != bool(smtp.password):
        problems.add(where, "smtp_user and smtp_password go together: give both, or neither")
    if mailbox is None or smtp is None or "address" not in values:
        return None
    return SubscriptionsConfig(mailbox=mailbox, smtp=smtp, **values)


GRANTS_FORM = "[[rate_limit.grants]] with addresses, per_minute, purpose and contact"


def _grants(doc: Mapping[str, Any], problems: _Problems) -> tuple[RateGrant, ...]:
    """[[rate_limit.grants]]: higher limits of the interface for some readers, each address in one."""
    table = doc.get("rate_limit", {})
    if not isinstance(table, Mapping):
        problems.add("rate_limit", f"must be a table: {GRANTS_FORM}")
        return ()
    for name in table:
        if name != "grants":
            problems.add("rate_limit", f'unknown key "{name}"; allowed keys: grants ({GRANTS_FORM})')
    raw = table.get("grants", [])
    if not isinstance(raw, list):
        problems.add("rate_limit", f"grants must be a list of tables: {GRANTS_FORM}")
        return ()
    found = []
    for i, grant in enumerate(raw, 1):
        where = f"rate_limit grant {i}"
        values = _read_table(grant, GRANT_KEYS, where, problems)
        _report_unknown(values, where, problems, [k.name for k in GRANT_KEYS])
        if all(k.name in values for k in GRANT_KEYS):
            found.append(RateGrant(**values))
    granted: dict[str, int] = {}
    for i, grant in enumerate(found, 1):
        for network in grant.addresses:
            if network in granted:
                problems.add(
                    "[[rate_limit.grants]]",
                    f"{network} is in more than one grant ({granted[network]} and {i}): an address has one limit",
                )
            granted.setdefault(network, i)
    return tuple(found)


def parse_config(text_: str, path: Path) -> Config:
    """Validate the TOML text of ``path``; raise ConfigError listing every problem."""
    problems = _Problems(path.name, path.parent)
    deep = too_deep(text_, MAX_NESTING)
    if deep:
        raise ConfigError([f"{path.name}: {deep}"])
    try:
        doc = tomllib.loads(text_)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError([f"{path.name}: not valid TOML: {exc}"]) from None
    for name in doc:
        if name not in TOP_LEVEL:
            problems.add("", f'unknown top-level key "{name}"; allowed: {", ".join(TOP_LEVEL)}')
    site = _site(doc, path.parent, problems)
    categories = _categories(doc, problems)
    targets = _targets(doc, categories, problems)
    services = _vendor_files(_services(doc, site, categories, problems), path.parent, path.name, problems)
    canaries = _canaries(doc, site, problems)
    locations = _locations(doc, site, problems)
    _check_locations(services, locations, problems)
    notifiers = _notifiers(doc, services, categories, problems)
    grants = _grants(doc, problems)
    subscriptions = _subscriptions(doc, path.parent, problems)
    operator, found = read_folder(site.notes, shown_folder(site.notes, path.parent), [s.slug for s in services])
    problems.items += found
    if problems.items:
        raise ConfigError(problems.items)
    return Config(
        path=path.resolve(),
        site=site,
        categories=categories,
        sla=targets,
        locations=locations,
        services=with_planned(services, operator),
        canaries=canaries,
        notifiers=notifiers,
        operator=operator,
        grants=grants,
        subscriptions=subscriptions,
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
        with path.open("rb") as file:  # bounded by what is read, not by the size the file reports
            data = file.read(MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES:
            raise ConfigError(
                [f"{path}: larger than a configuration may be ({MAX_FILE_BYTES} bytes); is it the right file?"]
            )
        raw = data.decode("utf-8")
    except FileNotFoundError:
        raise ConfigError([f"{path}: file not found; pass --config FILE or create services.toml"]) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError([f"{path}: cannot be read: {exc}"]) from None
    return parse_config(raw, path)
