"""Production serving: the nginx configuration that serves a statusgen tree.

``nginx_config(options)`` returns a complete, commented ``nginx.conf`` (or,
with ``server_block``, only the http-level lines and the server block to
include in an existing configuration). It applies the HTTP rules of the API
(docs/api.md) that ``statusgen serve`` applies:

- query strings are mapped onto the pre-rendered files through ``map``
  whitelists; a raw query value never reaches a path. The whitelists (the
  categories, statuses, ranges and ``active`` values) are read from the tree
  itself: the ``allowed`` lists of ``_errors/400-*.json``. When categories
  change, generate the file again and reload nginx;
- slugs in paths must match the slug pattern and name a file of the tree;
- the interface (/api/ and /feed/) answers 400, 404, 405 and 429 with the
  tree's ``_errors/*.json`` (so they carry an ETag), 405 with ``Allow``, 429
  with ``Retry-After`` and ``no-store``; pages answer 404 and 429 with the
  tree's HTML error pages, ``_errors/*.html``;
- ``Cache-Control: public, max-age=15``, CORS, charsets, Atom for /feed/*.xml,
  ``gzip_static`` for the precompressed copies, no directory listings;
- 120 requests to the interface per client address: ``limit_req`` with rate
  120r/m and burst 119 (nodelay) answers 120 at once and refuses the 121st.
  It is a leaky bucket, not the preview server's sliding window: after a
  burst a client gets one more request every 0.5 s, so over a whole minute
  it may get more than 120 (up to 239 when the bucket starts empty). Pages
  and static files count in a zone of their own, with a limit of their own
  (``policy.PAGES_PER_MINUTE``), so a person browsing never uses up the
  interface's, nor the other way round.

- abuse: a deadline for a request's headers (and a body's reads), for each answer and
  for an idle connection, as ``statusgen serve`` has them; in-flight requests per
  address bounded (``limit_conn``); in a complete file, connections and open files
  enough per worker that one address holding thousands of slow connections never
  uses them up (a connection still sending its headers is not counted by
  ``limit_conn``: the header deadline and the room are what bound it);
- security headers on every answer, as ``statusgen serve`` sends them: the pages'
  Content-Security-Policy, a policy that runs nothing for every other file, and
  Referrer-Policy.

``root`` points at the output link, not at a generation, and there is no
``open_file_cache``: every request resolves the link, so the atomic swap of
``statusgen.tree`` is seen at once and never half-way.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from statusgen import routes
from statusgen.model import SLUG
from statusgen.policy import (
    ATOM,
    CACHE_CONTROL,
    COMMON_HEADERS,
    CONNECTIONS_PER_ADDRESS,
    CONTENT_TYPES,
    DOCUMENT_POLICY,
    EMBED_POLICY,
    HEADER_TIMEOUT,
    IDLE_TIMEOUT,
    PAGE_POLICY,
    PAGES_PER_MINUTE,
    PREFLIGHT_HEADERS,
    PROMETHEUS,
    RATE_PER_MINUTE,
    REFERRER_POLICY,
    SEND_TIMEOUT,
)
from statusgen.web.nginx_inputs import (
    NginxOptions,
    Vocabulary,
    check_options,
    read_vocabulary,
)

ZONE = "statusgen"  # the interface's
PAGES_ZONE = "statusgen_pages"
CONN_ZONE = "statusgen_conn"
WORKER_CONNECTIONS = 8192  # per worker: far more than one address's slow connections may hold
WORKER_FILES = 2 * WORKER_CONNECTIONS  # a connection sending a file holds two descriptors
CONF_VALUE_MAX = 2000  # nginx reads a configuration value of at most 4 KB: longer ones are cut in parts
NO_RATE_LIMIT_NOTE = "# No rate limit (--no-rate-limit): for benchmarks and for a CDN that limits instead."
RETRY_AFTER = 1  # seconds: after a refusal, either bucket lets a request through within the second
TEMP_PATHS = ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")


# -- small writers -------------------------------------------------------------


def _block(head: str, lines: Iterable[str], indent: str = "    ") -> list[str]:
    """``head { lines }`` with each line indented."""
    return [f"{head} {{", *[(indent + line) if line else "" for line in lines], "}"]


def _exact(value: str) -> str:
    """A case-sensitive map key matching exactly ``value`` (plain map keys ignore case)."""
    return f'"~^{re.escape(value)}$"'


def _policy_parts(policy: str) -> list[str]:
    """``policy`` cut at spaces into parts nginx can read, which join back into it."""
    parts, words = [""], policy.split(" ")
    for word in words:
        if len(parts[-1]) + len(word) + 1 > CONF_VALUE_MAX:
            parts.append("")
        parts[-1] += word + " "
    parts[-1] = parts[-1][:-1]
    return parts


def _policy_variables() -> list[str]:
    return [f"$statusgen_csp_{n}" for n in range(len(_policy_parts(PAGE_POLICY)))]


#: The variables that hold a CORS preflight's headers: empty (so never sent) on any other request.
PREFLIGHT_VARIABLES = {name: f"$statusgen_{name.lower().replace('-', '_')}" for name in PREFLIGHT_HEADERS}


def _headers(cache: str = CACHE_CONTROL, extra: dict[str, str] | None = None) -> list[str]:
    pairs = {
        "Cache-Control": cache,
        **COMMON_HEADERS,
        "Content-Security-Policy": "".join(_policy_variables()),
        "Referrer-Policy": REFERRER_POLICY,
        **PREFLIGHT_VARIABLES,
        **(extra or {}),
    }
    return [f'add_header {name} "{value}" always;' for name, value in pairs.items()]


PEOPLE = ("404", "429", "400", "403")  # what a page tells people in HTML; 405 is always the JSON body


def _error_pages(special: dict[str, str] | None = None, html: tuple[str, ...] = ()) -> list[str]:
    """The error_page lines of one level: each status to its error file, the interface's JSON
    body, or the HTML page for the statuses in ``html``.

    A level with any error_page line inherits none from above, so every
    location that changes one repeats them all.
    """
    pages = {"404": "404", "405": "405", "429": "429", "400": "=404 404", "403": "=404 404", **(special or {})}
    lines = []
    for code, target in pages.items():
        status, _, name = target.rpartition(" ")
        file = routes.error_page_file(name) if code in html else routes.error_file(name)
        lines.append(f"error_page {code} {status + ' ' if status else ''}/{file};")
    return lines


# -- http level: the rate-limit zone and the query maps ------------------------


def _query_map(parameter: str) -> list[str]:
    return [
        f"map $args $statusgen_arg_{parameter} {{",
        f'    "~(?:^|&){parameter}=(?<statusgen_raw_{parameter}>[^&]*)" $statusgen_raw_{parameter};',
        '    default "";',
        "}",
    ]


def _whitelist(parameter: str, values: Iterable[str], absent: str) -> list[str]:
    body = [f'""  {absent};'] + [f"{_exact(v)}  {v};" for v in values] + ['default  "!";']
    return _block(f"map $statusgen_arg_{parameter} $statusgen_{parameter}", body)


def _preflight_maps() -> list[str]:
    """A CORS preflight (OPTIONS with Origin and Access-Control-Request-Method GET or HEAD), and the
    headers its answer carries: empty on every other request, and an empty header is never sent."""
    out = [
        "# A CORS preflight: a script on another origin asks before revalidating with If-None-Match.",
        *_block(
            'map "$request_method:$http_access_control_request_method:$http_origin" $statusgen_preflight',
            ['"~^OPTIONS:(GET|HEAD):."  1;', 'default  "";'],
        ),
    ]
    for name, variable in PREFLIGHT_VARIABLES.items():
        out += _block(f"map $statusgen_preflight {variable}", [f'1  "{PREFLIGHT_HEADERS[name]}";', 'default  "";'])
    return out


def _security_policy_maps() -> list[str]:
    """The Content-Security-Policy of each answer, by the file it sends: its pages' (.html)
    or the one that runs nothing. The pages' policy is long, so it is held in parts."""
    page, document = _policy_parts(PAGE_POLICY), DOCUMENT_POLICY
    embed = _policy_parts(EMBED_POLICY)
    embed += [""] * (len(page) - len(embed))  # never longer: it differs by one shorter word
    out = [
        "# Content-Security-Policy, by the file answered ($uri is that file once try_files or",
        "# error_page has chosen it): the pages run the site's own script and stylesheet, fetch its",
        "# own interface, allow the inline styles of the front page's bar by their hashes, and may",
        "# not be framed (but /embed/, made to be); every other file runs nothing. Held in parts",
        "# (nginx reads a value of at most 4 KB), joined in add_header.",
    ]
    for n, (variable, part) in enumerate(zip(_policy_variables(), page, strict=True)):
        rules = [f'"~^/embed/.*\\.html$"  "{embed[n]}";', f'"~\\.html$"  "{part}";']
        out += _block(f"map $uri {variable}", [*rules, f'default  "{"" if n else document}";'])
    return out + [""]


