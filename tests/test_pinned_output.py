"""The output is pinned: the simulated 7-day site (``tests/pinned.py``) builds, file for file,
the tree the code before the renderer's rebuild built, changed since only
by intended changes (each pinned again in the commit that makes it, which lists what changed in
the tree and why: see tests/pinned.py). When it differs, the test prints how: the files added and
removed, and those changed with their old and new sizes.

JSON files are compared parsed (a change of form, such as key order or spacing, is allowed;
a change of a value is not); every other file byte for byte, but HTML pages, which are
compared with runs of white space between tags and in text made one (pages moved into
templates may lay their markup out differently, never say something else).
"""

from __future__ import annotations

import re
from pathlib import Path

import orjson

from tests.pinned import build_pinned_site, difference, pinned_files, tree_files

_BETWEEN_TAGS = re.compile(rb">\s+<")
_SPACE = re.compile(rb"\s+")


def comparable(path: str, data: bytes) -> object:
    if path.endswith(".json"):
        return orjson.loads(data)
    if path.endswith(".html"):
        return _SPACE.sub(b" ", _BETWEEN_TAGS.sub(b"><", data)).strip()
    return data


def test_the_build_is_the_pinned_tree(tmp_path: Path) -> None:
    built = tree_files(build_pinned_site(tmp_path))
    pinned = pinned_files()
    changed = [
        path for path in pinned.keys() & built.keys() if comparable(path, built[path]) != comparable(path, pinned[path])
    ]
    report = difference(pinned, built, changed)
    print(report)
    assert sorted(built) == sorted(pinned) and changed == [], report


def test_a_difference_names_each_file_added_removed_and_changed_with_its_sizes() -> None:
    pinned = {"index.html": b"<p>old</p>", "feed.xml": b"<feed/>", "api/v1/snapshot.json": b"{}"}
    built = {"index.html": b"<p>newer</p>", "feed.xml": b"<feed/>", "badges/new.svg": b"<svg/>"}
    assert difference(pinned, built, ["index.html"]).splitlines() == [
        "the tree against the pin: 1 added, 1 removed, 1 changed",
        "added    badges/new.svg (6 bytes)",
        "removed  api/v1/snapshot.json (2 bytes)",
        "changed  index.html (10 -> 12 bytes)",
    ]
    assert difference(pinned, pinned, []) == "the tree against the pin: 0 added, 0 removed, 0 changed"


def test_the_comparison_sees_a_changed_value() -> None:
    pinned = pinned_files()
    snapshot = "api/v1/snapshot.json"
    doc = orjson.loads(pinned[snapshot])
    doc["health_index"] = 12.5
    assert comparable(snapshot, orjson.dumps(doc)) != comparable(snapshot, pinned[snapshot])
    page = "index.html"
    assert comparable(page, pinned[page].replace(b"Open incidents", b"Open  incidents")) == comparable(
        page, pinned[page]
    )
    assert comparable(page, pinned[page].replace(b"Open incidents", b"Closed incidents")) != comparable(
        page, pinned[page]
    )
