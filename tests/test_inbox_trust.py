"""The inbox, tried as an attacker and a careless operator would (issue 53): it takes batches and
nothing else, a signed batch can never stop a run, a bomb costs a line's memory, a forger's
batches cost a share of the interval, each location speaks for itself only, and a refusal never
rewrites what is known of a good batch. Real agents on loopback addresses deliver to a folder
inbox and to S3 (moto, through rclone); the runs are the real ``run_cycle`` and CLI."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import sqlite3
import subprocess
import sys
import tracemalloc
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from statusgen.agent.run import agent_run
from statusgen.batches import Batch, BatchRefused, batch_name, decode, encode
from statusgen.cli import main
from statusgen.config import Config, load_config
from statusgen.cycle import run_cycle
from statusgen.inbox import FolderInbox
from statusgen.locations.ingest import budget_s, expectations, ingest
from statusgen.model import CheckResult, Outcome
from statusgen.render.api.shapes import SCHEMAS, schema_for
from statusgen.render.build import build
from statusgen.store import Store
from statusgen.store.doctor import examine
from statusgen.store.migrations import migrate
from statusgen.timeutil import iso, utcnow
from statusgen.web.publish import publish_tree
from tests import batchfile
from tests.objectstore import s3_server
from tests.test_locations import AGENTS, KEY, Farm, configured, farm, key, stored

__all__ = ["farm", "key"]  # fixtures of test_locations, used here

OTHER_KEY = hashlib.sha256(b"us").hexdigest()  # a second key, as strong as the first


def checksums(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def health(config: Config) -> dict[str, Any]:
    return json.loads((config.site.output / "api" / "v1" / "health.json").read_bytes())


def fresh(location: str) -> str:
    return batch_name(location, utcnow())


def deliver(config: Config, name: str, data: bytes) -> None:
    FolderInbox(Path(config.site.inbox or "")).put(name, data)


def bucket(s3: Any) -> dict[str, bytes]:
    """Every object of the test server's bucket, by key."""
    import boto3  # moto's own dependency

    client = boto3.client(
        "s3",
        endpoint_url=f"http://127.0.0.1:{s3.port}",
        aws_access_key_id="test",
        aws_secret_access_key="test",
        region_name="us-east-1",
    )
    keys = [
        o["Key"]
        for page in client.get_paginator("list_objects_v2").paginate(Bucket=s3.bucket)
        for o in page.get("Contents", [])
    ]
    return {k: client.get_object(Bucket=s3.bucket, Key=k)["Body"].read() for k in keys}


# -- 1. the inbox touches batches only ---------------------------------------------------------


