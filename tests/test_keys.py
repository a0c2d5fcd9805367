"""Every file's key changes with each input its recipe declares, and with nothing else.

A key that missed an input would leave a file stale without a word; the recipes in
``render.keys`` declare their inputs as fields, and here each field of each recipe is changed
in turn (hypothesis draws the values from the field's declared type).
"""

from __future__ import annotations

import copy
import types
from collections.abc import Callable
from typing import Any, NamedTuple, Union, get_args, get_origin, get_type_hints

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from statusgen import jsonout
from statusgen.render.keys import RECIPES, key

TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=12)
INTS = st.integers(min_value=-(2**63), max_value=2**63 - 1)
JSON = st.recursive(
    st.none() | st.booleans() | INTS | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=8,
)


def strategy(tp: Any) -> st.SearchStrategy[Any]:
    """Values of a declared field type (``Any``: any JSON value)."""
    origin, args = get_origin(tp), get_args(tp)
    if tp is Any:
        return JSON
    if tp is str:
        return TEXT
    if tp is int:
        return INTS
    if tp is type(None):
        return st.none()
    if origin in (Union, types.UnionType):
        return st.one_of(*map(strategy, args))
    if origin is list:
        return st.lists(strategy(args[0]), max_size=4)
    if origin is dict:
        return st.dictionaries(strategy(args[0]), strategy(args[1]), max_size=4)
    if origin is tuple:
        return st.tuples(*map(strategy, args))
    raise AssertionError(f"no strategy for {tp!r}: declare the field with a JSON type")


def same(a: Any, b: Any) -> bool:
    return jsonout.dump(a) == jsonout.dump(b)


def check_recipe(recipe: type[NamedTuple], key_of: Callable[[Any], str], data: st.DataObject) -> None:
    hints = get_type_hints(recipe)
    base = {name: data.draw(strategy(hints[name]), label=name) for name in recipe._fields}
    made = key_of(recipe(**base))
    assert key_of(recipe(**copy.deepcopy(base))) == made, "equal inputs, equal key"
    for name in recipe._fields:
        other = data.draw(strategy(hints[name]).filter(lambda v, n=name: not same(v, base[n])), label=f"other {name}")
        assert key_of(recipe(**{**base, name: other})) != made, f"{recipe.__name__}.{name} is not in its key"


@pytest.mark.parametrize("recipe", RECIPES, ids=lambda r: r.__name__)
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_every_declared_input_moves_the_key(recipe: type[NamedTuple], data: st.DataObject) -> None:
    check_recipe(recipe, key, data)


@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_the_check_fails_when_a_recipe_drops_an_input(data: st.DataObject) -> None:
    """A key made without one of its declared inputs (here, a record's measurements version)
    is caught by the same check."""
    from statusgen.render.keys import RecordInputs

    def forgetful(inputs: Any) -> str:
        return key(inputs._replace(version=0))

    with pytest.raises(AssertionError, match="RecordInputs.version is not in its key"):
        check_recipe(RecordInputs, forgetful, data)


def test_recipes_of_equal_fields_have_different_keys() -> None:
    """The recipe's name is in the key: two kinds of file never share one."""
    from statusgen.render.keys import BadgeInputs

    class OtherInputs(NamedTuple):
        site: str
        name: str
        status: str

    assert key(BadgeInputs("s", "n", "up")) != key(OtherInputs("s", "n", "up"))
