"""`statusgen init`: a new site's starting files, valid as written, never written over."""

from __future__ import annotations

import functools
import http.server
import json
import os
import re
import shlex
import shutil
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from statusgen.cli import main
from statusgen.config import load_config
from tests.conftest import Targets
from tests.workflow_steps import Workflow, load

GITHUB_SUMMARY = (
    Path(__file__).parent / "fixtures" / "vendors" / "statuspage" / "githubstatus_summary_all_operational_2026.json"
)


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


def next_commands(output: str) -> list[list[str]]:
    """The commands init prints, each split as a shell would (comments left out)."""
    return [shlex.split(line, comments=True) for line in output.splitlines() if line.startswith("  statusgen ")]


def test_init_writes_a_configuration_check_config_accepts(tmp_path: Path) -> None:
    folder = tmp_path / "mysite"
    code, out = invoke("init", str(folder))
    assert code == 0, out
    config, workflow = folder / "services.toml", folder / ".github" / "workflows" / "statusgen.yml"
    assert f"wrote {config}" in out and f"wrote {workflow}" in out
    code, checked = invoke("check-config", str(config))
    assert code == 0 and "3 services" in checked, checked
    services = load_config(config).services
    assert [bool(s.checks[0].keyword) for s in services] == [False, True, False]  # an HTTP check, a keyword check
    assert [s.vendor is not None for s in services] == [False, False, True]  # one with a vendor status page
    assert config.read_text().count("\n# ") >= 10, "commented for a newcomer"
    assert "statusgen run --config services.toml" in workflow.read_text()