@pytest.mark.parametrize(
    ("inbox", "named"),
    [
        (".", "the configuration's folder"),
        ("data", "the store's folder"),
        ("site", "the site tree"),
        ("site/inbox", "the site tree"),
        ("notes", "the notes folder"),
        ("..", "the configuration's folder"),
    ],
)
def test_an_inbox_among_our_own_files_is_refused_and_nothing_is_deleted(
    tmp_path: Path, farm: Farm, inbox: str, named: str
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    config = configured(home, farm)
    assert run_cycle(config, spread_s=0).run_id  # a site, a store and an inbox as they are in use
    (home / "notes").mkdir(exist_ok=True)
    text = config.path.read_text().replace('inbox = "inbox"', f'inbox = "{inbox}"')
    config.path.write_text(text)
    before = checksums(tmp_path)
    for argv in (["check-config", str(config.path)], ["run", "--config", str(config.path)]):
        done = CliRunner().invoke(main, argv)
        assert done.exit_code == 2, done.output
        assert f"inbox {os.path.abspath(home / inbox)} " in done.output and named in done.output, done.output
    after = checksums(tmp_path)
    assert {path: after.get(path) for path in before} == before  # nothing deleted, nothing changed


def test_files_that_are_not_batches_are_left_and_counted(tmp_path: Path, farm: Farm) -> None:
    config = configured(tmp_path, farm)
    inbox = tmp_path / "inbox"
    strays = [
        "README.txt",
        "eu/notes.txt",
        "eu/20261204T101500Z-1a2b3c4d.jsonl",
        "mars/20261204T101500Z-1a2b3c4d.jsonl.gz",
    ]
    for stray in strays:
        (inbox / stray).parent.mkdir(parents=True, exist_ok=True)
        (inbox / stray).write_text("not ours to delete")
    agent_run(config, "eu", source=AGENTS["eu"])
    before = {s: (inbox / s).read_bytes() for s in strays}
    run_cycle(config, spread_s=0)
    run_cycle(config, spread_s=0)
    assert {s: (inbox / s).read_bytes() for s in strays} == before
    assert set(stored(config)) == {"eu"}  # the batch beside them was taken
    assert health(config)["inbox"]["not_batches"] == len(strays)
    checked = CliRunner().invoke(main, ["check-config", str(config.path)])
    assert "4 files that are not batches (left as they are)" in checked.output, checked.output


def test_removing_anything_but_a_batch_is_refused_by_the_inbox_itself(tmp_path: Path) -> None:
    (tmp_path / "services.toml").write_text("keep")
    with pytest.raises(Exception, match="is not a batch's name"):
        FolderInbox(tmp_path).remove("services.toml")
    assert (tmp_path / "services.toml").exists()


def test_a_bucket_shared_with_the_published_site(tmp_path: Path, farm: Farm) -> None:
    """An inbox at the root of the bucket a site is published to: publish refuses to go on, and a
    run touches none of the site's objects, only counts them."""
    config = configured(tmp_path, farm)
    run_cycle(config, spread_s=0)
    with s3_server("") as s3:
        root = s3.remote(through_proxy=False).rstrip("/")
        publish_tree(config.site.output, root)
        published = bucket(s3)
        assert len(published) > 50
        config.path.write_text(config.path.read_text().replace('inbox = "inbox"', f'inbox = "{root}"'))
        config = load_config(config.path)
        refused = CliRunner().invoke(main, ["publish", "--config", str(config.path), "--remote", root])
        assert refused.exit_code == 2 and "the remote the site is published to" in refused.output, refused.output
        agent_run(config, "eu", source=AGENTS["eu"])
        run_cycle(config, spread_s=0)
        assert bucket(s3) == published
    assert health(config)["inbox"]["not_batches"] == len(published)
    assert set(stored(config)) == {"eu"}


# -- 2. a signed batch can never stop a run ------------------------------------------------------


def one_result(**fields: object) -> bytes:
    now = iso(utcnow())
    return batchfile.lines(batchfile.result("alpha", 0, now, **fields))


@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        ({"detail": {"an": "object"}}, "whose detail is not"),
        ({"latency_ms": [1, 2]}, "whose latency_ms is not"),
        ({"latency_ms": "fast"}, "whose latency_ms is not"),
        ({"outcome": "timeout", "latency_ms": "slow"}, "whose latency_ms is not"),
        ({"outcome": "condition", "detail": "x" * 100_000}, "whose detail is not one of its check's conditions"),
        ({"detail": "[BODY] == 1"}, "whose detail is not one of its check's conditions"),
        ({"http_status": 99}, "whose http_status is not"),
        ({"slow": 1}, "whose slow is not"),
        ({"check": True}, "whose check is not"),
        ({"outcome": "fine"}, "whose outcome is not"),
        ({"latency_ms": -1}, "whose latency_ms is not"),
        ({"latency_ms": 1e300}, "whose latency_ms is not"),
        ({"extra": 1}, "with other fields than its shape's"),
    ],
)
def test_a_result_out_of_its_shape_refuses_its_batch_and_the_run_goes_on(
    tmp_path: Path, farm: Farm, fields: dict[str, object], reason: str
) -> None:
    config = configured(tmp_path, farm)
    now, name = iso(utcnow()), fresh("eu")
    good = batchfile.result("beta", 0, now)
    bad = batchfile.result("alpha", 0, iso(utcnow() - timedelta(hours=1)), **fields)
    body = batchfile.header("eu", name, now, 2) + batchfile.lines(good, bad)
    deliver(config, name, batchfile.signed(name, body, KEY.encode()))
    for _ in range(2):  # and the next run as well
        run_cycle(config, spread_s=0)
    assert stored(config) == {}  # refused whole: the good result with it
    refused = health(config)["locations"][1]["last_refused"]
    assert reason in refused["reason"]
    with Store(config.site.store) as store:
        assert examine(store) == []
    assert FolderInbox(tmp_path / "inbox").names() == []  # removed, not refused again every run


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)
RESULT_FIELDS = ("service", "check", "ts", "outcome", "latency_ms", "http_status", "slow", "detail")
PLAUSIBLE = {
    "service": st.sampled_from(["alpha", "beta", "gamma", ""]),
    "check": st.integers(-1, 2),
    "ts": st.sampled_from(["now", "2026-13-01T00:00:00Z", "x"]),
    "outcome": st.sampled_from([o.value for o in Outcome] + ["nope"]),
    "latency_ms": st.one_of(st.none(), st.floats(-1, 400_000), st.text(max_size=5)),
    "http_status": st.one_of(st.none(), st.integers(0, 700)),
    "slow": st.one_of(st.booleans(), st.integers(0, 1)),
    "detail": st.one_of(st.none(), st.text(max_size=30)),
}