def http_level(vocab: Vocabulary, rate_limit: bool) -> list[str]:
    """The lines that belong in the http block: the rate-limit zones, the policy and the query maps."""
    out = ["# -- statusgen: http-level part ---------------------------------------------------", ""]
    if rate_limit:
        out += [
            "# Rate limits per client address (the real one, see real_ip below), each kept in a 10 MB",
            f"# zone (about 80,000 addresses): {RATE_PER_MINUTE} requests a minute to the interface (/api/,",
            f"# /feed/), and {PAGES_PER_MINUTE} to the pages and their files, counted apart; and the",
            "# requests one address has in flight at once.",
            f"limit_req_zone $binary_remote_addr zone={ZONE}:10m rate={RATE_PER_MINUTE}r/m;",
            f"limit_req_zone $binary_remote_addr zone={PAGES_ZONE}:10m rate={PAGES_PER_MINUTE}r/m;",
            f"limit_conn_zone $binary_remote_addr zone={CONN_ZONE}:10m;",
            "",
        ]
    else:
        out += [NO_RATE_LIMIT_NOTE, ""]
    out += _security_policy_maps()
    out += _preflight_maps()
    out += [
        "# Query parameters. Each $statusgen_arg_NAME is the raw value of the first NAME=",
        "# in the query string (names are case-sensitive; other parameters are ignored, in any",
        "# order; an empty value counts as absent). Values are compared as sent, not",
        "# percent-decoded: the allowed values need no escaping.",
        "",
    ]
    for parameter in ("category", "status", "range", "active", "service"):
        out += _query_map(parameter)
    out += [
        "",
        '# Whitelists, from the tree\'s _errors/400-*.json "allowed" lists: an allowed value',
        '# maps to itself, absence to its default, anything else to "!" (invalid). Only these',
        "# values ever reach a file name.",
        "",
    ]
    out += _whitelist("category", vocab.category, "_all") + _whitelist("status", vocab.status, "_all")
    out += _whitelist("range", vocab.range, vocab.default_range)
    out += _block(
        "map $statusgen_arg_active $statusgen_incidents_file",
        ['""  /api/v1/incidents.json;']
        + [f"{_exact(v)}  /{routes.incidents_file(v)};" for v in vocab.active]
        + ['default  "";'],
    )
    out += ["", '# ?service=: a slug (its list is looked for on disk), or "!" when it cannot be one.']
    out += _block(
        "map $statusgen_arg_service $statusgen_service",
        ['""  "";', f'"~^{SLUG}$"  $statusgen_arg_service;', 'default  "!";'],
    )
    out += _block(
        "map $statusgen_arg_active $statusgen_active_name",
        [f'""  {routes.ALL};'] + [f"{_exact(v)}  {v};" for v in vocab.active] + ['default  "!";'],
    )
    out += _block(  # chosen by a map, not by "if" and "set": an "if" block would lose try_files
        "map $statusgen_service $statusgen_incidents_list",
        [
            '""  $statusgen_incidents_file;',
            f"default  /{routes.API}/incidents/_service/$statusgen_service/$statusgen_active_name.json;",
        ],
    )
    out += ["", "# /api/v1/services: which parameter is invalid (category first), and the file to serve."]
    out += _block(
        'map "$statusgen_category/$statusgen_status" $statusgen_services_invalid',
        ['"~^!/"  category;', '"~/!$"  status;', 'default  "";'],
    )
    out += _block(
        'map "$statusgen_category/$statusgen_status" $statusgen_services_file',
        [
            f'"_all/_all"  /{routes.services_file()};',
            'default  "/api/v1/services/_filter/$statusgen_category/$statusgen_status.json";',
        ],
    )
    return out + [""]


