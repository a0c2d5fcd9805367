"""statusgen publish: the plan on its own, then real rclone against real targets.

Targets: a local folder (``:local:``), and ``rclone serve webdav`` on loopback
reached through a small recording proxy, which sees every request rclone makes
in time order with its headers. The WebDAV target does not keep headers (it
answers by file extension), so headers are checked as rclone sends them.
The trees are real: two runs of a real configuration against loopback targets,
the second with a new incident, a new service and a removed one.
"""

from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from click.testing import CliRunner

from statusgen import routes
from statusgen.cli import main
from statusgen.config import load_config
from statusgen.cycle import run_cycle
from statusgen.policy import content_type
from statusgen.render.tree import current_generation
from statusgen.web.publish import (
    CACHE_CONTROL,
    PublishError,
    Step,
    Tier,
    comparison_flags,
    plan_publish,
    publish_tree,
    publishable,
    tier_of,
    tree_files,
)
from tests.conftest import Targets, write_config
from tests.objectstore import RecordingProxy

RCLONE = shutil.which("rclone") or "/usr/bin/rclone"
BASE_URL = "https://status.example.org"
CATEGORIES = '[categories]\ncloud = "Cloud"\npay = "Payments"\n'


# -- two real trees ---------------------------------------------------------------


def _service(targets: Targets, slug: str, category: str) -> str:
    return (
        f'\n[[services]]\nslug = "{slug}"\nname = "{slug.title()}"\ncategory = "{category}"\n'
        f'[[services.checks]]\nurl = "{targets.url("/" + slug)}"\n'
    )


@dataclass
class Trees:
    """Two generations of a real tree, copied aside so later runs cannot prune them."""

    before: Path  # alpha, beta, gamma, all up
    after: Path  # beta down (a new incident), gamma removed, delta added

    def bytes_of(self, which: Path) -> dict[str, bytes]:
        return {rel: (which / rel).read_bytes() for rel in tree_files(which)}


@pytest.fixture(scope="module")
def trees(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Trees]:
    tmp = tmp_path_factory.mktemp("publish-trees")
    targets = Targets()
    threading.Thread(target=targets.serve_forever, daemon=True).start()
    for slug in ("alpha", "beta", "gamma", "delta"):
        targets.set("/" + slug)
    now = datetime.now(UTC).replace(microsecond=0) - timedelta(hours=1)

    def run(slugs: dict[str, str], name: str, at: datetime) -> Path:
        body = CATEGORIES + "".join(_service(targets, s, c) for s, c in slugs.items())
        path = write_config(tmp, body, site="failures_to_open = 1\n")
        run_cycle(load_config(path), lambda: at)
        gen = current_generation(tmp / "site")
        assert gen is not None
        return Path(shutil.copytree(gen, tmp / name))

    before = run({"alpha": "cloud", "beta": "cloud", "gamma": "pay"}, "before", now)
    targets.set("/beta", 500, b"down")
    after = run({"alpha": "cloud", "beta": "cloud", "delta": "pay"}, "after", now + timedelta(minutes=1))
    yield Trees(before, after)
    targets.shutdown()
    targets.server_close()


# -- the plan, on its own ------------------------------------------------------------


def test_every_kind_of_file_has_its_tier():
    expected = {
        "static/site.css": Tier.LEAVES,
        "badges/a.svg": Tier.LEAVES,
        "_errors/404.json": Tier.LEAVES,
        "api/v1/openapi.json": Tier.LEAVES,
        "api/v1/services/a/history/24h.json": Tier.LEAVES,
        "services/a/index.html": Tier.SERVICES,
        "services/a/incidents/index.html": Tier.SERVICES,
        "feed/services/a.xml": Tier.SERVICES,
        "api/v1/services/a.json": Tier.SERVICES,
        "api/v1/services.json": Tier.LISTS,
        "api/v1/services/_filter/_all/degraded.json": Tier.LISTS,
        "api/v1/incidents.json": Tier.LISTS,
        "api/v1/incidents/_active/1.json": Tier.LISTS,
        "feed/incidents.xml": Tier.LISTS,
        "api/v1/snapshot.json": Tier.SNAPSHOT,
        "api/v1/health.json": Tier.SNAPSHOT,
        "index.html": Tier.PAGES,
        "incidents/index.html": Tier.PAGES,
        "method/index.html": Tier.PAGES,
        "api/index.html": Tier.PAGES,
    }
    assert {rel: tier_of(rel) for rel in expected} == expected


