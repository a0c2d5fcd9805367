"""Every kind of check against real servers on loopback: HTTP conditions on JSON bodies and
headers, TLS certificates made here, a TCP banner server and a DNS server; the condition
parser's properties; the certificate warning's decisions; and a run of every kind end to end."""

from __future__ import annotations

import asyncio
import json
import re
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from statusgen.config import ServiceConfig, load_config
from statusgen.config.conditions import OPERATORS, Answer, Condition, ConditionError, first_failed, parse
from statusgen.cycle import run_cycle
from statusgen.decide import certs
from statusgen.decide.state import ServiceState, decide
from statusgen.errors import ConfigError
from statusgen.model import Certificate, CheckResult, Outcome, Status
from statusgen.probe import probe_all
from tests.checkservers import BANNER, banner_server, closed_port, dns_servers, http_site, tls_sites
from tests.conftest import write_config

CATS = '[categories]\nc = "C"\n'
SITE = "mass_failure_ratio = 1.0\nfailures_to_open = 1\nsuccesses_to_resolve = 1\n"


def toml(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(toml(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {toml(v)}" for k, v in value.items()) + " }"
    return json.dumps(value)


def services_toml(checks: dict[str, dict[str, object]]) -> str:
    """A service per check, named by its key."""
    out = [CATS]
    for slug, keys in checks.items():
        out.append(f'[[services]]\nslug = "{slug}"\nname = "{slug.title()}"\ncategory = "c"\n[[services.checks]]\n')
        out += [f"{k} = {toml(v)}\n" for k, v in keys.items()]
    return "".join(out)


def probe(tmp_path, checks: dict[str, dict[str, object]]) -> dict[str, CheckResult]:
    cfg = load_config(write_config(tmp_path, services_toml(checks), SITE))
    return {r.service: r for r in asyncio.run(probe_all(cfg))}


# -- the condition parser ------------------------------------------------------------

ANSWER = Answer(
    200,
    120.0,
    {"content-type": "application/json", "x-version": "2.1.0"},
    json.dumps({"status": "UP", "n": 5, "ok": True, "items": [{"id": 7}], "none": None}).encode(),
)


@pytest.mark.parametrize(
    ("line", "holds"),
    [
        ("[STATUS] == 200", True),
        ("[STATUS] != 200", False),
        ("[STATUS] in [200, 204]", True),
        ("[STATUS] in [500, 503]", False),
        ("[RESPONSE_TIME] < 300", True),
        ("[RESPONSE_TIME] < 100", False),
        ("[RESPONSE_TIME] > 100", True),
        ("[HEADER].Content-Type contains json", True),
        ("[HEADER].content-type == text/html", False),
        ("[HEADER].X-Missing == anything", False),
        ("[HEADER].X-Missing != anything", False),
        ('[BODY] contains "\\"status\\": \\"UP\\""', True),
        ('[BODY] matches "\\"n\\": [0-9]+"', True),
        ('[BODY] matches "^DOWN"', False),
        ("[BODY].status == UP", True),
        ("[BODY].status == DOWN", False),
        ("[BODY].n > 4", True),
        ("[BODY].n < 5", False),
        ("[BODY].n == 5.0", True),
        ('[BODY].n == "5"', True),
        ("[BODY].ok == true", True),
        ("[BODY].none == null", True),
        ("[BODY].items[0].id in [6, 7]", True),
        ("[BODY].items[1].id == 7", False),
        ("[BODY].status.deeper == UP", False),
        ("[BODY].status < 3", False),
    ],
)
def test_each_condition_on_an_answer(line, holds):
    condition = parse(line)
    assert (first_failed([condition], ANSWER) is None) is holds


def test_a_body_that_is_not_json_fails_every_path():
    answer = Answer(200, 1.0, {}, b"<html>UP</html>")
    assert first_failed([parse("[BODY].status == UP")], answer) == parse("[BODY].status == UP")
    assert first_failed([parse("[BODY] contains UP")], answer) is None


def test_the_first_failed_condition_is_the_one_named():
    conditions = [parse("[STATUS] == 200"), parse("[BODY].status == DOWN"), parse("[BODY].n > 100")]
    assert first_failed(conditions, ANSWER) == conditions[1]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("STATUS == 200", "starts with [STATUS]"),
        ("[STATUS] = 200", "comes an operator"),
        ("[STATUS]== 200", "followed by a space, then an operator"),
        ("[STATUS] < abc", "compares numbers"),
        ("[STATUS] < true", "compares numbers"),
        ('[BODY] matches "("', "regular expression"),
        ("[BODY] contains 5", "takes text"),
        ("[STATUS] in 200", "list in brackets"),
        ("[STATUS] in [200 204]", "separated by commas"),
        ("[STATUS] in []", "a value is"),
        ("[BODY].x == two words", "quote a value with spaces"),
        ('[BODY].x == "open', 'closing "'),
        ("[HEADER] == x", "header's name"),
        ("[BODY]..x == 1", "path of .key and [index]"),
        ("[STATUS].x == 1", "followed by a space"),
        ("[LATENCY] < 3", "starts with"),
        ("[STATUS] == 1e999", "too large"),
        ("", "line of text"),
        ("[BODY] contains " + "x" * 600, "at most 500"),
    ],
)
def test_refused_conditions_say_what_to_write(line, message):
    with pytest.raises(ConditionError) as refused:
        parse(line)
    assert message in str(refused.value)


