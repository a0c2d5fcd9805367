"""Every key of the configuration file, declared once: its name, converter, default and doc.

``load`` reads each table against its tuple here; ``reference`` writes docs/configuration.md
from the same tuples, so a key cannot be read without being documented.
"""

from __future__ import annotations

from statusgen.config.brand import MAX_BRAND_BYTES, accent
from statusgen.config.values import (
    MAILBOX_SCHEMES,
    MAX_CATCH_UP,
    MAX_CONFIRM_EVERY,
    MAX_INTERVAL,
    MAX_NOTIFY_TIMEOUT,
    MAX_SPREAD,
    MAX_STALE_AFTER,
    MAX_TIMEOUT,
    MAX_WINDOW,
    NOTIFY_EVENTS,
    SMTP_SCHEMES,
    Key,
    base_url,
    boolean,
    byte_size,
    check_url,
    conditions,
    confirmations,
    count,
    cron,
    days,
    email_address,
    granted_rate,
    headers,
    http_url,
    key_reference,
    languages,
    limit,
    mail_server,
    method,
    milliseconds,
    minority_failure,
    months,
    networks,
    notify_events,
    notify_url,
    optional_matched_text,
    optional_text,
    optional_words,
    path_value,
    ratio,
    resolver,
    seconds_up_to,
    severity,
    slug,
    status_codes,
    string_list,
    target,
    text,
    time_zone,
    timestamp,
    url_or_path,
    vendor_format,
    words,
)
from statusgen.policy import RATE_PER_MINUTE

