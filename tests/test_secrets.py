"""No secret is published: credentials in check and vendor URLs, and values of the environment
variables a configuration names, reach the targets and nothing else (tree, store, logs)."""

from __future__ import annotations

import base64
import gzip
import os
import subprocess
import sys
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from statusgen.config.secrets import MissingSecret, expand, public_url
from tests.conftest import loopback_server

ROOT = Path(__file__).resolve().parents[1]
SUMMARY = (ROOT / "tests/fixtures/vendors/statuspage/githubstatus_summary_all_operational_2026.json").read_bytes()
SECRETS = {
    "STATUSGEN_TEST_TOKEN": "tok-5d0c1e2a",
    "STATUSGEN_TEST_QUERY": "query-81f3a9",
    "STATUSGEN_TEST_VENDOR": "vendor-4b77e0",
}
LITERAL = ("hunter2-pass", "api-key-9c41")  # written into the URLs themselves


class Recording(BaseHTTPRequestHandler):
    """Answers every path (a vendor summary for /summary.json) and remembers what it was sent."""

    protocol_version = "HTTP/1.1"
    seen: list[tuple[str, dict[str, str]]] = []

    def do_GET(self) -> None:
        self.seen.append((self.path, dict(self.headers)))
        body = SUMMARY if self.path.startswith("/summary.json") else b"OK all good"
        status = 404 if self.path.startswith("/missing") else 200
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def recording():
    Recording.seen = []
    with loopback_server(Recording) as base:
        yield base


def configuration(base: str) -> str:
    host = base.removeprefix("http://")
    return f"""
[site]
title = "Secrets"
base_url = "https://status.example.org"
confirm_every = 0  # the failing check's tries within a run carry its secrets too, at once

[categories]
api = "APIs"

[[services]]
slug = "private-api"
name = "Private API"
category = "api"
[[services.checks]]
url = "http://monitor:{LITERAL[0]}@{host}/health?api_key={LITERAL[1]}"
[[services.checks]]
url = "{base}/missing?key=${{STATUSGEN_TEST_QUERY}}"
headers = {{ Authorization = "Bearer ${{STATUSGEN_TEST_TOKEN}}" }}
[services.vendor]
url = "{base}/summary.json?token=${{STATUSGEN_TEST_VENDOR}}"
headers = {{ X-Api-Key = "${{STATUSGEN_TEST_VENDOR}}" }}
"""


def every_byte(folder: Path) -> bytes:
    """Every file below ``folder``, .gz copies decompressed too."""
    out = []
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            data = path.read_bytes()
            out.append(gzip.decompress(data) if path.suffix == ".gz" else data)
    return b"\n".join(out)


def test_secrets_reach_the_targets_and_nothing_else(tmp_path, recording):
    config = tmp_path / "services.toml"
    config.write_text(configuration(recording), encoding="utf-8")
    env = os.environ | SECRETS
    logs = b""
    for _ in range(2):  # the second run reads back what the first one stored
        done = subprocess.run(
            [str(Path(sys.executable).parent / "statusgen"), "--log-format", "json", "run", "--config", str(config)],
            env=env,
            capture_output=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr.decode()
        logs += done.stdout + done.stderr

    sent = dict(Recording.seen)
    health = next(h for p, h in sent.items() if p.startswith("/health"))
    assert health["Authorization"] == "Basic " + base64.b64encode(f"monitor:{LITERAL[0]}".encode()).decode()
    assert f"api_key={LITERAL[1]}" in next(p for p in sent if p.startswith("/health"))
    missing = next(h for p, h in sent.items() if p.startswith("/missing"))
    assert missing["Authorization"] == f"Bearer {SECRETS['STATUSGEN_TEST_TOKEN']}"
    assert f"key={SECRETS['STATUSGEN_TEST_QUERY']}" in next(p for p in sent if p.startswith("/missing"))
    vendor = next(h for p, h in sent.items() if p.startswith("/summary.json"))
    assert vendor["X-Api-Key"] == SECRETS["STATUSGEN_TEST_VENDOR"]

    published = every_byte(tmp_path / "site")
    stored = every_byte(tmp_path / "data")
    assert b"/api/v1/services/private-api" in published and stored and logs
    for secret in (*SECRETS.values(), *LITERAL):
        for where, text in (("tree", published), ("store", stored), ("logs", logs)):
            assert secret.encode() not in text, f"{secret} is in the {where}"
    assert f"{recording}/health".encode() in published  # the public form is shown


def test_public_url_keeps_scheme_host_port_and_path():
    assert (
        public_url("https://u:p@api.example.com:8443/v1/health?key=s#frag") == "https://api.example.com:8443/v1/health"
    )
    assert public_url("http://[::1]:8080/x?y") == "http://[::1]:8080/x"
    assert public_url("samples/summary.json?x=1") == "samples/summary.json"


def test_expand_reads_the_environment_at_the_time_of_the_request():
    assert expand("Bearer ${A}${B}", {"A": "1", "B": "2"}) == "Bearer 12"
    with pytest.raises(MissingSecret, match="STATUSGEN_NOT_SET is not set"):
        expand("${STATUSGEN_NOT_SET}", {})
