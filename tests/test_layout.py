"""The package's shape: stages that import only downward, no import circle, no private name
of another library, no markup in Python strings."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "statusgen"

#: The floors, in the order data flows through them, each a list of rooms (a top-level module or
#: folder of the package): a module may import from its own floor and the floors before it,
#: never from one after it. A folder sits on one floor whole: none holds two sides.
LAYERS: list[set[str]] = [
    {
        "statusgen",
        "statusgen.errors",
        "statusgen.text",  # text cleaned where it enters, by every edge
        "statusgen.timeutil",
        "statusgen.progress",  # how long work tells how far it has come
        "statusgen.i18n",
        "statusgen.model",
        "statusgen.latency",
        "statusgen.config",
        "statusgen.routes",
        "statusgen.mailto",  # the commands of subscribing by email, as routes are the URLs
        "statusgen.policy",
        "statusgen.jsonout",
        "statusgen.neterrors",
        "statusgen.rclonecmd",
        "statusgen.batches",  # the format both sides of a location speak
        "statusgen.inbox",  # where they meet
    },
    {"statusgen.probe", "statusgen.vendors"},
    {"statusgen.decide"},
    {"statusgen.store", "statusgen.locations"},  # the builder's side of the agents
    {"statusgen.render"},
    {"statusgen.notify", "statusgen.subscribe"},  # telling people: notifiers, and subscribers by email
    {"statusgen.web"},
    {
        "statusgen.notes",
        "statusgen.cycle",
        "statusgen.loop",
        "statusgen.logs",
        "statusgen.simulate",
        "statusgen.demo",
        "statusgen.scaffold",
        "statusgen.cli",
        "statusgen.__main__",
        "statusgen.agent",  # the agent's side: it runs the probes on the loop
    },
]

#: The rooms of ``render``, in the same way: the shared modules, then each audience's room, then
#: what puts them together (``statusgen/render/__init__.py`` says why).
RENDER_LAYERS: list[set[str]] = [
    {
        "statusgen.render",
        "statusgen.render.gather",
        "statusgen.render.tree",
        "statusgen.render.keys",
        "statusgen.render.templating",
        "statusgen.render.words",
        "statusgen.render.markdown",
    },
    {"statusgen.render.api"},
    {"statusgen.render.formats"},
    {"statusgen.render.pages"},
    {"statusgen.render.build", "statusgen.render.service", "statusgen.render.reports"},
]


def modules() -> dict[str, ast.Module]:
    """Every module of the package, by dotted name, parsed."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = ast.parse(path.read_text(encoding="utf-8"), str(path))
    return out


def imported(tree: ast.Module) -> set[str]:
    """The statusgen modules a module imports, wherever in it (a name imported from a package is
    the package's own module unless it names a module)."""
    names = set(modules_cache)
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.split(".")[0] == "statusgen"}
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "statusgen":
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                out.add(sub if sub in names else node.module)
    return out


modules_cache = modules()


def room(module: str, depth: int = 2) -> str:
    """The room a module lives in: ``statusgen.render.api.shapes`` is in ``statusgen.render``
    (depth 2) and in ``statusgen.render.api`` (depth 3)."""
    return ".".join(module.split(".")[:depth])


def floor(module: str, layers: list[set[str]] = LAYERS, depth: int = 2) -> int:
    for n, members in enumerate(layers):
        if room(module, depth) in members:
            return n
    raise AssertionError(f"{room(module, depth)} is in no floor of the layers: place it")


def layer(module: str) -> int:
    return floor(module)


def test_every_module_is_in_a_stage_and_imports_none_after_its_own() -> None:
    upward = [(m, i) for m, tree in modules_cache.items() for i in imported(tree) if layer(i) > layer(m)]
    assert upward == []


def test_render_rooms_import_only_the_rooms_below_them() -> None:
    rendering = {m: tree for m, tree in modules_cache.items() if m.startswith("statusgen.render")}

    def render_floor(module: str) -> int:
        return floor(module, RENDER_LAYERS, 3)

    upward = [
        (m, i)
        for m, tree in rendering.items()
        for i in imported(tree)
        if i.startswith("statusgen.render") and render_floor(i) > render_floor(m)
    ]
    assert upward == []


def test_no_import_circle() -> None:
    graph = {m: imported(tree) - {m} for m, tree in modules_cache.items()}
    done: set[str] = set()

    def visit(module: str, path: list[str]) -> None:
        if module in path:
            raise AssertionError("import circle: " + " -> ".join([*path[path.index(module) :], module]))
        if module in done:
            return
        for other in sorted(graph.get(module, ())):
            visit(other, [*path, module])
        done.add(module)

    for module in sorted(graph):
        visit(module, [])


