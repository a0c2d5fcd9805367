"""Docs that cannot rot: every command, endpoint and status is documented."""

from __future__ import annotations

from pathlib import Path

from statusgen.cli import main
from statusgen.model import STATUSES

ROOT = Path(__file__).resolve().parents[1]


def test_every_command_is_in_the_readme():
    readme = (ROOT / "README.md").read_text()
    for name in main.commands:
        assert f"statusgen {name}" in readme, f"command {name} is not documented in README.md"


def test_every_endpoint_and_status_is_in_the_api_doc():
    from statusgen.config import parse_config
    from statusgen.render.api.openapi import openapi_document

    cfg = parse_config(
        '[categories]\nc = "C"\n[[services]]\nslug = "a"\nname = "A"\ncategory = "c"\n'
        '[[services.checks]]\nurl = "https://a.example"\n',
        ROOT / "x.toml",
    )
    doc = (ROOT / "docs" / "api.md").read_text()
    for path in openapi_document(cfg)["paths"]:
        assert f"`{path}" in doc, f"{path} is missing from docs/api.md"
    for status in STATUSES:
        assert f"`{status}`" in doc


def test_readme_opens_with_the_two_commands():
    head = "\n".join((ROOT / "README.md").read_text().splitlines()[:20])
    assert "make run" in head and "make test" in head


def field_names(schema: object) -> set[str]:
    """Every property name a schema declares, at any depth (additionalProperties' keys are data)."""
    found: set[str] = set()
    if isinstance(schema, dict):
        found |= set(schema.get("properties", {}))
        for value in schema.values():
            found |= field_names(value)
    elif isinstance(schema, list):
        for value in schema:
            found |= field_names(value)
    return found


def test_every_field_of_the_json_is_named_in_the_api_doc():
    from statusgen.render.api.shapes import SCHEMAS

    doc = (ROOT / "docs" / "api.md").read_text()
    missing = sorted(name for name in field_names(list(SCHEMAS.values())) if f"`{name}`" not in doc)
    assert missing == [], f"fields of the JSON not named in docs/api.md: {missing}"
