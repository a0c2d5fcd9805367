"""The OpenAPI documents of a built tree, as openapi-spec-validator reads them, and as complete as
the tree: every public file an address serves is described by a path of /api/v1/openapi.json
(or of /api/v2/openapi.json), with its media type; slugs are strings of a pattern, never an enum
of today's services; the servers are the site's address and the host the document was read from."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson
import pytest
from jsonschema import Draft202012Validator
from openapi_spec_validator import validate

from statusgen import routes
from statusgen.model import SLUG
from statusgen.policy import content_type
from tests.pinned import build_pinned_site

#: Files of the tree that no path of the documents names, and why: the pages for people (but the
#: embeddable status), their files, the error bodies (sent as errors), and the files a query
#: parameter of a documented path leads to.
NOT_ADDRESSES = re.compile(
    r"(^|/)\.|\.gz$|^_errors/|^static/|^favicon\.ico$|^api/v[12]/openapi\.json$"
    r"|^api/v1/services/_filter/|^api/v1/services/[^/]+/history/|^api/v1/incidents/_"
)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_pinned_site(tmp_path_factory.mktemp("openapi")).resolve()


def document(site: Path, version: str) -> dict[str, Any]:
    return orjson.loads((site / f"api/{version}/openapi.json").read_bytes())


def address(rel: str) -> str:
    """The URL of a file of the tree: a JSON document of the API without its suffix, a folder's
    index as the folder."""
    if rel.startswith(f"{routes.API}/") and rel.endswith(".json"):
        return "/" + rel.removesuffix(".json")
    return "/" + rel.removesuffix("index.html")


def template(path: str) -> re.Pattern[str]:
    """A path of a document as a pattern of the URLs it names (a parameter is one segment)."""
    return re.compile("^" + re.sub(r"\\\{[a-z]+\\\}", "[^/]+", re.escape(path)) + "$")


def test_both_documents_are_valid_openapi_and_describe_every_public_file(site: Path) -> None:
    """openapi-spec-validator reads both; every file an address serves is a path of one of them,
    with the media type it is served with."""
    for version in ("v1", "v2"):
        validate(document(site, version))  # raises on the first problem
    languages = orjson.loads((site / "api/v1/health.json").read_bytes())["languages"]
    first = {f"{tag.lower()}/" for tag in languages[1:]}
    paths = {**document(site, "v1")["paths"], **document(site, "v2")["paths"]}
    found: dict[str, str] = {}
    for file in sorted(p for p in site.rglob("*") if p.is_file()):
        rel = file.relative_to(site).as_posix()
        page = rel.endswith(".html") and not routes.is_embed(rel, languages)
        if NOT_ADDRESSES.search(rel) or page or any(rel.startswith(f) for f in first):
            continue
        matched = [p for p in paths if template(p).match(address(rel))]
        assert len(matched) == 1, (rel, matched)
        media = paths[matched[0]]["get"]["responses"]["200"]["content"]
        assert [m.split(";")[0] for m in media] == [content_type(rel).split(";")[0]], rel
        found[matched[0]] = rel
    described = {"/api/v1/reports", "/api/v1/reports/{month}", "/reports/{month}.csv", "/badges/{slug}.json"}
    described |= {"/badges/{slug}.svg", "/embed/", "/embed/{slug}/", "/metrics", "/feed/services/{slug}.ics"}
    assert described <= set(found), described - set(found)


def test_the_documented_json_is_the_tree_s(site: Path) -> None:
    """Each JSON answer of a path with a parameter, for an example of it, follows its schema."""
    doc = document(site, "v1")
    month = orjson.loads((site / routes.REPORTS).read_bytes())["months"][0]["month"]
    checked = []
    for path, item in doc["paths"].items():
        answer = item["get"]["responses"]["200"]["content"]
        if "application/json" not in answer or "{" not in path:
            continue
        url = path.replace("{month}", month).replace("{slug}", "service-0003")
        resolved = routes.resolve(url, {}, lambda rel: (site / rel).is_file())
        assert resolved.status == 200, url
        schema = {**answer["application/json"]["schema"], "components": doc["components"]}
        Draft202012Validator(schema).validate(orjson.loads((site / resolved.file).read_bytes()))
        checked.append(path)
    assert {"/api/v1/reports/{month}", "/badges/{slug}.json", "/api/v1/services/{slug}"} <= set(checked)


def test_slugs_are_a_pattern_with_examples_not_an_enum(site: Path) -> None:
    doc = document(site, "v1")
    slugs = [
        p["schema"]
        for item in doc["paths"].values()
        for p in item["get"]["parameters"]
        if p["name"] in ("slug", "service")
    ]
    assert len(slugs) == 8  # the slug of the seven paths of one service, and incidents?service=
    for schema in slugs:
        assert "enum" not in schema and schema["pattern"] == f"^{SLUG}$"
        assert schema["examples"] == ["service-0000", "service-0001", "service-0002"]


def test_the_servers_are_the_site_and_the_host_the_document_came_from(site: Path) -> None:
    for version in ("v1", "v2"):
        servers = [s["url"] for s in document(site, version)["servers"]]
        assert servers == ["https://status.example.org", "/"], version
