"""contrib/: the systemd units and the cron line are valid, hardened, and run real statusgen commands."""

from __future__ import annotations

import configparser
import re
import shlex
import shutil
import subprocess
from pathlib import Path, PurePosixPath

from statusgen.cli import main

CONTRIB = Path(__file__).resolve().parents[1] / "contrib"
UNITS = ("statusgen.service", "statusgen.timer", "statusgen-loop.service")
HARDENING = {
    "ProtectSystem": "strict",
    "NoNewPrivileges": "yes",
    "ProtectHome": "yes",
    "PrivateTmp": "yes",
    "PrivateDevices": "yes",
    "CapabilityBoundingSet": "",
    "RestrictSUIDSGID": "yes",
    "SystemCallFilter": "@system-service",
    "RestrictAddressFamilies": "AF_INET AF_INET6 AF_UNIX",
}
# The directives these units may use, for machines without systemd-analyze (containers).
KNOWN = {
    "Unit": {"Description", "Documentation", "Wants", "After", "Conflicts"},
    "Timer": {"OnCalendar", "AccuracySec", "Unit"},
    "Install": {"WantedBy"},
    "Service": {
        "Type",
        "User",
        "Group",
        "WorkingDirectory",
        "ExecStart",
        "TimeoutStartSec",
        "TimeoutStopSec",
        "UMask",
        "KillSignal",
        "KillMode",
        "Restart",
        "RestartSec",
        "RestartPreventExitStatus",
        "ReadWritePaths",
        "AmbientCapabilities",
        "ProtectKernelTunables",
        "ProtectKernelModules",
        "ProtectKernelLogs",
        "ProtectControlGroups",
        "ProtectClock",
        "ProtectHostname",
        "ProtectProc",
        "ProcSubset",
        "RestrictNamespaces",
        "RestrictRealtime",
        "LockPersonality",
        "MemoryDenyWriteExecute",
        "SystemCallArchitectures",
        "SystemCallErrorNumber",
        *HARDENING,
    },
}


def unit(name: str) -> dict[str, dict[str, str]]:
    """A unit file as sections of keys (strict: a key given twice is an error)."""
    parser = configparser.ConfigParser(interpolation=None, strict=True, empty_lines_in_values=False)
    parser.optionxform = str  # type: ignore[assignment,method-assign]   # systemd keys are case-sensitive
    parser.read_string((CONTRIB / name).read_text(), source=name)
    return {s: dict(parser[s]) for s in parser.sections()}


def statusgen_args(command: str) -> list[list[str]]:
    """The statusgen invocations of a shell command line, without redirections."""
    found = []
    for part in command.split("&&"):
        words = shlex.split(part)
        cut = next((i for i, w in enumerate(words) if re.match(r"^\d?>", w)), len(words))
        assert PurePosixPath(words[0]).name == "statusgen", part
        found.append(words[1:cut])
    return found


def parses(args: list[str]) -> dict[str, object]:
    """Parse a statusgen command line the way the CLI does; a wrong option or command raises."""
    name, rest = args[0], args[1:]
    assert name in main.commands, f"statusgen has no command {name!r}"
    return main.commands[name].make_context(name, rest).params


def test_timer_unit_runs_statusgen_run_once_per_start():
    service = unit("statusgen.service")["Service"]
    assert service["Type"] == "oneshot" and service["User"] == "statusgen"
    [args] = statusgen_args(service["ExecStart"])
    assert args[0] == "run" and parses(args)["loop"] is False
    timer = unit("statusgen.timer")
    assert timer["Timer"]["Unit"] == "statusgen.service" and timer["Timer"]["OnCalendar"]
    assert timer["Install"]["WantedBy"] == "timers.target"


def test_loop_unit_stops_on_sigterm_and_does_not_restart_on_config_or_lock_errors():
    loop = unit("statusgen-loop.service")
    service = loop["Service"]
    assert service["Type"] == "simple" and service["KillSignal"] == "SIGTERM"
    [args] = statusgen_args(service["ExecStart"])
    assert args[0] == "run" and parses(args)["loop"] is True
    assert service["Restart"] == "on-failure" and set(service["RestartPreventExitStatus"].split()) == {"2", "5"}
    assert "statusgen.timer" in loop["Unit"]["Conflicts"].split()
    assert loop["Install"]["WantedBy"] == "multi-user.target"


