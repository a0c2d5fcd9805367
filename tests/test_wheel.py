"""The package as a user installs it: the release's sdist and wheel, built as the release
workflow builds them, accepted by the package index's checks, installed (not editable) into fresh
virtual environments without a warning, building a site from a folder that has no source tree in it.

Everything is installed from ``tests.wheelhouse``: the dependencies' wheels downloaded once, and
pip told to read no configuration of this machine, so what is installed is what the test names.
"""

from __future__ import annotations

import email.parser
import re
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest

import statusgen
from tests.wheelhouse import Release, dists, isolated_pip_env, run, wheelhouse

REPOSITORY = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Release:
    return dists(tmp_path_factory.mktemp("release"))


@pytest.fixture(scope="module")
def wheel(built: Release) -> Path:
    return built.wheel


def installed(dist: Path, folder: Path) -> tuple[Path, str]:
    """A new virtual environment with ``dist`` and its dependencies installed from the wheelhouse
    alone; its bin/ folder and what pip printed."""
    env = folder / "venv"
    run(sys.executable, "-m", "venv", env)
    pip = [env / "bin" / "python", "-m", "pip", "install", "--no-index", "--find-links", wheelhouse()]
    run(*pip, "--upgrade", "pip", env=isolated_pip_env())
    return env / "bin", run(*pip, dist, env=isolated_pip_env())


@pytest.fixture(scope="module")
def fresh_install(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    return installed(wheel, tmp_path_factory.mktemp("fresh"))


@pytest.fixture(scope="module")
def fresh(fresh_install: tuple[Path, str]) -> Path:
    """The bin/ folder of a new virtual environment with the wheel installed."""
    return fresh_install[0]


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


def test_the_version_has_one_source_and_the_command_prints_it(wheel: Path, fresh: Path) -> None:
    project = tomllib.loads((REPOSITORY / "pyproject.toml").read_text())
    assert "version" not in project["project"] and project["project"]["dynamic"] == ["version"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "statusgen.__version__"}
    assert statusgen.__version__ == "0.2.0"
    assert wheel.name == f"statusgen-{statusgen.__version__}-py3-none-any.whl"
    assert run(fresh / "statusgen", "--version").strip() == f"statusgen {statusgen.__version__}"


def metadata(built: Release) -> list[email.message.Message]:
    sdist, wheel = built.sdist, built.wheel
    with zipfile.ZipFile(wheel) as z:
        [name] = [n for n in z.namelist() if n.endswith(".dist-info/METADATA")]
        of_wheel = z.read(name).decode()
    with tarfile.open(sdist) as t:
        member = t.extractfile(f"statusgen-{statusgen.__version__}/PKG-INFO")
        assert member is not None
        of_sdist = member.read().decode()
    return [email.parser.Parser().parsestr(text) for text in (of_wheel, of_sdist)]


def test_the_package_index_accepts_the_release(built: Release) -> None:
    """``twine check --strict``, as the release workflow runs it before publishing, and the
    metadata a reader of the index's page looks for: where the project lives, what it is for,
    under which licence (its file shipped in both)."""
    sdist, wheel = built.sdist, built.wheel
    said = run(sys.executable, "-m", "twine", "check", "--strict", sdist, wheel)
    assert said.count("PASSED") == 2, said
    for meta in metadata(built):
        urls = meta.get_all("Project-URL") or []
        assert len(urls) >= 2 and all(
            u.split(", ", 1)[1].startswith("https://pypi.org/project/statusgen/") for u in urls
        )
        classifiers = meta.get_all("Classifier") or []
        assert (
            "Programming Language :: Python :: 3.11" in classifiers and "Topic :: System :: Monitoring" in classifiers
        )
        assert meta["License-Expression"] == "MIT" and meta.get_all("License-File") == ["LICENSE"]
        assert meta["Version"] == statusgen.__version__
    assert f"statusgen-{statusgen.__version__}.dist-info/licenses/LICENSE" in zipfile.ZipFile(wheel).namelist()
    with tarfile.open(sdist) as tar:
        assert f"statusgen-{statusgen.__version__}/LICENSE" in tar.getnames()


WARNING = re.compile(r"warn|deprecat", re.IGNORECASE)


def test_building_the_release_prints_no_warning(built: Release) -> None:
    assert [line for line in built.said.splitlines() if WARNING.search(line)] == []


def test_installing_the_wheel_the_sdist_or_a_clone_prints_no_warning(
    built: Release, fresh_install: tuple[Path, str], tmp_path: Path
) -> None:
    """pip shows what the build backend says while it builds from a clone (``pip install .``): the
    data folders setuptools once took for packages missing from pyproject's list gave some 250
    lines of warnings."""
    _, from_sdist = installed(built.sdist, tmp_path / "sdist")
    _, from_clone = installed(built.source, tmp_path / "clone")
    for said in (fresh_install[1], from_sdist, from_clone):
        assert "Successfully installed" in said and "statusgen-" in said, said
        assert [line for line in said.splitlines() if WARNING.search(line)] == []