# -- the server block ----------------------------------------------------------


def _server_settings(options: NginxOptions) -> list[str]:
    root = str(options.site.absolute())
    out = [
        f"listen {options.listen};",
        f"server_name {options.server_name};",
        "",
        "# The output link, not a generation: each request resolves it, so the atomic swap of",
        "# a new generation (one rename) is seen at once. No open_file_cache: it would keep",
        "# answering from the previous generation's files.",
        f'root "{root}";',
        "disable_symlinks off;",
        "open_file_cache off;",
        "",
        "# Files: sendfile; ETag from mtime and size (the generator leaves unchanged files",
        "# untouched and moves a changed file's mtime to a new second); the precompressed .gz",
        "# copies for clients that accept gzip (never compressed on the fly); no listings.",
        "sendfile on;",
        "etag on;",
        "if_modified_since exact;",
        "gzip off;",
        "gzip_static on;",
        "gzip_vary on;",
        "autoindex off;",
        "server_tokens off;",
        "absolute_redirect off;",
        "",
        "# Content types with their charset (set in the type itself, because nginx's charset",
        "# filter skips gzip_static answers). /feed/*.xml is Atom, see its location.",
        *_block("types", [f'"{ctype}"  {ext};' for ext, ctype in CONTENT_TYPES.items()]),
        "default_type application/octet-stream;",
        "charset off;",
        "",
        *_timeouts(),
    ]
    return out


