"""Publish: copy the output tree to object storage or another host with rclone.

Two phases, like a build. First gather and decide (pure): the manifest of one
generation of the tree and the record of what was published before (or, the
first time, the remote's listing) become an ordered list of ``Step``s, one
rclone invocation each. Then act: run them in order and stop at the first
failure. rclone does the transfers and the retries; statusgen decides what
goes, in which invocation, and when.

Order. A reader must never get a document that points at a file not yet on
the remote, so files go up in tiers, each tier only after the one before it
has finished (references inside one tier, such as pages linking each other,
cannot be ordered):

    leaves     assets, badges, error bodies, OpenAPI, history
    services   each service's record, feed, page and incidents page (they
               point at each other, and at history)
    lists      service lists and filters, incident lists, the incidents
               feed (-> services' pages and incidents pages)
    snapshot   api/v1/snapshot.json, api/v1/health.json (-> services)
    pages      the front page and the other site pages (-> all the above)
    deletions  files the remote has and the tree no longer has, last

What a reader can meet in between is a reference to a file that was already
on the remote before this publish: a service's incidents page links the
incident lists, every page links the site's navigation pages.
Only a first publish, to an empty remote, shows dangling links while it runs.

Headers. rclone sets one set of upload headers per invocation
(``--header-upload``), so each tier is split by content type (the mapping of
``serve.content_type``); every object gets ``Cache-Control: public,
max-age=15``, as ``statusgen serve`` answers.

What changed. Each build's manifest says what every file is (size,
modification time: a changed file always gets a later one). After a
publish, statusgen keeps what it published to that remote beside the
generations (``<output>.gens/.published/``), and the next publish uploads
exactly the files whose entry differs, and deletes the files the tree no
longer has, with ``--no-check-dest``: rclone asks the remote nothing before
an upload (no HEAD, no listing). The record is written after each step, so
a publish that fails, or a cycle that was not published, is caught up by
the next one. The first publish to a remote (or after the record is lost)
compares with the remote instead, as rclone does: ``--checksum`` when the
remote keeps a hash (S3, R2, GCS, Azure, SFTP with md5sum), else size and
modification time, else every file (plain WebDAV).

Compression. By default the ``.gz`` copies are not uploaded: an object
store answers with the object as stored and never picks ``foo.json.gz`` for
a client that accepts gzip, and the CDN in front compresses by negotiation.
With ``precompressed`` (``statusgen publish --precompressed``), a file that
has a ``.gz`` copy is uploaded as those gzipped bytes under its own name,
with ``Content-Encoding: gzip``, for a target that serves objects as stored
(S3 website hosting or CloudFront without compression; every HTTP client
reading the API accepts gzip): fewer bytes to upload and to serve. Dotfiles
(``.manifest.json``) are neither uploaded nor deleted.
"""

from __future__ import annotations

import enum
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from statusgen import routes
from statusgen.errors import StatusgenError
from statusgen.policy import CACHE_CONTROL, content_type
from statusgen.progress import Progress, quiet
from statusgen.rclonecmd import LISTING_NOT_FOUND, json_line, rclone_error
from statusgen.render.tree import Entry, current_generation, digest, gens_dir, read_manifest
from statusgen.web.languages import TreeLanguagesError, tree_languages

MODTIME_NOT_SUPPORTED = 3153600000000000000  # rclone's "precision" for a remote without mtimes (100 years in ns)
COMMON_FLAGS = ("--use-json-log", "--verbose", "--stats", "0")


class PublishError(StatusgenError):
    """rclone could not list, upload to or delete from the remote."""


class PublishUsageError(PublishError):
    """The command line names no usable tree or remote."""

    exit_code = 2


class Tier(enum.IntEnum):
    """Upload order: each tier goes up only after every lower tier is on the remote."""

    LEAVES = 0
    SERVICES = 1
    LISTS = 2
    SNAPSHOT = 3
    PAGES = 4

    @property
    def label(self) -> str:
        return self.name.lower()


# Checked in this order, first match wins; anything unmatched is a leaf.
TIER_RULES: tuple[tuple[re.Pattern[str], Tier], ...] = tuple(
    (re.compile(p), t)
    for p, t in (
        (r"api/v1/(snapshot|health)\.json", Tier.SNAPSHOT),
        (
            r"([a-z]{2,3}(-[a-z]{2})?/)?services/[^/]+/.+\.html|feed/services/[^/]+\.xml"
            r"|api/v1/services/[^/_][^/]*\.json",
            Tier.SERVICES,
        ),
        (
            r"api/v1/services(\.json|/_filter/.+)|api/v1/incidents(\.json|/_active/.+)|feed/incidents\.xml"
            r"|api/v1/reports\.json",
            Tier.LISTS,
        ),
        (r".+\.html", Tier.PAGES),  # the front page, incidents, method, API
    )
)


