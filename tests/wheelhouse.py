"""The release as a user meets it: statusgen's sdist and wheel, built as the release workflow
builds them, and a folder of wheels of everything they need, so that the tests can install them
into fresh environments (and a container image) with no network.

``dists(folder)`` builds the sdist and the wheel (``python -m build``, without an isolated build
environment: the test extras hold the build backend) from a copy of the package's files.
``wheelhouse()`` is the dependencies' wheels and the build backend's, downloaded once from the
package index into ``test-artifacts/`` under a name made of what was asked, and kept there: the
next runs, and ``make test`` after ``make wheelhouse``, use them offline.
``isolated_pip_env()`` is an environment in which pip reads no configuration of this machine (its
extra indexes, find-links and constraints): what it installs comes only from what a test names.

    python -m tests.wheelhouse      # download the wheelhouse now (make test does, before the tests)
"""

from __future__ import annotations

import hashlib
import os
import platform
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]
ARTIFACTS = REPOSITORY / "test-artifacts"
#: What the sdist is made from: the package, its templates and the files its metadata names.
PACKAGE_FILES = ("pyproject.toml", "README.md", "LICENSE", "statusgen", "templates")


def run(*args: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None, timeout: float = 600) -> str:
    """Run a command; its output (stdout and stderr together); fail with both when it fails."""
    done = subprocess.run(
        [str(a) for a in args],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, f"{args}: exit {done.returncode}\n{done.stdout}"
    return done.stdout


def requirements() -> list[str]:
    """What an install of statusgen needs from the index: its dependencies, the build backend
    (to build the sdist), and pip itself, as a user upgrades it (``make setup`` does): newer pips
    show what the build backend prints, warnings included."""
    project = tomllib.loads((REPOSITORY / "pyproject.toml").read_text())
    return [*project["project"]["dependencies"], *project["build-system"]["requires"], "pip"]


def wheelhouse() -> Path:
    """The wheels of ``requirements()`` for this Python and platform, downloaded once."""
    wanted = requirements()
    tag = f"cp{sys.version_info.major}{sys.version_info.minor}-{platform.machine()}"
    key = hashlib.sha256("\n".join([tag, *wanted]).encode()).hexdigest()[:12]
    folder = ARTIFACTS / f"wheelhouse-{tag}-{key}"
    if (folder / ".complete").is_file():
        return folder
    partial = folder.with_name(folder.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    # Wheels only: the container image has no compiler, and a wheel installs the same everywhere.
    run(sys.executable, "-m", "pip", "download", "--quiet", "--only-binary=:all:", "--dest", partial, *wanted)
    (partial / ".complete").write_text("\n".join(wanted) + "\n")
    shutil.rmtree(folder, ignore_errors=True)
    partial.rename(folder)
    return folder


@dataclass(frozen=True)
class Release:
    source: Path  # a copy of the package's files, as a clone holds them
    sdist: Path
    wheel: Path
    said: str  # what building them printed


def dists(folder: Path) -> Release:
    """The sdist and the wheel, built into ``folder / "dist"`` from a copy of the package's files."""
    source = folder / "source"
    source.mkdir(parents=True)
    for name in PACKAGE_FILES:
        path = REPOSITORY / name
        if path.is_dir():
            shutil.copytree(path, source / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            shutil.copy2(path, source / name)
    dist = folder / "dist"
    # Built as on a machine that lets Python write bytecode (this one does not): distutils says
    # "byte-compiling is disabled" otherwise, which is this machine's, not the package's.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    said = run(sys.executable, "-m", "build", "--no-isolation", "--outdir", dist, source, env=env)
    [sdist] = dist.glob("statusgen-*.tar.gz")
    [wheel] = dist.glob("statusgen-*.whl")
    return Release(source, sdist, wheel, said)


def isolated_pip_env(**extra: str) -> dict[str, str]:
    """The environment with pip's configuration files and variables left out (``PIP_CONFIG_FILE``
    set to the null device makes pip read none), plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    return {**env, "PIP_CONFIG_FILE": os.devnull, "PIP_DISABLE_PIP_VERSION_CHECK": "1", **extra}


if __name__ == "__main__":
    print(wheelhouse())
