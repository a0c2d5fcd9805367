"""Every command that reads a configuration takes it the same way: ``--config FILE``, else
``$STATUSGEN_CONFIG``, else ``services.toml`` here; ``check-config`` also as its argument."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
from click.testing import CliRunner

from statusgen.cli import main

#: The commands that read a configuration (the others write one, or read none).
READERS = {
    "check-config", "run", "build", "serve", "publish", "doctor", "notify", "note", "incident", "maintenance",
    "probe", "locations", "backup", "health", "subscribers",
}  # fmt: skip


def test_every_command_that_reads_a_configuration_takes_config() -> None:
    takes = {
        name
        for name, command in main.commands.items()
        if "config_path" in inspect.signature(command.callback).parameters
    }
    assert takes == READERS
    for name in READERS:
        [option] = [p for p in main.commands[name].params if p.name == "config_path"]
        assert option.opts == ["--config"], name


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "elsewhere.toml"
    path.write_text(
        '[site]\ntitle = "T"\nbase_url = "https://status.example.org"\n[categories]\nweb = "Web"\n'
        '[[services]]\nslug = "a"\nname = "A"\ncategory = "web"\n[[services.checks]]\nurl = "https://a.example.org/"\n'
    )
    return path


@pytest.mark.parametrize("how", ["argument", "option", "environment"])
def test_check_config_reads_the_file_however_it_is_named(config: Path, how: str) -> None:
    args, env = {
        "argument": (["check-config", str(config)], {}),
        "option": (["check-config", "--config", str(config)], {}),
        "environment": (["check-config"], {"STATUSGEN_CONFIG": str(config)}),
    }[how]
    done = CliRunner().invoke(main, args, env=env)
    assert done.exit_code == 0 and done.output.startswith(f"{config}: ok: 1 services"), done.output
