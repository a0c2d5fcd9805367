"""``statusgen simulate``: a past the site tells as it tells a live one, in every language."""

from __future__ import annotations

import html
from pathlib import Path

import lxml.html
from click.testing import CliRunner

from statusgen.cli import main
from statusgen.store import Store


def page_text(path: Path) -> str:
    return html.unescape(lxml.html.document_fromstring(path.read_bytes()).text_content())


def test_a_simulated_past_is_told_in_the_site_s_languages(tmp_path: Path) -> None:
    """The simulated incidents are the live decisions' sentences: the German pages say them in
    German, and none of their English titles or updates is left on them."""
    config, db, site = tmp_path / "simulated.toml", tmp_path / "simulated.db", tmp_path / "site"
    args = ["--services", "3", "--days", "40", "--config-out", str(config), "--db", str(db), "--output", str(site)]
    done = CliRunner().invoke(main, ["simulate", *args])
    assert done.exit_code == 0, done.output
    config.write_text(config.read_text().replace("[site]\n", '[site]\nlanguages = ["en", "de"]\n', 1))
    done = CliRunner().invoke(main, ["build", "--config", str(config)])
    assert done.exit_code == 0, done.output

    with Store(db) as store:
        incidents = store.incidents()
    english = {str(i.title) for i in incidents} | {str(u.message) for i in incidents for u in i.updates}
    assert len(incidents) >= 3 and len(english) >= 4
    for slug in ("service-0000", "service-0001", "service-0002"):
        told = page_text(site / "services" / slug / "incidents" / "index.html")
        german = page_text(site / "de" / "services" / slug / "incidents" / "index.html")
        ours = {i for i in incidents if i.service == slug}
        assert all(str(i.title) in told for i in ours)  # the English page does say them
        assert [text for text in english if text in german] == []
    front = page_text(site / "de" / "index.html")
    assert "Simulated history." not in front and "The check answers as expected." not in front
