"""The output is pinned: the simulated 7-day site (``tests/pinned.py``) builds, file for file,
the tree the code before the renderer's rebuild built, changed since only
by intended changes (each pinned again in the commit that makes it, see tests/pinned.py).

JSON files are compared parsed (a change of form, such as key order or spacing, is allowed;
a change of a value is not); every other file byte for byte, but HTML pages, which are
compared with runs of white space between tags and in text made one (pages moved into
templates may lay their markup out differently, never say something else).
"""

from __future__ import annotations

import re
from pathlib import Path

import orjson

from tests.pinned import build_pinned_site, pinned_files, tree_files

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
    assert sorted(built) == sorted(pinned)
    changed = [path for path in pinned if comparable(path, built[path]) != comparable(path, pinned[path])]
    assert changed == []


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