safe_text = st.text(st.characters(exclude_categories=("Cs",)), max_size=30)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**12), 10**12),
    st.floats(allow_nan=False, allow_infinity=False),
    safe_text,
)
body_path = st.lists(st.one_of(st.from_regex(r"[A-Za-z0-9_-]{1,8}", fullmatch=True), st.integers(0, 999)), max_size=4)
header = st.from_regex(r"[!#$%&'*+.^_`|~0-9A-Za-z-]{1,20}", fullmatch=True)
numbers = st.one_of(st.integers(-(10**9), 10**9), st.floats(allow_nan=False, allow_infinity=False))


@st.composite
def conditions(draw: st.DrawFn) -> Condition:
    subject = draw(st.sampled_from(["STATUS", "RESPONSE_TIME", "HEADER", "BODY"]))
    path = (draw(header),) if subject == "HEADER" else tuple(draw(body_path)) if subject == "BODY" else ()
    operator = draw(st.sampled_from(OPERATORS))
    value: object
    if operator in ("<", ">"):
        value = draw(numbers)
    elif operator == "contains":
        value = draw(safe_text)
    elif operator == "matches":
        value = re.escape(draw(safe_text))
    elif operator == "in":
        value = tuple(draw(st.lists(scalars, min_size=1, max_size=4)))
    else:
        value = draw(scalars)
    return Condition(subject, path, operator, value)  # type: ignore[arg-type]


# What is tested is the parser, not how fast conditions are drawn: on a busy machine the first
# draws (regular expressions compiled for the strategies) are slow enough to fail a health check.
PARSER = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PARSER
@given(conditions())
def test_accepted_conditions_round_trip(condition):
    text = condition.text()
    assume(len(text) <= 500)
    assert parse(text) == condition
    assert parse(f"  {text}\t") == condition


@PARSER
@given(conditions(), st.integers(0, 60), safe_text)
def test_damaged_conditions_parse_or_are_refused_with_a_message(condition, at, junk):
    text = condition.text()
    damaged = text[:at] + junk + text[at:]
    try:
        again = parse(damaged)
    except ConditionError as refused:
        assert str(refused)
    else:
        assert parse(again.text()) == again


# -- configuration --------------------------------------------------------------------


def config_messages(tmp_path, checks: dict[str, dict[str, object]]) -> list[str]:
    with pytest.raises(ConfigError) as refused:
        load_config(write_config(tmp_path, services_toml(checks), SITE))
    return refused.value.problems


def test_check_config_names_the_file_service_check_and_fix(tmp_path):
    got = config_messages(
        tmp_path,
        {
            "a": {"url": "https://a.example", "conditions": ["[STATUS] == 200", "[BODY].status = UP"]},
            "b": {"url": "tcp://db.example:5432", "keyword": "x", "send": "PING"},
            "c": {"url": "dns://example.com?type=SRV"},
            "d": {"url": "https://d.example", "send": "x", "resolver": "localhost"},
            "e": {"url": "https://e.example", "ca_file": "missing.pem", "cert_expiry_days": 400},
            "f": {"url": "tcp://db.example"},
        },
    )
    assert got[0] == (
        'services.toml: service "a", check 1: conditions has a condition 2 ("[BODY].status = UP") that does not '
        "read: after [BODY].status comes an operator between spaces: ==, !=, <, >, in, contains, matches"
    )
    assert (
        'services.toml: service "b", check 1: keyword applies to http:// and https:// checks only; '
        "remove it from this tcp:// check"
    ) in got
    assert any(m.startswith('services.toml: service "c", check 1: url must be') and "SRV" in m for m in got)
    assert (
        'services.toml: service "d", check 1: send applies to tcp:// checks only; remove it from this http:// check'
    ) in got
    assert any('service "d", check 1: resolver must be an IP address' in m for m in got)
    assert any('service "e", check 1: ca_file missing.pem cannot be read as PEM' in m for m in got)
    assert any('service "e", check 1: cert_expiry_days must be a whole number of days from 0' in m for m in got)
    assert any('service "f", check 1: url must be' in m for m in got)


