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
  tree's HTML error pages, ``_errors/*.html``; a request refused before its
  path is read gets the body its request line asks for (``nginx_http.refused_maps``);
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

from statusgen import routes
from statusgen.model import SLUG
from statusgen.policy import (
    ATOM,
    CACHE_CONTROL,
    COMMON_HEADERS,
    CONNECTIONS_PER_ADDRESS,
    CONTENT_TYPES,
    FIRST_BUFFER_BYTES,
    HEAD_BUFFERS,
    HEADER_TIMEOUT,
    IDLE_TIMEOUT,
    LINE_MAX_BYTES,
    PAGES_PER_MINUTE,
    PROMETHEUS,
    RATE_PER_MINUTE,
    REFERRER_POLICY,
    SEND_TIMEOUT,
    Grant,
)
from statusgen.web.nginx_http import (
    CONN_ZONE,
    NO_RATE_LIMIT_NOTE,
    PAGES_ZONE,
    POLICY_VARIABLE,
    PREFLIGHT_VARIABLES,
    REFUSED,
    ZONE,
    block,
    grant_zone,
    granted_rates,
    http_level,
)
from statusgen.web.nginx_inputs import (
    NginxOptions,
    Vocabulary,
    check_options,
    read_vocabulary,
)

WORKER_CONNECTIONS = 8192  # per worker: far more than one address's slow connections may hold
WORKER_FILES = 2 * WORKER_CONNECTIONS  # a connection sending a file holds two descriptors
RETRY_AFTER = 1  # seconds: after a refusal, either bucket lets a request through within the second
TEMP_PATHS = ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")


# -- small writers -------------------------------------------------------------


def _headers(cache: str = CACHE_CONTROL, extra: dict[str, str] | None = None) -> list[str]:
    pairs = {
        "Cache-Control": cache,
        **COMMON_HEADERS,
        "Content-Security-Policy": POLICY_VARIABLE,
        "Referrer-Policy": REFERRER_POLICY,
        "Content-Language": "$statusgen_language",
        **PREFLIGHT_VARIABLES,
        **(extra or {}),
    }
    return [f'add_header {name} "{value}" always;' for name, value in pairs.items()]


PEOPLE = ("404", "429", "403")  # what a page tells people in HTML; 405 is always the JSON body
#: The error pages of requests nginx refuses before reading their path, by the maps of $request.
REFUSED_PAGES = {code: f"={status} $statusgen_refused_{status}" for code, status in REFUSED.items()}


def _error_pages(
    special: dict[str, str] | None = None, html: tuple[str, ...] = (), languages: bool = False
) -> list[str]:
    """The error_page lines of one level: each status to its error file, the interface's JSON
    body, or the HTML page for the statuses in ``html`` (``languages``: in the language of the
    page asked for, ``$statusgen_pages`` being its folder).

    A level with any error_page line inherits none from above, so every
    location that changes one repeats them all.
    """
    pages = {"404": "404", "405": "405", "429": "429", "400": "=404 404", "403": "=404 404", **(special or {})}
    folder = "$statusgen_pages" if languages else ""
    lines = []
    for code, target in pages.items():
        status, _, name = target.rpartition(" ")
        if name.startswith("$"):
            file = name  # chosen by a map
        elif code in html:
            file = f"{folder}/{routes.error_page_file(name)}"
        else:
            file = f"/{routes.error_file(name)}"
        lines.append(f"error_page {code} {status + ' ' if status else ''}{file};")
    return lines


# -- http level: the rate-limit zone and the query maps ------------------------


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
        "# untouched and moves a changed file's mtime to a new second), Last-Modified the mtime,",
        "# If-Modified-Since only its very date; the precompressed .gz copies for clients that",
        "# accept gzip (never compressed on the fly), Vary for the files that have one; no listings.",
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
        *block("types", [f'"{ctype}"  {ext};' for ext, ctype in CONTENT_TYPES.items()]),
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
        "# A request's line and headers, read as statusgen serve reads them (policy.LINE_MAX_BYTES):",
        "# a line longer than one large buffer is 414 (the request line) or 431 (a header line), and",
        "# so are more headers than the buffers hold.",
        f"client_header_buffer_size {FIRST_BUFFER_BYTES // 1024}k;",
        f"large_client_header_buffers {HEAD_BUFFERS} {LINE_MAX_BYTES // 1024}k;",
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


