"""The container image, built and run with Debian's podman: from the host, the site it writes
answers as nginx serves it (the snapshot, the pages, the 429), its health check passes, it runs
as its own user, SIGTERM stops it cleanly, and it adds at most 100 MB to its base.

The base is Debian bookworm's own packages (``mmdebstrap --variant=minbase
--include=python3,python3-venv``, imported into podman): no other registry is reachable here.
The image is made from wheels built on the host (the wheel of this tree and the wheelhouse of
its dependencies), installed with ``--no-index``: a fresh image's Python does not trust the proxy
this machine reaches the package index through. podman runs with runc (crun fails on this
kernel's cgroups), the host's network, and bounded ulimits. Making the base takes a minute or
two: it is kept in ``test-artifacts/`` under a name made of what it was made from.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

import statusgen
from tests.conformance import free_port, worker_user
from tests.conftest import Targets
from tests.wheelhouse import ARTIFACTS, REPOSITORY, dists, wheelhouse

pytestmark = pytest.mark.skipif(
    shutil.which("podman") is None or shutil.which("mmdebstrap") is None,
    reason="podman and mmdebstrap are not installed (scripts/system-packages.sh installs them)",
)

BASE_RECIPE = ("mmdebstrap", "--variant=minbase", "--include=python3,python3-venv", "bookworm")
PODMAN = ("podman", "--runtime", "runc")
LIMITS = ("--network=host", "--ulimit", "nofile=1024:1024", "--ulimit", "nproc=4096:4096")
BUDGET = 100_000_000  # bytes the image may add to its base
UID = 10001  # the image's user


def podman(*args: str, timeout: float = 600) -> str:
    done = subprocess.run([*PODMAN, *args], capture_output=True, text=True, timeout=timeout, check=False)
    assert done.returncode == 0, f"podman {' '.join(args)}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def base_image() -> str:
    """The base image in podman's store, made from its tarball (made first, when not kept)."""
    key = hashlib.sha256(" ".join(BASE_RECIPE).encode()).hexdigest()[:12]
    name = f"localhost/statusgen-test-base:{key}"
    if subprocess.run([*PODMAN, "image", "exists", name], check=False).returncode == 0:
        return name
    tarball = ARTIFACTS / "container" / f"bookworm-python-{key}.tar"
    if not tarball.is_file():
        tarball.parent.mkdir(parents=True, exist_ok=True)
        partial = tarball.with_suffix(".partial.tar")
        subprocess.run([*BASE_RECIPE, str(partial)], capture_output=True, check=True, timeout=1800)
        partial.rename(tarball)
    podman("import", str(tarball), name)
    return name


def image_size(name: str) -> int:
    return int(podman("image", "inspect", "--format", "{{.Size}}", name))


@dataclass
class Built:
    base: str
    image: str


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Built]:
    """The image, built from a context of the package's files and a folder of wheels."""
    base = base_image()
    context = tmp_path_factory.mktemp("context")
    release = dists(context / "release")
    for name in ("Dockerfile", ".dockerignore", "pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(REPOSITORY / name, context / name)
    for name in ("statusgen", "templates"):
        shutil.copytree(REPOSITORY / name, context / name, ignore=shutil.ignore_patterns("__pycache__"))
    wheels = context / "wheels"
    wheels.mkdir()
    for wheel in [release.wheel, *wheelhouse().glob("*.whl")]:
        shutil.copy2(wheel, wheels / wheel.name)
    shutil.rmtree(context / "release")
    image = f"localhost/statusgen-test:{statusgen.__version__}"
    podman(
        "build", *LIMITS, "--format", "docker", "--build-arg", f"BASE={base}", "--build-arg", "WHEELS=wheels",
        "--tag", image, str(context),
    )  # fmt: skip
    yield Built(base, image)
    subprocess.run([*PODMAN, "rmi", "--force", image], capture_output=True, check=False)
    # and its build stage, left untagged (the base stays: making it again takes minutes)
    subprocess.run([*PODMAN, "image", "prune", "--force"], capture_output=True, check=False)


def test_the_image_adds_at_most_100_mb_to_its_base(built: Built) -> None:
    added = image_size(built.image) - image_size(built.base)
    print(f"the image adds {added / 1e6:.1f} MB to its base ({image_size(built.base) / 1e6:.1f} MB)")
    assert 0 < added <= BUDGET


@dataclass
class Running:
    name: str
    folder: Path  # holds conf/, store/ and tree/, mounted at the image's places

    def health(self) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*PODMAN, "healthcheck", "run", self.name], capture_output=True, text=True, check=False)