def test_kinds_and_their_published_urls(tmp_path):
    cfg = load_config(
        write_config(
            tmp_path,
            services_toml(
                {
                    "t": {"url": "tcp://db.example:5432", "send": "PING", "expect": "+PONG"},
                    "d": {"url": "dns://Example.com?type=mx", "resolver": "127.0.0.1:5353", "expect": "mx.example.com"},
                    "h": {"url": "https://u:p@h.example/x?key=secret", "conditions": ["[STATUS]  ==  200"]},
                }
            ),
            SITE,
        )
    )
    t, d, h = (s.checks[0] for s in cfg.services)
    assert (t.kind, t.method, t.public_url) == ("tcp", "TCP", "tcp://db.example:5432")
    assert (d.kind, d.method, d.dns_type, d.public_url) == ("dns", "DNS", "MX", "dns://example.com?type=MX")
    assert (h.kind, h.public_url, h.conditions[0].text()) == ("http", "https://h.example/x", "[STATUS] == 200")


# -- HTTP: conditions, bodies, redirects --------------------------------------------------


def test_http_conditions_bodies_and_redirects(tmp_path, monkeypatch):
    monkeypatch.setenv("STATUSGEN_TEST_TOKEN", "s3cret")
    with http_site() as base:
        got = probe(
            tmp_path,
            {
                "json-ok": {
                    "url": f"{base}/health",
                    "conditions": [
                        "[STATUS] == 200",
                        "[HEADER].X-Version == 2.1.0",
                        "[BODY].status == UP",
                        "[BODY].checks[0].healthy == true",
                        "[BODY].queue.depth < 100",
                        "[RESPONSE_TIME] < 5000",
                    ],
                },
                "json-degraded": {"url": f"{base}/degraded", "conditions": ["[BODY].status in [UP, ok]"]},
                "text": {
                    "url": f"{base}/text",
                    "conditions": ['[BODY] matches "build [0-9]+"', '[BODY] contains "down"'],
                },
                "post": {
                    "url": f"{base}/echo",
                    "method": "POST",
                    "body": '{"ping": "${STATUSGEN_TEST_TOKEN}"}',
                    "headers": {"Authorization": "Bearer ${STATUSGEN_TEST_TOKEN}"},
                    "conditions": ['[BODY].received contains "s3cret"', '[BODY].token == "Bearer s3cret"'],
                },
                "no-follow": {"url": f"{base}/moved", "follow_redirects": False, "expect_status": 302},
                "follow": {"url": f"{base}/moved", "conditions": ["[BODY].status == UP"]},
            },
        )
    assert {slug: r.outcome for slug, r in got.items()} == {
        "json-ok": Outcome.OK,
        "json-degraded": Outcome.CONDITION,
        "text": Outcome.CONDITION,
        "post": Outcome.OK,
        "no-follow": Outcome.OK,
        "follow": Outcome.OK,
    }
    assert got["json-degraded"].detail == "[BODY].status in [UP, ok]"
    assert got["text"].detail == "[BODY] contains down"  # in its canonical form
    assert (got["no-follow"].http_status, got["json-ok"].certificate) == (302, None)


def test_a_pattern_cannot_be_driven_into_backtracking_by_the_body(tmp_path):
    """A target's body, which anyone controls, met an operator's ``(a+)+$`` for 21 s with
    Python's re, and the whole run waited: patterns are matched by RE2, in time linear in the body."""
    with http_site() as base:
        start = time.monotonic()
        got = probe(
            tmp_path,
            {"regex": {"url": f"{base}/backtrack", "timeout": 2, "conditions": ['[BODY] matches "(a+)+$"']}},
        )
        took = time.monotonic() - start
    assert got["regex"].outcome is Outcome.CONDITION and got["regex"].detail == '[BODY] matches "(a+)+$"'
    assert took < 2 + 2


