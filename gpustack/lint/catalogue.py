"""The rule catalogue: ``policies/GSNNN.yaml`` as typed, frozen ``RuleInfo``.

Data says what a rule is (name, default severity, whether it runs by default, rationale,
remediation, examples); the code in ``gpustack.lint.rules`` says how it detects.
``policy.schema.json`` beside this module defines the policy format; ``policy_problems`` checks a file against it (the catalogue test
runs it on every policy). Loading trusts the shipped, tested data and stays cheap, since every
``gpustack lint`` reads the whole catalogue: a malformed policy still gives a clean error.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import Any

from gpustack.errors import GpustackError, Problem
from gpustack.lint.input.load import load_settings
from gpustack.lint.model import Resource, Severity
from gpustack.lint.registry import Scope
from gpustack.shipped import data_dir

SCHEMA_PATH = Path(__file__).with_name("policy.schema.json")


@dataclass(frozen=True)
class Example:
    """A manifest that must make its rule fire (``fires``) or stay quiet (``clean``): one file
    (``manifest``), or files linted together, by path (``files``)."""

    description: str
    manifest: str = ""
    distribution: str | None = None
    spec: str | None = None  # a spec file as context (``--spec``), from the repository root
    files: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class RuleInfo:
    id: str
    name: str
    severity: Severity
    scope: Scope
    summary: str
    rationale: str
    remediation: str
    fixable: bool = False
    security: bool = False
    opt_in: bool = False  # off by default: runs only when selected by id (policy/selection.py)
    references: tuple[str, ...] = ()
    fires: tuple[Example, ...] = ()
    clean: tuple[Example, ...] = ()


def find_rule(catalogue: Mapping[str, RuleInfo], wanted: str) -> RuleInfo:
    """The rule with id or name ``wanted`` (any case); an unknown one is an error with the
    closest ids and names."""
    from gpustack.lint.policy.selection import rule_id, unknown_rule

    by_name = {info.name: info for info in catalogue.values()}
    info = catalogue.get(rule_id(wanted)) or by_name.get(wanted.strip().lower())
    if info is not None:
        return info
    raise GpustackError(unknown_rule(wanted, [*catalogue, *by_name]))


class CatalogueError(GpustackError):
    """A policy file cannot be read or does not describe a rule."""


@cache
def load_catalogue() -> Mapping[str, RuleInfo]:
    """The shipped catalogue, by rule id (sorted)."""
    return read_catalogue(data_dir("policies"))


def read_catalogue(folder: Path) -> Mapping[str, RuleInfo]:
    infos = (read_policy(path) for path in sorted(folder.glob("GS*.yaml")))
    return MappingProxyType({info.id: info for info in infos})


def read_policy(path: Path) -> RuleInfo:
    data = _policy_resource(path).data
    try:
        examples = data["examples"]
        return RuleInfo(
            id=data["id"],
            name=data["name"],
            severity=Severity.parse(data["severity"]),
            scope=data["scope"],
            summary=data["summary"].strip(),
            rationale=data["rationale"].strip(),
            remediation=data["remediation"].strip(),
            fixable=data.get("fixable", False),
            security=data.get("security", False),
            opt_in=data.get("optIn", False),
            references=tuple(data.get("references", ())),
            fires=tuple(Example(**example) for example in examples["fires"]),
            clean=tuple(Example(**example) for example in examples["clean"]),
        )
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        raise CatalogueError(Problem(f"not a valid policy ({type(exc).__name__}: {exc})", str(path))) from None


def policy_problems(path: Path) -> list[Problem]:
    """Every way ``path`` breaks the policy format, located (``file:line:col: path: message``)."""
    import jsonschema

    try:
        resource = _policy_resource(path)
    except CatalogueError as exc:
        return exc.problems
    validator = jsonschema.Draft202012Validator(_schema())
    problems = []
    for error in sorted(validator.iter_errors(resource.data), key=lambda e: list(map(str, e.absolute_path))):
        where = tuple(error.absolute_path)
        line, column = resource.locate(where)
        problems.append(Problem(error.message, str(path), line, column, ".".join(map(str, where)) or None))
    if resource.data.get("id") != path.stem:
        problems.append(Problem(f"the file name must be the rule id: {resource.data.get('id')}.yaml", str(path)))
    return problems


@cache
def _schema() -> dict[str, Any]:
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


def _policy_resource(path: Path) -> Resource:
    documents = load_settings(str(path), CatalogueError, "the policy")
    if len(documents) != 1:
        raise CatalogueError(Problem("a policy file holds exactly one mapping", str(path)))
    return documents[0]
