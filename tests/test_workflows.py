"""The GitHub workflows: valid against the published schema, their commands real, their store scripts working.

Validation uses check-jsonschema's built-in GitHub-workflow schema through its Python entry point
(a test dependency), offline: this repository's workflows and the one `statusgen init` writes.
The scheduled workflow's store scripts run for real against a scratch git repository standing in
for GitHub's and a folder standing in for the object storage (tests/test_init.py runs it whole,
against a package index on loopback and an S3 server), with real SQLite stores.
"""

from __future__ import annotations

import gzip
import re
import shlex
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from statusgen.cli import main
from statusgen.scaffold import init_files
from tests.workflow_steps import Workflow, load

WORKFLOWS = Path(__file__).resolve().parents[1] / ".github" / "workflows"
SCHEDULED = ".github/workflows/statusgen.yml"  # where `statusgen init` writes it


def check_jsonschema(*args: str) -> tuple[int, str]:
    try:
        from check_jsonschema import main as checker
    except ImportError:
        pytest.fail("check-jsonschema is not installed: it belongs in pyproject's test extras")
    res = CliRunner().invoke(checker, ["--builtin-schema", "vendor.github-workflows", *args])
    return res.exit_code, res.output


def every_workflow(folder: Path) -> dict[str, dict[str, Any]]:
    """This repository's workflows and the one init writes, by name."""
    found = {p.name: load(p.read_text()) for p in sorted(WORKFLOWS.glob("*.yml"))}
    written = folder / "init-statusgen.yml"
    written.write_bytes(init_files()[SCHEDULED])
    return {**found, written.name: load(written.read_text())}


def test_workflows_are_valid_github_workflows(tmp_path):
    every_workflow(tmp_path)
    files = [*sorted(str(p) for p in WORKFLOWS.glob("*.yml")), str(tmp_path / "init-statusgen.yml")]
    assert [Path(f).name for f in files] == ["ci.yml", "release.yml", "init-statusgen.yml"]
    code, out = check_jsonschema(*files)
    assert code == 0, out
    broken = tmp_path / "broken.yml"  # the schema does reject a job without runs-on
    broken.write_text("on: push\njobs:\n  test:\n    steps:\n      - run: make test\n")
    assert check_jsonschema(str(broken))[0] != 0


def test_every_run_script_is_valid_shell(tmp_path):
    for name, doc in every_workflow(tmp_path).items():
        for job in doc["jobs"].values():
            for step in job.get("steps", []):
                if "run" in step:
                    script = re.sub(r"\$\{\{.*?\}\}", "x", step["run"])
                    done = subprocess.run(["bash", "-n", "-c", script], capture_output=True, text=True, check=False)
                    assert done.returncode == 0, (name, step.get("name"), done.stderr)


def test_ci_runs_make_test_on_the_clone_alone():
    doc = load((WORKFLOWS / "ci.yml").read_text())
    assert set(doc["on"]) == {"push", "pull_request"}
    job = doc["jobs"]["test"]
    assert job["runs-on"] == "ubuntu-latest"
    checkouts = [s for s in job["steps"] if s.get("uses", "").startswith("actions/checkout@")]
    assert checkouts == [{"uses": "actions/checkout@v4"}]  # the repository alone: its tests carry their fixtures
    assert [s["run"] for s in job["steps"] if "run" in s] == ["make test"]
    # every test runs there as here: mount (tmpfs, test_disks) and podman need a privileged container
    assert job["container"]["options"].split() == ["--privileged"]


def scheduled(**variables: str) -> Workflow:
    return Workflow(load(init_files()[SCHEDULED]), "run", {"vars": variables, "secrets": {}})


def test_the_written_workflow_installs_this_release_unless_a_variable_says_otherwise():
    import statusgen

    assert b"@VERSION@" not in init_files()[SCHEDULED]
    assert scheduled().env("Install statusgen")["STATUSGEN_PACKAGE"] == f"statusgen=={statusgen.__version__}"
    fork = "https://example.org/wheels/statusgen-9.9.9-py3-none-any.whl"
    assert scheduled(STATUSGEN_PACKAGE=fork).env("Install statusgen")["STATUSGEN_PACKAGE"] == fork
    assert scheduled().steps()["Install statusgen"]["run"] == 'python -m pip install "$STATUSGEN_PACKAGE"'


def test_scheduled_runs_one_at_a_time_saves_the_store_then_publishes():
    flow = scheduled(STATUSGEN_BUCKET="status-bucket")
    doc = flow.doc
    assert doc["on"]["schedule"][0]["cron"] == "*/5 * * * *" and "workflow_dispatch" in doc["on"]
    assert doc["concurrency"]["cancel-in-progress"] is False and doc["permissions"] == {"contents": "write"}
    order = ["Install statusgen", "Install rclone", "Restore the store", "Run", "Save the store", "Publish"]
    assert [n for n in flow.steps() if n in order] == order
    run, publish = flow.steps()["Run"]["run"], flow.steps()["Publish"]["run"]
    assert run == "statusgen run --config services.toml"
    for line in (run, publish):  # real commands with real options
        args = shlex.split(line)[1:]
        main.commands[args[0]].make_context(args[0], args[1:])
    assert publish == 'statusgen publish --config services.toml --remote "$SITE_REMOTE"'
    env = flow.env("Publish")
    assert (env["SITE_REMOTE"], env["STORE_REMOTE"]) == ("status:status-bucket/site", "status:status-bucket/store")


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout


BIN = str(Path(sys.executable).parent)  # statusgen, as the install step leaves it on the PATH


def clone_with_config(tmp_path: Path, origin: Path, name: str) -> Path:
    clone = tmp_path / name
    git(tmp_path, "clone", "--quiet", str(origin), str(clone))
    (clone / "services.toml").write_text(
        '[site]\ntitle = "T"\nbase_url = "https://status.example.org"\nstore = "data/statusgen.db"\n'
        '[categories]\nweb = "Web"\n[[services]]\nslug = "a"\nname = "A"\ncategory = "web"\n'
        '[[services.checks]]\nurl = "http://127.0.0.1:9/"\n'
    )
    return clone


def environment(tmp_path: Path, **extra: str) -> dict[str, str]:
    """The runner's variables, and the remote "status" as a local folder standing in for the bucket."""
    path = f"{BIN}:{__import__('os').environ['PATH']}"
    return {
        "RUNNER_TEMP": str(tmp_path),
        "GITHUB_RUN_ID": "41",
        "PATH": path,
        "RCLONE_CONFIG_STATUS_TYPE": "local",
        **extra,
    }


ROWS = [("2025-01-01T00:00:00Z", "ok"), ("2025-01-01T00:01:00Z", "timeout")]


def test_store_goes_to_the_data_branch_and_comes_back(tmp_path):
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "--quiet", "--bare", str(origin))
    first, second = clone_with_config(tmp_path, origin, "first"), clone_with_config(tmp_path, origin, "second")
    flow = scheduled(STATUSGEN_BUCKET=str(tmp_path / "bucket"))
    env = environment(tmp_path)

    fresh = flow.run("Restore the store", first, **env)
    assert fresh.returncode == 0 and "first run starts an empty store" in fresh.stdout, fresh.stderr
    db = sqlite3.connect(first / "data/statusgen.db")
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("CREATE TABLE results (at TEXT, outcome TEXT)")
    db.executemany("INSERT INTO results VALUES (?, ?)", ROWS)
    db.commit()  # still open: the rows may sit in the WAL
    saved = flow.run("Save the store", first, **env)
    db.close()
    assert saved.returncode == 0, saved.stderr
    assert "to the statusgen-data branch" in saved.stdout
    assert git(first, "ls-remote", "--heads", "origin").strip().endswith("refs/heads/statusgen-data")

    back = flow.run("Restore the store", second, **env)
    assert back.returncode == 0 and "from the statusgen-data branch" in back.stdout, back.stderr
    assert sqlite3.connect(second / "data/statusgen.db").execute("SELECT * FROM results ORDER BY at").fetchall() == ROWS

    again = flow.run("Save the store", second, **{**env, "GITHUB_RUN_ID": "42"})
    assert again.returncode == 0, again.stderr
    git(second, "fetch", "--quiet", "origin", "statusgen-data")  # replaced, not grown: one commit
    assert git(second, "log", "--format=%s", "FETCH_HEAD").splitlines() == ["statusgen store after run 42"]
    assert not (tmp_path / "bucket").exists()  # small: nothing went to the object storage


def test_past_its_size_the_store_goes_beside_the_tree_and_stays_there(tmp_path):
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "--quiet", "--bare", str(origin))
    first, second = clone_with_config(tmp_path, origin, "first"), clone_with_config(tmp_path, origin, "second")
    flow = scheduled(STATUSGEN_BUCKET=str(tmp_path / "bucket"))
    env = environment(tmp_path)
    (first / "data").mkdir()
    db = sqlite3.connect(first / "data/statusgen.db")
    db.execute("CREATE TABLE results (at TEXT, outcome TEXT)")
    db.executemany("INSERT INTO results VALUES (?, ?)", ROWS)
    db.commit()
    db.close()
    assert flow.run("Save the store", first, **env).returncode == 0  # small: to the branch

    big = flow.run("Save the store", first, **env, STORE_IN_GIT_UP_TO="100")
    assert big.returncode == 0 and "to status:" in big.stdout, big.stderr
    kept = tmp_path / "bucket" / "store" / "statusgen.db.gz"
    copy = tmp_path / "copy.db"
    copy.write_bytes(gzip.decompress(kept.read_bytes()))
    assert sqlite3.connect(copy).execute("SELECT * FROM results ORDER BY at").fetchall() == ROWS

    back = flow.run("Restore the store", second, **env)  # the branch is there too: the bucket wins
    assert back.returncode == 0 and "comes from status:" in back.stdout, back.stderr
    assert sqlite3.connect(second / "data/statusgen.db").execute("SELECT count(*) FROM results").fetchone() == (2,)
    stays = flow.run("Save the store", second, **env)  # small again, but the store lives in the bucket now
    assert stays.returncode == 0 and "to status:" in stays.stdout, stays.stderr