SITE_KEYS = (
    Key("title", words, "Service status", "Title shown on every page and feed."),
    Key("base_url", base_url, "http://127.0.0.1:8080", "Public URL the site is served at; used in feeds and links."),
    Key(
        "description",
        words,
        None,
        'One line under the title; not set, each page says "Current state of the services we depend on." '
        "in its language.",
    ),
    Key(
        "interval",
        seconds_up_to(MAX_INTERVAL),
        60.0,
        "Seconds between runs; data is stale after three intervals with no finished run.",
    ),
    Key(
        "stale_after",
        seconds_up_to(MAX_STALE_AFTER),
        None,
        "Seconds after a build's data when readers should take it as out of date: every document of the "
        "present says when (stale_after), every page then warns, and health calls the collection stale. "
        "Three intervals by default; give more when runs may come late (a scheduled CI job).",
    ),
    Key(
        "report_months",
        months,
        13,
        "Months of monthly reports kept (the current one included): the store keeps a small rollup per "
        "service and month after the raw results and buckets are pruned (90 days).",
    ),
    Key(
        "location",
        slug,
        "main",
        "This host's name among the locations that probe (docs/locations.md); with no [[locations]], the only one.",
    ),
    Key(
        "inbox",
        optional_text,
        None,
        "Where probe agents in other locations deliver their batches (docs/locations.md): an rclone remote "
        "(r2:status/inbox, any remote rclone knows) or a folder, relative to the configuration file.",
    ),
    Key(
        "inbox_key",
        key_reference,
        None,
        'The environment variable holding the key batches are signed with ("${STATUSGEN_INBOX_KEY}"); '
        "the key itself is never written in the file.",
    ),
    Key(
        "quorum",
        count,
        None,
        "With [[locations]]: how many locations must see a service failing for it to count as failing; "
        "by default a majority of the locations with fresh results.",
    ),
    Key(
        "minority_failure",
        minority_failure,
        "degraded",
        "With [[locations]]: what a failure seen from fewer locations than the quorum does: degraded (the "
        "service is shown degraded, with where it fails) or ignored (only said); never an outage or incident.",
    ),
    Key(
        "languages",
        languages,
        ("en",),
        'The languages of the pages: the first at /, each other at /{tag}/ (e.g. ["en", "de", "ja"]; shipped: '
        "en, de, fr, es, pt-BR, ja). The JSON API, the Statuspage documents and the feeds speak the first.",
    ),
    Key(
        "logo",
        path_value,
        None,
        "The operator's logo, an SVG or PNG file relative to the configuration file: copied into the site and "
        "shown in the header of every page and in the embeddable status, named by the site's title for those who "
        "do not see it; the favicon too, unless favicon is given. An SVG may hold no script, event handler or "
        f"reference to another file (docs/branding.md). At most {MAX_BRAND_BYTES >> 10} KB.",
    ),
    Key(
        "favicon",
        path_value,
        None,
        "The site's icon in browsers' tabs, an SVG, PNG or ICO file relative to the configuration file (an ICO "
        "replaces statusgen's /favicon.ico); the logo by default, else statusgen's. "
        f"At most {MAX_BRAND_BYTES >> 10} KB.",
    ),
    Key(
        "stylesheet",
        path_value,
        None,
        "The operator's own CSS file, relative to the configuration file: copied into the site and loaded after "
        "statusgen's, so its rules win; it may import nothing nor name another site's files, which the pages' "
        f"content security policy would not load. At most {MAX_BRAND_BYTES >> 10} KB.",
    ),
    Key(
        "accent",
        accent,
        None,
        "The colour of links, the site's name and a band atop the header: \"#0a5fc2\" (the light theme's; the "
        'dark theme keeps statusgen\'s links) or { light = "#0a5fc2", dark = "#6cb6ff" }. Each must give text of '
        "at least 4.5:1 (WCAG AA) on its theme's backgrounds; check-config names the ratio and a colour that does.",
    ),
    Key(
        "powered_by",
        boolean,
        None,
        'Whether the footer ends with a link to statusgen ("Powered by statusgen"): on by default; false hides it.',
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
    Key(
        "confirm",
        confirmations,
        2,
        "Default tries again within a run of a check that fails where it had been passing (or answers where "
        "its service is in an outage): each try counts as a cycle, so an outage is declared within the run "
        "that saw the first failure (docs/checks.md); 0 waits for the next runs.",
    ),
    Key(
        "confirm_every",
        seconds_up_to(MAX_CONFIRM_EVERY, zero=True),
        10.0,
        "Default seconds between the starts of a check's tries within a run.",
    ),
    Key("max_bytes", byte_size, 1_048_576, "Default cap on the bytes read from one answer."),
    Key(
        "user_agent",
        text,
        None,
        "User-Agent sent by checks and vendor fetches; by default statusgen/<version> (+<base_url>method/), "
        "so that a target's owner finds whom to ask.",
    ),
    Key(
        "vantage_point",
        words,
        None,
        "Where our checks run from, shown on the method page and in every footer; not set, each page says "
        '"a single host" in its language.',
    ),
    Key(
        "contact",
        words,
        None,
        'Who to contact for a higher rate limit; not set, each page says "the operator of this site" in its language.',
    ),
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
        optional_words,
        None,
        "How readers see the check in reasons and pages (its URL is published without userinfo or query); "
        "defaults to the URL's host name.",
    ),
    Key("method", method, "GET", "HTTP method."),
    Key("expect_status", status_codes, (200,), "Status code or list of codes that count as up."),
    Key("keyword", optional_matched_text, None, "Text the body must contain; none by default."),
    Key("timeout", seconds_up_to(MAX_TIMEOUT), 10.0, "Seconds before the check counts as timed out."),
    Key("degraded_ms", milliseconds, 2000.0, "Latency above which a good answer counts as slow (degraded)."),
    Key("max_bytes", byte_size, None, "Cap on bytes read; defaults to site.max_bytes."),
    Key(
        "headers",
        headers,
        (),
        "Request headers, a table; a value may name environment variables (${TOKEN}), read at run time and "
        "never published. The url may name them too; its userinfo and query are never published. A url with a "
        "user name or password sends them as Basic authorization: it cannot also have an Authorization header.",
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
        optional_matched_text,
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
    Key(
        "locations",
        string_list,
        (),
        "Which [[locations]] run this check (names); all by default. This host runs every check.",
    ),
    Key("confirm", confirmations, None, "Tries again within a run to confirm a change; defaults to site.confirm."),
    Key(
        "confirm_every",
        seconds_up_to(MAX_CONFIRM_EVERY, zero=True),
        None,
        "Seconds between the starts of those tries; defaults to site.confirm_every.",
    ),
)

#: The keys that belong to one kind of check only (the others apply to HTTP checks alone).
KIND_KEYS = {"send": ("tcp",), "expect": ("tcp", "dns"), "resolver": ("dns",)}
COMMON_KEYS = ("url", "label", "timeout", "degraded_ms", "locations", "confirm", "confirm_every")

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
    Key("name", words, doc="Display name."),
    Key("category", slug, doc="One of the declared categories."),
    Key("description", optional_words, None, "One line about the service."),
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
    Key(
        "calendar_events",
        count,
        200,
        "At most this many maintenance events of each of the service's sources (its vendor's page, its "
        "configured windows, the notes folder) in the calendars (/feed/maintenance.ics and the service's own), "
        "the first to start first: a vendor page that lists hundreds cannot flood them. An event no longer told "
        "is kept, cancelled, for 7 days at most, and a calendar keeps at most as many cancelled ones as its "
        "services may tell.",
    ),
    Key(
        "sla",
        target,
        None,
        "Availability target in percent (99.9): each monthly report says whether it was met, and the "
        "service page the error budget left this month; defaults to its category's target in [sla].",
    ),
)

LOCATION_KEYS = (
    Key("name", slug, doc="The location's name: its agent runs statusgen probe --location NAME."),
    Key("description", optional_words, None, "Where it is (a provider and a region), shown on the method page."),
    Key(
        "inbox_key",
        key_reference,
        None,
        'The environment variable holding this location\'s own key ("${STATUSGEN_KEY_EU_WEST}"): its batches '
        "are verified with it alone, so no other agent can sign as this one; site.inbox_key when absent.",
    ),
)

