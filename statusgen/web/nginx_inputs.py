"""What the nginx configuration is written from: the command's options, checked, and the tree's
vocabulary (the values each query parameter may take, from ``_errors/400-*.json``; its languages;
the limits it grants, from ``policy.GRANTS_FILE``)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from statusgen import routes
from statusgen.errors import StatusgenError
from statusgen.model import DEFAULT_RANGE
from statusgen.policy import GRANTS_FILE, Grant, grants_from
from statusgen.web.languages import TreeLanguagesError, tree_languages

TOKEN_RE = re.compile(r"^[A-Za-z0-9_.:\[\]*~-]+$")
CIDR_RE = re.compile(r"^[0-9A-Fa-f.:]+(/[0-9]{1,3})?$|^unix:$")
HEADER_RE = re.compile(r"^[A-Za-z0-9-]+$")
PATH_FORBIDDEN = set("\"'\\$;{}#\n\r\t ")
ERROR_NAMES = {"category": "400-category", "status": "400-status", "range": "400-range", "active": "400-active"}


class NginxConfError(StatusgenError):
    """The nginx configuration cannot be written for these options or this tree."""

    exit_code = 2


@dataclass(frozen=True)
class NginxOptions:
    """What ``statusgen nginx-conf`` is asked for; every field is one command-line option."""

    site: Path = Path("site")
    listen: str = "80"
    server_name: str = "_"
    server_block: bool = False
    rate_limit: bool = True
    real_ip_from: tuple[str, ...] = ()
    real_ip_header: str = "X-Forwarded-For"
    user: str | None = None
    access_log: str = "access.log"


@dataclass(frozen=True)
class Vocabulary:
    """The allowed values of each query parameter, as the tree declares them."""

    category: tuple[str, ...]
    status: tuple[str, ...]
    range: tuple[str, ...]
    active: tuple[str, ...]
    default_range: str = DEFAULT_RANGE
    languages: tuple[str, ...] = ("en",)  # of the pages, the first at / (health.json's "languages")
    grants: tuple[Grant, ...] = ()  # the interface's limits granted to some addresses


def _allowed(site: Path, parameter: str) -> tuple[str, ...]:
    path = site / routes.error_file(ERROR_NAMES[parameter])
    try:
        values = json.loads(path.read_bytes())["error"]["allowed"]
    except FileNotFoundError:
        raise NginxConfError(
            f"{path}: not found; {site} is not a statusgen tree. Run `statusgen run` or "
            f"`statusgen build` first, or pass --site."
        ) from None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise NginxConfError(f'{path}: cannot read its "allowed" list ({exc})') from None
    bad = [v for v in values if not isinstance(v, str) or not routes.VALUE_RE.match(v)]
    if bad or not values:
        raise NginxConfError(
            f'{path}: "allowed" must be a non-empty list of values matching {routes.VALUE_RE.pattern}, got {values!r}'
        )
    return tuple(values)


def read_vocabulary(site: Path) -> Vocabulary:
    """The whitelists of the query maps, from the tree's ``_errors/400-*.json``."""
    category, status, range_, active = (_allowed(site, p) for p in ("category", "status", "range", "active"))
    return Vocabulary(category, status, range_, active, languages=read_languages(site), grants=read_grants(site))


def read_grants(site: Path) -> tuple[Grant, ...]:
    """The limits the tree grants (none without the file: a build with no [[rate_limit.grants]])."""
    path = site / GRANTS_FILE
    try:
        return grants_from(path.read_bytes())
    except FileNotFoundError:
        return ()
    except (OSError, ValueError) as exc:
        raise NginxConfError(f"{path}: cannot read the limits granted ({exc}); run `statusgen build` again") from None


def read_languages(site: Path) -> tuple[str, ...]:
    """The languages of the tree's pages, the first at /, as its health document lists them."""
    try:
        return tree_languages(site)
    except TreeLanguagesError as exc:
        raise NginxConfError(f"{exc}. Run `statusgen run` or `statusgen build` first, or pass --site.") from None


def check_options(options: NginxOptions) -> None:
    """Every option that nginx would read as syntax, or that names nothing, refused at once."""
    problems = []
    if PATH_FORBIDDEN & set(str(options.site.absolute())):
        problems.append(
            f"--site {options.site}: the path may not hold quotes, spaces, $, ;, #, braces or "
            f"backslashes (nginx would read them as syntax)"
        )
    if not TOKEN_RE.match(options.listen):
        problems.append(f"--listen {options.listen!r}: expected one word such as 80, 127.0.0.1:8080 or [::]:80")
    if options.user is not None and not (
        0 < len(options.user.split()) <= 2 and all(TOKEN_RE.match(w) for w in options.user.split())
    ):
        problems.append(f'--user {options.user!r}: expected a user, or a user and a group ("nobody nogroup")')
    if not all(TOKEN_RE.match(n) for n in options.server_name.split()) or not options.server_name.strip():
        problems.append(f"--server-name {options.server_name!r}: expected host names separated by spaces")
    problems += [
        f"--real-ip-from {c!r}: expected an address or CIDR such as 10.0.0.0/8"
        for c in options.real_ip_from
        if not CIDR_RE.match(c)
    ]
    if not HEADER_RE.match(options.real_ip_header):
        problems.append(f"--real-ip-header {options.real_ip_header!r}: expected a header name")
    if options.access_log != "off" and PATH_FORBIDDEN & set(options.access_log):
        problems.append(f"--access-log {options.access_log!r}: expected a path without spaces or quotes, or off")
    if problems:
        raise NginxConfError("\n".join(problems))
