"""Limits granted by the operator (``[[rate_limit.grants]]``), on both servers of a real tree: a
granted address (127.0.0.5, the client's source) reads 600 a minute from the interface while
another is refused after 120; the 429 body says how to ask for more; the purpose and contact of
a grant are in no file of the tree; check-config names the key of a bad grant."""

from __future__ import annotations

import gzip
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from statusgen import routes
from statusgen.config import load_config, parse_config
from statusgen.cycle import run_cycle
from statusgen.errors import ConfigError
from statusgen.policy import GRANTS_FILE
from tests.conformance import Server, fresh_address, served
from tests.conftest import Targets, write_config
from tests.pinned import build_pinned_site

GRANTED = "127.0.0.5"
PURPOSE = "Mirror of the status API for the Example Foundation"
CONTACT = "ops-mirror@foundation.example"
SERVICES = """
[categories]
cloud = "Cloud"

[[services]]
slug = "api"
name = "API"
category = "cloud"
[[services.checks]]
url = "{url}"

[[rate_limit.grants]]
addresses = ["{granted}", "10.20.0.0/16"]
per_minute = 600
purpose = "{purpose}"
contact = "{contact}"
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("grants")
    targets = Targets()
    threading.Thread(target=targets.serve_forever, daemon=True).start()
    targets.set("/ok")
    try:
        body = SERVICES.format(url=targets.url("/ok"), granted=GRANTED, purpose=PURPOSE, contact=CONTACT)
        config = load_config(write_config(tmp, body, 'contact = "status@example.org"'))
        run_cycle(config)
    finally:
        targets.shutdown()
        targets.server_close()
    return config.site.output


@pytest.fixture(scope="module", params=["serve", "nginx"])
def server(request: pytest.FixtureRequest, site: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    yield from served(request.param, site, tmp_path_factory.mktemp("grants-nginx"))


def statuses(server: Server, address: str, count: int) -> list[int]:
    with server.client(address) as client:
        return [client.get("/api/v1/health").status_code for _ in range(count)]


def test_a_granted_address_reads_600_a_minute_another_429_after_120(server: Server) -> None:
    assert statuses(server, GRANTED, 600) == [200] * 600, server.kind
    # past its grant, refused too (nginx's bucket lets one more through every 0.1 s meanwhile)
    assert 429 in statuses(server, GRANTED, 100), server.kind
    other = statuses(server, fresh_address(), 121)
    assert other == [200] * 120 + [429], server.kind


def test_the_429_says_how_to_ask_for_more(server: Server) -> None:
    with server.client() as client:
        for _ in range(120):
            client.get("/api/v1/snapshot")
        refused = client.get("/api/v1/snapshot")
    assert refused.status_code == 429 and int(refused.headers["retry-after"]) >= 1
    message = refused.json()["error"]["message"]
    assert "status@example.org" in message and "what it is for" in message and "addresses" in message


def every_text(site: Path) -> Iterator[tuple[str, bytes]]:
    root = site.resolve()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        data = path.read_bytes()
        yield path.relative_to(root).as_posix(), gzip.decompress(data) if path.name.endswith(".gz") else data


def test_a_grants_purpose_and_contact_are_in_no_file_and_its_addresses_only_for_the_servers(site: Path) -> None:
    for rel, data in every_text(site):
        assert PURPOSE.encode() not in data and CONTACT.encode() not in data, rel
        if rel != GRANTS_FILE:
            assert GRANTED.encode() not in data and b"10.20.0.0" not in data, rel
    told = json.loads((site / GRANTS_FILE).read_bytes())
    assert told == {"grants": [{"networks": ["127.0.0.5/32", "10.20.0.0/16"], "per_minute": 600}]}


def test_nobody_is_served_the_grants(server: Server) -> None:
    with server.client() as client:
        r = client.get("/.grants.json")
    assert r.status_code == 404


BAD = {
    'addresses = ["10.0.0.1/8"]': "rate_limit grant 1: addresses must be addresses or networks in CIDR form",
    "addresses = []": "rate_limit grant 1: addresses must be",
    'addresses = "10.0.0.0/8"': "rate_limit grant 1: addresses must be",
    "per_minute = 100": "rate_limit grant 1: per_minute must be",
    "per_minute = 6.5": "rate_limit grant 1: per_minute must be",
    'purpose = ""': "rate_limit grant 1: purpose must be",
    "purpose = false": "rate_limit grant 1: purpose must be",
    'colour = "red"': 'rate_limit grant 1: unknown key "colour"',
}


@pytest.mark.parametrize("line", BAD)
def test_check_config_names_the_key_of_a_bad_grant(tmp_path: Path, line: str) -> None:
    key = line.split(" ")[0]
    good = {
        "addresses": 'addresses = ["127.0.0.5"]',
        "per_minute": "per_minute = 600",
        "purpose": 'purpose = "A mirror"',
        "contact": 'contact = "ops@example.org"',
    }
    grant = "\n".join([line, *(v for k, v in good.items() if k != key)])
    text = SERVICES.split("[[rate_limit.grants]]")[0].format(url="https://api.example") + "\n[[rate_limit.grants]]\n"
    with pytest.raises(ConfigError) as raised:
        parse_config(text + grant + "\n", tmp_path / "services.toml")
    assert any(p.startswith(f"services.toml: {BAD[line]}") for p in raised.value.problems), raised.value.problems


@pytest.mark.parametrize(
    ("grants", "expected"),
    [
        ('[[rate_limit.grants]]\naddresses = ["127.0.0.5"]\nper_minute = 600\n', "purpose is required"),
        ('[[rate_limit.grants]]\naddresses = ["127.0.0.5"]\nper_minute = 600\npurpose = "x"\n', "contact is required"),
        ("[rate_limit]\nper_minute = 600\n", 'rate_limit: unknown key "per_minute"'),
        (
            '[[rate_limit.grants]]\naddresses = ["127.0.0.5"]\nper_minute = 600\npurpose = "a"\ncontact = "b"\n'
            '[[rate_limit.grants]]\naddresses = ["127.0.0.5/32"]\nper_minute = 900\npurpose = "c"\ncontact = "d"\n',
            "127.0.0.5/32 is in more than one grant",
        ),
    ],
)
def test_check_config_reports_a_grant_without_purpose_or_contact_or_granted_twice(
    tmp_path: Path, grants: str, expected: str
) -> None:
    text = SERVICES.split("[[rate_limit.grants]]")[0].format(url="https://api.example") + "\n" + grants
    with pytest.raises(ConfigError) as raised:
        parse_config(text, tmp_path / "services.toml")
    assert any(expected in p for p in raised.value.problems), raised.value.problems


def test_a_site_without_grants_has_no_grants_file(tmp_path: Path) -> None:
    text = SERVICES.split("[[rate_limit.grants]]")[0].format(url="https://api.example")
    assert parse_config(text, tmp_path / "services.toml").grants == ()
    pinned = build_pinned_site(tmp_path).resolve()  # a site of no grant
    assert not (pinned / GRANTS_FILE).exists() and (pinned / routes.error_file("429")).exists()
