"""Long commands (simulate, doctor, the demo, a build, a publish) show a progress bar on a
terminal, and stay quiet in logs and CI: the same commands run once on a pseudo-terminal and once
with their output in pipes."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

STATUSGEN = Path(sys.executable).with_name("statusgen")
ROOT = Path(__file__).resolve().parents[1]


def on_a_terminal(args: list[str], cwd: Path, timeout: float = 120) -> str:
    """What ``args`` write on a pseudo-terminal (its stdout and stderr), once it has ended."""
    leader, follower = pty.openpty()
    process = subprocess.Popen(args, cwd=cwd, stdin=follower, stdout=follower, stderr=follower, close_fds=True)
    os.close(follower)
    said = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal closed with the process
                break
            if not chunk:
                break
            said += chunk
        elif process.poll() is not None:
            break
    os.close(leader)
    assert process.wait(timeout=10) == 0, said.decode(errors="replace")
    return said.decode(errors="replace")


def in_pipes(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def simulate(folder: Path) -> list[str]:
    return [str(STATUSGEN), "simulate", "--services", "40", "--days", "3", "--db", str(folder / "s.db"),
            "--config-out", str(folder / "s.toml"), "--output", str(folder / "site")]  # fmt: skip


def test_simulate_shows_a_bar_on_a_terminal_only(tmp_path: Path) -> None:
    (tmp_path / "tty").mkdir()
    (tmp_path / "pipes").mkdir()
    shown = on_a_terminal(simulate(tmp_path / "tty"), tmp_path)
    assert "simulating 40 services x 3 days" in shown and "100%" in shown, shown
    logged = in_pipes(simulate(tmp_path / "pipes"), tmp_path)
    assert logged.stderr == "" and logged.stdout.count("\n") == 1 and logged.stdout.startswith("wrote ")


def test_doctor_shows_a_bar_on_a_terminal_only(tmp_path: Path) -> None:
    in_pipes(simulate(tmp_path), tmp_path)
    doctor = [str(STATUSGEN), "doctor", "--config", str(tmp_path / "s.toml")]
    shown = on_a_terminal(doctor, tmp_path)
    assert "reading every stored value" in shown and "100%" in shown and "every stored value reads back" in shown
    logged = in_pipes(doctor, tmp_path)
    assert logged.stderr == "" and logged.stdout == f"{tmp_path / 's.db'}: every stored value reads back\n"


def test_the_demo_says_each_step_and_shows_its_bar_on_a_terminal_only(tmp_path: Path) -> None:
    demo = [sys.executable, "-m", "statusgen.demo", "--no-serve", "--cycles", "0", "--days", "100"]
    shown = on_a_terminal(demo, tmp_path)
    assert "demo: simulating 100 days of past for 7 services" in shown and "100%" in shown, shown
    logged = in_pipes(demo, tmp_path)
    assert logged.stderr == ""
    lines = logged.stdout.splitlines()
    assert len(lines) == 3 and lines[0].startswith("demo: 8 services on http://127.0.0.1:")
    assert lines[1] == "demo: simulating 100 days of past for 7 services"  # the label, without a bar
    assert lines[2].startswith("demo: visitor@demo.example subscribed by email")


def test_a_first_build_and_publish_show_a_bar_on_a_terminal_only(tmp_path: Path) -> None:
    in_pipes(simulate(tmp_path), tmp_path)
    build = [str(STATUSGEN), "build", "--config", str(tmp_path / "s.toml")]
    shown = on_a_terminal(build, tmp_path)
    assert "rendering 40 services" in shown and "100%" in shown and " files built in " in shown, shown
    logged = in_pipes(build, tmp_path)
    assert logged.stderr == "" and logged.stdout.count("\n") == 1 and " files built in " in logged.stdout

    def publish(remote: Path) -> list[str]:
        return [str(STATUSGEN), "publish", "--config", str(tmp_path / "s.toml"), "--remote", f":local:{remote}"]

    shown = on_a_terminal(publish(tmp_path / "remote-tty"), tmp_path)
    files = sum(1 for p in (tmp_path / "remote-tty").rglob("*") if p.is_file())
    assert files > 100 and f"publishing {files} files to :local:" in shown and "100%" in shown, shown
    logged = in_pipes(publish(tmp_path / "remote-pipes"), tmp_path)
    assert logged.stderr == "" and "publishing" not in logged.stdout
    assert logged.stdout.splitlines()[-1].startswith("published ")
    assert f": {files} of {files} files uploaded, 0 deleted" in logged.stdout