def test_check_config_refuses_a_pattern_the_engine_cannot_compile(tmp_path):
    """RE2 has no backreferences or lookaround: such a pattern is refused when the file is read."""
    text = services_toml({"s": {"url": "http://127.0.0.1:9/", "conditions": ['[BODY] matches "(a)\\\\1"']}})
    with pytest.raises(ConfigError, match="RE2's syntax .*invalid escape sequence"):
        load_config(write_config(tmp_path, text, SITE))


# -- TLS -------------------------------------------------------------------------------------


def test_tls_outcomes_and_certificate_figures(tmp_path):
    with tls_sites(tmp_path) as sites:
        ca = str(sites.ca_file)
        got = probe(
            tmp_path,
            {
                "good": {"url": sites.url("good"), "ca_file": ca, "conditions": ["[BODY].status == UP"]},
                "soon": {"url": sites.url("soon"), "ca_file": ca},
                "expired": {"url": sites.url("expired"), "ca_file": ca},
                "wrong-name": {"url": sites.url("wrong_name"), "ca_file": ca},
                "untrusted": {"url": sites.url("good")},
            },
        )
    outcomes = {slug: r.outcome for slug, r in got.items()}
    assert outcomes == {
        "good": Outcome.OK,
        "soon": Outcome.OK,
        "expired": Outcome.CERT_EXPIRED,
        "wrong-name": Outcome.CERT_NAME,
        "untrusted": Outcome.TLS,
    }
    good, soon = got["good"].certificate, got["soon"].certificate
    assert good is not None and soon is not None
    assert good.issuer == "Statusgen Test CA" and good.names == ("localhost",)
    assert abs((good.not_after - sites.issued["good"]).total_seconds()) < 2
    assert certs.days_left(soon, got["soon"].ts) == 3
    assert certs.days_left(good, got["good"].ts) in (89, 90)
    assert got["expired"].certificate is None and got["expired"].latency_ms is None


# -- TCP -------------------------------------------------------------------------------------


def test_tcp_connect_send_and_banner(tmp_path):
    with banner_server() as port:
        got = probe(
            tmp_path,
            {
                "connect": {"url": f"tcp://127.0.0.1:{port}"},
                "banner": {"url": f"tcp://127.0.0.1:{port}", "expect": BANNER.decode().split()[0]},
                "ping": {"url": f"tcp://127.0.0.1:{port}", "send": "PING", "expect": "+PONG"},
                "wrong": {"url": f"tcp://127.0.0.1:{port}", "send": "HELLO", "expect": "+PONG"},
                "refused": {"url": f"tcp://127.0.0.1:{closed_port()}"},
                "slow": {"url": f"tcp://127.0.0.1:{port}", "expect": "never sent", "timeout": 0.5},
            },
        )
    assert {slug: r.outcome for slug, r in got.items()} == {
        "connect": Outcome.OK,
        "banner": Outcome.OK,
        "ping": Outcome.OK,
        "wrong": Outcome.WRONG_ANSWER,
        "refused": Outcome.CONNECT,
        "slow": Outcome.TIMEOUT,
    }
    assert all(got[s].latency_ms is not None and got[s].latency_ms > 0 for s in ("connect", "banner", "ping"))


# -- DNS -------------------------------------------------------------------------------------


def test_dns_answers_failures_and_timeouts(tmp_path):
    with dns_servers() as dns:
        on = {"resolver": dns.answering}
        got = probe(
            tmp_path,
            {
                "a": {"url": "dns://svc.test?type=A", **on, "expect": "192.0.2.10"},
                "aaaa": {"url": "dns://svc.test?type=AAAA", **on, "expect": "2001:DB8:0::10"},
                "mx": {"url": "dns://svc.test?type=MX", **on, "expect": "mail.svc.test."},
                "txt": {"url": "dns://svc.test?type=TXT", **on, "expect": "v=ok Hello"},
                "cname": {"url": "dns://alias.test?type=CNAME", **on, "expect": "svc.test"},
                "any-a": {"url": "dns://svc.test", **on},
                "wrong": {"url": "dns://svc.test?type=A", **on, "expect": "192.0.2.99"},
                "txt-case": {"url": "dns://svc.test?type=TXT", **on, "expect": "v=ok hello"},
                "gone": {"url": "dns://nothing.test?type=A", **on},
                "no-records": {"url": "dns://alias.test?type=TXT", **on},
                "silent": {"url": "dns://svc.test?type=A", "resolver": dns.silent, "timeout": 1},
            },
        )
    assert {slug: r.outcome for slug, r in got.items()} == {
        "a": Outcome.OK,
        "aaaa": Outcome.OK,
        "mx": Outcome.OK,
        "txt": Outcome.OK,
        "cname": Outcome.OK,
        "any-a": Outcome.OK,
        "wrong": Outcome.WRONG_ANSWER,
        "txt-case": Outcome.WRONG_ANSWER,
        "gone": Outcome.NO_SUCH_NAME,
        "no-records": Outcome.NO_RECORDS,
        "silent": Outcome.TIMEOUT,
    }
    assert got["a"].latency_ms is not None and got["silent"].latency_ms is None