@st.composite
def result_lines(draw: st.DrawFn) -> dict[str, object]:
    """A result line near its shape: each field plausible or anything JSON holds, some missing."""
    line: dict[str, object] = {}
    near = draw(st.booleans())  # half of them with every field plausible: some are taken
    for name in RESULT_FIELDS:
        kind = "plausible" if near else draw(st.sampled_from(["plausible", "plausible", "any", "missing"]))
        if kind == "missing":
            continue
        line[name] = draw(PLAUSIBLE[name] if kind == "plausible" else JSON_VALUES)
    if line.get("ts") == "now":
        line["ts"] = iso(utcnow())
    return line


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Any:
    import threading

    os.environ["TEST_INBOX_KEY"] = KEY
    server = Farm()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    config = configured(tmp_path_factory.mktemp("property"), server)
    yield config
    server.shutdown()


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(result_lines(), min_size=1, max_size=3), st.integers(0, 4))
def test_whatever_a_signed_batch_holds_the_run_ends_well(site: Config, lines: list[Any], count: int) -> None:
    """Arbitrary JSON lines, signed with the right key: the run ends as it should, the store's
    doctor finds nothing, and every JSON file the build writes keeps its shape."""
    config, name = site, fresh("eu")
    results = b"".join(json.dumps(line).encode() + b"\n" for line in lines)  # huge integers, NaN...
    body = batchfile.header("eu", name, iso(utcnow()), count) + results
    deliver(config, name, batchfile.signed(name, body, KEY.encode()))
    run_cycle(config, spread_s=0)
    with Store(config.site.store) as store:
        assert examine(store) == []
    root = config.site.output
    for rel in ("api/v1/health.json", "api/v1/services/alpha.json", "api/v1/services/alpha/history/24h.json"):
        schema = {"$ref": f"#/components/schemas/{schema_for(rel)}", "components": {"schemas": SCHEMAS}}
        Draft202012Validator(schema).validate(json.loads((root / rel).read_bytes()))