def test_the_checks_can_fail() -> None:
    tree = ast.parse("from statusgen.cli import main\nimport markupsafe._speedups\nfrom jinja2 import _identifier\n")
    assert layer("statusgen.render.pages.views") < layer("statusgen.cli")
    assert layer("statusgen.locations.ingest") < layer("statusgen.agent.run")  # a folder is one room
    assert floor("statusgen.render.api.openapi", RENDER_LAYERS, 3) < floor(
        "statusgen.render.formats.x", RENDER_LAYERS, 3
    )
    with pytest.raises(AssertionError, match="statusgen.nowhere is in no floor"):
        layer("statusgen.nowhere.module")
    assert imported(tree) == {"statusgen.cli"}
    assert private_uses(tree) == ["markupsafe._speedups", "jinja2._identifier"]
    assert markup_in(ast.parse("x = f'<p>{y}</p>'\n")) == ["<p>{y}</p>"]


def private_uses(tree: ast.Module) -> list[str]:
    """Names of other libraries that are private (a part starting with one underscore)."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names if a.name.split(".")[0] != "statusgen" and _private(a.name)]
        elif (
            isinstance(node, ast.ImportFrom)
            and node.module
            and node.level == 0
            and node.module.split(".")[0] != "statusgen"
        ):
            out += [f"{node.module}.{a.name}" for a in node.names if _private(f"{node.module}.{a.name}")]
    return out


def _private(dotted: str) -> bool:
    return any(p.startswith("_") and not p.startswith("__") for p in dotted.split("."))


def test_no_private_name_of_another_library() -> None:
    found = {m: private_uses(tree) for m, tree in modules_cache.items()}
    assert {m: uses for m, uses in found.items() if uses} == {}


MARKUP = re.compile(
    r"<(?:p|a|li|ul|ol|tr|td|th|div|span|section|table|svg|path|rect|text|g|title|entry|feed|"
    r"h[1-6]|i|time|article|dl|dt|dd)[\s>/]"
)


def markup_in(tree: ast.Module) -> list[str]:
    """Strings that hold markup, but docstrings and regular expressions (markup read, not made)."""
    docstrings = {
        id(n.body[0].value)
        for n in ast.walk(tree)
        if isinstance(n, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and n.body
        and isinstance(n.body[0], ast.Expr)
        and isinstance(n.body[0].value, ast.Constant)
    }
    patterns = {
        id(a)
        for n in ast.walk(tree)
        if isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and isinstance(n.func.value, ast.Name)
        and n.func.value.id == "re"
        for a in ast.walk(n)
    }
    parts = {id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for v in n.values}
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr) and id(node) not in patterns:
            text = "".join(
                v.value if isinstance(v, ast.Constant) else "{" + ast.unparse(v.value) + "}"
                for v in node.values
                if isinstance(v, ast.Constant | ast.FormattedValue)
            )
            if MARKUP.search(text):
                out.append(text)
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and MARKUP.search(node.value)
            and not {id(node)} & (docstrings | patterns | parts)
        ):
            out.append(node.value)
    return out


def test_no_markup_is_made_in_python() -> None:
    found = {m: markup_in(tree) for m, tree in modules_cache.items()}
    assert {m: strings for m, strings in found.items() if strings} == {}


def test_only_the_cycle_reaches_for_the_vendor_fetch() -> None:
    """The records the vendor stage hands on live in ``vendors.model``: a reader of them (merge,
    the store, notify, render) has no reason to import the fetch itself."""
    outside = {
        m
        for m, tree in modules_cache.items()
        if "statusgen.vendors.stage" in imported(tree) and not m.startswith("statusgen.vendors")
    }
    assert outside <= {"statusgen.cycle"}


def test_the_servers_share_the_policy_not_each_other() -> None:
    """nginx's configuration reads its timeouts and headers from ``policy``, as the preview
    server does: neither server's module is the other's source."""
    assert "statusgen.web.serve" not in imported(modules_cache["statusgen.web.nginx"])
    assert "statusgen.web.nginx" not in imported(modules_cache["statusgen.web.serve"])


def test_every_package_ships_in_the_wheel() -> None:
    """setuptools ships the packages pyproject.toml lists: a folder left out is missing from every
    installed copy, though the tests from the source tree would not see it."""
    import tomllib

    listed = set(tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(PACKAGE.parent).parts) for p in PACKAGE.rglob("__init__.py")}
    assert found - listed == set()