# -- the certificate warning, decided without I/O --------------------------------------------------


NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


def https_service(warn_days: int = 14) -> ServiceConfig:
    from statusgen.config import CheckConfig

    return ServiceConfig("web", "Web", "c", (CheckConfig("https://web.example/", cert_expiry_days=warn_days),))


def seen(at: datetime, expires_in: timedelta | None, outcome: Outcome = Outcome.OK) -> CheckResult:
    cert = Certificate(at + expires_in, "Example CA", ("web.example",)) if expires_in is not None else None
    return CheckResult("web", 0, at, outcome, 50.0, 200, False, cert)


def test_an_expiring_certificate_degrades_at_once_and_clears_when_renewed():
    svc = https_service()
    state = decide(ServiceState(), svc, [seen(NOW, timedelta(days=90))], NOW)
    assert state.status is Status.OPERATIONAL
    later = NOW + timedelta(minutes=1)
    state = decide(state, svc, [seen(later, timedelta(days=3, hours=2))], later)
    assert state.status is Status.DEGRADED and state.since == later
    assert state.reason == (
        "The certificate of web.example expires in 3 days (2026-11-25 14:01 UTC), within its 14-day warning."
    )
    again = later + timedelta(minutes=1)
    held = decide(state, svc, [seen(again, timedelta(days=3))], again)
    assert (held.status, held.since) == (Status.DEGRADED, later)
    renewed = again + timedelta(minutes=1)
    state = decide(held, svc, [seen(renewed, timedelta(days=90))], renewed)
    assert state.status is Status.OPERATIONAL and state.reason == "The check answers as expected."


@pytest.mark.parametrize(
    ("warn_days", "expires_in", "status"),
    [
        (14, timedelta(days=14, minutes=1), Status.OPERATIONAL),
        (14, timedelta(days=13, hours=23), Status.DEGRADED),
        (0, timedelta(hours=1), Status.OPERATIONAL),
        (30, timedelta(days=20), Status.DEGRADED),
        (14, None, Status.OPERATIONAL),
    ],
)
def test_the_warning_follows_the_checks_days(warn_days, expires_in, status):
    state = decide(ServiceState(), https_service(warn_days), [seen(NOW, expires_in)], NOW)
    assert state.status is status


def test_a_warning_of_a_check_since_removed_is_forgotten():
    from statusgen.config import CheckConfig

    two = ServiceConfig("web", "Web", "c", (CheckConfig("https://a.example/"), CheckConfig("https://web.example/")))
    state = decide(
        ServiceState(), two, [seen(NOW, timedelta(days=90)), replace(seen(NOW, timedelta(days=2)), check_index=1)], NOW
    )
    assert state.status is Status.DEGRADED
    later = NOW + timedelta(minutes=1)
    state = decide(state, https_service(), [seen(later, timedelta(days=90))], later)
    assert state.status is Status.OPERATIONAL


def test_a_failure_outweighs_a_certificate_warning():
    svc = https_service()
    state = decide(ServiceState(), svc, [seen(NOW, None, Outcome.CERT_EXPIRED)], NOW)
    state = decide(state, svc, [seen(NOW, None, Outcome.CERT_EXPIRED)], NOW)
    state = decide(state, svc, [seen(NOW, None, Outcome.CERT_EXPIRED)], NOW)
    assert state.status is Status.MAJOR_OUTAGE
    assert state.reason.startswith("web.example has an expired certificate")


