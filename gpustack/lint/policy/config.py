"""``.gpustack.yaml``: the linter's settings for a repository.

Found from the linted paths' folder upward (the first one wins) or named with ``--config``.
Every key is optional::

    rules:                 # per rule: off (disable), on, or a severity that replaces the default
      GS007: off
      GS004: warning
      GS023: on            # an opt-in rule runs only when turned on or selected by id
    select: [GS001, GS004] # only these rules (and those `rules:` turns on); see selection.py
    ignore: [GS007]        # not these
    exemptions:            # findings accepted, matched exactly; see exemption.py
      - {rules: [GS002], namespace: gpu-system, kind: DaemonSet, name: agent, reason: needs /dev}
    baseline: .gpustack-baseline.json   # report only findings not in it (relative to this file)
    failOn: warning        # error | warning | info: the lowest severity that fails the run
    showInfo: false        # text and GitHub output list info findings too (--show-info)
    exclude:               # as in .gitignore: a name anywhere, or a path from this file's folder
      - charts/*/templates
      - vendor
    distribution: k3s      # context when --distribution is not given
    xidCritical: [31, 43, 79, 92]
    suppressions: true     # false audits: annotations, comments, exemptions, baseline hide nothing
    spec: gpustack.yaml    # the stack's spec, as context (relative to this file)
    values:                # plain Helm values files (path patterns) -> chart[@version]
      helm/hami.values.yaml: hami@2.10.0
    roots: [clusters/prod, clusters/staging]  # folders linted apart, as whole sets (roots.py)
    cacheDir: ../.cache/gpustack  # the lint cache (relative to this file; default: the user's
                                  # cache folder, input/cache.py)

Unknown keys and unknown rule ids are errors, located ``file:line:col``, so that a typo
never silently turns a rule back on.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpustack.errors import GpustackError, Problem
from gpustack.lint.context import RuleOptions
from gpustack.lint.distributions import DISTRIBUTIONS
from gpustack.lint.input.load import load_settings
from gpustack.lint.model import Resource, Severity
from gpustack.lint.policy.exemption import KEYS as EXEMPTION_KEYS
from gpustack.lint.policy.exemption import Exemption
from gpustack.lint.policy.selection import Choice, Selection, rule_id, unknown_rule

if TYPE_CHECKING:
    from gpustack.lint.charts.chartkeys import ChartKeys
    from gpustack.lint.facts.pools import ClusterFacts
    from gpustack.lint.input.cache import Cache
    from gpustack.lint.policy.baseline import Baseline

FILENAME = ".gpustack.yaml"
SEVERITIES = tuple(str(severity) for severity in sorted(Severity, reverse=True))  # error, warning, info


class ConfigError(GpustackError):
    """The config file cannot be read or holds a wrong setting."""


@dataclass(frozen=True)
class Config:
    """Effective settings: defaults, then the config file, then command-line options."""

    path: Path | None = None  # the config file, when one was read
    selection: Selection = Selection()  # which rules run (selection.py decides)
    severities: Mapping[str, Severity] = field(default_factory=dict)
    fail_on: Severity = Severity.WARNING
    show_info: bool = False
    exclude: tuple[str, ...] = ()
    distribution: str | None = None
    options: RuleOptions = field(default_factory=RuleOptions)
    suppressions: bool = True
    spec: Path | None = None
    values: tuple[tuple[str, str], ...] = ()  # (path pattern, "chart[@version]")
    values_of: str | None = None  # --chart: the chart of the input's plain values files
    kubernetes_version: str | None = None  # --kubernetes-version
    chart_values: tuple[Path, ...] = ()  # --chart-values: chart folders or .tgz files
    exemptions: tuple[Exemption, ...] = ()
    baseline: Path | None = None  # --baseline or baseline:
    roots: tuple[Path, ...] = ()  # --set-root and roots: folders linted apart (roots.py)
    cache_dir: Path | None = None  # cacheDir: where the lint cache goes (input/cache.py)
    # The folder holding the linted paths: scripts and Terraform below it may name the chart of a
    # plain values file (releases/outside.py)
    tree: Path | None = None

    def excluded(self, path: str) -> bool:
        """Whether ``path`` or a folder above it matches an ``exclude`` pattern (as in
        .gitignore: a pattern without ``/`` matches a file or folder name at any depth, one
        with ``/`` the path relative to the config's folder; ``*`` matches across folders)."""
        if not self.exclude or self.path is None:
            return False
        relative = os.path.relpath(os.path.abspath(path), self.path.parent).replace(os.sep, "/")
        if relative.startswith("../"):
            return False
        parts = relative.split("/")
        prefixes = ["/".join(parts[: index + 1]) for index in range(len(parts))]
        for pattern in self.exclude:
            pattern = pattern.strip("/")
            candidates = prefixes if "/" in pattern else parts
            if any(fnmatchcase(candidate, pattern) for candidate in candidates):
                return True
        return False

    def values_chart(self, path: str) -> str | None:
        """The chart (``name[@version]``) that ``values:`` maps the values file ``path`` to
        (patterns relative to the config's folder; ``*`` matches across folders)."""
        if not self.values or self.path is None:
            return None
        relative = os.path.relpath(os.path.abspath(path), self.path.parent).replace(os.sep, "/")
        return next((chart for pattern, chart in self.values if fnmatchcase(relative, pattern.strip("/"))), None)

    def cluster(self, cache: Cache | None = None) -> ClusterFacts | None:
        """The facts of the ``spec`` (``--spec`` or ``spec:``), read with the spec loader (a bad
        spec raises ``SpecError``) or from ``cache``; None without one, and then nothing
        imports pydantic."""
        if self.spec is None:
            return None
        from gpustack.lint.facts.from_spec import load_cluster

        return load_cluster(str(self.spec), cache)

    def read_baseline(self) -> Baseline | None:
        """The baseline file's findings (a missing or bad file raises ``BaselineError``)."""
        if self.baseline is None:
            return None
        from gpustack.lint.policy.baseline import read

        return read(str(self.baseline))

    def chart_keys(self) -> tuple[ChartKeys, ...]:
        """The value keys of the charts given with ``--chart-values``."""
        if not self.chart_values:
            return ()
        from gpustack.lint.charts.chartfiles import read_charts

        return read_charts(self.chart_values)


def search_start(paths: Sequence[str]) -> Path:
    """Where the search for the config starts: the deepest folder holding every linted path (a
    file's own folder; the working directory for standard input), so that
    ``gpustack lint output/<stack>`` finds the settings ``gpustack render`` wrote there."""
    folders = [os.getcwd() if p == "-" else p if os.path.isdir(p) else os.path.dirname(p) or "." for p in paths]
    return Path(os.path.commonpath([os.path.abspath(f) for f in folders])) if folders else Path.cwd()


def find_config(start: Path) -> Path | None:
    """The nearest ``.gpustack.yaml`` in ``start`` or a folder above it."""
    for folder in (start, *start.parents):
        candidate = folder / FILENAME
        if candidate.is_file():
            return candidate
    return None


def load_config(path: Path | None, *, known_rules: Collection[str]) -> Config:
    """Read ``path`` (no file: the defaults); ``known_rules`` are the ids ``rules:`` may name."""
    if path is None:
        return Config()
    documents = load_settings(str(path), ConfigError, "the config")
    if not documents:
        return Config(path=path)
    if len(documents) > 1:
        raise ConfigError(Problem("the config holds more than one document", str(path)))
    return _Reader(path, documents[0], known_rules).config()


class _Reader:
    """Checks and converts the config mapping; collects every problem before raising."""

    def __init__(self, path: Path, resource: Resource, known_rules: Collection[str]) -> None:
        self.path = path
        self.resource = resource
        self.known_rules = known_rules
        self.problems: list[Problem] = []
        self.choice: dict[str, set[str]] = {}  # select, ignore, on, off: read into one Choice

    def config(self) -> Config:
        data = self.resource.data
        readers: dict[str, Callable[[Any], dict[str, Any]]] = {
            "rules": self.rules,
            "failOn": lambda value: {"fail_on": self.severity(value, ("failOn",))},
            "showInfo": lambda value: self.flag("showInfo", value),
            "exclude": self.exclude,
            "distribution": self.distribution,
            "xidCritical": self.xids,
            "suppressions": lambda value: self.flag("suppressions", value),
            "spec": lambda value: self.file("spec", value, "a spec file"),
            "values": self.values,
            "select": lambda value: self.rule_list("select", value),
            "ignore": lambda value: self.rule_list("ignore", value),
            "exemptions": self.exemptions,
            "baseline": lambda value: self.file("baseline", value, "the baseline file"),
            "roots": self.roots,
            "cacheDir": lambda value: self.file("cacheDir", value, "the cache folder", setting="cache_dir"),
        }
        settings: dict[str, Any] = {}
        for key, value in data.items():
            if key not in readers:
                self.problem((key,), f"unknown setting (known: {', '.join(readers)})")
                continue
            settings.update(readers[key](value))
        if self.problems:
            raise ConfigError(self.problems)
        if self.choice:
            select = self.choice.get("select")
            selected = None if select is None else frozenset(select | self.choice.get("on", set()))
            ignored = frozenset(self.choice.get("ignore", set()) | self.choice.get("off", set()))
            turned_on = frozenset(self.choice.get("on", set()))
            settings["selection"] = Selection((Choice(selected, ignored, turned_on),))
        return Config(path=self.path, **settings)

    def problem(self, path: tuple[str | int, ...], message: str) -> None:
        line, column = self.resource.locate(path)
        self.problems.append(Problem(message, str(self.path), line, column, ".".join(map(str, path))))

    def rules(self, value: Any) -> dict[str, Any]:
        if not isinstance(value, dict):
            self.problem(("rules",), "expected a mapping of rule ids to off, on or a severity")
            return {}
        severities: dict[str, Severity] = {}
        for typed, setting in value.items():
            rule = rule_id(str(typed))
            if rule not in self.known_rules:
                self.problem(("rules", typed), unknown_rule(str(typed), self.known_rules))
            elif setting is False:
                self.choice.setdefault("off", set()).add(rule)
            else:
                self.choice.setdefault("on", set()).add(rule)
                severity = None if setting is True else self.severity(setting, ("rules", typed), also="off, on, ")
                if severity is not None:
                    severities[rule] = severity
        return {"severities": severities}

    def rule_list(self, key: str, value: Any) -> dict[str, Any]:
        if not isinstance(value, list) or not all(isinstance(rule, str) for rule in value):
            self.problem((key,), "expected a list of rule ids")
            return {}
        for index, rule in enumerate(value):
            if rule_id(rule) not in self.known_rules:
                self.problem((key, index), unknown_rule(rule, self.known_rules))
        self.choice.setdefault(key, set()).update(map(rule_id, value))
        return {}

    def exemptions(self, value: Any) -> dict[str, Any]:
        if not isinstance(value, list):
            self.problem(("exemptions",), "expected a list of {rules, reason, and namespace, kind, name or image}")
            return {}
        found = [exemption for index, item in enumerate(value) if (exemption := self.exemption(index, item))]
        return {"exemptions": tuple(found)}

    def exemption(self, index: int, item: Any) -> Exemption | None:
        path: tuple[str | int, ...] = ("exemptions", index)
        if not isinstance(item, dict):
            self.problem(path, "expected a mapping of rules, reason, and namespace, kind, name or image")
            return None
        known = ("rules", "reason", *EXEMPTION_KEYS)
        problems = len(self.problems)
        for key in item:
            if key not in known:
                self.problem((*path, key), f"unknown key (known: {', '.join(known)})")
        rules = item.get("rules")
        if not isinstance(rules, list) or not rules or not all(isinstance(rule, str) for rule in rules):
            self.problem((*path, "rules"), "expected a list of the rule ids exempted")
            rules = []
        for position, rule in enumerate(rules):
            if rule_id(rule) not in self.known_rules:
                self.problem((*path, "rules", position), unknown_rule(rule, self.known_rules))
        reason = item.get("reason")
        if not isinstance(reason, str) or not reason.strip():
            self.problem((*path, "reason"), "every exemption needs a reason")
        targets = {key: item[key] for key in EXEMPTION_KEYS if key in item}
        for key, target in targets.items():
            if not isinstance(target, str) or not target:
                self.problem((*path, key), "expected the exact value to match (no patterns)")
        if not targets:
            self.problem(path, f"name what is exempted: one or more of {', '.join(EXEMPTION_KEYS)}")
        if len(self.problems) > problems:
            return None
        return Exemption(frozenset(map(rule_id, rules)), str(reason).strip(), **targets)

    def severity(self, value: Any, path: tuple[str | int, ...], also: str = "") -> Severity | None:
        if isinstance(value, str) and value in SEVERITIES:
            return Severity.parse(value)
        self.problem(path, f"expected one of {also}{', '.join(SEVERITIES)}, not {value!r}")
        return None

    def exclude(self, value: Any) -> dict[str, Any]:
        if isinstance(value, list) and all(isinstance(item, str) and item for item in value):
            return {"exclude": tuple(value)}
        self.problem(("exclude",), "expected a list of path patterns")
        return {}

    def distribution(self, value: Any) -> dict[str, Any]:
        if value in DISTRIBUTIONS:
            return {"distribution": value}
        self.problem(("distribution",), f"expected one of {', '.join(DISTRIBUTIONS)}, not {value!r}")
        return {}

    def xids(self, value: Any) -> dict[str, Any]:
        if isinstance(value, list) and all(type(item) is int and item > 0 for item in value):
            return {"options": RuleOptions(critical_xids=tuple(value))}
        self.problem(("xidCritical",), "expected a list of XID codes (positive integers)")
        return {}

    def flag(self, key: str, value: Any) -> dict[str, Any]:
        """A true-or-false setting, under its field's name (``showInfo`` -> ``show_info``)."""
        if isinstance(value, bool):
            return {re.sub(r"[A-Z]", lambda upper: "_" + upper.group().lower(), key): value}
        self.problem((key,), "expected true or false")
        return {}

    def file(self, key: str, value: Any, what: str, setting: str | None = None) -> dict[str, Any]:
        """A path relative to the config's folder (``setting``: the ``Config`` field, when not ``key``)."""
        if isinstance(value, str) and value:
            return {setting or key: self.path.parent / value}
        self.problem((key,), f"expected the path of {what}")
        return {}

    def roots(self, value: Any) -> dict[str, Any]:
        """Folders relative to the config's folder, each linted apart as a whole set."""
        if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
            self.problem(("roots",), "expected a list of folders (relative to this file)")
            return {}
        folders = []
        for index, item in enumerate(value):
            folder = self.path.parent / item
            if folder.is_dir():
                folders.append(folder)
            else:
                self.problem(("roots", index), f"no such folder: {folder}")
        return {"roots": tuple(folders)}

    def values(self, value: Any) -> dict[str, Any]:
        if isinstance(value, dict) and all(isinstance(v, str) and v and not v.startswith("@") for v in value.values()):
            return {"values": tuple((str(pattern), chart) for pattern, chart in value.items())}
        self.problem(("values",), "expected a mapping of values file patterns to chart[@version]")
        return {}