def test_dotfiles_and_gzip_copies_are_not_published():
    assert publishable("api/v1/snapshot.json") and publishable("index.html")
    for rel in (".manifest.json", "api/v1/snapshot.json.gz", ".well-known/x.json", "a/.hidden"):
        assert not publishable(rel), rel


def test_plan_goes_up_by_tier_one_content_type_per_step_and_deletes_last(trees):
    files = tree_files(trees.after)
    remote = tree_files(trees.before) + ["api/v1/snapshot.json.gz", ".keep", "old/.hidden"]
    steps = plan_publish(files + [".manifest.json", "index.html.gz"], remote)
    uploads = [s for s in steps if s.action == "copy"]
    assert [s.action for s in steps] == ["copy"] * len(uploads) + ["delete", "rmdirs"]
    assert [s.tier for s in uploads] == sorted(s.tier for s in uploads)
    assert sorted(f for s in uploads for f in s.files) == files
    for step in uploads:
        assert {(tier_of(f), content_type(f)) for f in step.files} == {(step.tier, step.content_type)}
    gone = set(steps[-2].files)
    assert gone == (set(tree_files(trees.before)) - set(files)) | {"api/v1/snapshot.json.gz"}
    assert "api/v1/services/gamma.json" in gone and "feed/services/gamma.xml" in gone
    assert plan_publish(files, files) == uploads  # nothing to delete: no delete step


def test_each_upload_sets_its_content_type_and_cache_control(tmp_path):
    step = Step("copy", ("feed/incidents.xml",), Tier.LISTS, content_type("feed/incidents.xml"))
    argv = step.argv("rclone", tmp_path / "gen", "r2:status", tmp_path / "list.txt", ("--checksum",))
    assert argv[:4] == ["rclone", "copy", str(tmp_path / "gen"), "r2:status"]
    headers = [argv[i + 1] for i, a in enumerate(argv) if a == "--header-upload"]
    assert headers == ["Content-Type: application/atom+xml; charset=utf-8", "Cache-Control: public, max-age=15"]
    assert "--checksum" in argv and argv[argv.index("--files-from-raw") + 1] == str(tmp_path / "list.txt")
    assert "--dry-run" not in argv and "--dry-run" in step.argv("rclone", tmp_path, "r:", tmp_path, (), dry_run=True)
    delete = Step("delete", ("old.json",)).argv("rclone", tmp_path, "r2:status", tmp_path / "gone.txt", ("--checksum",))
    assert delete[:3] == ["rclone", "delete", "r2:status"] and "--header-upload" not in delete


def test_change_detection_follows_what_the_remote_keeps():
    assert comparison_flags(["md5"], 1) == ("--checksum",)  # S3, GCS, Azure, R2, local
    assert comparison_flags([], 1_000_000_000) == ()  # mtimes only: size and mtime
    assert comparison_flags([], 3153600000000000000) == ("--ignore-times",)  # neither: every file


# -- real rclone, a local folder as the remote ----------------------------------------


