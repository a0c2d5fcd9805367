"""`statusgen init`: a new site's starting files, valid as written, never written over."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from click.testing import CliRunner

from statusgen.cli import main
from statusgen.config import load_config
from tests.conftest import Targets

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