def test_an_unreadable_data_branch_fails_instead_of_starting_over(tmp_path):
    clone = tmp_path / "clone"
    git(tmp_path, "init", "--quiet", str(clone))
    git(clone, "remote", "add", "origin", str(tmp_path / "gone.git"))
    done = scheduled(STATUSGEN_BUCKET=str(tmp_path / "bucket")).run("Restore the store", clone, **environment(tmp_path))
    assert done.returncode != 0 and "cannot read the statusgen-data branch" in done.stderr
    assert not (clone / "data/statusgen.db").exists()


def test_an_unreadable_object_storage_fails_instead_of_starting_over(tmp_path):
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "--quiet", "--bare", str(origin))
    clone = clone_with_config(tmp_path, origin, "clone")
    env = environment(tmp_path, RCLONE_CONFIG_STATUS_TYPE="no-such-backend")
    done = scheduled(STATUSGEN_BUCKET="b").run("Restore the store", clone, **env)
    assert done.returncode != 0 and "first run" not in done.stdout
    assert not (clone / "data/statusgen.db").exists()


def test_a_missing_store_is_not_saved_as_an_empty_one(tmp_path):
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "--quiet", "--bare", str(origin))
    clone = clone_with_config(tmp_path, origin, "clone")
    done = scheduled(STATUSGEN_BUCKET=str(tmp_path / "bucket")).run("Save the store", clone, **environment(tmp_path))
    assert done.returncode != 0 and "no store here to back up" in done.stderr
    assert git(clone, "ls-remote", "--heads", "origin") == ""
    assert not (tmp_path / "bucket").exists()


def release() -> Workflow:
    return Workflow(load((WORKFLOWS / "release.yml").read_text()), "build", {"vars": {}, "secrets": {}})


def test_a_release_tag_tests_builds_then_publishes_with_trusted_publishing_and_pushes_the_image():
    doc = release().doc
    assert doc["on"] == {"push": {"tags": ["v*"]}} and doc["permissions"] == {"contents": "read"}
    jobs = doc["jobs"]
    assert jobs["test"]["container"]["image"] == "python:3.11-bookworm"
    assert [s["run"] for s in jobs["test"]["steps"] if "run" in s] == ["make test"]
    assert {name: job.get("needs") for name, job in jobs.items()} == {
        "test": None,
        "build": "test",
        "package-index": "build",
        "image": "build",
    }
    built = "\n".join(s.get("run", "") for s in jobs["build"]["steps"])
    assert "python -m build" in built and "twine check --strict dist/*" in built

    index = jobs["package-index"]
    assert index["permissions"] == {"id-token": "write"} and index["environment"]["name"] == "pypi"
    [publish] = [s for s in index["steps"] if s.get("uses", "").startswith("pypa/gh-action-pypi-publish@")]
    assert "with" not in publish  # no token, no password: the index trusts this workflow
    text = (WORKFLOWS / "release.yml").read_text()
    assert set(re.findall(r"secrets\.(\w+)", text)) == {"GITHUB_TOKEN"}  # the job's own, nothing kept

    image = jobs["image"]
    assert image["permissions"] == {"contents": "read", "packages": "write"}
    pushed = "\n".join(s.get("run", "") for s in image["steps"])
    assert 'image="ghcr.io/${GITHUB_REPOSITORY,,}"' in pushed and "--build-arg WHEELS=wheels" in pushed
    assert "ARG WHEELS=" in (WORKFLOWS.parents[1] / "Dockerfile").read_text()


def test_a_release_stops_when_the_tag_is_not_the_version_or_the_changelog_lacks_it(tmp_path):
    import statusgen

    step = "The tag is the package's version, and the changelog has it"
    root = WORKFLOWS.parents[1]
    assert release().run(step, root, GITHUB_REF_NAME=f"v{statusgen.__version__}").returncode == 0
    wrong = release().run(step, root, GITHUB_REF_NAME="v9.9.9")
    assert wrong.returncode != 0 and "is not the package's version" in wrong.stderr
    (tmp_path / "statusgen").mkdir()
    (tmp_path / "statusgen" / "__init__.py").write_text((root / "statusgen" / "__init__.py").read_text())
    (tmp_path / "CHANGELOG.md").write_text("# Changelog\n\n## [Unreleased]\n")
    missing = release().run(step, tmp_path, GITHUB_REF_NAME=f"v{statusgen.__version__}")
    assert missing.returncode != 0 and "no section for" in missing.stderr