def test_evidence_keeps_the_certificate_through_the_store_json():
    state = decide(ServiceState(), https_service(), [seen(NOW, timedelta(days=3, hours=2))], NOW)
    again = ServiceState.from_json(json.loads(json.dumps(state.to_json())))
    assert again == state
    figures = again.evidence[0].to_json()["certificate"]
    assert figures == {
        "days_left": 3,
        "not_after": "2026-11-25T14:00:00Z",
        "issuer": "Example CA",
        "names": ["web.example"],
    }


# -- end to end: a configuration with every kind of check, a real cycle, the records and pages --------


class Clock:
    def __init__(self) -> None:
        self.t = datetime.now(UTC).replace(microsecond=0)

    def __call__(self) -> datetime:
        return self.t


@pytest.fixture(scope="module")
def every_kind(tmp_path_factory):
    """One cycle over a service of each kind and outcome, against real loopback servers."""
    tmp = tmp_path_factory.mktemp("kinds")
    with http_site() as base, tls_sites(tmp) as sites, banner_server() as port, dns_servers() as dns:
        ca = str(sites.ca_file)
        checks: dict[str, dict[str, object]] = {
            "api": {"url": f"{base}/health", "conditions": ["[STATUS] == 200", "[BODY].status == UP"]},
            "api-degraded": {"url": f"{base}/degraded", "conditions": ["[BODY].status == UP"]},
            "web": {"url": sites.url("good"), "ca_file": ca, "label": "web"},
            "soon": {"url": sites.url("soon"), "ca_file": ca, "label": "soon"},
            "old": {"url": sites.url("expired"), "ca_file": ca, "label": "old"},
            "wrong-name": {"url": sites.url("wrong_name"), "ca_file": ca, "label": "wrong"},
            "db": {"url": f"tcp://127.0.0.1:{port}", "send": "PING", "expect": "+PONG"},
            "cache": {"url": f"tcp://127.0.0.1:{closed_port()}"},
            "name": {"url": "dns://svc.test?type=A", "resolver": dns.answering, "expect": "192.0.2.10"},
            "moved": {"url": "dns://svc.test?type=A", "resolver": dns.answering, "expect": "192.0.2.99"},
            "gone": {"url": "dns://nothing.test?type=A", "resolver": dns.answering},
            "silent": {"url": "dns://svc.test?type=A", "resolver": dns.silent, "timeout": 1},
        }
        cfg = load_config(write_config(tmp, services_toml(checks), SITE))
        run_cycle(cfg, Clock())
    site = cfg.site.output

    def record(slug: str) -> dict[str, object]:
        return json.loads((site / f"api/v1/services/{slug}.json").read_bytes())["service"]

    yield {"site": site, "record": record, "issued": sites.issued}


EXPECTED = {
    "api": ("ok", "operational", "The check answers as expected."),
    "api-degraded": ("condition", "major_outage", "failed the condition [BODY].status == UP"),
    "web": ("ok", "operational", "The check answers as expected."),
    "soon": ("ok", "degraded", "The certificate of soon expires in 3 days"),
    "old": ("cert_expired", "major_outage", "old has an expired certificate"),
    "wrong-name": ("cert_name", "major_outage", "wrong has a certificate for other names than its own"),
    "db": ("ok", "operational", "The check answers as expected."),
    "cache": ("connect", "major_outage", "could not be reached"),
    "name": ("ok", "operational", "The check answers as expected."),
    "moved": ("wrong_answer", "major_outage", "svc.test resolved, but not to 192.0.2.99"),
    "gone": ("no_such_name", "major_outage", "nothing.test does not exist in the DNS"),
    "silent": ("timeout", "major_outage", "svc.test timed out after 1 s"),
}


@pytest.mark.parametrize("slug", list(EXPECTED))
def test_every_kind_in_the_service_records_and_pages(every_kind, slug):
    outcome, status, reason = EXPECTED[slug]
    svc = every_kind["record"](slug)
    evidence = svc["state"]["evidence"][0]
    assert (evidence["outcome"], svc["status"]) == (outcome, status)
    assert reason in svc["state"]["reason"]
    assert svc["checks"][0]["last_result"] == evidence
    page = (every_kind["site"] / f"services/{slug}/index.html").read_text()
    assert svc["state"]["reason"].replace('"', "&#34;") in page
    assert (evidence["certificate"] is not None) == (slug in ("web", "soon"))


