"""``statusgen health``: the container's health check, read from the site's own health document."""

from __future__ import annotations

from pathlib import Path

import orjson
from click.testing import CliRunner

from statusgen.cli import main


def health(config: Path) -> tuple[int, str]:
    done = CliRunner().invoke(main, ["health", "--config", str(config)])
    return done.exit_code, done.output


def test_fresh_while_a_run_finished_within_three_intervals_stale_after(tmp_path: Path) -> None:
    config, store = tmp_path / "simulated.toml", tmp_path / "simulated.db"
    sim = ["simulate", "--services", "1", "--days", "1", "--db", str(store), "--config-out", str(config)]
    assert CliRunner().invoke(main, [*sim, "--output", str(tmp_path / "site")]).exit_code == 0
    code, out = health(config)
    assert code == 1 and "no health document to read" in out  # nothing built yet

    assert CliRunner().invoke(main, ["build", "--config", str(config)]).exit_code == 0
    code, out = health(config)
    assert code == 0 and "fresh until" in out, out

    document = tmp_path / "site" / "api" / "v1" / "health.json"
    doc = orjson.loads(document.read_bytes())
    document.unlink()  # the tree's file is a generation's: write a copy in its place
    document.write_bytes(orjson.dumps({**doc, "stale_after": "2020-01-01T00:00:00Z"}))
    code, out = health(config)
    assert code == 1 and "the data is stale (fresh until 2020-01-01T00:00:00Z)" in out
    document.write_bytes(orjson.dumps({**doc, "collection": {**doc["collection"], "stale": True}}))
    assert health(config)[0] == 1
