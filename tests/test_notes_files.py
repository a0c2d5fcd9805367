"""The notes folder read from real files: each kind parsed, every problem reported at once with
its file, key and fix, hostile and huge files bounded; and the decisions made of them, pure."""

from __future__ import annotations

import tomllib
from datetime import UTC, datetime, timedelta
from pathlib import Path

import lxml.html
import pytest
from hypothesis import given
from hypothesis import strategies as st

from statusgen.config import Config, load_config
from statusgen.config.operatorfiles import DELIMITER, MAX_FILE_BYTES, file_text, read_folder, unknown_incidents
from statusgen.decide.incidents import Incident, IncidentUpdate
from statusgen.decide.operator import manual_incident, operator_state, with_notes
from statusgen.decide.run import decide_cycle
from statusgen.decide.state import ServiceState
from statusgen.errors import ConfigError
from statusgen.model import CheckResult, Outcome, Status
from statusgen.notify.events import incident_events
from statusgen.render.markdown import TAGS, to_html
from tests.conftest import write_config
from tests.test_notes_runs import SERVICES as RUN_SERVICES

SERVICES = RUN_SERVICES.format(a="http://127.0.0.1:9/a", m="http://127.0.0.1:9/m", w="http://127.0.0.1:9/w")
T0 = datetime(2026, 11, 25, 14, 0, tzinfo=UTC)