@settings(max_examples=300, deadline=None)
@given(st.lists(result_lines(), max_size=4), st.integers(0, 5))
def test_decode_refuses_or_takes_never_fails(lines: list[Any], count: int) -> None:
    config = load_config(_decode_config())
    expect = expectations(config, utcnow())
    name = "eu/20261204T000000Z-00000000.jsonl.gz"
    body = batchfile.header("eu", name, iso(utcnow()), count) + b"".join(json.dumps(x).encode() + b"\n" for x in lines)
    try:
        batch = decode(name, batchfile.signed(name, body, KEY.encode()), expect)
    except BatchRefused:
        return
    assert all(isinstance(r, CheckResult) for r in batch.results)


_CONFIG: list[Path] = []


def _decode_config() -> Path:
    """One configuration for every example of the decode property (made once a process)."""
    if not _CONFIG:
        import tempfile

        folder = Path(tempfile.mkdtemp(prefix="statusgen-decode-"))
        from tests.conftest import write_config

        services = "".join(
            f'[[services]]\nslug = "{s}"\nname = "{s}"\ncategory = "c"\n'
            f'[[services.checks]]\nurl = "http://127.0.0.1:9/{s}"\n'
            for s in ("alpha", "beta")
        )
        site = 'inbox = "inbox"\ninbox_key = "${TEST_INBOX_KEY}"\n'
        _CONFIG.append(write_config(folder, f'[categories]\nc = "C"\n[[locations]]\nname = "eu"\n{services}', site))
    os.environ["TEST_INBOX_KEY"] = KEY
    return _CONFIG[0]


# -- 3. a bomb costs a line's memory -----------------------------------------------------------


def test_a_newline_bomb_is_refused_holding_one_line(tmp_path: Path, farm: Farm) -> None:
    config = configured(tmp_path, farm)
    expect = expectations(config, utcnow())
    newlines = gzip.compress(b"\n" * (32 << 20), compresslevel=9)
    assert len(newlines) < 40_000  # the bomb of the report: some 31 KB inflating to 32 MiB
    name = "eu/20261204T000000Z-0b0b0b0b.jsonl.gz"
    signed = batchfile.signed(name, b"\n" * (32 << 20), KEY.encode())
    long_line = batchfile.signed(name, b"{" * (32 << 20), KEY.encode())
    for data, reason in ((newlines, "not signed"), (signed, "a blank line"), (long_line, "a line longer than")):
        tracemalloc.start()
        with pytest.raises(BatchRefused, match=reason):
            decode(name, data, expect)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert peak < 4 << 20, (reason, peak)  # a chunk, its lines and one more: never the body


BOMB_RUN = r"""
import atexit, resource, sys
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
# VmHWM is this program's own peak: ru_maxrss keeps the forking process's (pytest's) across exec.
peak = lambda: next(l.split()[1] for l in open("/proc/self/status") if l.startswith("VmHWM:"))
atexit.register(lambda: print(f"peak_kib={peak()}", file=sys.stderr))
from statusgen.cli import main
sys.argv = ["statusgen", "run", "--config", sys.argv[1]]
main()
"""