def _timeouts() -> list[str]:
    return [
        "# Deadlines, as statusgen serve has them: a slow client holds a connection only so long.",
        "# The headers of a request within their time (a new connection's first request from",
        "# its opening); a body (never read here, only discarded) read by read; an answer taken",
        "# write by write; an idle connection between requests. Timed-out connections are reset,",
        "# so their memory is freed at once.",
        f"client_header_timeout {HEADER_TIMEOUT}s;",
        f"client_body_timeout {HEADER_TIMEOUT}s;",
        f"send_timeout {SEND_TIMEOUT}s;",
        f"keepalive_timeout {IDLE_TIMEOUT}s;",
        "reset_timedout_connection on;",
        "",
    ]


def _real_ip(options: NginxOptions) -> list[str]:
    if not options.real_ip_from:
        return ["# The client is the connection's address (no trusted proxy: --real-ip-from).", ""]
    return [
        "# The client address comes from the trusted proxies' header; the rate limit counts it.",
        *[f"set_real_ip_from {cidr};" for cidr in options.real_ip_from],
        f"real_ip_header {options.real_ip_header};",
        "real_ip_recursive on;",
        "",
    ]


def _rate_limit(options: NginxOptions) -> list[str]:
    if not options.rate_limit:
        return [NO_RATE_LIMIT_NOTE, ""]
    return [
        f"# Pages and their files: {PAGES_PER_MINUTE} at once are answered, then one every",
        f"# {60 / PAGES_PER_MINUTE:g} s. The interface's locations (/api/, /feed/) count in their zone instead.",
        f"limit_req zone={PAGES_ZONE} burst={PAGES_PER_MINUTE - 1} nodelay;",
        "limit_req_status 429;",
        "limit_req_log_level warn;   # a refusal is expected: logged as a warning, not an error",
        "",
        f"# At most {CONNECTIONS_PER_ADDRESS} requests in flight from one address (a slow reader of a",
        "# large answer holds one): past it, the 429 of the location. Counted once headers are read;",
        "# connections still sending theirs are bounded by client_header_timeout instead.",
        f"limit_conn {CONN_ZONE} {CONNECTIONS_PER_ADDRESS};",
        "limit_conn_status 429;",
        "limit_conn_log_level warn;",
        "",
    ]