def state_of(folder: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under a folder with its bytes and ctime (which moves on any write)."""
    return {
        p.relative_to(folder).as_posix(): (p.read_bytes(), p.stat().st_ctime_ns)
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def seed(target: Path, tree: Path) -> None:
    """Put a tree's publishable files in a target folder, as a publish of it would have left them."""
    for rel in tree_files(tree):
        (target / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(tree / rel, target / rel)


def test_first_publish_copies_the_tree_and_later_ones_only_what_changed(trees, tmp_path):
    target = tmp_path / "bucket"
    (target / "api/v1").mkdir(parents=True)
    (target / "api/v1/snapshot.json.gz").write_bytes(b"stale")
    (target / ".keep").write_text("the operator's")
    first = publish_tree(trees.before, f":local:{target}", RCLONE)
    before = trees.bytes_of(trees.before)
    assert sorted(first.changed("copy")) == sorted(before) and first.compare == ("--checksum",)
    assert first.changed("delete") == ["api/v1/snapshot.json.gz"]  # a stale gzip copy goes
    assert (target / ".keep").read_text() == "the operator's"  # dotfiles are not ours
    (target / ".keep").unlink()
    assert {rel: data for rel, (data, _) in state_of(target).items()} == before
    assert not (target / ".manifest.json").exists() and not list(target.rglob("*.gz"))

    again = publish_tree(trees.before, f":local:{target}", RCLONE)
    assert again.changed("copy") == [] and again.changed("delete") == []

    untouched = state_of(target)
    after = trees.bytes_of(trees.after)
    report = publish_tree(trees.after, f":local:{target}", RCLONE)
    changed = {rel for rel, data in after.items() if before.get(rel) != data}
    assert set(report.changed("copy")) == changed
    assert "services/beta/incidents/index.html" in changed and "services/delta/index.html" in changed
    assert len(changed) < len(after)  # history of alpha, assets...: not sent again
    now = state_of(target)
    assert {rel: data for rel, (data, _) in now.items()} == after
    assert all(now[rel][1] == untouched[rel][1] for rel in after if rel not in changed)
    assert set(report.changed("delete")) == set(before) - set(after)
    assert not (target / "api/v1/services/gamma").exists()  # the folder left empty went too


def test_dry_run_changes_nothing_and_says_what_a_real_run_does(trees, tmp_path):
    target = tmp_path / "bucket"
    seed(target, trees.before)
    (target / "stale.json").write_text("{}")
    untouched = state_of(target)
    dry = publish_tree(trees.after, f":local:{target}", RCLONE, dry_run=True)
    assert state_of(target) == untouched
    assert dry.changed("copy") and "stale.json" in dry.changed("delete")
    assert dry.lines()[-1].startswith("would publish ")
    real = publish_tree(trees.after, f":local:{target}", RCLONE)
    assert sorted(real.changed("copy")) == sorted(dry.changed("copy"))
    assert sorted(real.changed("delete")) == sorted(dry.changed("delete"))


def test_cli_publishes_the_configs_output(trees, tmp_path):
    output = tmp_path / "out"
    shutil.copytree(trees.before, output)
    (tmp_path / "services.toml").write_text(
        f'[site]\noutput = "out"\n{CATEGORIES}'
        '[[services]]\nslug = "a"\nname = "A"\ncategory = "cloud"\n'
        '[[services.checks]]\nurl = "http://127.0.0.1:9/"\n'
    )
    res = CliRunner().invoke(
        main,
        [
            "publish",
            "--config",
            str(tmp_path / "services.toml"),
            "--remote",
            f":local:{tmp_path / 'bucket'}",
            "--rclone",
            RCLONE,
        ],
    )
    assert res.exit_code == 0, res.output
    total = len(tree_files(trees.before))
    assert res.output.splitlines()[-1] == (
        f"published {output} to :local:{tmp_path / 'bucket'}: {total} of {total} "
        f"files uploaded, 0 deleted (compared by --checksum)"
    )
    assert (tmp_path / "bucket/api/v1/snapshot.json").read_bytes() == (output / "api/v1/snapshot.json").read_bytes()


# -- real rclone over WebDAV, through a recording proxy --------------------------------


def dav_remote(proxy: RecordingProxy) -> str:
    return f":webdav,url='http://127.0.0.1:{proxy.port}':{proxy.prefix}"


@dataclass
class WebDav:
    folder: Path
    proxy: RecordingProxy
    process: subprocess.Popen[bytes] = field(repr=False)


@pytest.fixture
def webdav(tmp_path: Path) -> Iterator[WebDav]:
    """``rclone serve webdav`` on a loopback port, behind a recording proxy."""
    folder, log = tmp_path / "dav", tmp_path / "serve.log"
    folder.mkdir()
    with log.open("wb") as err:
        process = subprocess.Popen([RCLONE, "serve", "webdav", str(folder), "--addr", "127.0.0.1:0"], stderr=err)
    deadline = time.monotonic() + 10
    while not (found := re.search(r"started on .*?http://127\.0\.0\.1:(\d+)/", log.read_text())):
        assert process.poll() is None and time.monotonic() < deadline, log.read_text()
        time.sleep(0.02)
    proxy = RecordingProxy(int(found.group(1)), "pub")
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    yield WebDav(folder, proxy, process)
    proxy.close()
    process.terminate()
    process.wait(timeout=10)


HREF = re.compile(r'(?:href|src)="([^"]+)"')


def references(root: Path, rel: str, files: set[str]) -> set[str]:
    """The files of the tree a document points at: JSON links, HTML and Atom hrefs."""
    if "charset=" not in content_type(rel):  # an image points at nothing
        return set()
    text = (root / rel).read_text(encoding="utf-8")
    urls: list[str] = HREF.findall(text)
    if rel.endswith(".json"):

        def walk(value: object) -> None:
            if isinstance(value, str) and value.startswith(("/", BASE_URL)):
                urls.append(value)
            for child in value.values() if isinstance(value, dict) else value if isinstance(value, list) else ():
                walk(child)

        walk(json.loads(text))
    found = set()
    for url in urls:
        parts = urlsplit(url.removeprefix(BASE_URL))
        if not parts.netloc:
            hit = routes.resolve(parts.path or "/", parse_qs(parts.query), files.__contains__)
            if hit.status == 200 and hit.file != rel:
                found.add(hit.file)
    return found


def test_headers_order_and_deletions_through_webdav(trees, webdav):
    seed(webdav.folder / "pub", trees.before)
    there_before = set(tree_files(trees.before))
    report = publish_tree(trees.after, dav_remote(webdav.proxy), RCLONE)
    assert report.compare == ("--ignore-times",)  # plain WebDAV keeps neither hashes nor mtimes
    log = webdav.proxy.log
    puts = [r for r in log if r.method == "PUT"]
    files = set(tree_files(trees.after))
    assert sorted(r.path for r in puts) == sorted(files) == sorted(report.changed("copy"))
    for r in puts:  # one Content-Type, ours, and our Cache-Control
        assert r.header("content-type") == [content_type(r.path)] and r.header("cache-control") == [CACHE_CONTROL], r

    tiers = [tier_of(r.path) for r in puts]
    assert tiers == sorted(tiers)  # leaves first, pages last
    last_put = max(i for i, r in enumerate(log) if r.method == "PUT")
    deletes = [i for i, r in enumerate(log) if r.method == "DELETE"]
    assert deletes and min(deletes) > last_put  # deletions last
    assert {log[i].path for i in deletes} >= {"api/v1/services/gamma.json", "feed/services/gamma.xml"}

    uploaded: set[str] = set()
    for r in puts:  # nothing points at a file neither there before nor uploaded yet (but its own tier's)
        missing = {
            f for f in references(trees.after, r.path, files) - there_before - uploaded if tier_of(f) != tier_of(r.path)
        }
        assert not missing, f"{r.path} went up before {missing}"
        uploaded.add(r.path)
    assert "services/beta/incidents/index.html" in uploaded  # a new incident of beta is told there
    assert {
        "api/v1/services/delta.json",
        "services/delta/index.html",  # the check had new files to see
        "services/delta/incidents/index.html",
    } <= uploaded - there_before


def test_a_failed_upload_stops_before_any_entry_document(trees, webdav, monkeypatch):
    monkeypatch.setenv("RCLONE_RETRIES", "1")
    monkeypatch.setenv("RCLONE_LOW_LEVEL_RETRIES", "1")
    webdav.proxy.fail = {"api/v1/services/alpha/history/24h.json"}
    with pytest.raises(PublishError) as caught:
        publish_tree(trees.before, dav_remote(webdav.proxy), RCLONE)
    message = str(caught.value)
    assert message.startswith(f"publish to {dav_remote(webdav.proxy)} failed: rclone copy of the leaves ")
    assert "403" in message and "\n" not in message
    assert all(tier_of(p) == Tier.LEAVES for p in webdav.proxy.uploads())
    assert not (webdav.folder / "pub/api/v1/snapshot.json").exists()


# -- errors a user can meet -------------------------------------------------------


def invoke(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(main, ["publish", *args])
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    return res.exit_code, res.stderr


@contextmanager
def refused_port() -> Iterator[int]:
    """A loopback port bound but never listening: connections to it are refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield int(sock.getsockname()[1])


def test_unreachable_remote_is_one_clear_line(trees, monkeypatch):
    monkeypatch.setenv("RCLONE_LOW_LEVEL_RETRIES", "1")
    with refused_port() as port:
        remote = f":webdav,url='http://127.0.0.1:{port}':pub"
        code, err = invoke("--site", str(trees.before), "--remote", remote, "--rclone", RCLONE)
    assert code == 1
    assert err.startswith(f"statusgen: publish to {remote} failed: rclone backend features: ")
    assert "connection refused" in err and len(err.splitlines()) == 1 and "Traceback" not in err


def test_usage_mistakes_exit_2_and_missing_rclone_exits_1(trees, tmp_path):
    code, err = invoke("--site", str(trees.before), "--remote", "my-bucket")
    assert code == 2 and "expected an rclone remote as REMOTE:PATH" in err
    code, err = invoke("--site", str(tmp_path / "nothing"), "--remote", ":local:/tmp/x")
    assert code == 2 and "no output tree here" in err
    code, err = invoke("--site", str(trees.before), "--remote", ":local:/tmp/x", "--rclone", str(tmp_path / "rclone"))
    assert code == 1 and "cannot run rclone" in err and "--rclone PATH" in err
    code, err = invoke("--site", str(trees.before))
    assert code == 2 and "--remote" in err