def _interface_limit(options: NginxOptions, grants: tuple[Grant, ...], explain: bool = False) -> list[str]:
    """The interface's limit, in each of its locations (a location's limit_req replaces the
    server's), and each limit granted: a request counts in the one zone its address has a key in."""
    if not options.rate_limit:
        return []
    lines = [f"limit_req zone={ZONE} burst={RATE_PER_MINUTE - 1} nodelay;"]
    lines += [f"limit_req zone={grant_zone(rate)} burst={rate - 1} nodelay;" for rate in granted_rates(grants)]
    if not explain:
        return lines
    return [
        f"# {RATE_PER_MINUTE} at once are answered (the first plus a burst of {RATE_PER_MINUTE - 1}, "
        "without delay); the next is",
        f"# refused with 429. Then one request every {60 / RATE_PER_MINUTE:g} s is let through, hence Retry-After: 1.",
        *(["# The addresses of a grant count at its own rate instead, in the zone of that rate."] if grants else []),
        *lines,
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
        "# over the limit gets the 429 file. A file nginx may not read (403) is a missing page. A",
        "# request nginx refuses before it reads the path (a NUL in it, a path climbing above the",
        "# root, a request line or headers too long) gets the body its request line asks for",
        "# ($statusgen_refused_*): JSON under /api/ and /feed/, else the 404 page.",
        "recursive_error_pages on;",
        *_error_pages(REFUSED_PAGES, html=PEOPLE, languages=True),
        "",
        "# A CORS preflight (OPTIONS asking for GET or HEAD) is 204, with the headers its maps give;",
        "# GET and HEAD only otherwise; anything else is 405 (with Allow, see the 405 location).",
        *block("if ($statusgen_preflight)", ["return 204;"]),
        *block(r"if ($request_method !~ ^(GET|HEAD)$)", ["return 405;"]),
        "",
    ]


def _error_locations(options: NginxOptions, grants: tuple[Grant, ...]) -> list[str]:
    """The error files' locations. A request is counted by the rate limit once, where it is first
    checked: most errors are found after that, but one refused before (a 400 or 405 answered by
    ``return``) is counted here, so the JSON bodies count in the interface's zone, the pages'
    in theirs."""
    # A refusal here is the JSON 429; a request for an error file itself is a missing page.
    interface = [*_interface_limit(options, grants), *_error_pages(html=("404", "400", "403"))]
    retry = _headers(cache="no-store", extra={"Retry-After": str(RETRY_AFTER)})
    return [
        "# The error files: never requested directly, only by error_page.",
        *block(f"location ^~ /{routes.ERROR_DIR}/", ["internal;", *block(r"location ~ \.json$", interface)]),
        *block(
            f"location = /{routes.error_file('405')}",
            ["internal;", *interface, *_headers(extra={"Allow": routes.ALLOW})],
        ),
        *block(f"location = /{routes.error_file('429')}", ["internal;", *interface, *retry]),
        *block(f"location = /{routes.error_page_file('429')}", ["internal;", *retry]),
        "# The other languages' error pages for people, in their folders.",
        *block(
            rf'location ~ "^/{routes.LANGUAGE_FOLDER}/{routes.ERROR_DIR}/"',
            ["internal;", *block(r"location ~ /429\.html$", ["internal;", *retry])],
        ),
        "",
    ]


def _api_routes() -> list[str]:
    """The API's locations, nested in /api/: each URL onto its pre-rendered file (a trailing
    slash is allowed)."""
    service_errors = _error_pages({"404": "404-service"})
    api = "/" + routes.API
    return [
        "# Names starting with a dot are never served.",
        *block(r"location ~ /\.", ["return 404;"]),
        *block(
            rf'location ~ "^{api}/(?<statusgen_doc>snapshot|health|reports)/?\z"',
            [f"try_files {api}/$statusgen_doc.json =404;"],
        ),
        "# A month's report: a month the build wrote, else 404.",
        *block(
            rf'location ~ "^{api}/reports/(?<statusgen_month>{routes.MONTH})/?\z"',
            [f"try_files {api}/reports/$statusgen_month.json =404;"],
        ),
        "",
        "# ?category=C&status=S: 400 names the first invalid parameter (its file lists the allowed values).",
        *block(
            rf'location ~ "^{api}/services/?\z"',
            [
                *_error_pages({"400": "400-$statusgen_services_invalid"}),
                *block("if ($statusgen_services_invalid)", ["return 400;"]),
                "try_files $statusgen_services_file =404;",
            ],
        ),
        "",
        "# One service: a slug of the pattern that names a file of the tree, else 404 unknown_service.",
        *block(
            rf'location ~ "^{api}/services/(?<statusgen_slug>{SLUG})/?\z"',
            [*service_errors, f"try_files {api}/services/$statusgen_slug.json =404;"],
        ),
        *block(rf'location ~ "^{api}/services/[^/]+/?\z"', [*service_errors, "return 404;"]),
        "",
        "# History: an unknown service is 404 before an invalid range is 400; range defaults to 24h.",
        *block(
            rf'location ~ "^{api}/services/(?<statusgen_slug>{SLUG})/history/?\z"',
            [
                *_error_pages({"404": "404-service", "400": "400-range"}),
                *block(f"if (!-f $document_root{api}/services/$statusgen_slug.json)", ["return 404;"]),
                *block('if ($statusgen_range = "!")', ["return 400;"]),
                f"try_files {api}/services/$statusgen_slug/history/$statusgen_range.json =404;",
            ],
        ),
        *block(rf'location ~ "^{api}/services/[^/]+/history/?\z"', [*service_errors, "return 404;"]),
        "",
        "# ?active=1 open incidents only, ?active=0 closed only, absent all, anything else 400;",
        "# ?service=S one service's only (404 when it has no list).",
        *block(
            rf'location ~ "^{api}/incidents/?\z"',
            [
                *_error_pages({"400": "400-active", "404": "404-service"}),
                *block('if ($statusgen_incidents_file = "")', ["return 400;"]),
                *block('if ($statusgen_service = "!")', ["return 404;"]),
                "try_files $statusgen_incidents_list =404;",
            ],
        ),
        "",
    ]


