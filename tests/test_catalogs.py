"""The catalogs: every message of the templates and code translated in every shipped language,
none stale, each .mo compiled from its .po; and docs/translating.md followed on a new language."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from babel.messages import pofile

from tests.catalogs import catalogs, problems

REPO = Path(__file__).resolve().parents[1]
SHIPPED = {"de", "fr", "es", "pt_BR", "ja"}


def test_every_shipped_catalog_is_complete_and_current(tmp_path: Path) -> None:
    assert set(catalogs(REPO)) >= SHIPPED
    assert problems(REPO, tmp_path) == []


def _copy(tmp_path: Path) -> Path:
    """The repository's tracked and new files, with their times (make compares them), and its
    virtual environment linked."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    root = tmp_path / "repo"
    for name in listed:
        source = REPO / name
        if source.is_file():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, root / name)
    # The repository's virtual environment, lent: its programs and packages linked, its set-up
    # stamps its own and newer than the copy's pyproject.toml, so that make sets nothing up (a
    # pip install -e from the copy would point the environment's statusgen at the copy).
    venv = root / ".venv"
    venv.mkdir()
    for name in ("bin", "lib", "lib64", "include"):
        if (REPO / ".venv" / name).exists():
            (venv / name).symlink_to(REPO / ".venv" / name)
    shutil.copy(REPO / ".venv" / "pyvenv.cfg", venv / "pyvenv.cfg")
    for stamp in (".installed", ".installed-test", ".system-packages"):
        (venv / stamp).touch()
    return root


def test_a_message_added_or_removed_without_the_catalogs_is_found(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    page = root / "templates/error.html"
    page.write_text(
        page.read_text().replace("{% endblock %}", '{{ _("A sentence no catalog has yet") }}{% endblock %}', 1)
    )
    base = root / "templates/base.html"
    base.write_text(base.read_text().replace('_("Skip to content")', '_("Skip to the content")'))
    found = "\n".join(problems(root, tmp_path))
    for locale in SHIPPED:
        assert f"{locale}/LC_MESSAGES/statusgen.po: lacks 'A sentence no catalog has yet'" in found
        assert f"{locale}/LC_MESSAGES/statusgen.po: lacks 'Skip to the content'" in found
        assert f"{locale}/LC_MESSAGES/statusgen.po: carries 'Skip to content', which nothing uses (stale)" in found


def _commands(doc: str) -> list[str]:
    """The shell commands of docs/translating.md, in order: its ```sh blocks, one command a line."""
    return [
        line.strip()
        for block in re.findall(r"```sh\n(.*?)```", doc, re.S)
        for line in block.splitlines()
        if line.strip() and not line.strip().startswith("#")
    ]


def _translate(po: Path, mark: str) -> None:
    """What a translator does: every message given a translation (here the English marked)."""
    with po.open("rb") as f:
        catalog = pofile.read_po(f)
    for message in catalog:
        if not message.id:
            continue
        if isinstance(message.id, tuple):
            message.string = tuple(mark + message.id[min(i, 1)] for i in range(catalog.num_plurals))
        else:
            message.string = mark + message.id
        message.flags.discard("fuzzy")
    with po.open("wb") as f:
        pofile.write_po(f, catalog)


def test_translating_doc_starts_a_new_language_that_a_site_then_speaks(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    commands = _commands((REPO / "docs/translating.md").read_text())
    env = {**os.environ, "LANG_TAG": "it"}
    extract, start, check = commands[0], commands[1], commands[-1]
    assert extract.startswith("make catalogs") and start.startswith("make language") and check == "make check-catalogs"

    def run(command: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(command, shell=True, cwd=root, env=env, capture_output=True, text=True, timeout=300)

    for command in (extract, start):
        done = run(command)
        assert done.returncode == 0, (command, done.stdout, done.stderr)
        assert "pip" not in done.stdout, done.stdout
    po = root / "statusgen/locale/it/LC_MESSAGES/statusgen.po"
    assert po.exists()
    refused = run(check)  # an untranslated catalog fails the check (make exits 2 when a command fails)
    assert refused.returncode != 0, refused.stdout
    assert "it/LC_MESSAGES/statusgen.po" in refused.stdout and "not translated" in refused.stdout
    _translate(po, "«it» ")
    for command in (extract, check):
        done = run(command)
        assert done.returncode == 0, (command, done.stdout, done.stderr)

    config = root / "it.toml"
    config.write_text(
        '[site]\ntitle = "Prova"\nlanguages = ["en", "it"]\noutput = "out"\nstore = "it.db"\n'
        '[categories]\ncore = "Core"\n'
        '[[services]]\nslug = "one"\nname = "One"\ncategory = "core"\n'
        '[[services.checks]]\nurl = "http://127.0.0.1:9/"\n'
    )
    # the copy's own package (the working folder comes first on the path), with its new catalog
    built = subprocess.run(
        [sys.executable, "-c", "from statusgen.cli import main; main()", "build", "--config", str(config)],
        cwd=root,
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stderr
    page = (root / "out/it/index.html").read_text()
    assert '<html lang="it">' in page and "«it» Skip to content" in page
    assert "«it» " not in (root / "out/index.html").read_text()