@pytest.fixture
def running(built: Built, tmp_path: Path, targets: Targets) -> Iterator[Running]:
    """The image run as its CMD says (``statusgen run --loop``), its configuration, store and tree
    folders of the host mounted where the image keeps them, its checks aimed at the host's loopback."""
    for path in ("/up", "/down"):
        targets.set(path, status=200 if path == "/up" else 503)
    conf, store, tree = (tmp_path / name for name in ("conf", "store", "tree"))
    for folder in (conf, store, tree):
        folder.mkdir()
    for folder in (store, tree):
        os.chown(folder, UID, UID)
    services = "".join(
        f'\n[[services]]\nslug = "{s}"\nname = "{s.title()}"\ncategory = "web"\n[[services.checks]]\n'
        f'url = "{targets.url("/" + s)}"\ntimeout = 2\n'
        for s in ("up", "down")
    )
    (conf / "services.toml").write_text(
        '[site]\ntitle = "In a container"\nbase_url = "https://status.example.org/"\ninterval = 5\n'
        "confirm_every = 0\n"  # the failing check's tries at once: the first run ends sooner
        'store = "/var/lib/statusgen/statusgen.db"\noutput = "/srv/statusgen/site"\n'
        f'[categories]\nweb = "Web"\n{services}'
    )
    name = f"statusgen-test-{tmp_path.name}"
    podman(
        "run", "--detach", "--name", name, *LIMITS,
        "--volume", f"{conf}:/etc/statusgen:ro", "--volume", f"{store}:/var/lib/statusgen",
        "--volume", f"{tree}:/srv/statusgen", built.image,
    )  # fmt: skip
    box = Running(name, tmp_path)
    try:
        deadline = time.monotonic() + 60
        while box.health().returncode != 0:
            assert time.monotonic() < deadline, podman("logs", name)
            time.sleep(1)
        yield box
    finally:
        subprocess.run([*PODMAN, "rm", "--force", name], capture_output=True, check=False)


def test_the_site_it_writes_answers_from_the_host_through_nginx(built: Built, running: Running) -> None:
    """As compose.yaml has it: the image's own `statusgen nginx-conf` writes nginx's configuration
    for the tree the loop writes (here at the same path on the host, where the host's nginx
    reads it), and nginx answers the snapshot, the pages and, past the limit, 429."""
    tree = running.folder / "tree"
    port = free_port()
    conf = podman(
        "run", "--rm", "--no-healthcheck", *LIMITS, "--volume", f"{tree}:{tree}:ro", built.image,
        "nginx-conf", "--site", f"{tree}/site", "--listen", f"127.0.0.1:{port}", "--access-log", "off",
        *(["--user", user] if (user := worker_user()) else []),
    )  # fmt: skip
    prefix = running.folder / "nginx"
    prefix.mkdir()
    (prefix / "nginx.conf").write_text(conf)
    nginx = ["nginx", "-p", str(prefix), "-c", str(prefix / "nginx.conf"), "-e", "error.log"]
    subprocess.run(nginx, check=True)
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 10
        while True:
            try:
                snapshot = httpx.get(f"{base}/api/v1/snapshot", timeout=5)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline
                time.sleep(0.1)
        assert snapshot.status_code == 200
        assert {s["slug"]: s["status"] for s in snapshot.json()["services"]}["up"] == "operational"
        for page in ("/", "/services/up/", "/incidents/"):
            answer = httpx.get(base + page, timeout=5)
            assert answer.status_code == 200 and "In a container" in answer.text, page
        with httpx.Client(timeout=5) as client:  # one connection: the burst is sent faster than it leaks
            answers = [client.get(f"{base}/api/v1/health") for _ in range(160)]
        codes = Counter(a.status_code for a in answers)
        assert codes[200] >= 110 and codes[429] >= 1, codes  # the snapshot above counted too
        assert next(a for a in answers if a.status_code == 429).headers["Retry-After"] == "1"
    finally:
        subprocess.run([*nginx, "-s", "quit"], check=False)


def test_it_runs_as_its_own_user_reports_its_health_and_stops_on_sigterm(running: Running) -> None:
    assert podman("exec", running.name, "id", "-u").strip() == str(UID)
    store = running.folder / "store" / "statusgen.db"
    assert store.stat().st_uid == UID and (running.folder / "tree" / "site").is_symlink()
    health = json.loads(podman("inspect", "--format", "{{json .State.Health}}", running.name))
    assert health["Status"] == "healthy" and "fresh until" in health["Log"][-1]["Output"]
    podman("stop", "--time", "20", running.name)
    assert podman("inspect", "--format", "{{.State.ExitCode}}", running.name).strip() == "0"
    assert (
        "loop stopped after"
        in podman("logs", running.name)
        + subprocess.run([*PODMAN, "logs", running.name], capture_output=True, text=True, check=False).stderr
    )
    assert running.health().returncode != 0  # a stopped container is not healthy