def test_certificate_figures_in_the_record_and_on_the_page(every_kind):
    for slug, which, days in (("web", "good", (89, 90)), ("soon", "soon", (3,))):
        cert = every_kind["record"](slug)["state"]["evidence"][0]["certificate"]
        assert cert["days_left"] in days  # 90 days to the second, less the moments the run took
        assert cert["issuer"] == "Statusgen Test CA" and cert["names"] == ["localhost"]
        assert cert["not_after"] == every_kind["issued"][which].strftime("%Y-%m-%dT%H:%M:%SZ")
        page = (every_kind["site"] / f"services/{slug}/index.html").read_text()
        assert f"Certificate: expires in {cert['days_left']} days" in page and "Statusgen Test CA" in page


def test_the_method_page_lists_every_kind_and_check(every_kind):
    page = (every_kind["site"] / "method/index.html").read_text()
    assert all(kind in page for kind in ("<strong>HTTP</strong>", "<strong>TCP</strong>", "<strong>DNS</strong>"))
    assert "<code>TCP tcp://127.0.0.1:" in page and "<code>DNS dns://svc.test?type=A</code>" in page
    assert "<code>[BODY].status == UP</code>" in page
    for outcome in ("condition", "cert_expired", "cert_name", "no_such_name", "no_records", "wrong_answer"):
        assert f"<code>{outcome}</code>" in page


def test_every_example_in_the_checks_doc_is_a_valid_configuration(tmp_path, monkeypatch):
    import trustme

    monkeypatch.setenv("API_TOKEN", "t")
    (tmp_path / "ca").mkdir()
    trustme.CA().cert_pem.write_to_path(str(tmp_path / "ca/internal-root.pem"))
    doc = (Path(__file__).resolve().parents[1] / "docs/checks.md").read_text()
    blocks = re.findall(r"```toml\n(.*?)```", doc, re.S)
    kinds = set()
    for i, block in enumerate(blocks):
        service = f'[[services]]\nslug = "s{i}"\nname = "S"\ncategory = "c"\n'
        cfg = load_config(write_config(tmp_path, CATS + service + block))
        kinds |= {check.kind for check in cfg.services[0].checks}
    assert len(blocks) >= 5 and kinds == {"http", "tcp", "dns"}


def test_check_config_and_run_end_in_one_line_for_a_bad_condition_or_a_lost_ca_file(tmp_path):
    from click.testing import CliRunner

    from statusgen.cli import main

    bad = write_config(tmp_path, services_toml({"a": {"url": "https://a.example", "conditions": ["[BODY] == "]}}))
    for args in (["check-config", str(bad)], ["run", "--config", str(bad)]):
        res = CliRunner().invoke(main, args)
        assert res.exit_code == 2 and "Traceback" not in res.output
        assert 'services.toml: service "a", check 1: conditions has a condition 1 ("[BODY] == ")' in res.output
    with tls_sites(tmp_path) as sites:
        ca_file = tmp_path / "gone.pem"
        ca_file.write_bytes(sites.ca_file.read_bytes())
        path = write_config(tmp_path, services_toml({"a": {"url": sites.url("good"), "ca_file": "gone.pem"}}), SITE)
        cfg = load_config(path)
        ca_file.unlink()  # after the configuration was read, before the run reads it again
        with pytest.raises(ConfigError) as lost:  # the CLI's boundary prints it as one line, exit 2
            asyncio.run(probe_all(cfg))
        res = CliRunner().invoke(main, ["run", "--config", str(path)])
    assert str(lost.value).startswith(f"{ca_file}: cannot be read as PEM certificates")
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert "check 1: ca_file gone.pem cannot be read as PEM certificates" in res.output


def test_the_system_resolver_is_read_again_when_its_configuration_changes(tmp_path):
    """A --loop process lives for months: an edited resolv.conf is read at the next check."""
    from statusgen.probe.dns import resolver_for

    conf = tmp_path / "resolv.conf"
    conf.write_text("nameserver 127.0.0.2\n")
    first = resolver_for(None, str(conf))
    assert first.nameservers == ["127.0.0.2"]
    assert resolver_for(None, str(conf)) is first  # unchanged: made once
    conf.write_text("nameserver 127.0.0.3\nnameserver 127.0.0.4\n")
    assert resolver_for(None, str(conf)).nameservers == ["127.0.0.3", "127.0.0.4"]
    assert resolver_for("127.0.0.9:5353", str(conf)).nameservers == ["127.0.0.9"]