def test_both_services_are_hardened_and_can_write_the_store_and_the_output():
    header = (CONTRIB / "statusgen.service").read_text()
    store = PurePosixPath(re.search(r'store = "([^"]+)"', header).group(1))  # type: ignore[union-attr]
    output = PurePosixPath(re.search(r'output = "([^"]+)"', header).group(1))  # type: ignore[union-attr]
    for name in ("statusgen.service", "statusgen-loop.service"):
        service = unit(name)["Service"]
        assert {k: service.get(k) for k in HARDENING} == HARDENING, name
        writable = [PurePosixPath(p) for p in service["ReadWritePaths"].split()]
        # the store's folder (lock file beside it) and the output's parent (the link and site.gens/ beside it)
        for needed in (store.parent, output.parent):
            assert any(needed == w or w in needed.parents for w in writable), (name, needed)
        assert "--config /etc/statusgen/services.toml" in service["ExecStart"]


def test_commented_publish_lines_are_real_commands():
    lines = [
        line
        for name in ("statusgen.service", "cron.example")
        for line in (CONTRIB / name).read_text().splitlines()
        if "statusgen publish" in line and line.startswith("#")
    ]
    assert len(lines) == 2
    for line in lines:
        command = line.split("ExecStartPost=", 1)[-1] if "ExecStartPost=" in line else line.split("statusgen  ", 1)[1]
        for args in statusgen_args(command):
            params = parses(args)
            assert args[0] in ("run", "publish") and (args[0] != "publish" or ":" in str(params["remote"]))


def test_cron_line_runs_every_minute_as_statusgen():
    entries = [
        line
        for line in (CONTRIB / "cron.example").read_text().splitlines()
        if line.strip() and not line.startswith("#") and not re.match(r"^[A-Z]+=", line)
    ]
    assert len(entries) == 1
    *schedule, user, command = entries[0].split(maxsplit=6)
    assert schedule == ["*"] * 5 and user == "statusgen"
    [args] = statusgen_args(command)
    assert args[0] == "run" and parses(args)["loop"] is False


def test_units_are_valid_for_systemd(tmp_path):
    for name in UNITS:
        for section, keys in unit(name).items():
            assert set(keys) <= KNOWN[section], (name, section, set(keys) - KNOWN[section])
    analyzer = shutil.which("systemd-analyze")
    if analyzer is None:  # a container without systemd: the directive check above is what there is
        return
    root = tmp_path / "root"
    system = (
        Path("/usr/lib/systemd/system") if Path("/usr/lib/systemd/system").is_dir() else Path("/lib/systemd/system")
    )
    shutil.copytree(system, root / "usr/lib/systemd/system", symlinks=True)
    (root / "etc/systemd/system").mkdir(parents=True)
    for name in UNITS:
        shutil.copy(CONTRIB / name, root / "etc/systemd/system" / name)
    binary = root / shlex.split(unit("statusgen.service")["Service"]["ExecStart"])[0].lstrip("/")
    binary.parent.mkdir(parents=True)
    binary.write_text("#!/bin/sh\n")
    binary.chmod(0o755)
    for name in UNITS:
        done = subprocess.run(
            [analyzer, "verify", f"--root={root}", f"/etc/systemd/system/{name}"],
            check=False,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0 and done.stderr == "" and done.stdout == "", (name, done.stderr)


def test_operations_doc_names_every_contrib_file_every_exit_code_and_the_same_cron_line():
    import statusgen.web.publish  # noqa: F401   (its errors are part of the tree)
    from statusgen.errors import StatusgenError

    doc = (CONTRIB.parent / "docs" / "operations.md").read_text()
    for path in CONTRIB.iterdir():
        assert f"(../contrib/{path.name})" in doc, f"docs/operations.md does not link contrib/{path.name}"

    def codes(cls: type[StatusgenError]) -> set[int]:
        return {cls.exit_code}.union(*(codes(sub) for sub in cls.__subclasses__()))

    for code in codes(StatusgenError) | {0}:
        assert re.search(rf"^\| {code} \| \S", doc, re.MULTILINE), f"exit code {code} is not in docs/operations.md"
    [cron] = [line for line in (CONTRIB / "cron.example").read_text().splitlines() if line.startswith("*")]
    assert f"\n{cron}\n" in doc
