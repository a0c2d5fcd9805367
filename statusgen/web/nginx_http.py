"""The http-level part of the nginx configuration: the rate-limit zones (with those of the limits
granted), the maps that give each answer its Content-Security-Policy and a CORS preflight its
headers, and the whitelists that map query strings onto the tree's files; and the small writers
of nginx syntax both parts use."""

from __future__ import annotations

import re
from collections.abc import Iterable

from statusgen import routes
from statusgen.model import SLUG
from statusgen.policy import (
    DOCUMENT_POLICY,
    EMBED_POLICY,
    PAGE_POLICY,
    PAGES_PER_MINUTE,
    PREFLIGHT_HEADERS,
    RATE_PER_MINUTE,
    Grant,
)
from statusgen.web.nginx_inputs import Vocabulary

ZONE = "statusgen"  # the interface's
PAGES_ZONE = "statusgen_pages"
CONN_ZONE = "statusgen_conn"
NO_RATE_LIMIT_NOTE = "# No rate limit (--no-rate-limit): for benchmarks and for a CDN that limits instead."


def block(head: str, lines: Iterable[str], indent: str = "    ") -> list[str]:
    """``head { lines }`` with each line indented."""
    return [f"{head} {{", *[(indent + line) if line else "" for line in lines], "}"]


def exact(value: str) -> str:
    """A case-sensitive map key matching exactly ``value`` (plain map keys ignore case)."""
    return f'"~^{re.escape(value)}$"'


#: The variable that holds an answer's Content-Security-Policy.
POLICY_VARIABLE = "$statusgen_csp"


#: The variables that hold a CORS preflight's headers: empty (so never sent) on any other request.
PREFLIGHT_VARIABLES = {name: f"$statusgen_{name.lower().replace('-', '_')}" for name in PREFLIGHT_HEADERS}


#: What nginx refuses before it reads a request's path, and the status it is answered with: a path
#: or request line it cannot read (400) names nothing, 404; a request line or headers past its
#: buffers are 414, and 431 (494 is nginx's own code for these, sent as 400 unless answered
#: otherwise); another HTTP version 505.
REFUSED = {"400": "404", "414": "414", "494": "431", "505": "505"}


def refused_maps() -> list[str]:
    """The error body of each request nginx refuses before it reads the path: such a request is
    in no location, so its body is chosen by how its request line begins, the interface's JSON for
    a target under /api/ or /feed/ (``routes.INTERFACE_REQUEST``), the page for people elsewhere."""
    out = [
        "# A request refused before its path is read (a NUL or a bad escape in it, a path above the",
        "# root, a request line or headers too long, another HTTP version) is in no location: its",
        "# error body is chosen by its request line, the interface's JSON for /api/... and /feed/...",
    ]
    for status in dict.fromkeys(REFUSED.values()):
        out += block(
            f"map $request $statusgen_refused_{status}",
            [
                f'"~{routes.INTERFACE_REQUEST}"  /{routes.error_file(status)};',
                f"default  $statusgen_pages/{routes.error_page_file('404')};",
            ],
        )
    return out + [""]


def query_map(parameter: str) -> list[str]:
    return [
        f"map $args $statusgen_arg_{parameter} {{",
        f'    "~(?:^|&){parameter}=(?<statusgen_raw_{parameter}>[^&]*)" $statusgen_raw_{parameter};',
        '    default "";',
        "}",
    ]


def whitelist(parameter: str, values: Iterable[str], absent: str) -> list[str]:
    body = [f'""  {absent};'] + [f"{exact(v)}  {v};" for v in values] + ['default  "!";']
    return block(f"map $statusgen_arg_{parameter} $statusgen_{parameter}", body)


def preflight_maps() -> list[str]:
    """A CORS preflight (OPTIONS with Origin and Access-Control-Request-Method GET or HEAD), and the
    headers its answer carries: empty on every other request, and an empty header is never sent."""
    out = [
        "# A CORS preflight: a script on another origin asks before revalidating with If-None-Match.",
        *block(
            'map "$request_method:$http_access_control_request_method:$http_origin" $statusgen_preflight',
            ['"~^OPTIONS:(GET|HEAD):."  1;', 'default  "";'],
        ),
    ]
    for name, variable in PREFLIGHT_VARIABLES.items():
        out += block(f"map $statusgen_preflight {variable}", [f'1  "{PREFLIGHT_HEADERS[name]}";', 'default  "";'])
    return out


def security_policy_maps(languages: tuple[str, ...]) -> list[str]:
    """The Content-Security-Policy of each answer, by the file it sends: its pages' (.html), the
    embeddable status's in every language, or the one that runs nothing."""
    rules = [
        f'"~^/{routes.embed_pattern(languages)}$"  "{EMBED_POLICY}";',
        f'"~\\.html$"  "{PAGE_POLICY}";',
        f'default  "{DOCUMENT_POLICY}";',
    ]
    return [
        "# Content-Security-Policy, by the file answered ($uri is that file once try_files or",
        "# error_page has chosen it): the pages run the site's own script and stylesheet, fetch its",
        "# own interface and may not be framed (but the embeddable status, /embed/ and each",
        "# language's, made to be); every other file runs nothing.",
        *block(f"map $uri {POLICY_VARIABLE}", rules),
        "",
    ]


def grant_zone(per_minute: int) -> str:
    """The zone of the addresses granted ``per_minute`` requests a minute to the interface."""
    return f"{ZONE}_grant_{per_minute}"


def granted_rates(grants: Iterable[Grant]) -> list[int]:
    return sorted({g.per_minute for g in grants})