def tier_of(rel: str) -> Tier:
    """The tier of a tree path (``api/v1/services/x.json``)."""
    for pattern, tier in TIER_RULES:
        if pattern.fullmatch(rel):
            return tier
    return Tier.LEAVES


def hidden(rel: str) -> bool:
    """A dotfile or a file in a dot-directory: never published, never deleted."""
    return any(part.startswith(".") for part in rel.split("/"))


def publishable(rel: str) -> bool:
    """Whether a tree path goes to the remote (not hidden, not a ``.gz`` copy)."""
    return not hidden(rel) and not rel.endswith(".gz")


Action = Literal["copy", "delete", "rmdirs"]


@dataclass(frozen=True)
class Step:
    """One rclone invocation: upload one tier's files of one content type, delete, or tidy folders."""

    action: Action
    files: tuple[str, ...] = ()
    tier: Tier | None = None
    content_type: str | None = None
    encoding: str | None = None  # "gzip": the files go up as their .gz copies' bytes
    language: str | None = None  # their Content-Language (``routes.language_of``)

    @property
    def label(self) -> str:
        if self.tier is None:
            return "deletions" if self.action == "delete" else "empty folders"
        encoded = f", {self.encoding}" if self.encoding else ""
        return f"{self.tier.label} ({self.content_type}{encoded})"

    def argv(
        self, rclone: str, source: Path, remote: str, files_from: Path, compare: Sequence[str], dry_run: bool = False
    ) -> list[str]:
        """The rclone command line; ``files_from`` is a file holding ``self.files``, one a line.
        ``compare``: how rclone tells a changed file, or ``BLIND`` to upload without asking."""
        tail = [*COMMON_FLAGS, *(["--dry-run"] if dry_run else [])]
        if self.action == "rmdirs":
            return [rclone, "rmdirs", remote, "--leave-root", *tail]
        listed = ["--files-from-raw", str(files_from), *tail]
        if self.action == "delete":
            return [rclone, "delete", remote, *listed]
        return [
            rclone,
            "copy",
            str(source),
            remote,
            *compare,
            "--header-upload",
            f"Content-Type: {self.content_type}",
            "--header-upload",
            f"Cache-Control: {CACHE_CONTROL}",
            *(["--header-upload", f"Content-Encoding: {self.encoding}"] if self.encoding else []),
            *(["--header-upload", f"Content-Language: {self.language}"] if self.language else []),
            *listed,
        ]


def plan_uploads(files: Iterable[str], encoded: Collection[str] = (), languages: Sequence[str] = ("en",)) -> list[Step]:
    """The upload steps for these tree paths: by tier, then by content type and language, those
    in ``encoded`` (uploaded as their gzipped bytes) apart. ``languages``: the tree's, its first first."""
    groups: dict[tuple[Tier, str, str, str], list[str]] = {}
    for rel in sorted(f for f in files if publishable(f)):
        key = (tier_of(rel), content_type(rel), "gzip" if rel in encoded else "", routes.language_of(rel, languages))
        groups.setdefault(key, []).append(rel)
    return [
        Step("copy", tuple(names), tier, ctype, encoding or None, language)
        for (tier, ctype, encoding, language), names in sorted(groups.items())
    ]


def plan_deletions(files: Iterable[str], remote_files: Iterable[str]) -> list[Step]:
    """Delete what the remote has and the tree no longer publishes, then the folders left empty."""
    keep = {f for f in files if publishable(f)}
    gone = sorted(r for r in remote_files if not hidden(r) and r not in keep)
    return [Step("delete", tuple(gone)), Step("rmdirs")] if gone else []


def plan_publish(
    files: Iterable[str],
    remote_files: Iterable[str],
    encoded: Collection[str] = (),
    languages: Sequence[str] = ("en",),
) -> list[Step]:
    """Tree paths and the remote's listing -> the ordered steps of a publish; deletions last
    (``encoded``: the files uploaded as their gzipped bytes)."""
    files = list(files)
    return plan_uploads(files, encoded, languages) + plan_deletions(files, remote_files)


Fingerprint = tuple[int, int, bool]  # a published file's size, modification time and .gz copy

#: Upload without asking the remote anything first (the published record says what changed): no
#: listing, no HEAD before or after each upload, no check that the bucket exists.
BLIND = ("--no-check-dest", "--no-traverse", "--s3-no-check-bucket", "--s3-no-head")