def _interface_limit(options: NginxOptions, explain: bool = False) -> list[str]:
    """The interface's limit, in each of its locations (a location's limit_req replaces the server's)."""
    if not options.rate_limit:
        return []
    line = f"limit_req zone={ZONE} burst={RATE_PER_MINUTE - 1} nodelay;"
    if not explain:
        return [line]
    return [
        f"# {RATE_PER_MINUTE} at once are answered (the first plus a burst of {RATE_PER_MINUTE - 1}, "
        "without delay); the next is",
        f"# refused with 429. Then one request every {60 / RATE_PER_MINUTE:g} s is let through, hence Retry-After: 1.",
        line,
    ]


def _common(options: NginxOptions) -> list[str]:
    return [
        "# Every answer: fresh for 15 s, readable by scripts on any origin, ETag and Retry-After",
        "# exposed, its security headers (see the Content-Security-Policy maps above).",
        '# "always" puts them on errors too. A location with an add_header of its own',
        "# loses these (nginx 1.22 has no inheritance of add_header), so the two error locations",
        "# that add headers repeat them.",
        *_headers(),
        "",
        "# Errors are answered with the tree's error files, with their status and an ETag: here",
        "# (pages) the HTML pages, in the interface's locations the JSON bodies.",
        "# recursive_error_pages: an error answer is counted by the rate limit too, and a client",
        "# over the limit gets the 429 file. A request nginx itself refuses as malformed (such as",
        "# a path climbing above the root with ..) gets the 404 page, like any path outside the tree,",
        "# and so does a file nginx may not read (403).",
        "recursive_error_pages on;",
        *_error_pages(html=PEOPLE),
        "",
        "# A CORS preflight (OPTIONS asking for GET or HEAD) is 204, with the headers its maps give;",
        "# GET and HEAD only otherwise; anything else is 405 (with Allow, see the 405 location).",
        *_block("if ($statusgen_preflight)", ["return 204;"]),
        *_block(r"if ($request_method !~ ^(GET|HEAD)$)", ["return 405;"]),
        "",
    ]


def _error_locations(options: NginxOptions) -> list[str]:
    """The error files' locations. A request is counted by the rate limit once, where it is first
    checked: most errors are found after that, but one refused before (a 400 or 405 answered by
    ``return``) is counted here, so the JSON bodies count in the interface's zone, the pages'
    in theirs."""
    # A refusal here is the JSON 429; a request for an error file itself is a missing page.
    interface = [*_interface_limit(options), *_error_pages(html=("404", "400", "403"))]
    retry = _headers(cache="no-store", extra={"Retry-After": str(RETRY_AFTER)})
    return [
        "# The error files: never requested directly, only by error_page.",
        *_block(f"location ^~ /{routes.ERROR_DIR}/", ["internal;", *_block(r"location ~ \.json$", interface)]),
        *_block(
            f"location = /{routes.error_file('405')}",
            ["internal;", *interface, *_headers(extra={"Allow": routes.ALLOW})],
        ),
        *_block(f"location = /{routes.error_file('429')}", ["internal;", *interface, *retry]),
        *_block(f"location = /{routes.error_page_file('429')}", ["internal;", *retry]),
        "",
    ]


