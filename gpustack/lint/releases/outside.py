"""Chart releases declared outside the manifests: which chart a plain values file is for.

Many repositories keep a chart's values in a YAML file and install the chart from a script, a
README's instructions or Terraform. The linted values file then names no chart, and without one
its keys are not checked. This module reads those declarations from the linted tree:

- ``helm install|upgrade|template [NAME] CHART -f FILE --version V`` commands in shell scripts
  (``*.sh``, ``*.bash``), Markdown (``*.md``: the commands users copy) and Makefiles, with
  backslash continuations (https://helm.sh/docs/helm/helm_install/);
- Terraform's ``helm_release`` resources: ``chart``, ``version``, and the ``values`` list's
  ``file(...)``/``templatefile(...)`` paths, ``${path.module}`` being the ``.tf`` file's folder
  (https://registry.terraform.io/providers/hashicorp/helm/latest/docs/resources/release).

A values path is resolved against the declaring file's folder, then the tree's root (scripts are
often run from there). Only the values files themselves are tied to the chart; ``--set`` values
and Terraform ``set`` blocks are not read.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from gpustack.lint.input import helmcommand, terraform
from gpustack.lint.input.declaration_files import TERRAFORM_SUFFIX, declaration_files
from gpustack.lint.model import Note, Resource
from gpustack.lint.policy.config import Config
from gpustack.lint.releases.release import chart_name
from gpustack.lint.unread import chart_of_values, objectless



@dataclass(frozen=True)
class Declared:
    """A chart release that names a values file: the chart, its version if written, and where."""

    chart: str
    version: str | None
    where: str  # ``scripts/deploy.sh:111``

    @property
    def reference(self) -> str:
        """``name[@version]``, as ``.gpustack.yaml``'s ``values:`` maps a file."""
        return f"{self.chart}@{self.version}" if self.version else self.chart


def values_files(config: Config, by_file: Mapping[str, Sequence[Resource]]) -> tuple[dict[str, str], list[Note]]:
    """The chart (``name[@version]``) of each values file: the config's ``values:`` mapping or
    ``--chart``, else a declaration under the linted folder (with a note saying which)."""
    mapped = {file: chart for file, resources in by_file.items() if (chart := chart_of_values(config, file, resources))}
    declared, notes = declared_values(config.tree, by_file, mapped)
    return mapped | declared, notes


def declared_values(
    root: str | os.PathLike[str] | None, by_file: Mapping[str, Sequence[Resource]], mapped: Mapping[str, str]
) -> tuple[dict[str, str], list[Note]]:
    """The object-less files ``mapped`` (the config's ``values:``, ``--chart``) leaves out that
    a declaration under ``root`` installs a chart with: file -> ``chart[@version]``, and a note
    for each saying which declaration."""
    candidates = [file for file, resources in by_file.items() if file not in mapped and objectless(resources)]
    declared = values_charts(root, candidates)
    notes = [Note(f"read as values of chart {release.reference}, as {release.where} installs it", file)
             for file, release in declared.items()]
    return {file: release.reference for file, release in declared.items()}, notes


def values_charts(root: str | os.PathLike[str] | None, values_files: Iterable[str]) -> dict[str, Declared]:
    """The values files among ``values_files`` that a declaration under ``root`` installs a
    chart with, each with the first such declaration."""
    wanted = {os.path.abspath(file): file for file in values_files}
    if not wanted or root is None:
        return {}
    root = os.fspath(root)
    found: dict[str, Declared] = {}
    for path in declaration_files(root):
        for values, declared in _declarations(path, root):
            file = wanted.get(os.path.abspath(values))
            if file is not None:
                found.setdefault(file, declared)
    return found


def _declarations(path: str, root: str) -> Iterator[tuple[str, Declared]]:
    try:
        with open(path, encoding="utf-8") as stream:
            text = stream.read()
    except (OSError, UnicodeDecodeError):
        return
    name = os.path.relpath(path, root)
    if path.endswith(TERRAFORM_SUFFIX):
        yield from _terraform(text, path, name)
    else:
        yield from _helm_commands(text, path, root, name)


def _helm_commands(text: str, path: str, root: str, name: str) -> Iterator[tuple[str, Declared]]:
    lines = text.split("\n")
    number = 0
    while number < len(lines):
        start, line = number, lines[number]
        while line.endswith("\\") and number + 1 < len(lines):  # a continued shell line
            number += 1
            line = line[:-1] + " " + lines[number].strip()
        number += 1
        command = helmcommand.find(line)
        if command is None or not command.values_files:
            continue
        chart, packaged = chart_name(command.chart)
        version, values = command.version or packaged, command.values_files
        declared = Declared(chart, version, f"{name}:{start + 1}")
        for file in values:
            for base in (os.path.dirname(path), root):
                yield os.path.join(base, file), declared


def _terraform(text: str, path: str, name: str) -> Iterator[tuple[str, Declared]]:
    folder = os.path.dirname(path)
    for release in terraform.helm_releases(text):
        if release.chart is None:
            continue
        declared = Declared(chart_name(release.chart)[0], release.version, f"{name}:{release.line}")
        for file in (*release.files, *release.templates):
            yield os.path.join(folder, file), declared