def test_the_subscriptions_init_shows_work_once_uncommented(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "mysite"
    assert invoke("init", str(folder))[0] == 0
    config = folder / "services.toml"
    text = config.read_text()
    shown = text[text.index("# [subscriptions]") :]
    config.write_text(text.replace(shown, "\n".join(line.removeprefix("# ") for line in shown.splitlines())))
    monkeypatch.setenv("STATUSGEN_MAIL_USER", "status")
    monkeypatch.setenv("STATUSGEN_MAIL_PASSWORD", "secret")
    subs = load_config(config).subscriptions
    assert subs is not None and (subs.mailbox.scheme, subs.smtp.scheme) == ("imaps", "smtp+starttls")


def test_init_prints_the_next_two_commands_which_are_real(tmp_path: Path) -> None:
    folder = tmp_path / "mysite"
    code, out = invoke("init", str(folder))
    commands = next_commands(out)
    assert [c[:2] for c in commands] == [["statusgen", "run"], ["statusgen", "serve"]], out
    for command in commands:
        assert command[2:] == ["--config", str(folder / "services.toml")]
        main.commands[command[1]].make_context(command[1], command[2:])  # options that exist


def test_init_here_prints_the_commands_without_a_config_path(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, out = invoke("init")
    assert code == 0 and (tmp_path / "services.toml").is_file()
    assert next_commands(out) == [["statusgen", "run"], ["statusgen", "serve"]]


def test_init_never_writes_over_a_file(tmp_path: Path) -> None:
    (tmp_path / "services.toml").write_text("# mine\n")
    code, out = invoke("init", str(tmp_path))
    assert code == 2
    assert f"{tmp_path / 'services.toml'}: already there" in out and "another folder" in out
    assert (tmp_path / "services.toml").read_text() == "# mine\n"
    assert not (tmp_path / ".github").exists()  # nothing half-written either


def test_the_written_site_runs_once_its_urls_answer(tmp_path: Path, targets: Targets) -> None:
    """The example, with its three URLs and the vendor's pointed at loopback stand-ins, runs as
    `statusgen run` and shows its services."""
    assert invoke("init", str(tmp_path))[0] == 0
    config = tmp_path / "services.toml"
    text = config.read_text()
    for path in ("/", "/3/"):
        targets.set(path, body=b"<html>Python docs</html>")
    targets.set("/api/v2/summary.json", body=GITHUB_SUMMARY.read_bytes())
    for public in (
        "https://example.com",
        "https://docs.python.org",
        "https://github.com",
        "https://www.githubstatus.com",
    ):
        assert public in text
        text = text.replace(public, targets.url(""))
    config.write_text(text)
    code, out = invoke("run", "--config", str(config))
    assert code == 0, out
    snapshot = json.loads((tmp_path / "site" / "api" / "v1" / "snapshot.json").read_bytes())
    assert {s["slug"]: s["status"] for s in snapshot["services"]} == {
        "example": "operational",
        "python-docs": "operational",
        "github": "operational",
    }


# -- the workflow init writes, run for real -----------------------------------------------


class QuietFiles(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def package_index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A package index on loopback, as pip reads one: a "simple" folder with a folder per project
    holding its files, served over HTTP (the server's folder listings are the index's pages). It
    holds the wheel of this source tree and the wheels of everything it needs."""
    from tests.wheelhouse import dists, wheelhouse

    root = tmp_path_factory.mktemp("index")
    release = dists(root / "build")
    for wheel in [release.wheel, *wheelhouse().glob("*.whl")]:
        project = re.sub(r"[-_.]+", "-", wheel.name.split("-")[0]).lower()
        (root / "simple" / project).mkdir(parents=True, exist_ok=True)
        shutil.copy2(wheel, root / "simple" / project / wheel.name)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(QuietFiles, directory=str(root)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/simple/"
    server.shutdown()
    server.server_close()


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout


def run_step(flow: Workflow, step: str, cwd: Path, base: dict[str, str] | None = None, **env: str) -> str:
    done = flow.run(step, cwd, base, **env)
    assert done.returncode == 0, f"{step}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def test_the_written_workflow_installs_this_release_from_the_index_runs_and_keeps_its_store(
    tmp_path: Path, targets: Targets, package_index: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every step of the workflow `statusgen init` writes but the checkouts and apt: its own
    install step in a fresh venv, pip asking only the package index on loopback; then three runs,
    each in a new clone as a runner has it: the store kept on the data branch, then past its size
    in the S3 bucket beside the published tree (moto, through rclone), where publish leaves it."""
    import statusgen
    from tests.objectstore import s3_server
    from tests.wheelhouse import isolated_pip_env

    monkeypatch.delenv("AWS_CA_BUNDLE", raising=False)  # rclone 1.60's S3 client refuses to start with it
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "--quiet", "--bare", str(origin))
    site = tmp_path / "site-repository"
    git(tmp_path, "clone", "--quiet", str(origin), str(site))
    assert invoke("init", str(site))[0] == 0
    config = site / "services.toml"
    for path in ("/", "/3/"):
        targets.set(path, body=b"<html>Python docs</html>")
    targets.set("/api/v2/summary.json", body=GITHUB_SUMMARY.read_bytes())
    text = config.read_text()
    for public in (
        "https://example.com",
        "https://docs.python.org",
        "https://github.com",
        "https://www.githubstatus.com",
    ):
        text = text.replace(public, targets.url(""))
    config.write_text(text)
    git(site, "add", ".")
    git(site, "-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "--quiet", "-m", "a site")
    git(site, "push", "--quiet", "origin", "HEAD")

    venv = tmp_path / "runner-python"  # what actions/setup-python leaves on the PATH
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    path = f"{venv / 'bin'}:{os.environ['PATH']}"
    flow = Workflow(
        load((site / ".github/workflows/statusgen.yml").read_text()), "run", {"vars": {"STATUSGEN_BUCKET": "status"}}
    )
    pip = isolated_pip_env(PIP_INDEX_URL=package_index)  # no configuration of this machine's pip
    installed = run_step(flow, "Install statusgen", site, pip, PATH=path)
    assert f"Looking in indexes: {package_index}" in installed and "Looking in links" not in installed
    assert "Successfully installed" in installed and f"statusgen-{statusgen.__version__}" in installed
    version = subprocess.run([venv / "bin" / "statusgen", "--version"], capture_output=True, text=True, check=True)
    assert version.stdout.strip() == f"statusgen {statusgen.__version__}"
    assert set(flow.steps()) - {"actions/checkout@v4", "actions/setup-python@v5"} == {
        "Install statusgen",
        "Install rclone",
        "Restore the store",
        "Run",
        "Save the store",
        "Publish",
    }  # Install rclone is apt's: rclone is installed here

    with s3_server() as s3:
        bucket = {
            "RCLONE_CONFIG_STATUS_PROVIDER": "Other",
            "RCLONE_CONFIG_STATUS_ENDPOINT": f"http://127.0.0.1:{s3.port}",
            "RCLONE_CONFIG_STATUS_ACCESS_KEY_ID": "test",
            "RCLONE_CONFIG_STATUS_SECRET_ACCESS_KEY": "test",
            "RCLONE_CONFIG_STATUS_REGION": "us-east-1",
        }

        def runner(n: int, **extra: str) -> Path:
            """The n-th run of the workflow, in a clone of its own; the clone."""
            clone = tmp_path / f"run-{n}"
            git(tmp_path, "clone", "--quiet", str(origin), str(clone))
            temp = tmp_path / f"runner-temp-{n}"
            temp.mkdir()
            env = {"PATH": path, "RUNNER_TEMP": str(temp), "GITHUB_RUN_ID": str(n), **bucket, **extra}
            for step in ("Restore the store", "Run", "Save the store", "Publish"):
                clone_said[step] = run_step(flow, step, clone, **env)
            return clone

        clone_said: dict[str, str] = {}
        runner(1)
        assert "first run starts an empty store" in clone_said["Restore the store"]
        assert "to the statusgen-data branch" in clone_said["Save the store"]
        runner(2, STORE_IN_GIT_UP_TO="100")
        assert "from the statusgen-data branch" in clone_said["Restore the store"]
        assert "to status:status/store" in clone_said["Save the store"]
        third = runner(3)
        assert "comes from status:status/store" in clone_said["Restore the store"]
        assert "to status:status/store" in clone_said["Save the store"]  # it stays beside the tree

        objects = all_objects(s3.port)
        assert "store/statusgen.db.gz" in objects  # publish neither served nor deleted it
        assert {"site/index.html", "site/api/v1/snapshot.json"} <= set(objects)
        assert not [k for k in objects if not k.startswith(("site/", "store/"))]
    store = sqlite3.connect(third / "data" / "statusgen.db")
    assert store.execute("SELECT count(*) FROM runs WHERE finished_at IS NOT NULL").fetchone() == (3,)


def all_objects(port: int) -> set[str]:
    import boto3

    client = boto3.client(
        "s3",
        endpoint_url=f"http://127.0.0.1:{port}",
        aws_access_key_id="test",
        aws_secret_access_key="test",
        region_name="us-east-1",
    )
    return {
        o["Key"]
        for page in client.get_paginator("list_objects_v2").paginate(Bucket="status")
        for o in page.get("Contents", [])
    }
