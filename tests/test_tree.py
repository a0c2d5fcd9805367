"""The output tree: atomic swap, untouched unchanged files, mtimes that move, gzip copies in step."""

from __future__ import annotations

import gzip
import json
import os
import zlib

import pytest

from statusgen.errors import RenderError
from statusgen.policy import GZIP_MIN_BYTES
from statusgen.render import tree
from statusgen.render.tree import (
    Placer,
    StaleTree,
    TreeWriter,
    WriteStats,
    current_generation,
    gens_dir,
    read_manifest,
    write_tree,
)
from tests.conftest import generations

BIG = b'{"a": "' + b"x" * 5000 + b'"}\n'  # above GZIP_MIN_BYTES: it gets a .gz copy
KEEP = None


def write_keyed(out, items) -> WriteStats:
    """A generation of (path, bytes or KEEP, key of its inputs)."""
    with TreeWriter(out) as tree:
        for rel, data, key in items:
            if data is KEEP:
                tree.main.keep(rel, key)
            else:
                tree.main.put(rel, data, key)
    assert tree.stats is not None
    return tree.stats


def previous_keys(out) -> dict[str, str]:
    return {rel: e.key for rel, e in read_manifest(current_generation(out)).items() if e.key}


def test_unchanged_files_keep_mtime_and_are_not_rewritten(tmp_path):
    out = tmp_path / "site"
    files = {"api/v1/a.json": BIG, "index.html": b"<p>hi</p>"}
    first = write_tree(out, files)
    st1 = os.stat(out / "api/v1/a.json")
    second = write_tree(out, files)
    st2 = os.stat(out / "api/v1/a.json")
    assert (first.written, second.written, second.files) == (2, 0, 2)
    assert (st1.st_size, st1.st_mtime) == (st2.st_size, st2.st_mtime)  # the same ETag under nginx
    assert out.is_symlink() and first.generation != second.generation
    third = write_tree(out, files)  # rewrites the first generation, which holds them already
    st3 = os.stat(out / "api/v1/a.json")
    assert third.generation == first.generation
    assert (st3.st_ino, st3.st_mtime, st3.st_ctime_ns) == (st1.st_ino, st1.st_mtime, st1.st_ctime_ns)


def test_changed_file_of_same_size_gets_a_later_second(tmp_path):
    out = tmp_path / "site"
    write_tree(out, {"a.json": BIG})
    before = os.stat(out / "a.json")
    changed = BIG.replace(b"x", b"y")
    write_tree(out, {"a.json": changed})
    after = os.stat(out / "a.json")
    assert after.st_size == before.st_size
    assert int(after.st_mtime) > int(before.st_mtime)
    gz = out / "a.json.gz"
    assert gzip.decompress(gz.read_bytes()) == changed
    assert int(os.stat(gz).st_mtime) == int(after.st_mtime)


@pytest.mark.parametrize("unchanged_builds", [0, 1])
def test_other_bytes_of_the_same_size_and_crc_are_written(tmp_path, unchanged_builds):
    """The manifest's hash of a file's bytes tells apart bytes of the same size that a CRC-32
    would take for the same."""
    assert zlib.crc32(b"plumless") == zlib.crc32(b"buckeroo")
    out = tmp_path / "site"
    for _ in range(1 + unchanged_builds):
        write_tree(out, {"a.txt": b"plumless"})
    before = os.stat(out / "a.txt")
    stats = write_tree(out, {"a.txt": b"buckeroo"})
    assert stats.written == 1 and (out / "a.txt").read_bytes() == b"buckeroo"
    assert int(os.stat(out / "a.txt").st_mtime) > int(before.st_mtime)
    assert write_tree(out, {"a.txt": b"buckeroo"}).written == 0


