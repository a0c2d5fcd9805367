"""The GitHub workflows: valid against the published schema, their commands real, their store scripts working.

Validation uses check-jsonschema's built-in GitHub-workflow schema through its
Python entry point (a test dependency). The scheduled workflow's restore and
save scripts run for real against a scratch git repository standing in for
GitHub's, with real SQLite stores.
"""

from __future__ import annotations

import os
import re
import shlex
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from statusgen.cli import main

WORKFLOWS = Path(__file__).resolve().parents[1] / ".github" / "workflows"


def load(name: str) -> dict[str, Any]:
    doc = yaml.safe_load((WORKFLOWS / name).read_text())
    doc["on"] = doc.pop(True, doc.get("on"))  # YAML 1.1 reads the key `on` as true
    return doc


def check_jsonschema(*args: str) -> tuple[int, str]:
    try:
        from check_jsonschema import main as checker
    except ImportError:
        pytest.fail("check-jsonschema is not installed: it belongs in pyproject's test extras")
    res = CliRunner().invoke(checker, ["--builtin-schema", "vendor.github-workflows", *args])
    return res.exit_code, res.output


def steps(name: str, job: str) -> dict[str, dict[str, Any]]:
    return {s.get("name", s.get("uses")): s for s in load(name)["jobs"][job]["steps"]}


def test_workflows_are_valid_github_workflows(tmp_path):
    files = sorted(str(p) for p in WORKFLOWS.glob("*.yml"))
    assert [Path(f).name for f in files] == ["ci.yml", "scheduled.yml"]
    code, out = check_jsonschema(*files)
    assert code == 0, out
    broken = tmp_path / "broken.yml"  # the schema does reject a job without runs-on
    broken.write_text("on: push\njobs:\n  test:\n    steps:\n      - run: make test\n")
    assert check_jsonschema(str(broken))[0] != 0


def test_every_run_script_is_valid_shell():
    for name in ("ci.yml", "scheduled.yml"):
        for job in load(name)["jobs"].values():
            for step in job["steps"]:
                if "run" in step:
                    script = re.sub(r"\$\{\{.*?\}\}", "x", step["run"])
                    done = subprocess.run(["bash", "-n", "-c", script], capture_output=True, text=True, check=False)
                    assert done.returncode == 0, (name, step.get("name"), done.stderr)


def test_ci_runs_make_test_on_the_clone_alone():
    doc = load("ci.yml")
    assert set(doc["on"]) == {"push", "pull_request"}
    job = doc["jobs"]["test"]
    assert job["runs-on"] == "ubuntu-latest"
    checkouts = [s for s in job["steps"] if s.get("uses", "").startswith("actions/checkout@")]
    assert checkouts == [{"uses": "actions/checkout@v4"}]  # the repository alone: its tests carry their fixtures
    assert [s["run"] for s in job["steps"] if "run" in s] == ["make test"]


def test_init_writes_the_scheduled_workflow_of_this_repository():
    """One workflow: the file `statusgen init` writes is the one this repository keeps (and tests)."""
    from statusgen.scaffold import init_files

    assert init_files()[".github/workflows/statusgen.yml"] == (WORKFLOWS / "scheduled.yml").read_bytes()


def test_scheduled_runs_one_at_a_time_saves_the_store_then_publishes():
    doc = load("scheduled.yml")
    assert doc["on"]["schedule"][0]["cron"] == "*/5 * * * *" and "workflow_dispatch" in doc["on"]
    assert doc["concurrency"]["cancel-in-progress"] is False and doc["permissions"] == {"contents": "write"}
    names = list(steps("scheduled.yml", "run"))
    order = ["Restore the store from the data branch", "Run", "Save the store to the data branch", "Publish"]
    assert [n for n in names if n in order] == order
    run, publish = steps("scheduled.yml", "run")["Run"]["run"], steps("scheduled.yml", "run")["Publish"]["run"]
    assert run == "statusgen run --config services.toml"
    for line in (run, publish):  # real commands with real options
        args = shlex.split(line)[1:]
        main.commands[args[0]].make_context(args[0], args[1:])
    assert publish.startswith("statusgen publish --config services.toml --remote ")


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout


def script(name: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run a step of the scheduled workflow as Actions does (bash -e), with the workflow's env and the step's."""
    step = steps("scheduled.yml", "run")[name]
    full = {**os.environ, **load("scheduled.yml")["env"], **step.get("env", {}), **env}
    return subprocess.run(
        ["bash", "-e", "-c", step["run"]], cwd=cwd, env=full, capture_output=True, text=True, check=False
    )


def test_store_goes_to_the_data_branch_and_comes_back(tmp_path):
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "--quiet", "--bare", str(origin))
    first, second = tmp_path / "first", tmp_path / "second"
    env = {"RUNNER_TEMP": str(tmp_path), "GITHUB_RUN_ID": "41"}
    for clone in (first, second):
        git(tmp_path, "clone", "--quiet", str(origin), str(clone))

    fresh = script("Restore the store from the data branch", env, first)
    assert fresh.returncode == 0 and "first run starts an empty store" in fresh.stdout
    db = sqlite3.connect(first / "data/statusgen.db")
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("CREATE TABLE results (at TEXT, outcome TEXT)")
    rows = [("2025-01-01T00:00:00Z", "ok"), ("2025-01-01T00:01:00Z", "timeout")]
    db.executemany("INSERT INTO results VALUES (?, ?)", rows)
    db.commit()  # still open: the rows may sit in the WAL
    saved = script("Save the store to the data branch", env, first)
    db.close()
    assert saved.returncode == 0, saved.stderr
    assert git(first, "ls-remote", "--heads", "origin").strip().endswith("refs/heads/statusgen-data")

    back = script("Restore the store from the data branch", env, second)
    assert back.returncode == 0, back.stderr
    assert sqlite3.connect(second / "data/statusgen.db").execute("SELECT * FROM results ORDER BY at").fetchall() == rows

    again = script("Save the store to the data branch", {**env, "GITHUB_RUN_ID": "42"}, second)
    assert again.returncode == 0, again.stderr
    git(second, "fetch", "--quiet", "origin", "statusgen-data")  # replaced, not grown: one commit
    assert git(second, "log", "--format=%s", "FETCH_HEAD").splitlines() == ["statusgen store after run 42"]


def test_an_unreadable_data_branch_fails_instead_of_starting_over(tmp_path):
    clone = tmp_path / "clone"
    git(tmp_path, "init", "--quiet", str(clone))
    git(clone, "remote", "add", "origin", str(tmp_path / "gone.git"))
    done = script("Restore the store from the data branch", {"RUNNER_TEMP": str(tmp_path)}, clone)
    assert done.returncode != 0 and "cannot read the statusgen-data branch" in done.stderr
    assert not (clone / "data/statusgen.db").exists()


def test_a_missing_store_is_not_saved_as_an_empty_one(tmp_path):
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "--quiet", "--bare", str(origin))
    git(tmp_path, "clone", "--quiet", str(origin), str(tmp_path / "clone"))
    done = script(
        "Save the store to the data branch", {"RUNNER_TEMP": str(tmp_path), "GITHUB_RUN_ID": "1"}, tmp_path / "clone"
    )
    assert done.returncode != 0
    assert git(tmp_path / "clone", "ls-remote", "--heads", "origin") == ""
