"""A vendor source that cannot be read is said (issue 54): check-config refuses a file that is not
there, a run logs a source that fails once per change, and the record never calls a view that
was never read too old."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from statusgen.cli import main
from statusgen.config import load_config
from statusgen.cycle import run_cycle
from tests.conftest import Clock, write_config

SAMPLE = Path(__file__).parent / "fixtures" / "vendors" / "statuspage" / "sendgrid_summary_active_incident_groups.json"


class Page(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), PageHandler)
        self.failing = True


class PageHandler(BaseHTTPRequestHandler):
    server: Page

    def do_GET(self) -> None:
        body = b"down" if self.server.failing else SAMPLE.read_bytes()
        self.send_response(500 if self.server.failing else 200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def page() -> Iterator[Page]:
    server = Page()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()


def vendor_only(tmp_path: Path, url: str) -> Path:
    body = (
        '[categories]\nc = "C"\n[[services]]\nslug = "relay"\nname = "Relay"\ncategory = "c"\n'
        f'[services.vendor]\nurl = "{url}"\nformat = "statuspage"\n'
    )
    return write_config(tmp_path, body)


def test_check_config_refuses_a_vendor_file_that_is_not_there(tmp_path: Path) -> None:
    path = vendor_only(tmp_path, "missing.json")
    done = CliRunner().invoke(main, ["check-config", str(path)])
    assert done.exit_code == 2, done.output
    assert 'service "relay", vendor: url ' in done.output and str(tmp_path / "missing.json") in done.output
    assert "does not exist" in done.output
    (tmp_path / "missing.json").write_bytes(SAMPLE.read_bytes())
    assert CliRunner().invoke(main, ["check-config", str(path)]).exit_code == 0  # relative to the file


def test_a_source_that_fails_is_logged_once_and_never_called_too_old(
    tmp_path: Path, page: Page, caplog: pytest.LogCaptureFixture
) -> None:
    config = load_config(vendor_only(tmp_path, f"http://127.0.0.1:{page.server_address[1]}/summary.json"))
    clock = Clock()
    with caplog.at_level(logging.INFO, logger="statusgen.vendors"):
        for _ in range(3):
            clock.tick()
            run_cycle(config, clock, spread_s=0)
        page.failing = False
        clock.tick()
        run_cycle(config, clock, spread_s=0)
    said = [r.getMessage() for r in caplog.records if r.name == "statusgen.vendors"]
    assert said == [
        f"vendor source of 'relay' (http://127.0.0.1:{page.server_address[1]}/summary.json) could not be read: "
        "answered with an unexpected HTTP status",
        f"vendor source of 'relay' (http://127.0.0.1:{page.server_address[1]}/summary.json) read again",
    ]


def test_a_vendor_only_service_never_read_says_so(tmp_path: Path, page: Page) -> None:
    config = load_config(vendor_only(tmp_path, f"http://127.0.0.1:{page.server_address[1]}/summary.json"))
    run_cycle(config, Clock(), spread_s=0)
    reason = orjson.loads((config.site.output / "api/v1/services/relay.json").read_bytes())["service"]["reason"]
    assert reason == (
        "No checks of our own: the vendor's page alone tells. The vendor status page has never been read: "
        "answered with an unexpected HTTP status."
    )
    assert "too old" not in reason and "answers as expected" not in reason
