"""Configuration: a table of broken files, each with the exact messages it must produce."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from statusgen.cli import main
from statusgen.config import config_reference, documented_keys, load_config
from statusgen.errors import ConfigError

GOOD_SERVICE = """
[[services]]
slug = "github"
name = "GitHub"
category = "dev"
[[services.checks]]
url = "https://api.github.com/"
"""
CATS = '[categories]\ndev = "Developer tools"\n'


def messages(tmp_path: Path, text: str) -> list[str]:
    path = tmp_path / "services.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    return info.value.problems


BROKEN = [
    ("no services", CATS, ["services.toml: no services declared; add at least one [[services]] table"]),
    ("not toml", "[site\n", None),
    (
        "timeout words",
        CATS + GOOD_SERVICE + 'timeout = "ten"\n',
        [
            'services.toml: service "github", check 1: timeout must be a number of seconds, greater than 0 and at '
            'most 300, got "ten"'
        ],
    ),
    (
        "second check",
        CATS + GOOD_SERVICE + '[[services.checks]]\nurl = "ftp://x"\ntimeout = -1\n',
        [
            'services.toml: service "github", check 2: url must be an http:// or https:// URL, tcp://host:port or '
            'dns://name?type=TYPE (TYPE one of A, AAAA, CNAME, MX, TXT), got "ftp://x"',
            'services.toml: service "github", check 2: timeout must be a number of seconds, greater than 0 and at '
            "most 300, got -1",
        ],
    ),
    (
        "unknown key",
        CATS + GOOD_SERVICE + "retries = 3\n",
        [
            'services.toml: service "github", check 1: unknown key "retries"; allowed keys: url, label, method, '
            "expect_status, keyword, timeout, degraded_ms, max_bytes, headers, body, follow_redirects, conditions, "
            "cert_expiry_days, ca_file, send, expect, resolver, locations, confirm, confirm_every"
        ],
    ),
    (
        "undeclared category",
        CATS + GOOD_SERVICE.replace('"dev"', '"cloud"'),
        ['services.toml: service "github": category "cloud" is not declared; declared: dev'],
    ),
    (
        "bad slug and missing name",
        CATS + '[[services]]\nslug = "Git Hub"\ncategory = "dev"\n[[services.checks]]\nurl = "https://x.org"\n',
        [
            'services.toml: service "Git Hub": slug must be a slug matching [a-z0-9][a-z0-9-]{0,62}, got "Git Hub"',
            'services.toml: service "Git Hub": name is required (Display name.)',
        ],
    ),
    (
        "duplicate slug",
        CATS + GOOD_SERVICE + GOOD_SERVICE,
        ['services.toml: service "github": slug is used by more than one service; slugs must be unique'],
    ),
    (
        "no checks",
        CATS + '[[services]]\nslug = "a"\nname = "A"\ncategory = "dev"\n',
        ['services.toml: service "a": needs at least one check ([[services.checks]] with a url) or a vendor source'],
    ),
    (
        "site keys",
        '[site]\ninterval = 0\nbase_url = "status.example.org"\ncolour = "red"\n' + CATS + GOOD_SERVICE,
        [
            'services.toml: [site]: base_url must be an http:// or https:// URL, got "status.example.org"',
            "services.toml: [site]: interval must be a number of seconds, greater than 0 and at most 86400, got 0",
            'services.toml: [site]: unknown key "colour"; allowed keys: title, base_url, description, interval, '
            "stale_after, report_months, location, inbox, inbox_key, quorum, minority_failure, languages, logo, "
            "favicon, stylesheet, accent, powered_by, store, output, notes, "
            "concurrency, "
            "failures_to_open, successes_to_resolve, confirm, confirm_every, max_bytes, user_agent, vantage_point, "
            "contact, "
            "mass_failure_ratio, mass_failure_min_checks, allow_private_targets, "
            "spread",
        ],
    ),
    (
        "a key of an earlier version",
        "[site]\nprobe_processes = 2\n" + CATS + GOOD_SERVICE,
        [
            'services.toml: [site]: "probe_processes" is no longer a key: checks run in one process (worker processes '
            "cost CPU and bought no accuracy); delete the key"
        ],
    ),
    (
        "no categories",
        GOOD_SERVICE,
        ['services.toml: [categories]: at least one category is required, e.g. [categories] cloud = "Cloud"'],
    ),
    (
        "expect status",
        CATS + GOOD_SERVICE + "expect_status = [200, 999]\n",
        [
            'services.toml: service "github", check 1: expect_status must be an HTTP status code or a list of them '
            "(100-599), got [200, 999]"
        ],
    ),
    (
        "maintenance backwards",
        CATS + GOOD_SERVICE + "[[services.maintenance]]\nstart = 2026-11-22T10:00:00Z\nend = 2026-11-22T09:00:00Z\n",
        ['services.toml: service "github", maintenance 1: end must be after start'],
    ),
    (
        "vendor format",
        CATS + GOOD_SERVICE + '[services.vendor]\nurl = "https://www.githubstatus.com/api/v2/'
        'summary.json"\nformat = "atlassian"\n',
        [
            'services.toml: service "github", vendor: format must be one of auto, statuspage, statusio, slack, heroku, '
            'cachet, gcp, feed, instatus, uptimekuma, upptime, got "atlassian"'
        ],
    ),
    (
        "top level",
        "sites = 1\n" + CATS + GOOD_SERVICE,
        [
            'services.toml: unknown top-level key "sites"; allowed: site, categories, sla, services, canaries, '
            "locations, notify, rate_limit, subscriptions"
        ],
    ),
    (
        "targets",
        "[site]\nreport_months = 0\n"
        + CATS
        + "[sla]\ndev = 100\nops = 99.9\n"
        + GOOD_SERVICE.replace('category = "dev"', 'category = "dev"\nsla = "99.9"'),
        [
            "services.toml: [site]: report_months must be a whole number of months from 1 to 120, got 0",
            "services.toml: [sla]: dev must be a percentage above 0 and below 100, such as 99.9, got 100",
            'services.toml: [sla]: category "ops" is not declared; declared: dev',
            'services.toml: service "github": sla must be a percentage above 0 and below 100, such as 99.9, got "99.9"',
        ],
    ),
    (
        "locations",
        '[site]\nlocation = "eu"\n' + CATS + GOOD_SERVICE + '[[locations]]\nname = "eu"\n[[locations]]\nname = "Us"\n',
        [
            'services.toml: location 2: name must be a slug matching [a-z0-9][a-z0-9-]{0,62}, got "Us"',
            'services.toml: [[locations]]: "eu" is named more than once (site.location is "eu")',
            "services.toml: [site]: [[locations]] needs inbox and inbox_key: where agents deliver, and the key "
            "they sign with (or an inbox_key in each [[locations]])",
        ],
    ),
    (
        "recurring without duration",
        CATS + GOOD_SERVICE + '[[services.maintenance]]\nschedule = "0 2 * * sun"\n',
        ['services.toml: service "github", maintenance 1: duration is required with schedule'],
    ),
    (
        "bad cron",
        CATS + GOOD_SERVICE + '[[services.maintenance]]\nschedule = "0 25 * * sun"\nduration = 60\n',
        [
            'services.toml: service "github", maintenance 1: schedule must be a cron expression (minute hour day month '
            "weekday), got \"0 25 * * sun\": hour: '25' is outside 0-23"
        ],
    ),
    (
        "both kinds",
        CATS + GOOD_SERVICE + '[[services.maintenance]]\nschedule = "0 2 * * *"\nduration = 60\n'
        "start = 2026-11-22T10:00:00Z\n",
        [
            'services.toml: service "github", maintenance 1: give either start and end (one-off) or schedule and '
            "duration (recurring)"
        ],
    ),
    (
        "not a number",
        "[site]\ninterval = nan\nspread = inf\nmax_bytes = 10_000_000_000\n"
        + CATS
        + GOOD_SERVICE
        + "timeout = 1e308\n",
        [
            "services.toml: [site]: interval must be a number of seconds, greater than 0 and at most 86400, got nan",
            "services.toml: [site]: max_bytes must be a whole number of bytes, from 1024 to 1073741824, "
            "got 10000000000",
            "services.toml: [site]: spread must be a number of seconds, 0 or more and at most 3600, got inf",
            'services.toml: service "github", check 1: timeout must be a number of seconds, greater than 0 and at '
            "most 300, got 1e+308",
        ],
    ),
    (
        "newline after a slug",
        '[categories]\n"dev\\n" = "Developer tools"\n' + GOOD_SERVICE.replace('slug = "github"', 'slug = "github\\n"'),
        [
            'services.toml: [categories]: category "dev\n" must be a slug matching [a-z0-9][a-z0-9-]{0,62}',
            'services.toml: service "github\n": slug must be a slug matching [a-z0-9][a-z0-9-]{0,62}, got "github\n"',
        ],
    ),
    (
        "nested too deep",
        CATS + GOOD_SERVICE + "keyword = " + "[" * 100_000 + "]" * 100_000 + "\n",
        ["services.toml: line 10: arrays and tables are nested more than 16 deep; flatten the value"],
    ),
    (
        "a dotted key too long",
        CATS + GOOD_SERVICE + "\n[x]\n" + "a" + ".a" * 100_000 + " = 1\n",
        ["services.toml: line 12: a key has more than 16 dotted parts; write a shorter key"],
    ),
    (
        "a table header too deep",
        CATS + GOOD_SERVICE + "\n[" + ".".join(["t"] * 100_000) + "]\n",
        ["services.toml: line 11: a key has more than 16 dotted parts; write a shorter key"],
    ),
    (
        "userinfo and an Authorization header",
        CATS + GOOD_SERVICE.replace("https://", "https://me:secret@") + 'headers = { Authorization = "Bearer x" }\n',
        [
            'services.toml: service "github", check 1: url has a user name or password and headers has '
            "Authorization: the URL's would replace the header; keep one of them"
        ],
    ),
    (
        "a variable that is not set",
        CATS
        + GOOD_SERVICE.replace("api.github.com/", "api.github.com/?key=${STATUSGEN_TEST_UNSET}")
        + 'headers = { Authorization = "Bearer ${STATUSGEN_TEST_UNSET_2}" }\n',
        [
            'services.toml: service "github", check 1: url names ${STATUSGEN_TEST_UNSET}, which is not set in the '
            "environment; export it",
            'services.toml: service "github", check 1: headers.Authorization names ${STATUSGEN_TEST_UNSET_2}, which '
            "is not set in the environment; export it",
        ],
    ),
    (
        "vendor scheme",
        CATS + GOOD_SERVICE + '[services.vendor]\nurl = "file:///etc/passwd"\n',
        [
            'services.toml: service "github", vendor: url must be an http:// or https:// URL or a local file, '
            'got "file:///etc/passwd"'
        ],
    ),
    (
        "canary",
        CATS + GOOD_SERVICE + '[[canaries]]\nurl = "example.com"\n',
        [
            "services.toml: canary 1: url must be an http:// or https:// URL, tcp://host:port or "
            'dns://name?type=TYPE (TYPE one of A, AAAA, CNAME, MX, TXT), got "example.com"'
        ],
    ),
]


@pytest.mark.parametrize("name, text, expected", BROKEN, ids=[b[0] for b in BROKEN])
def test_broken_configuration_messages(tmp_path, name, text, expected):
    got = messages(tmp_path, text)
    if expected is None:
        assert len(got) == 1 and got[0].startswith("services.toml: not valid TOML: ")
    else:
        assert got == expected


def test_good_configuration_defaults(tmp_path):
    path = tmp_path / "services.toml"
    path.write_text(CATS + GOOD_SERVICE, encoding="utf-8")
    cfg = load_config(path)
    svc = cfg.services[0]
    assert svc.failures_to_open == 3 and svc.successes_to_resolve == 2
    assert svc.checks[0].expect_status == (200,) and svc.checks[0].timeout == 10.0
    assert cfg.site.store == (tmp_path / "data/statusgen.db").resolve()
    assert cfg.site.languages == ("en",)  # a tuple, as when the file names them


def test_languages_are_a_tuple_given_or_not(tmp_path):
    path = tmp_path / "services.toml"
    path.write_text('[site]\nlanguages = ["en", "de"]\n' + CATS + GOOD_SERVICE, encoding="utf-8")
    given = load_config(path).site.languages
    path.write_text(CATS + GOOD_SERVICE, encoding="utf-8")
    absent = load_config(path).site.languages
    assert (type(given), type(absent)) == (tuple, tuple)
    assert (given, absent) == (("en", "de"), ("en",))


def test_check_config_and_run_report_every_problem_and_change_nothing(tmp_path):
    path = tmp_path / "services.toml"
    path.write_text(CATS + GOOD_SERVICE + 'timeout = "ten"\nretries = 1\n', encoding="utf-8")
    runner = CliRunner()
    for args in (["check-config", str(path)], ["run", "--config", str(path)]):
        res = runner.invoke(main, args)
        assert res.exit_code == 2
        assert 'check 1: timeout must be a number of seconds, greater than 0 and at most 300, got "ten"' in res.output
        assert 'check 1: unknown key "retries"' in res.output
        assert "Traceback" not in res.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["services.toml"]


def test_a_huge_file_is_refused_before_it_is_read(tmp_path):
    path = tmp_path / "services.toml"
    with path.open("w") as f:
        f.write(CATS + GOOD_SERVICE)
        f.write("# padding\n" * 500_000)
    res = CliRunner().invoke(main, ["check-config", str(path)])
    assert res.exit_code == 2 and "larger than a configuration may be (4194304 bytes)" in res.output


def test_missing_file_is_a_clear_error(tmp_path):
    res = CliRunner().invoke(main, ["check-config", str(tmp_path / "nope.toml")])
    assert res.exit_code == 2 and "file not found" in res.output


def test_configuration_reference_is_generated_and_current():
    doc = (Path(__file__).resolve().parents[1] / "docs" / "configuration.md").read_text()
    assert doc == config_reference(), "run: statusgen config-docs > docs/configuration.md"
    for section, keys in documented_keys().items():
        for key in keys:
            assert f"`{key.name}`" in doc, f"{section}.{key.name} is missing from docs/configuration.md"
            assert key.doc, f"{section}.{key.name} has no doc line"


def test_the_bundled_example_is_valid():
    cfg = load_config(Path(__file__).resolve().parents[1] / "examples" / "public-services.toml")
    assert len(cfg.services) == 20
    assert sum(1 for s in cfg.services if s.vendor) >= 8


# -- fuzzing: whatever the file holds, loading it gives a Config or a ConfigError -------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=False),
    st.text(max_size=20),
    st.sampled_from(["https://x.example", "0 2 * * sun", "cloud", "GET"]),
)
KEYS = st.sampled_from(
    [
        "site",
        "categories",
        "services",
        "canaries",
        "checks",
        "maintenance",
        "vendor",
        "slug",
        "name",
        "category",
        "url",
        "timeout",
        "interval",
        "start",
        "end",
        "schedule",
        "duration",
        "expect_status",
        "format",
        "components",
        "paused",
        "max_bytes",
        "rate_limit",
        "grants",
        "addresses",
        "per_minute",
        "purpose",
        "contact",
        "x",
    ]
)
TREES = st.recursive(
    SCALARS, lambda kids: st.one_of(st.lists(kids, max_size=4), st.dictionaries(KEYS, kids, max_size=5)), max_leaves=25
)


def toml_of(value: object) -> str:
    """A TOML document for a dict (keys quoted, values as inline TOML)."""
    import json

    def inline(v: object) -> str:
        if isinstance(v, dict):
            return "{" + ", ".join(f"{json.dumps(k)} = {inline(x)}" for k, x in v.items() if x is not None) + "}"
        if isinstance(v, list):
            return "[" + ", ".join(inline(x) for x in v if x is not None) + "]"
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, float):
            return repr(v) if v == v and abs(v) != float("inf") else "0.0"
        return json.dumps(v) if v is not None else '""'

    if not isinstance(value, dict):
        value = {"site": value}
    return "\n".join(f"{json.dumps(k)} = {inline(v)}" for k, v in value.items() if v is not None)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(KEYS, TREES, max_size=4))
def test_fuzzed_configurations_never_crash(tmp_path_factory, doc):
    path = tmp_path_factory.mktemp("fuzz") / "services.toml"
    try:
        from statusgen.config import parse_config

        cfg = parse_config(toml_of(doc), path)
    except ConfigError as exc:
        assert exc.problems and all(p.startswith("services.toml: ") for p in exc.problems)
    else:
        assert cfg.services


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300))
def test_fuzzed_bytes_never_crash(tmp_path_factory, raw):
    path = tmp_path_factory.mktemp("fuzzb") / "services.toml"
    path.write_bytes(raw)
    with pytest.raises(ConfigError):
        load_config(path)


MEASURED = r"""
import json, resource, subprocess, sys, time
def capped():  # a regression must not take the machine down with it: at most 2 GB of address space
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
t = time.perf_counter()
try:
    done = subprocess.run(sys.argv[1:], capture_output=True, text=True, timeout=60, preexec_fn=capped)
    code, err = done.returncode, done.stderr
