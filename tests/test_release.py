"""What a release hands an operator, read as they read it: the changelog, the compose file beside
the image, the CronJob of docs/install.md, the README's first lines, and no address in any of
them that does not exist."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

import statusgen
from statusgen.cli import main

ROOT = Path(__file__).resolve().parents[1]
SECTIONS = ("Added", "Changed", "Deprecated", "Removed", "Fixed", "Security")


def real_command(line: str) -> None:
    """``statusgen ...`` with options its command has (parsed as the command line would be)."""
    words = shlex.split(line)
    assert words[0] == "statusgen", line
    main.commands[words[1]].make_context(words[1], words[2:])


def test_the_changelog_keeps_a_changelog_from_0_1_0_to_this_version() -> None:
    text = (ROOT / "CHANGELOG.md").read_text()
    assert text.startswith("# Changelog\n") and "https://keepachangelog.com/en/1.1.0/" in text
    releases = re.findall(r"^## \[([^\]]+)\](?: - (\d{4}-\d{2}-\d{2}))?$", text, re.MULTILINE)
    assert releases[0] == ("Unreleased", "")  # the place for what comes next
    versions = [v for v, _ in releases[1:]]
    assert versions[0] == statusgen.__version__ and versions[-1] == "0.1.0"
    assert all(date for _, date in releases[1:]) and [d for _, d in releases[1:]] == sorted(
        (d for _, d in releases[1:]), reverse=True
    )
    for heading in re.findall(r"^### (.+)$", text, re.MULTILINE):
        assert heading in SECTIONS, heading
    this = text.split(f"## [{statusgen.__version__}]")[1].split("\n## [")[0]
    assert "statusgen-batch/2" in this and "inbox_key" in this  # what operators must know first


def compose() -> dict[str, Any]:
    return dict(yaml.safe_load((ROOT / "compose.yaml").read_text()))


def test_compose_is_valid_and_mounts_what_the_image_expects() -> None:
    from check_jsonschema import main as checker

    done = CliRunner().invoke(checker, ["--builtin-schema", "vendor.compose-spec", str(ROOT / "compose.yaml")])
    assert done.exit_code == 0, done.output
    dockerfile = (ROOT / "Dockerfile").read_text()
    [volumes] = re.findall(r"^VOLUME (\[.*\])$", dockerfile, re.MULTILINE)
    assert yaml.safe_load(volumes) == ["/var/lib/statusgen", "/srv/statusgen"]
    assert "STATUSGEN_CONFIG=/etc/statusgen/services.toml" in dockerfile

    services = compose()["services"]
    assert services["statusgen"]["volumes"] == [
        "./services.toml:/etc/statusgen/services.toml:ro",
        "store:/var/lib/statusgen",
        "tree:/srv/statusgen",
    ]
    assert services["nginx"]["volumes"] == ["tree:/srv/statusgen:ro"]  # the tree alone, read-only
    [written] = services["nginx-conf"]["command"]
    line, conf = written.split(" > ")
    real_command(line)
    assert "--site /srv/statusgen/site" in line and f"-c {conf}" in " ".join(services["nginx"]["command"])
    assert services["nginx-conf"]["depends_on"]["statusgen"]["condition"] == "service_healthy"
    assert services["nginx"]["depends_on"]["nginx-conf"]["condition"] == "service_completed_successfully"
    assert re.search(r'^HEALTHCHECK .* CMD \["statusgen", "health"\]$', dockerfile, re.MULTILINE)


def cronjob() -> dict[str, Any]:
    text = (ROOT / "docs" / "install.md").read_text()
    [block] = [b for b in re.findall(r"```yaml\n(.*?)```", text, re.DOTALL) if "kind: CronJob" in b]
    return dict(yaml.safe_load(block))


def test_the_cronjob_of_the_install_doc_runs_real_commands_on_the_image_s_places() -> None:
    job = cronjob()
    assert (job["apiVersion"], job["kind"]) == ("batch/v1", "CronJob")
    spec = job["spec"]
    assert spec["schedule"] == "* * * * *" and spec["concurrencyPolicy"] == "Forbid"
    pod = spec["jobTemplate"]["spec"]["template"]["spec"]
    assert pod["restartPolicy"] == "Never" and pod["securityContext"]["runAsUser"] == 10001
    [container] = pod["containers"]
    assert container["image"].endswith(f"/statusgen:{statusgen.__version__}")
    [script] = container["args"]
    for line in script.split(" && "):
        real_command(line.replace('"status:$BUCKET/site"', "status:bucket/site"))
    mounts = {m["mountPath"] for m in container["volumeMounts"]}
    assert {"/etc/statusgen", "/var/lib/statusgen", "/srv/statusgen"} <= mounts
    tools = {m["mountPath"] for c in pod["initContainers"] for m in c["volumeMounts"]}
    assert "--rclone /tools/rclone" in script and tools == {"/tools"}


def test_the_readme_opens_with_the_demo_the_tests_and_the_container() -> None:
    head = "\n".join((ROOT / "README.md").read_text().splitlines()[:25])
    assert "make run" in head and "make test" in head and "docker compose up -d" in head
    assert "docs/install.md" in head


#: The files a release hands out that name addresses: each must be the project's own (its page on
#: the package index), an example domain, or a real third party's.
HANDED_OUT = (
    "pyproject.toml",
    "CHANGELOG.md",
    "README.md",
    "Dockerfile",
    "compose.yaml",
    "docs/install.md",
    "docs/upgrading.md",
    "docs/operations.md",
    ".github/workflows/ci.yml",
    ".github/workflows/release.yml",
    "templates/init/statusgen.yml",
    "templates/init/services.toml",
)


def test_no_file_handed_out_names_an_address_that_does_not_exist() -> None:
    for name in HANDED_OUT:
        text = (ROOT / name).read_text()
        assert "github.com/statusgen" not in text, name  # there is no such repository
        for url in re.findall(r"https?://[^\s)\"'`<>\]]+", text):
            host = url.split("/")[2].split(":")[0]
            assert "statusgen" not in host or host.endswith(("example.org", "example.com")), (name, url)