def test_a_file_made_again_with_its_bytes_is_not_read_back(tmp_path, monkeypatch):
    """Its size and hash are the manifest's: it keeps its modification time, unread."""
    out = tmp_path / "site"
    write_tree(out, {"a.json": BIG, "b.txt": b"small"})
    before = {name: os.stat(out / name).st_mtime for name in ("a.json", "b.txt")}

    def read_served(self: Placer, rel: str) -> bytes | None:
        raise AssertionError(f"{rel} read back")

    monkeypatch.setattr(Placer, "read_served", read_served)
    assert write_tree(out, {"a.json": BIG, "b.txt": b"small"}).written == 0
    assert {name: os.stat(out / name).st_mtime for name in ("a.json", "b.txt")} == before


def test_files_rewritten_in_place_have_exactly_their_new_bytes(tmp_path):
    """Existing files are written over and then cut to length; every size, growing and shrinking,
    ends with exactly its bytes (and its .gz copy)."""
    out = tmp_path / "site"
    sizes = [0, 1, 300, 4095, 4096, 4097, 8191, 8192, 9000, 5, 4096, 12000, 300]
    for n, size in enumerate(sizes):
        body = bytes((n + i) % 251 for i in range(size))
        write_tree(out, {"a.json": body, "b.txt": body[::-1]})
        assert (out / "a.json").read_bytes() == body and (out / "b.txt").read_bytes() == body[::-1]
        gz = out / "a.json.gz"
        assert gzip.decompress(gz.read_bytes()) == body if size >= GZIP_MIN_BYTES else not gz.exists()


