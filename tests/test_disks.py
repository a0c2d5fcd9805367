"""Full disks, read-only folders, damaged and lost stores: real files, a real tmpfs, the real CLI.

Each failure ends the process with its documented code and one line, without a traceback, and
leaves the site served exactly as it was; once the cause is gone, the next run succeeds without
anyone cleaning up."""

from __future__ import annotations

import hashlib
import os
import random
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.test_operations import _mount, config_for, db_is_intact, site_is_complete, statusgen

PAGE = 4096


def tree_state(site: Path) -> dict[str, object]:
    """What a reader can see of the tree: where the link points, the generations, and every file
    of the served one with its bytes and modification time."""
    root = site.resolve()
    files = {
        p.relative_to(root).as_posix(): (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }
    gens = sorted(p.name for p in (site.parent / f"{site.name}.gens").iterdir())
    return {"link": os.readlink(site), "gens": gens, "files": files}


def one_line_error(res: subprocess.CompletedProcess[str], code: int, *words: str) -> str:
    """The command failed with ``code`` and one line, naming each of ``words``."""
    assert res.returncode == code, res.stderr
    assert "Traceback" not in res.stderr
    errors = [ln for ln in res.stderr.splitlines() if ln.startswith("statusgen: ")]
    assert len(errors) == 1 and len(res.stderr.strip().splitlines()) == 1, res.stderr
    for word in words:
        assert word in errors[0], errors[0]
    return errors[0]


def no_partial_generation(site: Path) -> None:
    gens = site.parent / f"{site.name}.gens"
    assert not [p.name for p in gens.iterdir() if p.name.startswith("partial-")]


def damage(db: Path, pages: int = 4) -> None:
    """Garbage over some pages in the middle of the file, as a failing disk leaves it."""
    count = db.stat().st_size // PAGE
    first = count // 2
    with open(db, "r+b") as f:
        f.seek(first * PAGE)
        f.write(random.Random(28).randbytes(pages * PAGE))


def sound(db: Path) -> bool:
    con = sqlite3.connect(db)
    try:
        return con.execute("PRAGMA quick_check").fetchall() == [("ok",)]
    except sqlite3.DatabaseError:
        return False
    finally:
        con.close()


def runs(db: Path) -> int:
    con = sqlite3.connect(db)
    try:
        return int(con.execute("SELECT COUNT(*) FROM runs").fetchone()[0])
    finally:
        con.close()


def umount(path: Path) -> None:
    """Unmount, lazily should something still hold a file there: a test never leaves a mount."""
    if subprocess.run(["umount", str(path)], capture_output=True).returncode:
        subprocess.run(["umount", "-l", str(path)])


@pytest.fixture
def site_run(tmp_path, targets) -> Iterator[tuple[Path, Path, Path]]:
    """A site after one good run: (configuration, store, output link)."""
    targets.set("/ok")
    cfg = config_for(tmp_path, targets)
    res = statusgen("run", "--config", str(cfg))
    assert res.returncode == 0, res.stderr
    yield cfg, tmp_path / "data" / "statusgen.db", tmp_path / "site"


def test_a_store_damaged_in_the_middle_is_never_built_from(site_run):
    cfg, db, site = site_run
    damage(db)
    assert not sound(db)  # the damage is real
    before = tree_state(site)
    for command in (["run"], ["build"], ["build", "--new-store"]):
        res = statusgen(*command, "--config", str(cfg))
        one_line_error(res, 3, str(db), "damaged", "backup", "--new-store")
        assert tree_state(site) == before
    db.rename(db.with_name("damaged.db"))  # what the message says to do, to start afresh
    res = statusgen("run", "--new-store", "--config", str(cfg))
    assert res.returncode == 0, res.stderr
    assert site_is_complete(site) > 10


def test_an_empty_store_the_site_was_built_from_is_refused_without_new_store(site_run):
    cfg, db, site = site_run
    db.write_bytes(b"")
    before = tree_state(site)
    for command in ("run", "build"):
        one_line_error(statusgen(command, "--config", str(cfg)), 3, str(db), "empty", "--new-store")
        assert tree_state(site) == before
    res = statusgen("run", "--new-store", "--config", str(cfg))
    assert res.returncode == 0, res.stderr
    assert runs(db) == 1
    assert statusgen("run", "--config", str(cfg)).returncode == 0  # the new store is the one recorded


def test_a_missing_store_the_site_was_built_from_is_refused_without_new_store(site_run):
    cfg, db, site = site_run
    for path in db.parent.glob(f"{db.name}*"):
        path.unlink()
    before = tree_state(site)
    one_line_error(statusgen("build", "--config", str(cfg)), 3, str(db), "missing", "--new-store")
    assert tree_state(site) == before and not db.exists()
    res = statusgen("build", "--new-store", "--config", str(cfg))
    assert res.returncode == 0, res.stderr
    assert site_is_complete(site) > 10


@pytest.fixture
def read_only(tmp_path) -> Iterator[object]:
    """Makes a folder or file read-only (a bind mount: the tests run as root, who ignores modes)."""
    mounted: list[Path] = []

    def make(path: Path) -> None:
        assert _mount("--bind", str(path), str(path)) and _mount("-o", "remount,bind,ro", str(path))
        mounted.append(path)

    yield make
    for path in reversed(mounted):
        umount(path)


def test_a_read_only_store_folder_is_a_store_error(site_run, read_only):
    cfg, db, site = site_run
    read_only(db.parent)
    before = tree_state(site)
    for command in ("run", "build"):
        one_line_error(statusgen(command, "--config", str(cfg)), 3, str(db.parent), "Read-only", "writable")
        assert tree_state(site) == before


def test_a_read_only_store_file_is_a_store_error(site_run, read_only):
    cfg, db, site = site_run
    read_only(db)
    before = tree_state(site)
    one_line_error(statusgen("run", "--config", str(cfg)), 3, str(db), "writable")
    assert tree_state(site) == before


# -- a full disk: the store and the output on one small tmpfs ---------------------------------------


@pytest.fixture
def small_disk(tmp_path) -> Iterator[Path]:
    disk = tmp_path / "disk"
    disk.mkdir()
    if not _mount("-t", "tmpfs", "-o", "size=4m", "tmpfs", str(disk)):
        pytest.fail("cannot mount a tmpfs: these tests run as root, as make test does")
    yield disk
    umount(disk)


def fill(disk: Path, leave: int) -> Path:
    """A file that leaves ``leave`` bytes free on ``disk``."""
    st = os.statvfs(disk)
    filler = disk / "filler"
    filler.write_bytes(b"\0" * max(0, st.f_bavail * st.f_frsize - leave))
    return filler


def test_a_build_that_fills_the_disk_leaves_nothing_and_the_next_run_recovers(tmp_path, targets, small_disk):
    targets.set("/ok")
    site, db = small_disk / "site", small_disk / "data" / "statusgen.db"
    cfg = config_for(tmp_path, targets, output=str(site), store=str(db))
    assert statusgen("run", "--config", str(cfg)).returncode == 0
    before = tree_state(site)
    filler = fill(small_disk, 400 * 1024)  # room for the store's results, not for a generation
    for _ in range(2):  # the failed build gave its space back: the next run stores its results again
        res = statusgen("run", "--config", str(cfg))
        one_line_error(res, 4, str(site), "No space left on device", "the last complete site is left in place")
        no_partial_generation(site)
        assert tree_state(site) == before
    db_is_intact(db)
    filler.unlink()
    res = statusgen("run", "--config", str(cfg))
    assert res.returncode == 0, res.stderr
    no_partial_generation(site)
    assert site_is_complete(site) > 10 and tree_state(site)["link"] != before["link"]
    assert runs(db) == 4


def test_a_store_on_a_full_disk_is_a_store_error_and_the_next_run_recovers(tmp_path, targets, small_disk):
    targets.set("/ok")
    site, db = small_disk / "site", small_disk / "data" / "statusgen.db"
    cfg = config_for(tmp_path, targets, output=str(site), store=str(db))
    assert statusgen("run", "--config", str(cfg)).returncode == 0
    before = tree_state(site)
    filler = fill(small_disk, 2 * PAGE)
    res = statusgen("run", "--config", str(cfg))
    one_line_error(res, 3, str(db.parent), "full", "free space")
    assert tree_state(site) == before
    filler.unlink()
    res = statusgen("run", "--config", str(cfg))
    assert res.returncode == 0, res.stderr
    assert site_is_complete(site) > 10
    db_is_intact(db)


def test_a_partial_generation_left_by_a_kill_goes_before_the_store_is_written(tmp_path, targets, small_disk):
    """A killed build's partial generation is what keeps the store from saving, on a shared disk: it
    goes first."""
    targets.set("/ok")
    site, db = small_disk / "site", small_disk / "data" / "statusgen.db"
    cfg = config_for(tmp_path, targets, output=str(site), store=str(db))
    assert statusgen("run", "--config", str(cfg)).returncode == 0
    partial = small_disk / "site.gens" / "partial-g1"
    partial.mkdir()
    fill(partial, 0).rename(partial / "half-written")  # what a killed build left fills the disk
    res = statusgen("run", "--config", str(cfg))
    assert res.returncode == 0, res.stderr
    assert not partial.exists() and site_is_complete(site) > 10