def test_bombs_under_a_one_gigabyte_address_space_leave_the_run_well(tmp_path: Path, farm: Farm) -> None:
    config = configured(tmp_path, farm)
    inbox = FolderInbox(tmp_path / "inbox")
    for body in (b"\n" * (32 << 20), b"x" * (32 << 20)):
        name = fresh("eu")
        inbox.put(name, batchfile.signed(name, body, KEY.encode()))
    inbox.put(fresh("us"), gzip.compress(b"\n" * (32 << 20)))  # no key needed to send this one
    env = {**os.environ, "TEST_INBOX_KEY": KEY}
    done = subprocess.run([sys.executable, "-c", BOMB_RUN, str(config.path)], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "MemoryError" not in done.stderr and "Traceback" not in done.stderr
    assert inbox.names() == []
    peak_kib = int(done.stderr.rsplit("peak_kib=", 1)[1].split()[0])
    assert peak_kib < 400 << 10, peak_kib  # a run's own size, far from the cap


# -- 4. a forger's batches cost a share of the interval -------------------------------------------


def test_forged_batches_wait_past_the_runs_budget_and_go_oldest_first(tmp_path: Path, farm: Farm) -> None:
    config = configured(tmp_path, farm)
    inbox = FolderInbox(tmp_path / "inbox")
    start = utcnow() - timedelta(minutes=30)
    names = []
    for n in range(150):
        name = f"eu/{(start + timedelta(seconds=n)).strftime('%Y%m%dT%H%M%SZ')}-{n:08x}.jsonl.gz"
        inbox.put(name, batchfile.signed(name, os.urandom(4096), b"not the key"))
        names.append(name)
    budget = int(budget_s(config))
    ticks = iter(range(10_000))

    def clock() -> float:  # each batch takes a second of the run's time
        return float(next(ticks))

    with Store(config.site.store) as store:
        first = ingest(config, store, utcnow(), clock=clock)
        assert (len(first.refused), first.left) == (budget, 150 - budget)
        assert [n for n, _ in first.refused] == names[: len(first.refused)]  # oldest first
        assert all("bad signature" in reason for _, reason in first.refused)
        assert inbox.names() == names[len(first.refused) :]
        second = ingest(config, store, utcnow(), clock=clock)
        assert [n for n, _ in second.refused] == names[len(first.refused) : len(first.refused) * 2]
    assert health_after_build(config)["inbox"]["left_for_next"] == second.left


def health_after_build(config: Config) -> dict[str, Any]:
    with Store(config.site.store) as store:
        build(store, config, utcnow())
    return health(config)


def test_a_batch_over_the_cap_by_its_listed_size_is_never_read(tmp_path: Path, farm: Farm) -> None:
    config = configured(tmp_path, farm)
    inbox = FolderInbox(tmp_path / "inbox")
    name = fresh("eu")
    inbox.put(name, b"\x1f\x8b" + bytes((4 << 20) + 1))

    class Unread(FolderInbox):
        def get(self, name: str) -> bytes:
            raise AssertionError(f"{name} was read")

    with Store(config.site.store) as store:
        done = ingest(config, store, utcnow(), inbox=Unread(tmp_path / "inbox"))
    assert done.refused == [(name, "larger than 4 MiB")]


# -- 5. who may speak for whom -------------------------------------------------------------------


@pytest.mark.parametrize("weak", ["", "short", "a" * 80, "0123" * 15])
def test_an_empty_or_weak_key_is_refused_by_every_side(
    tmp_path: Path, farm: Farm, monkeypatch: pytest.MonkeyPatch, weak: str
) -> None:
    config = configured(tmp_path, farm)
    monkeypatch.setenv("TEST_INBOX_KEY", weak)
    for argv in (
        ["check-config", str(config.path)],
        ["probe", "--config", str(config.path), "--location", "eu"],
        ["run", "--config", str(config.path)],
    ):
        done = CliRunner().invoke(main, argv)
        assert done.exit_code == 2, (argv, done.output)
        assert "TEST_INBOX_KEY" in done.output and "token_hex(32)" in done.output, done.output
    assert FolderInbox(tmp_path / "inbox").names() == []


def per_location_keys(tmp_path: Path, farm: Farm, monkeypatch: pytest.MonkeyPatch) -> Config:
    config = configured(tmp_path, farm)
    text = config.path.read_text()
    for name in AGENTS:
        text = text.replace(f'name = "{name}"\n', f'name = "{name}"\ninbox_key = "${{KEY_{name.upper()}}}"\n')
    config.path.write_text(text.replace('inbox_key = "${TEST_INBOX_KEY}"\n', ""))
    monkeypatch.setenv("KEY_EU", KEY)
    monkeypatch.setenv("KEY_US", OTHER_KEY)
    monkeypatch.setenv("KEY_AP", hashlib.sha256(b"ap").hexdigest())
    return load_config(config.path)


def test_one_agent_cannot_speak_for_another(tmp_path: Path, farm: Farm, monkeypatch: pytest.MonkeyPatch) -> None:
    config = per_location_keys(tmp_path, farm, monkeypatch)
    assert CliRunner().invoke(main, ["check-config", str(config.path)]).exit_code == 0
    for name in ("eu", "us"):
        agent_run(config, name, source=AGENTS[name])
    # eu's agent, holding eu's key only, signs a batch as us
    now = utcnow()
    forged = CheckResult("alpha", 0, now, Outcome.TIMEOUT, None, None, False)
    name = batch_name("us", now)
    FolderInbox(tmp_path / "inbox").put(name, encode(Batch("us", name, now, (forged,)), KEY.encode()))
    with Store(config.site.store) as store:
        done = ingest(config, store, utcnow())
    assert len(done.taken) == 2
    assert done.refused == [(name, "bad signature: another key, or altered")]
    assert {r.outcome for r in stored(config)["us"]} == {Outcome.OK}


def test_a_result_of_a_check_that_does_not_run_there_is_refused(tmp_path: Path, farm: Farm) -> None:
    config = configured(tmp_path, farm)
    text = config.path.read_text().replace("timeout = 3\n", 'timeout = 3\nlocations = ["eu"]\n', 1)
    config.path.write_text(text)
    config = load_config(config.path)
    now = utcnow()
    name = batch_name("us", now)
    told = (CheckResult("alpha", 0, now, Outcome.TIMEOUT, None, None, False),)  # alpha runs at eu only
    FolderInbox(tmp_path / "inbox").put(name, encode(Batch("us", name, now, told), KEY.encode()))
    with Store(config.site.store) as store:
        done = ingest(config, store, utcnow())
    assert done.refused == [(name, "a result of a check the configuration does not run there")]


# -- 6. a refusal never rewrites a good batch's record ---------------------------------------------


def test_an_altered_copy_of_a_taken_batch_leaves_its_record(tmp_path: Path, farm: Farm) -> None:
    config = configured(tmp_path, farm)
    (name,) = agent_run(config, "eu", source=AGENTS["eu"]).sent
    inbox = FolderInbox(tmp_path / "inbox")
    genuine = inbox.get(name)
    run_cycle(config, spread_s=0)
    taken = health(config)["locations"][1]
    listed = CliRunner().invoke(main, ["locations", "--config", str(config.path)]).output
    inbox.put(name, genuine[:-12] + bytes([genuine[-12] ^ 1]) + genuine[-11:])
    run_cycle(config, spread_s=0)
    after = health(config)["locations"][1]
    assert (after["last_at"], after["results"]) == (taken["last_at"], taken["results"])
    assert after["last_refused"]["reason"] == "bad signature: another key, or altered"
    again = CliRunner().invoke(main, ["locations", "--config", str(config.path)]).output
    eu = next(line for line in listed.splitlines() if line.startswith("eu:"))
    assert next(line for line in again.splitlines() if line.startswith("eu:")).startswith(eu.split(" (")[0])


def test_a_store_that_took_results_out_of_shape_is_cleaned_on_upgrade(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    db = sqlite3.connect(path, isolation_level=None)
    migrate(db, upto=16)
    db.execute("INSERT INTO location_results VALUES ('eu','alpha',0,1,'ok','fast',200,0,NULL,NULL)")
    db.execute("INSERT INTO location_results VALUES ('eu','alpha',0,2,'ok',12.5,200,0,NULL,NULL)")
    db.execute("INSERT INTO batches VALUES ('eu','eu/a',1,1,1,NULL)")
    db.execute("INSERT INTO batches VALUES ('eu','eu/b',2,2,0,'bad signature')")
    db.close()
    with Store(path) as store:
        assert examine(store) == []
        assert list(store.db.execute("SELECT ts FROM location_results")) == [(2,)]
        assert set(store.last_batches()) == {"eu"} and store.last_batches()["eu"].name == "eu/a"
        assert store.last_refusals()["eu"].refused == "bad signature"