def test_a_file_written_over_its_old_bytes_holds_only_its_new_ones(tmp_path):
    """Files are written over their old bytes (not truncated first), then cut to their size."""
    out = tmp_path / "site"
    for size in (9000, 300, 4096, 5000, 1):
        body = bytes([size % 251]) * size
        write_tree(out, {"a.json": body, "b.txt": body[: size // 3]})
        assert (out / "a.json").read_bytes() == body and (out / "b.txt").read_bytes() == body[: size // 3]


def test_a_reader_of_the_old_tree_keeps_a_complete_tree(tmp_path):
    out = tmp_path / "site"
    write_tree(out, {"a.json": b"old a", "b.json": b"old b"})
    old_root = out.resolve()
    write_tree(out, {"a.json": b"new a", "b.json": b"new b"})
    assert (old_root / "a.json").read_bytes() == b"old a" and (old_root / "b.json").read_bytes() == b"old b"
    assert (out / "a.json").read_bytes() == b"new a"
    write_tree(out, {"a.json": b"newer"})
    assert len(list(gens_dir(out).iterdir())) == 2  # current and previous only
    assert not (out / "b.json").exists()  # files no longer rendered are gone


def test_a_plain_directory_is_migrated_to_a_link(tmp_path):
    out = tmp_path / "site"
    out.mkdir()
    (out / "stale.txt").write_text("old")
    write_tree(out, {"a.json": b"1"})
    assert out.is_symlink() and (out / "a.json").read_bytes() == b"1"


def test_a_failed_write_leaves_the_last_site(tmp_path):
    out = tmp_path / "site"
    write_tree(out, {"a.json": b"good"})
    current = out.resolve()
    kept = tmp_path / "kept"
    current.rename(kept)  # keep the current generation elsewhere...
    out.unlink()
    out.symlink_to(kept)
    gens = gens_dir(out)
    gens.rmdir()
    gens.write_text("a file where the generations folder should be")  # ...so the next write must fail
    with pytest.raises(RenderError) as info:
        write_tree(out, {"a.json": b"bad"})
    assert "the last complete site is left in place" in str(info.value)
    assert (out / "a.json").read_bytes() == b"good"


def test_repeated_runs_from_fresh_config_loads_never_nest_generations(tmp_path):
    from statusgen.config import parse_config

    text = (
        '[site]\noutput = "site"\n[categories]\nc = "C"\n[[services]]\nslug = "a"\nname = "A"\n'
        'category = "c"\n[[services.checks]]\nurl = "https://a.example"\n'
    )
    for n in range(3):
        cfg = parse_config(text, tmp_path / "services.toml")  # as each cron run loads it
        assert cfg.site.output == tmp_path / "site"
        write_tree(cfg.site.output, {"a.json": f"{n}".encode()})
    gens = list(gens_dir(tmp_path / "site").iterdir())
    assert len(gens) == 2 and not list(tmp_path.glob("site.gens/*/*.gens"))
    assert (tmp_path / "site" / "a.json").read_bytes() == b"2"


# -- files kept by the key of their inputs ------------------------------------------------------


def test_a_kept_file_is_the_previous_generations_file(tmp_path):
    out = tmp_path / "site"
    write_keyed(out, [("feed/a.xml", BIG, "k1"), ("b.json", BIG, None)])
    before = os.stat(out / "feed/a.xml")
    stats = write_keyed(out, [("feed/a.xml", KEEP, "k1"), ("b.json", BIG + b" ", None)])
    after = os.stat(out / "feed/a.xml")
    assert (stats.files, stats.written) == (2, 1)
    assert (before.st_size, before.st_mtime) == (after.st_size, after.st_mtime)
    assert (out / "feed/a.xml").read_bytes() == BIG and gzip.decompress((out / "feed/a.xml.gz").read_bytes()) == BIG
    write_keyed(out, [("feed/a.xml", KEEP, "k1"), ("b.json", BIG + b" ", None)])
    again = os.stat(out / "feed/a.xml")  # the first generation held it: not touched
    assert (again.st_ino, again.st_ctime_ns) == (before.st_ino, before.st_ctime_ns)
    assert previous_keys(out) == {"feed/a.xml": "k1"}


def test_keeping_a_file_the_previous_generation_lacks_asks_for_a_full_build(tmp_path):
    out = tmp_path / "site"
    write_keyed(out, [("a.json", BIG, "k1")])
    with pytest.raises(StaleTree):
        write_keyed(out, [("other.json", KEEP, "k1")])
    os.unlink(out.resolve() / "a.json")  # listed in the manifest, gone from the folder
    with pytest.raises(StaleTree):
        write_keyed(out, [("a.json", KEEP, "k1")])
    assert (out / "a.json.gz").exists(), "the site served is left as it was"


def test_a_file_no_longer_compressed_loses_its_gz_copy(tmp_path):
    out = tmp_path / "site"
    write_tree(out, {"a.json": BIG, "gone.json": BIG})
    write_tree(out, {"a.json": b"{}"})
    assert (out / "a.json").read_bytes() == b"{}"
    assert sorted(p.name for p in out.resolve().iterdir()) == [".manifest.json", "a.json"]


def test_files_no_longer_rendered_leave_both_generations_with_their_empty_folders(tmp_path):
    out = tmp_path / "site"
    full = {"a.json": BIG, "inc/1/index.html": BIG, "inc/2/index.html": BIG, "b.json": BIG}
    write_tree(out, full)  # a new folder: what it holds is found by walking it
    write_tree(out, full)  # the second generation, new too
    for _ in range(2):  # each generation in turn, rewritten from its manifest
        write_tree(out, {"a.json": BIG, "inc/2/index.html": BIG, "b.json": b"{}"})
    for gen in gens_dir(out).iterdir():
        held = sorted(str(p.relative_to(gen)) for p in gen.rglob("*"))
        assert held == [
            ".manifest.json",
            "a.json",
            "a.json.gz",
            "b.json",
            "inc",
            "inc/2",
            "inc/2/index.html",
            "inc/2/index.html.gz",
        ]


def test_a_generation_whose_manifest_cannot_be_read_loses_what_is_not_wanted(tmp_path):
    """A generation with an unreadable manifest holds files nobody can account for: the build
    that rewrites it walks it and removes what it did not write (a new, empty folder is not walked)."""
    out = tmp_path / "site"
    write_tree(out, {"a.json": BIG, "old/x.html": BIG})
    first = out.resolve()
    write_tree(out, {"a.json": BIG, "old/x.html": BIG})  # the second generation: the first is next
    (first / ".manifest.json").write_bytes(b"not json")
    (first / "stray.txt").write_bytes(b"left by hand")
    assert write_tree(out, {"a.json": BIG}).generation == first.name
    held = sorted(str(p.relative_to(first)) for p in first.rglob("*"))
    assert held == [".manifest.json", "a.json", "a.json.gz"]


def test_a_build_renders_only_the_incident_pages_and_feeds_whose_inputs_changed(tmp_path):
    from datetime import UTC, datetime

    from statusgen.config import load_config
    from statusgen.render.build import build
    from statusgen.simulate import config_text, simulate
    from statusgen.store import Store

    now = datetime(2026, 11, 22, 20, 0, 30, tzinfo=UTC)
    simulate(4, 20, tmp_path / "sim.db", now)
    (tmp_path / "sim.toml").write_text(config_text(4, tmp_path / "sim.db", tmp_path / "site"), encoding="utf-8")
    config = load_config(tmp_path / "sim.toml")
    store = Store(config.site.store)
    first = build(store, config, now)
    pages = sorted((tmp_path / "site").glob("services/*/incidents/index.html"))
    assert len(pages) == 4 and sum(p.read_bytes().count(b'<article class="incident"') for p in pages) >= 3
    made = os.stat(pages[0])
    second = build(store, config, now)
    assert second.stats.kept and second.stats.written < first.stats.written
    third = build(store, config, now)  # into the first generation again: pages untouched
    assert third.stats.kept and third.stats.generation == first.stats.generation
    assert (os.stat(pages[0]).st_ino, os.stat(pages[0]).st_ctime_ns) == (made.st_ino, made.st_ctime_ns)
    # keyed: the three lists of incidents, the incidents page, its pages of each day and month and
    # each service's, each service's three lists, the feeds (site and one per service), each
    # service's record, histories and page, each service's two badges, and each month's report
    # (its JSON, CSV and page)
    days = {i.started_at.date() for i in store.incidents() if i.ended_at is not None}
    periods = len(days) + len({d.strftime("%Y-%m") for d in days})
    months = len(json.loads((config.site.output / "api/v1/reports.json").read_bytes())["months"])
    expected = 3 + 1 + periods + len(pages) + 3 * len(pages) + 1 + 4 + 4 * 6 + 4 * 2 + 3 * months
    assert len(previous_keys(config.site.output)) == expected
    page = pages[1].read_bytes()
    for gen in generations(tmp_path / "site"):  # a file to keep has gone: built again in full
        (gen / pages[1].relative_to(tmp_path / "site")).unlink(missing_ok=True)
    fourth = build(store, config, now)
    assert not fourth.stats.kept and pages[1].read_bytes() == page


# -- partial generations and flushing -----------------------------------------------------------


def partial_generations(out) -> list[str]:
    return [g.name for g in gens_dir(out).iterdir() if g.name.startswith("partial-")]


@pytest.mark.parametrize("complete_before", [False, True])
def test_a_failed_build_removes_what_it_wrote(tmp_path, complete_before):
    """Whether the build wrote a new folder or rewrote the generation before the served one, a
    failure leaves no partial generation, and the served one as it was."""
    out = tmp_path / "site"
    for _ in range(2 if complete_before else 1):
        write_tree(out, {"a.json": BIG, "b/c.json": b"1"})
    served = out.resolve()
    with pytest.raises(RuntimeError), TreeWriter(out) as tree:
        tree.main.put("a.json", BIG + b"changed")
        tree.main.put("new/d.json", BIG)
        assert partial_generations(out)
        raise RuntimeError("the build failed half-way")
    assert partial_generations(out) == [] and [g.resolve() for g in gens_dir(out).iterdir()] == [served]
    assert out.resolve() == served and (out / "a.json").read_bytes() == BIG
    write_tree(out, {"a.json": b"{}"})  # and the next build starts anew
    assert (out / "a.json").read_bytes() == b"{}" and not (out / "b/c.json").exists()


def test_a_partial_generation_left_by_a_kill_is_removed_first(tmp_path):
    from statusgen.render.tree import clear_partial

    out = tmp_path / "site"
    write_tree(out, {"a.json": b"good"})
    left = gens_dir(out) / "partial-g1"
    (left / "deep").mkdir(parents=True)
    (left / "deep" / "x.json").write_bytes(BIG)
    (tmp_path / ".site.swap-1").symlink_to(left)
    clear_partial(out)
    assert partial_generations(out) == [] and not (tmp_path / ".site.swap-1").is_symlink()
    assert (out / "a.json").read_bytes() == b"good"


def _record_flushes(out, monkeypatch, available: bool) -> list[tuple[str, str]]:
    """Record each flush of a build at ``out`` as (path, where the link pointed then); with
    ``available`` False, as on a system without syncfs(2)."""

    synced: list[tuple[str, str]] = []
    real_fsync, real_syncfs = os.fsync, tree._syncfs

    def fsync(fd: int) -> None:  # the path as it will be named: files are flushed while partial
        synced.append((os.readlink(f"/proc/self/fd/{fd}").replace("/partial-", "/"), os.readlink(out)))
        real_fsync(fd)

    def syncfs(path):
        if not available:
            return False
        synced.append(("syncfs " + str(path).replace("/partial-", "/"), os.readlink(out)))
        return real_syncfs(path)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(tree, "_syncfs", syncfs)
    return synced


def test_the_files_reach_the_disk_before_the_swap_and_the_folders_after(tmp_path, monkeypatch):
    """Without syncfs(2): each file, then each folder, is flushed."""
    out = tmp_path / "site"
    write_tree(out, {"a.json": b"first"})
    synced = _record_flushes(out, monkeypatch, available=False)
    before = os.readlink(out)
    write_tree(out, {"a.json": b"second", "d/b.json": BIG})
    root = out.resolve()
    files = {str(root / rel) for rel in ("a.json", "d/b.json", "d/b.json.gz", ".manifest.json")}
    assert files <= {path for path, link in synced if link == before}  # each file, before the swap
    assert {str(root), str(root / "d")} <= {path for path, _ in synced}
    assert (str(tmp_path), os.readlink(out)) in synced  # the folder of the link, after it


def test_on_linux_one_syncfs_flushes_the_generation_before_the_swap(tmp_path, monkeypatch):
    from statusgen.render.tree import _syncfs

    assert _syncfs(tmp_path)  # this system has it: the build below takes that way
    out = tmp_path / "site"
    write_tree(out, {"a.json": b"first"})
    synced = _record_flushes(out, monkeypatch, available=True)
    before = os.readlink(out)
    write_tree(out, {"a.json": b"second", "d/b.json": BIG, "e/f/g.json": b"{}"})
    root = out.resolve()
    assert ("syncfs " + str(root), before) in synced  # the whole generation, before the swap
    assert not [path for path, _ in synced if path.startswith(str(root))]  # no file flushed one by one
    assert synced[-1] == (str(tmp_path), os.readlink(out))  # the folder of the link, after it


def test_a_kernel_whose_syncfs_hides_write_errors_flushes_file_by_file(tmp_path, monkeypatch):
    """Before Linux 5.8 syncfs(2) returned 0 whatever the write back did: each file is flushed."""

    assert tree._syncfs(tmp_path)
    monkeypatch.setattr(tree, "_kernel_version", lambda: (5, 7))
    assert not tree._syncfs(tmp_path)
    flushed: list[str] = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (flushed.append(os.readlink(f"/proc/self/fd/{fd}")), real(fd)))
    out = tmp_path / "site"
    write_tree(out, {"a.json": b"{}"})
    assert str(out.resolve() / "a.json") in {p.replace("/partial-", "/") for p in flushed}