MAINTENANCE_KEYS = (
    Key("start", timestamp, None, "A one-off window: when it opens (date-time with offset)."),
    Key("end", timestamp, None, "A one-off window: when it closes."),
    Key("schedule", cron, None, 'A recurring window: when it opens, in cron form in UTC ("0 2 * * sun").'),
    Key("duration", seconds_up_to(MAX_WINDOW), None, "A recurring window: how many seconds it lasts."),
    Key("title", words, "Scheduled maintenance", "What is being done, shown in the reason."),
)

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

GRANT_KEYS = (
    Key(
        "addresses",
        networks,
        doc="The client addresses or networks (CIDR) granted the limit: 192.0.2.10, 10.0.0.0/8, 2001:db8::/32; "
        "behind a proxy or CDN, the real clients' (nginx-conf --real-ip-from).",
    ),
    Key(
        "per_minute",
        granted_rate,
        doc=f"Requests a minute these addresses may make to the interface (/api/, /feed/), instead of the "
        f"{RATE_PER_MINUTE} everyone gets; a burst of as many at once is answered.",
    ),
    Key(
        "purpose",
        words,
        doc="What the limit is for, as the reader who asked for it said (a mirror, a test suite): the operator's "
        "record, published in no file of the site.",
    ),
    Key(
        "contact",
        words,
        doc="Whom to reach about this reader's requests: the operator's record, published in no file of the site.",
    ),
)

SUBSCRIPTION_KEYS = (
    Key(
        "address",
        email_address,
        doc="The address visitors write to, to subscribe, confirm and leave (the /subscribe/ page's mailto: "
        "links), and the one the messages come from. Give it a mailbox of its own: statusgen reads every "
        "message that arrives there.",
    ),
    Key(
        "mailbox",
        mail_server(MAILBOX_SCHEMES, "imaps://imap.example.com/INBOX"),
        doc="Where that address's mail is read: imaps://HOST[:PORT][/FOLDER] (imap+starttls:// for port 143), or "
        "a local Maildir folder on a host that delivers the mail itself. imap:// (no TLS) is for a server on "
        "this host only.",
    ),
    Key(
        "mailbox_user",
        key_reference,
        None,
        'The environment variable holding the mailbox\'s login ("${STATUSGEN_MAIL_USER}"); needed for IMAP.',
    ),
    Key(
        "mailbox_password",
        key_reference,
        None,
        'The environment variable holding the mailbox\'s password ("${STATUSGEN_MAIL_PASSWORD}"); needed for IMAP.',
    ),
    Key(
        "smtp",
        mail_server(SMTP_SCHEMES, "smtp+starttls://smtp.example.com:587"),
        doc="The mail server the messages are sent through: smtp+starttls://HOST[:PORT] (587 by default) or "
        "smtps://HOST[:PORT] (465). smtp:// (no TLS) is for a relay on this host only. A local folder instead "
        "receives each message as a Maildir file and sends nothing: for a trial, and the demo.",
    ),
    Key("smtp_user", key_reference, None, "The environment variable holding the mail server's login, if it asks one."),
    Key("smtp_password", key_reference, None, "The environment variable holding the mail server's password."),
    Key("sender_name", optional_words, None, "The name the messages come from; the site's title by default."),
    Key(
        "max_subscribers",
        limit(1, 1_000_000),
        10_000,
        "At most this many addresses, confirmed or waiting; a request past it is answered by no message.",
    ),
    Key(
        "requests_per_day",
        limit(1, 100),
        5,
        "Subscribe requests read from one address a day; past that, its requests are ignored until the next "
        "day. Whatever it sends, an address gets at most one confirmation an hour.",
    ),
    Key(
        "messages_per_run",
        limit(1, 10_000),
        100,
        "Messages read from the mailbox in one run, at most 256 KB each; the rest wait for the next run.",
    ),
    Key(
        "bounces",
        limit(1, 100),
        3,
        "Permanent delivery failures reported for an address (bounce messages that arrive in the mailbox) "
        "before it is removed.",
    ),
    Key("events", notify_events, NOTIFY_EVENTS, "The events subscribers are sent; all by default."),
    Key(
        "min_severity",
        severity,
        "minor",
        "Least severity of an incident that is sent (minor, major or critical). Maintenance is always sent.",
    ),
    Key(
        "timeout",
        seconds_up_to(MAX_NOTIFY_TIMEOUT),
        30.0,
        "Seconds to wait for the mailbox or the mail server to answer, each time it is asked something.",
    ),
    Key(
        "send_per_run",
        limit(1, 1_000_000),
        20_000,
        "At most this many messages sent in one run; the rest are sent by the next.",
    ),
)