def _api_routes() -> list[str]:
    """The API's locations, nested in /api/: each URL onto its pre-rendered file (a trailing
    slash is allowed)."""
    service_errors = _error_pages({"404": "404-service"})
    api = "/" + routes.API
    return [
        "# Names starting with a dot are never served.",
        *_block(r"location ~ /\.", ["return 404;"]),
        *_block(
            rf'location ~ "^{api}/(?<statusgen_doc>snapshot|health)/?$"', [f"try_files {api}/$statusgen_doc.json =404;"]
        ),
        "",
        "# ?category=C&status=S: 400 names the first invalid parameter (its file lists the allowed values).",
        *_block(
            rf'location ~ "^{api}/services/?$"',
            [
                *_error_pages({"400": "400-$statusgen_services_invalid"}),
                *_block("if ($statusgen_services_invalid)", ["return 400;"]),
                "try_files $statusgen_services_file =404;",
            ],
        ),
        "",
        "# One service: a slug of the pattern that names a file of the tree, else 404 unknown_service.",
        *_block(
            rf'location ~ "^{api}/services/(?<statusgen_slug>{SLUG})/?$"',
            [*service_errors, f"try_files {api}/services/$statusgen_slug.json =404;"],
        ),
        *_block(rf'location ~ "^{api}/services/[^/]+/?$"', [*service_errors, "return 404;"]),
        "",
        "# History: an unknown service is 404 before an invalid range is 400; range defaults to 24h.",
        *_block(
            rf'location ~ "^{api}/services/(?<statusgen_slug>{SLUG})/history/?$"',
            [
                *_error_pages({"404": "404-service", "400": "400-range"}),
                *_block(f"if (!-f $document_root{api}/services/$statusgen_slug.json)", ["return 404;"]),
                *_block('if ($statusgen_range = "!")', ["return 400;"]),
                f"try_files {api}/services/$statusgen_slug/history/$statusgen_range.json =404;",
            ],
        ),
        *_block(rf'location ~ "^{api}/services/[^/]+/history/?$"', [*service_errors, "return 404;"]),
        "",
        "# ?active=1 open incidents only, ?active=0 closed only, absent all, anything else 400;",
        "# ?service=S one service's only (404 when it has no list).",
        *_block(
            rf'location ~ "^{api}/incidents/?$"',
            [
                *_error_pages({"400": "400-active", "404": "404-service"}),
                *_block('if ($statusgen_incidents_file = "")', ["return 400;"]),
                *_block('if ($statusgen_service = "!")', ["return 404;"]),
                "try_files $statusgen_incidents_list =404;",
            ],
        ),
        "",
    ]


def _interface_locations(options: NginxOptions) -> list[str]:
    return [
        "# -- the interface: the API and the feeds, for programs -------------------------------",
        "# Its own rate limit and JSON errors. ^~: no location outside these two is ever chosen for",
        "# their paths. A location with an error_page of its own inherits none from above: each",
        "# repeats them all.",
        *_block(
            "location ^~ /api/",
            [*_interface_limit(options, explain=True), *_error_pages(), "", *_api_routes(), "try_files $uri =404;"],
        ),
        "# The API's own page is a page, for people.",
        *_block("location = /api/", ["try_files /api/index.html =404;"]),
        "# Feeds are Atom.",
        *_block(
            "location ^~ /feed/",
            [
                *_interface_limit(options),
                *_error_pages(),
                *_block("types", [f'"{ATOM}"  xml;', f'"{CONTENT_TYPES["ics"]}"  ics;']),
                *_block(r"location ~ /\.", ["return 404;"]),
                "# A service's feed: a slug that names no service is the API's unknown_service.",
                *_block(
                    r'location ~ "^/feed/services/[^/]+\.xml$"',
                    [*_error_pages({"404": "404-service"}), "try_files $uri =404;"],
                ),
                "try_files $uri =404;",
            ],
        ),
        "",
    ]


