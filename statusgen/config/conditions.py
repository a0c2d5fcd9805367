"""Conditions on an HTTP answer: one small syntax, parsed here and judged here, with no I/O.

A condition is a subject, an operator and a value, on one line::

    [STATUS] == 200
    [STATUS] in [200, 204]
    [RESPONSE_TIME] < 300
    [HEADER].Content-Type contains json
    [BODY] contains "all systems go"
    [BODY] matches "version [0-9]+"
    [BODY].status == UP
    [BODY].checks[0].healthy == true
    [BODY].queue.depth < 1000

Subjects: ``[STATUS]`` (the HTTP status), ``[RESPONSE_TIME]`` (milliseconds to the complete
answer), ``[HEADER].NAME`` (a response header, its name in any case), ``[BODY]`` (the body as
text) and ``[BODY]`` followed by a path into a JSON body (``.key`` and ``[index]`` steps, keys
made of letters, digits, ``_`` and ``-``).

Operators: ``==``, ``!=``, ``<``, ``>`` (numbers only), ``in`` (a list in brackets),
``contains`` (text) and ``matches`` (a regular expression in RE2's syntax, searched anywhere).

Values: a number (``200``, ``0.5``), ``true``, ``false``, ``null``, a word without spaces
(``UP``, ``application/json``), or a quoted string with JSON escapes (``"all systems go"``).
Two values are equal when both are numbers of the same value, or when they read the same as
text (the JSON ``true`` equals the word ``true``). A subject that is not there (a missing
header, a path the body lacks, a body that is not JSON) fails every condition on it.

``parse`` turns a line into a ``Condition`` or raises ``ConditionError`` saying what to fix;
``Condition.text`` writes it back in its canonical form, which parses to the same condition.
Conditions are configuration, published as they are: they never name secrets.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import orjson
import re2

Scalar = str | int | float | bool | None

SUBJECTS = ("STATUS", "RESPONSE_TIME", "HEADER", "BODY")
OPERATORS = ("==", "!=", "<", ">", "in", "contains", "matches")
MAX_LENGTH = 500  # a condition is one line of configuration
EXAMPLE = "[STATUS] == 200, [BODY].status == UP or [RESPONSE_TIME] < 300"

_SUBJECT_RE = re.compile(r"\[(STATUS|RESPONSE_TIME|HEADER|BODY)\]")
_HEADER_RE = re.compile(r"\.([!#$%&'*+.^_`|~0-9A-Za-z-]+)")
_STEP_RE = re.compile(r"\.([A-Za-z0-9_-]+)|\[(0|[1-9][0-9]{0,8})\]")
_OPERATOR_RE = re.compile(r"\s+(==|!=|<|>|in|contains|matches)\s+")
_NUMBER_RE = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_WORD_RE = re.compile(r"[A-Za-z0-9_.:/+*@%-]+")
_LITERALS: dict[str, Scalar] = {"true": True, "false": False, "null": None}


class ConditionError(ValueError):
    """A condition that does not parse; the message says what to write instead."""


class _Missing:
    """A subject the answer does not have."""


MISSING = _Missing()


@dataclass(frozen=True)
class Condition:
    subject: str  # one of SUBJECTS
    path: tuple[str | int, ...]  # [HEADER]: (name,); [BODY]: the JSON path, () for the whole text
    operator: str  # one of OPERATORS
    value: Scalar | tuple[Scalar, ...]  # a tuple for ``in``

    def text(self) -> str:
        """The condition in its canonical form: ``parse(c.text()) == c``."""
        value = self.value
        shown = "[" + ", ".join(map(_show, value)) + "]" if isinstance(value, tuple) else _show(value)
        return f"{self.subject_text()} {self.operator} {shown}"

    def subject_text(self) -> str:
        steps = "".join(f"[{s}]" if isinstance(s, int) else f".{s}" for s in self.path)
        return f"[{self.subject}]{steps}"


def _show(value: Any) -> str:
    if value is None or isinstance(value, bool):
        return {None: "null", True: "true", False: "false"}[value]
    if isinstance(value, (int, float)):
        return repr(value)
    if _WORD_RE.fullmatch(value) and not _NUMBER_RE.fullmatch(value) and value not in _LITERALS:
        return str(value)
    return str(json.dumps(value, ensure_ascii=False))


# -- parsing ----------------------------------------------------------------------


def parse(line: str) -> Condition:
    """The condition ``line`` states, or ConditionError saying what is wrong and how to write it."""
    if not isinstance(line, str) or not line.strip():
        raise ConditionError(f"a condition must be a line of text, like {EXAMPLE}")
    if len(line) > MAX_LENGTH:
        raise ConditionError(f"a condition must be at most {MAX_LENGTH} characters")
    line = line.strip()
    subject, path, rest = _subject(line)
    op = _OPERATOR_RE.match(rest)
    if op is None:
        raise ConditionError(
            f"after {line[: len(line) - len(rest)]} comes an operator between spaces: {', '.join(OPERATORS)}"
        )
    operator, written = op.group(1), rest[op.end() :]
    value = _list(written) if operator == "in" else _single(written)
    _fits(operator, value)
    return Condition(subject, path, operator, value)


def _subject(line: str) -> tuple[str, tuple[str | int, ...], str]:
    found = _SUBJECT_RE.match(line)
    if found is None:
        raise ConditionError("a condition starts with [STATUS], [RESPONSE_TIME], [HEADER].NAME or [BODY]")
    subject, rest = found.group(1), line[found.end() :]
    if subject == "HEADER":
        name = _HEADER_RE.match(rest)
        if name is None:
            raise ConditionError("[HEADER] is followed by a dot and the header's name, like [HEADER].Content-Type")
        return subject, (name.group(1),), rest[name.end() :]
    path: list[str | int] = []
    while subject == "BODY" and (step := _STEP_RE.match(rest)):
        path.append(step.group(1) if step.group(1) is not None else int(step.group(2)))
        rest = rest[step.end() :]
    if rest[:1] not in ("", " ", "\t"):
        what = "a path of .key and [index] steps or " if subject == "BODY" else ""
        raise ConditionError(f"[{subject}] is followed by {what}a space, then an operator, got {rest.split()[0]!r}")
    return subject, tuple(path), rest


def _scalar(text: str) -> tuple[Scalar, str]:
    """The value at the start of ``text`` and what follows it."""
    if text.startswith('"'):
        try:
            quoted, end = json.JSONDecoder().raw_decode(text)
        except json.JSONDecodeError:
            raise ConditionError('a quoted value ends with its closing " (escape a " inside as \\")') from None
        return str(quoted), text[end:]
    number = _NUMBER_RE.match(text)
    word = _WORD_RE.match(text)
    if word is None:
        raise ConditionError('a value is a number, true, false, null, a word without spaces or a "quoted string"')
    if number is not None and number.end() == word.end():
        written = number.group()
        value: Scalar = float(written) if any(c in written for c in ".eE") else int(written)
        if isinstance(value, float) and not math.isfinite(value):
            raise ConditionError(f"the number {written} is too large")
        return value, text[number.end() :]
    return _LITERALS.get(word.group(), word.group()), text[word.end() :]


def _single(text: str) -> Scalar:
    value, rest = _scalar(text)
    if rest.strip():
        raise ConditionError(f'one value follows the operator; quote a value with spaces, like "{text.strip()}"')
    return value


def _list(text: str) -> tuple[Scalar, ...]:
    if not text.startswith("["):
        raise ConditionError("in takes a list in brackets, like [STATUS] in [200, 204]")
    values: list[Scalar] = []
    rest = text[1:].lstrip()
    while True:
        value, rest = _scalar(rest)
        values.append(value)
        rest = rest.lstrip()
        if rest.startswith(","):
            rest = rest[1:].lstrip()
        elif rest.startswith("]") and not rest[1:].strip():
            return tuple(values)
        else:
            raise ConditionError("in takes a list in brackets, its values separated by commas, like [200, 204]")


def _fits(operator: str, value: Scalar | tuple[Scalar, ...]) -> None:
    """Whether the value suits the operator."""
    if operator in ("<", ">") and (isinstance(value, bool) or not isinstance(value, (int, float))):
        raise ConditionError(f"{operator} compares numbers: the value must be a number, got {_show(value)}")
    if operator in ("contains", "matches") and not isinstance(value, str):
        raise ConditionError(f'{operator} takes text: quote the value, like "{_show(value)}"')
    if operator == "matches":
        try:
            pattern(str(value))
        except re2.error as exc:
            why = exc.args[0].decode() if exc.args and isinstance(exc.args[0], bytes) else str(exc)
            raise ConditionError(
                f"matches takes a regular expression in RE2's syntax (no backreferences or lookaround), "
                f"and {_show(value)} is not one: {why}"
            ) from None


@lru_cache(maxsize=256)
def pattern(text: str) -> Any:
    """``text`` compiled by RE2, whose matching takes time linear in the body: a target's body,
    which anyone controls, can never drive an operator's pattern into catastrophic backtracking
    (``(a+)+$`` against 29 bytes ran 21 s in Python's ``re``). Errors are raised, not logged."""
    options = re2.Options()
    options.log_errors = False
    return re2.compile(text, options)


# -- judging --------------------------------------------------------------------


@dataclass(frozen=True)
class Answer:
    """What a condition may look at: an HTTP answer, complete."""

    status: int
    latency_ms: float
    headers: Mapping[str, str]  # names in lower case
    body: bytes


class _Judge:
    """One answer, its body decoded and parsed at most once, whatever the number of conditions."""

    def __init__(self, answer: Answer):
        self.answer = answer
        self._text: str | None = None
        self._json: Any = None
        self._parsed = False

    def text(self) -> str:
        if self._text is None:
            self._text = self.answer.body.decode("utf-8", errors="replace")
        return self._text

    def json(self) -> Any:
        if not self._parsed:
            self._parsed = True
            try:
                self._json = orjson.loads(self.answer.body)
            except orjson.JSONDecodeError:
                self._json = MISSING
        return self._json

    def subject(self, c: Condition) -> Any:
        if c.subject == "STATUS":
            return self.answer.status
        if c.subject == "RESPONSE_TIME":
            return self.answer.latency_ms
        if c.subject == "HEADER":
            return self.answer.headers.get(str(c.path[0]).lower(), MISSING)
        return _walk(self.json(), c.path) if c.path else self.text()


def _walk(value: Any, path: Sequence[str | int]) -> Any:
    for step in path:
        in_list = isinstance(step, int) and isinstance(value, list) and step < len(value)
        if not (in_list or (isinstance(step, str) and isinstance(value, dict) and step in value)):
            return MISSING
        value = value[step]
    return value


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else orjson.dumps(value).decode()


def _equal(actual: Any, expected: Scalar) -> bool:
    if _is_number(actual) and _is_number(expected):
        return bool(actual == expected)
    return _as_text(actual) == _as_text(expected)


def _number_of(value: Any) -> float | None:
    if _is_number(value):
        return float(value)
    try:
        return float(value) if isinstance(value, str) else None
    except ValueError:
        return None


def holds(c: Condition, actual: Any) -> bool:
    """Whether the condition holds of the subject's value ``actual`` (MISSING: it never does)."""
    if actual is MISSING:
        return False
    value = c.value
    if isinstance(value, tuple):
        return any(_equal(actual, v) for v in value)  # in
    if c.operator in ("<", ">"):
        number, limit = _number_of(actual), _number_of(value)
        return number is not None and limit is not None and (number < limit if c.operator == "<" else number > limit)
    if c.operator == "contains":
        return str(value) in _as_text(actual)
    if c.operator == "matches":
        return pattern(str(value)).search(_as_text(actual)) is not None
    same = _equal(actual, value)
    return same if c.operator == "==" else not same


def first_failed(conditions: Sequence[Condition], answer: Answer) -> Condition | None:
    """The first of ``conditions`` the answer fails, or None when it meets them all."""
    judge = _Judge(answer)
    return next((c for c in conditions if not holds(c, judge.subject(c))), None)
