"""The package as a user installs it: a wheel, installed (not editable) into a fresh virtual
environment, builds a site from a folder that has no source tree in it.

The wheel is built offline (``--no-build-isolation``, with the setuptools of the test extras)
from a copy of the repository's package files. The fresh environment gets the wheel alone
(``--no-deps``); the dependencies are lent by the test environment's site-packages through a
``.pth`` line, which adds that folder to ``sys.path`` after the fresh one's own and runs none of
its ``.pth`` files: the editable install of the source tree stays out.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[1]
PACKAGE_FILES = ("pyproject.toml", "README.md", "statusgen", "templates")


def run(*args: str | Path, cwd: Path | None = None) -> str:
    done = subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, f"{args}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("wheel")
    source = work / "source"
    source.mkdir()
    for name in PACKAGE_FILES:
        path = REPOSITORY / name
        if path.is_dir():
            shutil.copytree(path, source / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            shutil.copy2(path, source / name)
    dist = work / "dist"
    run(sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation", "-w", dist, source)
    [built] = dist.glob("statusgen-*.whl")
    return built


@pytest.fixture(scope="module")
def fresh(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new virtual environment with the wheel installed; its bin/ folder."""
    env = tmp_path_factory.mktemp("fresh") / "venv"
    run(sys.executable, "-m", "venv", "--without-pip", env)
    python = env / "bin" / "python"
    run(sys.executable, "-m", "pip", "--python", python, "install", "--quiet", "--no-deps", wheel)
    site_packages = Path(run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])").strip())
    (site_packages / "zz-lent-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return env / "bin"


def test_the_wheel_carries_the_templates_and_files_inside_the_package(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for name in (
        "statusgen/templates/base.html",
        "statusgen/templates/error.html",
        "statusgen/templates/feed.xml",
        "statusgen/templates/badge.svg",
        "statusgen/templates/static/site.css",
        "statusgen/templates/static/site.js",
        "statusgen/templates/root/favicon.ico",
        "statusgen/templates/init/services.toml",
        "statusgen/templates/init/statusgen.yml",
        "statusgen/py.typed",
        "statusgen/locale/statusgen.pot",
        *(f"statusgen/locale/{locale}/LC_MESSAGES/statusgen.mo" for locale in ("de", "fr", "es", "pt_BR", "ja")),
    ):
        assert name in names, name
    shipped = {n.removeprefix("statusgen/templates/") for n in names if n.startswith("statusgen/templates/")}
    in_repository = {
        p.relative_to(REPOSITORY / "templates").as_posix()
        for p in (REPOSITORY / "templates").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    assert shipped == in_repository  # every file of templates/, nothing else


def test_an_installed_wheel_builds_a_site(fresh: Path, tmp_path: Path) -> None:
    where = run(fresh / "python", "-c", "import statusgen; print(statusgen.__file__)", cwd=tmp_path)
    assert Path(where.strip()).is_relative_to(fresh.parent), where  # the installed copy, not the source tree
    run(fresh / "statusgen", "simulate", "--services", "3", "--days", "2", cwd=tmp_path)
    out = run(fresh / "statusgen", "build", "--config", "simulated.toml", cwd=tmp_path)
    assert "-> " in out
    site = tmp_path / "site"
    for rel in ("index.html", "static/site.css", "favicon.ico", "_errors/404.html", "api/v1/snapshot.json"):
        assert (site / rel).is_file(), rel
    assert "Service 0000" in (site / "index.html").read_text()


def test_an_installed_wheel_speaks_its_languages(fresh: Path, tmp_path: Path) -> None:
    run(fresh / "statusgen", "simulate", "--services", "2", "--days", "1", cwd=tmp_path)
    config = tmp_path / "simulated.toml"
    config.write_text(config.read_text().replace("[site]\n", '[site]\nlanguages = ["en", "ja"]\n', 1))
    run(fresh / "statusgen", "build", "--config", config, cwd=tmp_path)
    page = (tmp_path / "site" / "ja" / "index.html").read_text()
    assert '<html lang="ja">' in page and "インシデント" in page  # the wheel's compiled catalog


def test_an_installed_wheel_writes_a_new_site_with_init(fresh: Path, tmp_path: Path) -> None:
    run(fresh / "statusgen", "init", cwd=tmp_path)
    out = run(fresh / "statusgen", "check-config", "services.toml", cwd=tmp_path)
    assert "3 services" in out
