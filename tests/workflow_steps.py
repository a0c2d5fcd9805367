"""A GitHub workflow's steps, run here as Actions runs them: each ``run`` script with ``bash -e``,
in the environment the workflow, its job and the step give, the ``${{ }}`` expressions filled
from the repository variables and secrets a test names.

Only the expressions the workflows use are read: ``vars.NAME``, ``secrets.NAME`` and
``vars.NAME || 'default'``; any other fails, so that a workflow never holds an expression its
tests did not evaluate.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

EXPRESSION = re.compile(r"\$\{\{(.*?)\}\}")
KNOWN = re.compile(r"\s*(vars|secrets)\.([A-Za-z_][A-Za-z0-9_]*)\s*(?:\|\|\s*'([^']*)'\s*)?")


def load(text: str | bytes) -> dict[str, Any]:
    doc = yaml.safe_load(text)
    doc["on"] = doc.pop(True, doc.get("on"))  # YAML 1.1 reads the key `on` as true
    return dict(doc)


def filled(value: str, context: Mapping[str, Mapping[str, str]]) -> str:
    """``value`` with its expressions evaluated: an unset variable is empty, as on GitHub."""

    def one(match: re.Match[str]) -> str:
        known = KNOWN.fullmatch(match.group(1))
        assert known, f"an expression the tests do not evaluate: {match.group(0)}"
        kind, name, default = known.groups()
        return context.get(kind, {}).get(name) or (default or "")

    return EXPRESSION.sub(one, value)


class Workflow:
    """One job of a workflow document, its steps by name, run in a folder."""

    def __init__(self, doc: dict[str, Any], job: str, context: Mapping[str, Mapping[str, str]]):
        self.doc, self.job, self.context = doc, doc["jobs"][job], context

    def steps(self) -> dict[str, dict[str, Any]]:
        return {s.get("name", s.get("uses")): s for s in self.job["steps"]}

    def env(self, step: str, base: Mapping[str, str] | None = None, **extra: str) -> dict[str, str]:
        """The environment of ``step``: ``base`` (this process's by default), then the workflow's,
        the job's, the step's, and ``extra`` last (what a test points elsewhere)."""
        declared = {**self.doc.get("env", {}), **self.job.get("env", {}), **self.steps()[step].get("env", {})}
        start = os.environ if base is None else base
        return {**start, **{k: filled(str(v), self.context) for k, v in declared.items()}, **extra}

    def run(
        self, step: str, cwd: Path, base: Mapping[str, str] | None = None, **extra: str
    ) -> subprocess.CompletedProcess[str]:
        script = filled(self.steps()[step]["run"], self.context)
        return subprocess.run(
            ["bash", "-e", "-c", script],
            cwd=cwd,
            env=self.env(step, base, **extra),
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