except subprocess.TimeoutExpired:
    code, err = None, "did not end within 60 s"
used = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"s": time.perf_counter() - t, "cpu": used.ru_utime + used.ru_stime, "code": code, "err": err,
                  "mb": used.ru_maxrss / 1024}))
"""


def measured(*args: str) -> dict[str, object]:
    """A whole ``statusgen`` process, measured from outside: its exit code, stderr, wall and CPU
    seconds (user and system) and peak memory in MB."""
    command = [sys.executable, "-m", "statusgen.cli", *args]
    done = subprocess.run([sys.executable, "-c", MEASURED, *command], capture_output=True, text=True, check=True)
    found: dict[str, object] = json.loads(done.stdout)
    return found


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("deep-key.toml", "line 1: a key has more than 16 dotted parts"),
        ("deep-header.toml", "line 1: a key has more than 16 dotted parts"),
        ("/dev/zero", "larger than a configuration may be"),
    ],
)
def test_costly_configurations_are_refused_at_once_in_little_memory(tmp_path, name, expected):
    """What cost Python's TOML parser seconds and gigabytes (a 100,000-part dotted key or table
    header in 200 KB) or never ended (/dev/zero) is refused before parsing: exit 2, the line, in
    under 100 MB and at once: in no more CPU time than the same command spends refusing a one-line
    configuration (interpreter start included, measured here, beside it), give or take a second.
    CPU time, not the clock: a loaded machine stretches the clock, not the work; without the scan
    before parsing, the key alone takes the parser minutes and gigabytes (10,000 parts: a second)."""
    (tmp_path / "deep-key.toml").write_text("x" + ".a" * 100_000 + " = 1\n")
    (tmp_path / "deep-header.toml").write_text("[" + ".".join(["t"] * 100_000) + "]\n")
    (tmp_path / "small.toml").write_text("x.a = 1\n")
    path = name if name.startswith("/") else str(tmp_path / name)
    base = measured("check-config", str(tmp_path / "small.toml"))
    assert base["code"] == 2 and "Traceback" not in str(base["err"]), base
    got = measured("check-config", path)
    assert got["code"] == 2 and expected in str(got["err"]) and "Traceback" not in str(got["err"]), got["err"]
    assert float(got["cpu"]) < float(base["cpu"]) + 1.0 and float(got["mb"]) < 100, (got, base)


def test_the_user_agent_names_the_version_and_the_operators_site(tmp_path):
    """No address that does not exist: a target's owner reads who checks it and where to ask."""
    import statusgen

    path = tmp_path / "services.toml"
    path.write_text('[site]\nbase_url = "https://status.example.org"\n' + CATS + GOOD_SERVICE, encoding="utf-8")
    assert load_config(path).site.user_agent == (
        f"statusgen/{statusgen.__version__} (+https://status.example.org/method/)"
    )
    path.write_text('[site]\nuser_agent = "acme-monitor/1"\n' + CATS + GOOD_SERVICE, encoding="utf-8")
    assert load_config(path).site.user_agent == "acme-monitor/1"