def plan_changes(
    manifest: Mapping[str, Entry],
    published: Mapping[str, Fingerprint],
    precompressed: bool,
    languages: Sequence[str] = ("en",),
) -> list[Step]:
    """The steps that bring a remote holding ``published`` to the generation of ``manifest``:
    upload what is new or changed, then delete what the tree no longer has."""
    changed = [rel for rel, e in manifest.items() if publishable(rel) and published.get(rel) != fingerprint(e)]
    encoded = {rel for rel in changed if precompressed and manifest[rel].gz}
    gone = sorted(rel for rel in published if rel not in manifest)
    steps = plan_uploads(changed, encoded, languages)
    return steps + ([Step("delete", tuple(gone)), Step("rmdirs")] if gone else [])


def fingerprint(entry: Entry) -> Fingerprint:
    """What tells a file's version: the tree gives a changed file a later modification time."""
    return (entry.size, entry.mtime, entry.gz)


class PublishedRecord:
    """What a remote holds of the tree: the fingerprints of the files the publishes to it uploaded,
    kept in ``<output>.gens/.published/`` under a name made from the remote and the way files go up."""

    def __init__(self, site: Path, remote: str, precompressed: bool):
        name = digest(f"{remote}\0{precompressed}".encode())
        self.path = gens_dir(site) / ".published" / f"{name}.json"
        self.remote = remote
        self.files: dict[str, Fingerprint] | None = self._read()

    def _read(self) -> dict[str, Fingerprint] | None:
        try:
            doc = json.loads(self.path.read_text(encoding="utf-8"))
            if doc.get("remote") != self.remote:
                return None
            return {rel: (int(size), int(mtime), bool(gz)) for rel, (size, mtime, gz) in doc["files"].items()}
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None  # none yet, or unreadable: the next publish compares with the remote

    def update(self, done: Step, manifest: Mapping[str, Entry]) -> None:
        """Record what a step did, at once: a publish that fails later keeps it."""
        files = dict(self.files or {})
        for rel in done.files:
            if done.action == "copy":
                files[rel] = fingerprint(manifest[rel])
            elif done.action == "delete":
                files.pop(rel, None)
        self.files = files
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"remote": self.remote, "files": files}), encoding="utf-8")
        os.replace(tmp, self.path)


def comparison_flags(hashes: Sequence[str], precision_ns: int) -> tuple[str, ...]:
    """How rclone tells a changed file, from the remote's features (see the module docstring)."""
    if hashes:
        return ("--checksum",)
    if precision_ns < MODTIME_NOT_SUPPORTED:
        return ()
    return ("--ignore-times",)


def tree_files(root: Path) -> list[str]:
    """The publishable files of a generation directory, as sorted tree paths."""
    found = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        base = Path(folder).relative_to(root)
        found += [(base / n).as_posix() for n in names if publishable((base / n).as_posix())]
    return sorted(found)


# -- running rclone ------------------------------------------------------------


@dataclass(frozen=True)
class StepResult:
    """What one step changed on the remote (or would have, in a dry run)."""

    step: Step
    changed: tuple[str, ...]


@dataclass
class PublishReport:
    """What a publish did (or would do): the steps in the order they ran, each with what it changed."""

    remote: str
    source: Path
    compare: tuple[str, ...]
    dry_run: bool
    results: list[StepResult] = field(default_factory=list)

    def changed(self, action: Action) -> list[str]:
        """Every file uploaded (``copy``) or deleted (``delete``), in the order rclone reported them."""
        return [f for r in self.results if r.step.action == action for f in r.changed]

    def lines(self) -> list[str]:
        """A line per step that changed something, then the summary."""
        verb = "would publish" if self.dry_run else "published"
        total = sum(len(r.step.files) for r in self.results if r.step.action == "copy")
        up, gone = self.changed("copy"), self.changed("delete")
        compare = " ".join(self.compare) or "size and modification time"
        summary = (
            f"{verb} {self.source} to {self.remote}: {len(up)} of {total} files uploaded, "
            f"{len(gone)} deleted (compared by {compare})"
        )
        return [f"  {r.step.label}: {len(r.changed)} of {len(r.step.files)}" for r in self.results if r.changed] + [
            summary
        ]


def changed_objects(stderr: str, action: Action) -> list[str]:
    """The objects rclone's JSON log says it copied or deleted (or skipped doing so in a dry run)."""
    done = "Copied" if action == "copy" else "Deleted"
    found = []
    for line in stderr.splitlines():
        entry = json_line(line)
        msg, obj = str(entry.get("msg", "")), entry.get("object")
        if isinstance(obj, str) and (msg.startswith(done) or entry.get("skipped") == action):
            found.append(obj)
    return found