def _static_locations() -> list[str]:
    return [
        "# -- everything else: the pages and their files, for people ---------------------------",
        "# Names starting with a dot (such as .manifest.json) are never served.",
        *_block(r"location ~ /\.", ["return 404;"]),
        "# An incident's own page in earlier versions: sent on to its part of its service's incidents page.",
        *_block(
            rf'location ~ "^/incidents/(?<statusgen_was>(?<statusgen_of>{SLUG})-{routes.INCIDENT_START})\.html$"',
            [
                *_block(
                    "if (-f $document_root/services/$statusgen_of/incidents/index.html)",
                    ['return 301 "/services/$statusgen_of/incidents/#inc-$statusgen_was";'],
                ),
                "return 404;",
            ],
        ),
        "# The Prometheus exposition: a file without a suffix, of its own type.",
        *_block(
            f"location = /{routes.METRICS}",
            ["types { }", f'default_type "{PROMETHEUS}";', f"try_files /{routes.METRICS} =404;"],
        ),
        "# A directory is its index.html (never a listing).",
        *_block(r"location ~ /$", ["try_files ${uri}index.html =404;"]),
        "# A file; a directory named without its slash is redirected to it when it has an index.html",
        "# ($uri reaches Location only for such a directory of the tree, never for an outside value).",
        *_block("location /", ["try_files $uri @statusgen_directory;"]),
        *_block(
            "location @statusgen_directory",
            [*_block("if (-f $request_filename/index.html)", ["return 301 $uri/;"]), "return 404;"],
        ),
    ]


def server_block(options: NginxOptions) -> list[str]:
    """The server block: every HTTP rule of the API."""
    body = (
        _server_settings(options)
        + _real_ip(options)
        + _rate_limit(options)
        + _common(options)
        + _error_locations(options)
        + _interface_locations(options)
        + _static_locations()
    )
    return [
        "# -- statusgen: the server --------------------------------------------------------------",
        *_block("server", body),
    ]


def _main_context(options: NginxOptions, inner: list[str]) -> list[str]:
    user = (
        [f"user {options.user};"]
        if options.user
        else [
            "# No user directive: run as root, workers run as nobody, who must be able to read the tree",
            "# (or pass --user).",
        ]
    )
    temps = [f"{name}_temp_path {name}_temp;" for name in TEMP_PATHS]
    log = "access_log off;" if options.access_log == "off" else f"access_log {options.access_log};"
    http = [
        "# Temporary files, pid and logs live in the prefix (nginx -p PREFIX), so that any user",
        "# can run this file; this site never needs a temporary file.",
        *temps,
        log,
        "tcp_nopush on;",
        "",
        *inner,
    ]
    return [
        *user,
        "worker_processes auto;",
        "pid nginx.pid;",
        "error_log error.log;",
        "# Room for many connections in each worker, and the open files they need: one address",
        "# holding thousands of slow connections (each until client_header_timeout) leaves room",
        "# for everyone else.",
        f"worker_rlimit_nofile {WORKER_FILES};",
        "",
        *_block("events", [f"worker_connections {WORKER_CONNECTIONS};"]),
        "",
        *_block("http", http),
    ]


def _header(options: NginxOptions, vocab: Vocabulary) -> list[str]:
    what = "the parts to include in an existing http block" if options.server_block else "a complete nginx.conf"
    return [
        f"# statusgen: {what} serving the tree at {options.site.absolute()}",
        "# (written by `statusgen nginx-conf`; see docs/deploy.md).",
        f"# Categories {', '.join(vocab.category)}: when they change, write this file again and reload nginx.",
        *([] if options.server_block else ["# Run: nginx -p PREFIX -c PREFIX/nginx.conf -e error.log"]),
        "",
    ]


def nginx_config(options: NginxOptions) -> str:
    """The nginx configuration for ``options``: a whole nginx.conf, or (server_block) the parts to include."""
    check_options(options)
    vocab = read_vocabulary(options.site)
    inner = http_level(vocab, options.rate_limit) + server_block(options)
    lines = _header(options, vocab) + (inner if options.server_block else _main_context(options, inner))
    return "\n".join(lines) + "\n"
