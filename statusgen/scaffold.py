"""``statusgen init``: the files a new site starts from.

A commented ``services.toml`` for three example services (an HTTP check, a
keyword check, one with a vendor status page) and the GitHub Actions workflow
that runs it on a schedule. Both ship inside the package (``templates/init/``)
and are written as they are, but for the version that wrote them: the
workflow installs that release (``@VERSION@`` in the template). Nothing that
exists is ever overwritten.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from statusgen import __version__
from statusgen.errors import StatusgenError

#: Where each file is written, in the folder given, and the file of ``templates/init/`` it is.
FILES = {
    "services.toml": "services.toml",
    ".github/workflows/statusgen.yml": "statusgen.yml",
}
#: Where a template names the version of statusgen that writes it.
VERSION = b"@VERSION@"


class InitError(StatusgenError):
    """A file init would write is already there."""

    exit_code = 2


def init_files() -> dict[str, bytes]:
    """The files ``init`` writes, by their path in the folder."""
    folder = files("statusgen.templates") / "init"
    return {dest: (folder / name).read_bytes().replace(VERSION, __version__.encode()) for dest, name in FILES.items()}


def init(folder: Path) -> list[Path]:
    """Write the starting files into ``folder`` (made if missing); the paths written."""
    wanted = {folder / dest: data for dest, data in init_files().items()}
    there = [str(p) for p in wanted if p.exists()]
    if there:
        raise InitError(
            f"{', '.join(there)}: already there; init never overwrites a file. "
            f"Move {'it' if len(there) == 1 else 'them'} away, or run init in another folder."
        )
    for path, data in wanted.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("xb") as out:  # "x": a file made in the meantime is not overwritten either
            out.write(data)
    return list(wanted)