def _interface_locations(options: NginxOptions, grants: tuple[Grant, ...]) -> list[str]:
    return [
        "# -- the interface: the API and the feeds, for programs -------------------------------",
        "# Its own rate limit and JSON errors. ^~: no location outside these two is ever chosen for",
        "# their paths. A location with an error_page of its own inherits none from above: each",
        "# repeats them all.",
        *block(
            "location ^~ /api/",
            [
                *_interface_limit(options, grants, explain=True),
                *_error_pages(),
                "",
                *_api_routes(),
                "try_files $uri =404;",
            ],
        ),
        "# The API's own page is a page, for people.",
        *block("location = /api/", ["try_files /api/index.html =404;"]),
        "# Feeds are Atom.",
        *block(
            "location ^~ /feed/",
            [
                *_interface_limit(options, grants),
                *_error_pages(),
                *block("types", [f'"{ATOM}"  xml;', f'"{CONTENT_TYPES["ics"]}"  ics;']),
                *block(r"location ~ /\.", ["return 404;"]),
                "# A service's feed: a slug that names no service is the API's unknown_service.",
                *block(
                    r'location ~ "^/feed/services/[^/]+\.xml\z"',
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
        *block(r"location ~ /\.", ["return 404;"]),
        "# An incident's own page in earlier versions: sent on to its part of its service's incidents page.",
        *block(
            rf'location ~ "^/incidents/(?<statusgen_was>(?<statusgen_of>{SLUG})-{routes.INCIDENT_START})\.html\z"',
            [
                *block(
                    "if (-f $document_root/services/$statusgen_of/incidents/index.html)",
                    ['return 301 "/services/$statusgen_of/incidents/#inc-$statusgen_was";'],
                ),
                "return 404;",
            ],
        ),
        "# The Prometheus exposition: a file without a suffix, of its own type.",
        *block(
            f"location = /{routes.METRICS}",
            ["types { }", f'default_type "{PROMETHEUS}";', f"try_files /{routes.METRICS} =404;"],
        ),
        "# A directory is its index.html (never a listing).",
        *block(r"location ~ /\z", ["try_files ${uri}index.html =404;"]),
        "# A file; a directory named without its slash is redirected to it when it has an index.html",
        "# ($uri reaches Location only for such a directory of the tree, never for an outside value).",
        *block("location /", ["try_files $uri @statusgen_directory;"]),
        *block(
            "location @statusgen_directory",
            [*block("if (-f $request_filename/index.html)", ["return 301 $uri/;"]), "return 404;"],
        ),
    ]


def server_block(options: NginxOptions, grants: tuple[Grant, ...] = ()) -> list[str]:
    """The server block: every HTTP rule of the API; ``grants``: the tree's limits granted."""
    body = (
        _server_settings(options)
        + _real_ip(options)
        + _rate_limit(options)
        + _common(options)
        + _error_locations(options, grants)
        + _interface_locations(options, grants)
        + _static_locations()
    )
    return [
        "# -- statusgen: the server --------------------------------------------------------------",
        *block("server", body),
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
        "# Room for the maps' variables (some more with each rate granted) in nginx's hash of them.",
        "variables_hash_max_size 2048;",
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
        *block("events", [f"worker_connections {WORKER_CONNECTIONS};"]),
        "",
        *block("http", http),
    ]


def _header(options: NginxOptions, vocab: Vocabulary) -> list[str]:
    what = "the parts to include in an existing http block" if options.server_block else "a complete nginx.conf"
    return [
        f"# statusgen: {what} serving the tree at {options.site.absolute()}",
        "# (written by `statusgen nginx-conf`; see docs/deploy.md).",
        f"# Categories {', '.join(vocab.category)}; {len(vocab.grants)} limits granted. When they change, write",
        "# this file again and reload nginx.",
        *([] if options.server_block else ["# Run: nginx -p PREFIX -c PREFIX/nginx.conf -e error.log"]),
        "",
    ]


def nginx_config(options: NginxOptions) -> str:
    """The nginx configuration for ``options``: a whole nginx.conf, or (server_block) the parts to include."""
    check_options(options)
    vocab = read_vocabulary(options.site)
    inner = http_level(vocab, options.rate_limit) + server_block(options, vocab.grants)
    lines = _header(options, vocab) + (inner if options.server_block else _main_context(options, inner))
    return "\n".join(lines) + "\n"