def note_file(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def site(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        note_file(tmp_path / "notes", name, text)
    return write_config(tmp_path, SERVICES)


NOTE = '+++\nincident = "api-20261125t140000"\nat = 2026-11-25T14:30:00Z\n+++\nWe think this is **DNS**.\n'
INCIDENT = """+++
service = "mail"
title = "Mail delayed"
severity = "major"
started = 2026-11-25T13:00:00Z
+++
Outgoing mail is queued.

## 2026-11-25 13:40
The provider is on it.
"""
MAINTENANCE = """+++
title = "Database upgrade"
services = ["api", "mail"]
start = 2026-11-25T20:00:00Z
end = 2026-11-25T22:00:00Z
+++
Expect a minute of errors.
"""


def test_each_kind_of_file_is_read_from_its_keys(tmp_path):
    cfg = load_config(site(tmp_path, {"a-note.md": NOTE, "mail-delayed.md": INCIDENT, "db.md": MAINTENANCE}))
    files = cfg.operator
    [note] = files.notes_on("api-20261125t140000")
    assert (note.file, note.at, note.message) == ("a-note.md", T0 + timedelta(minutes=30), "We think this is **DNS**.")
    [m] = files.incidents
    assert (m.id, m.status, m.resolved) == ("mail-operator-mail-delayed", "partial_outage", None)
    assert [(u.at, u.message) for u in m.updates] == [
        (T0 - timedelta(hours=1), "Outgoing mail is queued."),
        (T0 - timedelta(minutes=20), "The provider is on it."),
    ]
    [p] = files.maintenance
    assert p.services == ("api", "mail") and p.message == "Expect a minute of errors."
    # the planned maintenance is a window of each of its services, as configured ones are
    for svc in cfg.services[:2]:
        [w] = svc.maintenance
        assert (w.source, w.ref, w.start, w.end) == ("operator", "db.md", p.start, p.end)
        assert svc.maintenance_at(p.start + timedelta(minutes=5)) is not None


def test_a_missing_folder_holds_nothing(tmp_path):
    assert load_config(write_config(tmp_path, SERVICES)).operator.notes == ()


BROKEN = {
    "Bad Name.md": NOTE,
    "no-front.md": "Just text\n",
    "bad-toml.md": "+++\nincident = \n+++\nx\n",
    "unknown-key.md": NOTE.replace("+++\nWe", 'mood = "grim"\n+++\nWe'),
    "bad-time.md": NOTE.replace("2026-11-25T14:30:00Z", '"yesterday"'),
    "unknown-incident.md": NOTE.replace("api-2026", "nosuch-2026"),
    "unknown-service.md": INCIDENT.replace('"mail"', '"post"'),
    "end-first.md": MAINTENANCE.replace("22:00", "19:00"),
    "what-is-it.md": '+++\ntitle = "x"\n+++\ny\n',
    "bad-heading.md": INCIDENT.replace("## 2026-11-25 13:40", "## Later that day"),
    "empty-note.md": NOTE.replace("We think this is **DNS**.\n", ""),
    "huge.md": NOTE + "x" * MAX_FILE_BYTES,
    "deep.md": "+++\na = " + "[" * 5000 + "\n+++\nx\n",
}


def test_every_problem_of_the_folder_is_reported_at_once_naming_file_key_and_fix(tmp_path):
    with pytest.raises(ConfigError) as caught:
        load_config(site(tmp_path, BROKEN))
    problems = caught.value.problems
    expected = {
        "notes/Bad Name.md: the name must be lower-case": "like 2026-11-25-dns.md",
        "notes/no-front.md: must begin with a front matter": "+++",
        "notes/bad-toml.md: the front matter is not valid TOML": "",
        'notes/unknown-key.md: unknown key "mood"': "allowed keys: incident, at",
        'notes/bad-time.md: at must be a date-time with an offset, like 2026-11-25T14:02:00Z, got "yesterday"': "",
        'notes/unknown-incident.md: incident "nosuch-20261125t140000" is not the id': "/api/v1/incidents.json",
        'notes/unknown-service.md: service names unknown service "post"': "configured services: api, mail, web",
        "notes/end-first.md: end (2026-11-25 19:00) must be after start (2026-11-25 20:00)": "",
        "notes/what-is-it.md: cannot tell what the file is": "services = (a planned maintenance)",
        'notes/bad-heading.md: heading "## Later that day" must be a time in UTC': "## 2026-11-25 14:02",
        "notes/empty-note.md: the note is empty": "",
        f"notes/huge.md: {len(NOTE) + MAX_FILE_BYTES} bytes is larger than a file may be": "shorten it",
        "notes/deep.md: the front matter is not valid TOML": "",
    }
    for start, fix in expected.items():
        found = [p for p in problems if p.startswith(start)]
        assert len(found) == 1 and fix in found[0], (start, problems)
    assert len(problems) == len(expected)


def test_notes_on_incidents_never_recorded_are_named(tmp_path):
    cfg = load_config(site(tmp_path, {"a-note.md": NOTE}))
    assert unknown_incidents(cfg.operator, {"api-20261125t140000"}, "notes") == []
    [problem] = unknown_incidents(cfg.operator, set(), "notes")
    assert problem.startswith('notes/a-note.md: incident "api-20261125t140000" is not a recorded incident')


def test_a_note_on_a_manual_incident_that_is_not_there_is_refused(tmp_path):
    with pytest.raises(ConfigError) as caught:
        load_config(site(tmp_path, {"n.md": NOTE.replace("api-20261125t140000", "mail-operator-gone")}))
    assert caught.value.problems == [
        'notes/n.md: incident "mail-operator-gone" is no manual incident of the folder; '
        "copy the id from the incident's JSON"
    ]


def test_a_folder_in_place_of_a_file_and_a_file_in_place_of_the_folder(tmp_path):
    (tmp_path / "notes").write_text("not a folder")
    with pytest.raises(ConfigError) as caught:
        load_config(write_config(tmp_path, SERVICES))
    assert caught.value.problems == ["notes: is not a folder; make it a folder of .md files or remove it"]
    folder, _ = read_folder(tmp_path / "none", "none", ["api"])
    assert folder.notes == folder.incidents == folder.maintenance == ()


# -- the Markdown, sanitized -------------------------------------------------------------------


HOSTILE_MARKDOWN = [
    "<script>alert(1)</script>",
    "[x](javascript:alert(1))",
    "[x](JaVaScRiPt:alert(1))",
    "[x](data:text/html,hi)",
    "[x](vbscript:msgbox)",
    "<b onclick=x>raw</b>",
    "<img src=x onerror=alert(1)>",
    "![pic](https://tracker.example/p.png)",
    "<a href='https://e.com' onmouseover=x>y</a>",
    "<iframe src=https://e.com></iframe>",
    "[x](<javascript:alert(1)>)",
    "[x]: javascript:alert(1)\n\n[x]",
    "<style>body{display:none}</style>",
]


@pytest.mark.parametrize("source", HOSTILE_MARKDOWN)
def test_hostile_markdown_is_neutralised(source):
    """What comes out holds only the allowed tags, no attribute but a link's, and links only to
    http(s) and mailto: raw HTML is shown as text."""
    tree = lxml.html.fragment_fromstring(str(to_html(source)), create_parent="div")
    for element in tree.iter():
        assert element.tag in TAGS | {"div"}, element.tag
        assert set(element.attrib) <= {"href", "rel", "start"}, element.attrib
        if "href" in element.attrib:
            assert element.attrib["href"].split(":")[0] in ("http", "https", "mailto")
    if source.startswith("<"):  # raw HTML is shown as the text it is
        assert source in tree.text_content()


def test_links_keep_only_http_and_mailto_and_the_text_is_marked():
    html = str(to_html("A **bold** [page](https://example.com/x) and [mail](mailto:ops@example.com)."))
    assert "<strong>bold</strong>" in html
    assert 'href="https://example.com/x"' in html and 'href="mailto:ops@example.com"' in html


def test_a_huge_text_is_cut_not_rendered_whole():
    html = str(to_html("word " * 100_000))
    assert len(html) < 70_000


# -- the decisions, pure --------------------------------------------------------------------------


def own_incident(*extra: IncidentUpdate) -> Incident:
    opened = IncidentUpdate(T0, "opened", "major_outage", "Opened after 3 failed cycles in a row.")
    return Incident("api-20261125t140000", "api", "API: major outage", "critical", T0, None, (opened, *extra))


def test_notes_are_appended_edited_in_place_and_removed_with_their_file(tmp_path):
    cfg = load_config(site(tmp_path, {"a-note.md": NOTE}))
    notes = cfg.operator.notes_on("api-20261125t140000")
    noted = with_notes(own_incident(), notes)
    assert [(u.kind, u.ref, u.status) for u in noted.updates] == [
        ("opened", None, "major_outage"),
        ("note", "a-note.md", "major_outage"),
    ]
    assert noted.updated_at == T0 + timedelta(minutes=30)  # the incident's updated_at moves
    assert with_notes(noted, notes) is noted  # nothing new: the same incident
    edited = (tmp_path / "notes/a-note.md").read_text().replace("**DNS**", "the provider")
    (tmp_path / "notes/a-note.md").write_text(edited)
    again = with_notes(noted, load_config(tmp_path / "services.toml").operator.notes_on(noted.id))
    assert again.updates[1].message == "We think this is the provider." and len(again.updates) == 2
    assert with_notes(noted, ()).updates == own_incident().updates


def test_a_note_decided_in_a_run_is_an_incident_update_the_notifications_tell(tmp_path):
    cfg = load_config(site(tmp_path, {"a-note.md": NOTE}))
    before = own_incident()
    failing = ServiceState(
        Status.MAJOR_OUTAGE,
        T0,
        "down",
        ("checks",),
        own_status=Status.MAJOR_OUTAGE,
        incident_basis=Status.MAJOR_OUTAGE,
        fail_streak=5,
    )
    down = CheckResult("api", 0, T0 + timedelta(minutes=31), Outcome.TIMEOUT, None, None, False)
    decided = decide_cycle(cfg, {"api": failing}, {"api": before}, [down], T0 + timedelta(minutes=31))
    [changed] = [i for i in decided.incidents if i.service == "api"]
    assert changed.updates[-1].kind == "note"
    [event] = incident_events({"api": before}, [changed], {"api": "API"})
    assert (event.kind, event.message, event.id) == ("incident.noted", "We think this is **DNS**.", f"{before.id}/1")


def manual(cfg: Config) -> Incident:
    [m] = cfg.operator.incidents
    return manual_incident(m, "Mail")


def test_a_manual_incident_is_an_incident_opened_updated_and_resolved_by_its_file(tmp_path):
    cfg = load_config(site(tmp_path, {"mail-delayed.md": INCIDENT}))
    made = manual(cfg)
    assert (made.id, made.title, made.severity, made.open) == (
        "mail-operator-mail-delayed",
        "Mail: Mail delayed",
        "major",
        True,
    )
    assert [(u.kind, u.status) for u in made.updates] == [("opened", "partial_outage"), ("note", "partial_outage")]
    resolved = INCIDENT.replace("+++\nOutgoing", "resolved = 2026-11-25T15:00:00Z\n+++\nOutgoing")
    note_file(tmp_path / "notes", "mail-delayed.md", resolved + "\n## 2026-11-25 15:00\nAll mail delivered.\n")
    closed = manual(load_config(tmp_path / "services.toml"))
    assert (closed.id, closed.open, closed.ended_at) == (made.id, False, T0 + timedelta(hours=1))
    assert [(u.kind, u.status, u.message) for u in closed.updates][-1] == (
        "resolved",
        "operational",
        "All mail delivered.",
    )


def test_an_open_manual_incident_sets_its_service_status_never_better(tmp_path):
    cfg = load_config(site(tmp_path, {"mail-delayed.md": INCIDENT}))
    fine = ServiceState(Status.OPERATIONAL, T0 - timedelta(days=1), "All checks pass.", ("checks",))
    told = operator_state(fine, cfg.operator.incidents, T0)
    assert (told.status, told.since, told.sources) == (
        Status.PARTIAL_OUTAGE,
        T0 - timedelta(hours=1),
        ("checks", "operator"),
    )
    assert told.reason == "Reported by the operator: Mail delayed."
    worse = ServiceState(Status.MAJOR_OUTAGE, T0, "down", ("checks",))
    assert operator_state(worse, cfg.operator.incidents, T0) is worse
    assert operator_state(fine, cfg.operator.incidents, T0 - timedelta(hours=2)) is fine  # not started yet


@given(st.text(st.characters(blacklist_categories=("Cs",))))
def test_a_written_files_front_matter_reads_back_whatever_its_text_holds(title):
    """Control characters too: the commands write titles people typed or pasted."""
    front = file_text({"title": title, "services": [title, "api"]}, "body").split(DELIMITER + "\n")[1]
    assert tomllib.loads(front) == {"title": title, "services": [title, "api"]}