def _interface_zones(grants: tuple[Grant, ...]) -> list[str]:
    """The interface's zone, and one for each rate granted: ``geo`` names the grant of the client
    address (its most specific network), whose requests count in the zone of that rate and not
    in the interface's (a request with an empty key is counted in no zone)."""
    if not grants:
        return [f"limit_req_zone $binary_remote_addr zone={ZONE}:10m rate={RATE_PER_MINUTE}r/m;"]
    out = [
        "# Limits granted ([[rate_limit.grants]]): the addresses of a grant count in a zone of their own,",
        "# at its rate, and not in the interface's.",
        *block(
            "geo $statusgen_grant", ['default  "";', *(f"{n}  {g.per_minute};" for g in grants for n in g.networks)]
        ),
        *block("map $statusgen_grant $statusgen_limit_key", ['""  $binary_remote_addr;', 'default  "";']),
        f"limit_req_zone $statusgen_limit_key zone={ZONE}:10m rate={RATE_PER_MINUTE}r/m;",
    ]
    for rate in granted_rates(grants):
        key = f"$statusgen_granted_{rate}"
        out += block(f"map $statusgen_grant {key}", [f'"{rate}"  $binary_remote_addr;', 'default  "";'])
        out.append(f"limit_req_zone {key} zone={grant_zone(rate)}:1m rate={rate}r/m;")
    return out


def http_level(vocab: Vocabulary, rate_limit: bool) -> list[str]:
    """The lines that belong in the http block: the rate-limit zones, the policy and the query maps."""
    out = ["# -- statusgen: http-level part ---------------------------------------------------", ""]
    if rate_limit:
        out += [
            "# Rate limits per client address (the real one, see real_ip below), each kept in a 10 MB",
            f"# zone (about 80,000 addresses): {RATE_PER_MINUTE} requests a minute to the interface (/api/,",
            f"# /feed/), and {PAGES_PER_MINUTE} to the pages and their files, counted apart; and the",
            "# requests one address has in flight at once.",
            *_interface_zones(vocab.grants),
            f"limit_req_zone $binary_remote_addr zone={PAGES_ZONE}:10m rate={PAGES_PER_MINUTE}r/m;",
            f"limit_conn_zone $binary_remote_addr zone={CONN_ZONE}:10m;",
            "",
        ]
    else:
        out += [NO_RATE_LIMIT_NOTE, ""]
    out += security_policy_maps(vocab.languages)
    out += refused_maps()
    out += preflight_maps()
    out += [
        "# Query parameters. Each $statusgen_arg_NAME is the raw value of the first NAME=",
        "# in the query string (names are case-sensitive; other parameters are ignored, in any",
        "# order; an empty value counts as absent). Values are compared as sent, not",
        "# percent-decoded: the allowed values need no escaping.",
        "",
    ]
    for parameter in ("category", "status", "range", "active", "service"):
        out += query_map(parameter)
    out += [
        "",
        '# Whitelists, from the tree\'s _errors/400-*.json "allowed" lists: an allowed value',
        '# maps to itself, absence to its default, anything else to "!" (invalid). Only these',
        "# values ever reach a file name.",
        "",
    ]
    out += whitelist("category", vocab.category, "_all") + whitelist("status", vocab.status, "_all")
    out += whitelist("range", vocab.range, vocab.default_range)
    out += block(
        "map $statusgen_arg_active $statusgen_incidents_file",
        ['""  /api/v1/incidents.json;']
        + [f"{exact(v)}  /{routes.incidents_file(v)};" for v in vocab.active]
        + ['default  "";'],
    )
    out += ["", '# ?service=: a slug (its list is looked for on disk), or "!" when it cannot be one.']
    out += block(
        "map $statusgen_arg_service $statusgen_service",
        ['""  "";', f'"~^{SLUG}$"  $statusgen_arg_service;', 'default  "!";'],
    )
    out += block(
        "map $statusgen_arg_active $statusgen_active_name",
        [f'""  {routes.ALL};'] + [f"{exact(v)}  {v};" for v in vocab.active] + ['default  "!";'],
    )
    out += block(  # chosen by a map, not by "if" and "set": an "if" block would lose try_files
        "map $statusgen_service $statusgen_incidents_list",
        [
            '""  $statusgen_incidents_file;',
            f"default  /{routes.API}/incidents/_service/$statusgen_service/$statusgen_active_name.json;",
        ],
    )
    out += ["", "# /api/v1/services: which parameter is invalid (category first), and the file to serve."]
    out += block(
        'map "$statusgen_category/$statusgen_status" $statusgen_services_invalid',
        ['"~^!/"  category;', '"~/!$"  status;', 'default  "";'],
    )
    out += block(
        'map "$statusgen_category/$statusgen_status" $statusgen_services_file',
        [
            f'"_all/_all"  /{routes.services_file()};',
            'default  "/api/v1/services/_filter/$statusgen_category/$statusgen_status.json";',
        ],
    )
    out += [
        "",
        "# Content-Language: a page in a language's folder speaks it; the rest (the first",
        "# language's pages, the JSON, the feeds) the site's first, as health.json lists them.",
    ]
    out += block(
        "map $uri $statusgen_language",
        [f'"~^/{tag.lower()}/"  {tag};' for tag in vocab.languages[1:]] + [f"default  {vocab.languages[0]};"],
    )
    out += ["# The folder of the page asked for: its error pages for people are that language's."]
    out += block(
        "map $uri $statusgen_pages",
        [f'"~^/{tag.lower()}/"  /{tag.lower()};' for tag in vocab.languages[1:]] + ['default  "";'],
    )
    return out + [""]


# -- the server block ----------------------------------------------------------