class Rclone:
    """Runs rclone for one remote; every failure becomes a PublishError naming the remote."""

    def __init__(self, binary: str, remote: str):
        self.binary = binary
        self.remote = remote

    def run(self, argv: list[str], what: str, ok: Sequence[int] = (0,)) -> subprocess.CompletedProcess[str]:
        try:
            done = subprocess.run([self.binary, *argv], capture_output=True, text=True, check=False)
        except OSError as exc:
            raise PublishError(
                f"cannot run rclone ({self.binary}: {exc.strerror or exc}); install it "
                f"(https://rclone.org/install/) or pass --rclone PATH"
            ) from None
        if done.returncode not in ok:
            raise PublishError(
                f"publish to {self.remote} failed: rclone {what}: {rclone_error(done.stderr, done.returncode)}"
            )
        return done

    def compare_flags(self) -> tuple[str, ...]:
        """The remote's hashes and mtime precision, from ``rclone backend features``."""
        out = self.run(["backend", "features", self.remote], "backend features").stdout
        features = json_line(out)
        hashes = features.get("Hashes")
        precision = features.get("Precision")
        return comparison_flags(
            hashes if isinstance(hashes, list) else [],
            precision if isinstance(precision, int) else MODTIME_NOT_SUPPORTED,
        )

    def listing(self) -> list[str]:
        """Every file under the remote path; none when the path does not exist yet."""
        done = self.run(
            ["lsf", "--recursive", "--files-only", "--fast-list", self.remote], "lsf", ok=(0, LISTING_NOT_FOUND)
        )
        return [] if done.returncode == LISTING_NOT_FOUND else [n for n in done.stdout.splitlines() if n]

    def step(self, step: Step, source: Path, compare: Sequence[str], workdir: Path, dry_run: bool) -> StepResult:
        """Run one step, its file list written into ``workdir`` (and, for files that go up as
        their gzipped bytes, a folder of links to their .gz copies under their own names)."""
        files_from = workdir / "files-from.txt"
        files_from.write_text("".join(f + "\n" for f in step.files), encoding="utf-8")
        if step.encoding:
            source = stage_encoded(source, step.files, workdir / "encoded")
        argv = step.argv(self.binary, source, self.remote, files_from, compare, dry_run)[1:]
        done = self.run(argv, step.action if step.tier is None else f"{step.action} of the {step.label}")
        return StepResult(step, tuple(changed_objects(done.stderr, step.action)))


def check_remote(remote: str) -> None:
    """An rclone remote is ``NAME:PATH`` or ``:BACKEND:PATH``; a bare word would be a local folder."""
    if ":" not in remote or remote.startswith("/"):
        raise PublishUsageError(
            f"--remote {remote!r}: expected an rclone remote as REMOTE:PATH "
            f"(e.g. s3:my-bucket/status), configured in rclone's config or "
            f"RCLONE_CONFIG_* variables"
        )


def source_generation(site: Path) -> Path:
    """The generation the site link points at now: the whole publish reads that one, even if a run swaps."""
    gen = current_generation(site)
    if gen is None:
        raise PublishUsageError(
            f"{site}: no output tree here; run `statusgen run` or `statusgen build` first, or pass --site"
        )
    return gen


def stage_encoded(source: Path, files: Iterable[str], folder: Path) -> Path:
    """A folder where each of ``files`` is its .gz copy in ``source`` (linked, not copied, where the
    file system allows)."""
    shutil.rmtree(folder, ignore_errors=True)
    for rel in files:
        target = folder / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(source / f"{rel}.gz", target)
        except OSError:
            shutil.copyfile(source / f"{rel}.gz", target)
    return folder


def publish_tree(
    site: Path,
    remote: str,
    rclone: str = "rclone",
    dry_run: bool = False,
    precompressed: bool = False,
    progress: Progress = quiet,
) -> PublishReport:
    """Copy the tree at ``site`` to ``remote``: what changed since the last publish to it (all
    that differs from the remote, the first time), leaves first, deletions last; ``progress`` is
    told the files of each step once it has run."""
    check_remote(remote)
    source = source_generation(site)
    runner = Rclone(rclone, remote)
    manifest = read_manifest(source)
    record = PublishedRecord(site, remote, precompressed)
    try:
        languages = tree_languages(source)
    except TreeLanguagesError as exc:
        raise PublishError(f"{exc}: build the site before publishing it") from None
    if record.files is None:
        compare = runner.compare_flags()
        encoded = {rel for rel, e in manifest.items() if precompressed and e.gz}
        steps = plan_publish(tree_files(source), runner.listing(), encoded, languages)
    else:
        compare, steps = BLIND, plan_changes(manifest, record.files, precompressed, languages)
    report = PublishReport(remote, source, compare, dry_run)
    record.path.parent.mkdir(parents=True, exist_ok=True)
    files = sum(len(step.files) for step in steps)
    with (
        tempfile.TemporaryDirectory(prefix="work-", dir=record.path.parent) as work,
        progress(f"publishing {files} files to {remote}", files) as advance,
    ):
        for step in steps:
            report.results.append(runner.step(step, source, compare, Path(work), dry_run))
            if not dry_run:
                record.update(step, manifest)
            advance(len(step.files))
    return report
