"""Rendering gpustack's Helm values through the real upstream charts with a real ``helm``.

The packaged charts live in ../shared/reference/charts (one ``<chart>-<version>.tgz`` per pinned
version); ``helm`` is found through ``$HELM`` or the ``PATH`` (``.ci/run`` installs one). Used by
the e2e tier (tests/e2e/test_real_charts.py, marker ``e2e``):

- ``template``: ``helm template`` of one release with the spec's Kubernetes version;
- ``CrdSchemas``: the CRDs the charts ship (and upstream's, for the delivery objects) as
  validators where a field the API server would prune is an error;
- ``perturbations`` / ``changed``: one changed copy of the values per emitted leaf, and whether
  the chart's output moved (two baseline renders mask what a chart generates at random).
"""

from __future__ import annotations

import copy
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from jsonschema.validators import Draft202012Validator

from gpustack.render.component import HelmRelease
from gpustack.yamlio import dump
from tests.cluster.build import argocd_crd
from tests.flux import build as flux_build

# ../shared next to the clone, or where $GPUSTACK_SHARED says (a worktree elsewhere, a CI cache).
SHARED = Path(os.environ.get("GPUSTACK_SHARED") or Path(__file__).resolve().parents[3] / "shared")
CHARTS = SHARED / "reference" / "charts"
UPSTREAM_CRDS = SHARED / "reference" / "crds"
# Prometheus Operator's API as the charts check for it (their ServiceMonitor switches).
API_VERSIONS = ("monitoring.coreos.com/v1",)
PROBE = "gpustack-probe"


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def unavailable(reason: str) -> None:
    """Skip the tier for a developer; fail it in CI, where it must run."""
    if in_ci():
        pytest.fail(f"e2e tier cannot run in CI: {reason}", pytrace=False)
    pytest.skip(reason)


def find_helm() -> str:
    helm = os.environ.get("HELM") or shutil.which("helm")
    if not helm or not Path(helm).is_file():
        unavailable("no helm binary (set $HELM or put helm on PATH; .ci/run installs one)")
    return str(helm)


def charts_dir() -> Path:
    if not CHARTS.is_dir():
        unavailable(f"{CHARTS} not present (the packaged upstream charts)")
    return CHARTS


def chart_file(release: HelmRelease) -> Path:
    """The packaged chart of a release: ``<chart>-<version>.tgz`` (a Git tag's ``v`` dropped)."""
    for version in (release.version, release.version.removeprefix("v")):
        path = charts_dir() / f"{release.chart}-{version}.tgz"
        if path.is_file():
            return path
    raise AssertionError(f"no packaged chart for {release.chart} {release.version} in {CHARTS}")


class _Loader(yaml.CSafeLoader):  # type: ignore[misc]
    """PyYAML's safe loader plus YAML 1.1's ``=`` (value key) tag, which charts' text contains."""


_Loader.add_constructor("tag:yaml.org,2002:value", lambda loader, node: loader.construct_scalar(node))


def objects(text: str) -> list[dict[str, Any]]:
    return [doc for doc in yaml.load_all(text, Loader=_Loader) if doc]


@dataclass(frozen=True)
class Helm:
    binary: str
    minor: int

    def template(self, release: HelmRelease, values: Mapping[str, Any], folder: Path, *, crds: bool = False) -> str:
        """``helm template`` of the release with ``values``; raises ``TemplateError`` when helm fails."""
        handle, name = tempfile.mkstemp(suffix=".values.yaml", dir=folder)
        values_file = Path(name)
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(dump(dict(values)))
        command = [
            self.binary, "template", release.name, str(chart_file(release)), "-n", release.namespace,
            "-f", str(values_file), "--kube-version", f"1.{self.minor}.0",
            *(f"--api-versions={api}" for api in API_VERSIONS),
        ]
        if crds:
            command.append("--include-crds")
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        values_file.unlink()
        if done.returncode:
            raise TemplateError(done.stderr.strip())
        return done.stdout


class TemplateError(Exception):
    """``helm template`` failed (the message is helm's)."""


# --- CRD schemas ------------------------------------------------------------------------------


def structural(schema: Any) -> Any:
    """A CRD's openAPIV3Schema as JSON Schema where a field the API server would prune is an error.

    The API server drops fields a structural schema does not declare (unless
    ``x-kubernetes-preserve-unknown-fields``), silently: ``additionalProperties: false`` makes
    them errors. ``nullable`` becomes a null type.
    """
    if isinstance(schema, list):
        return [structural(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    result = {key: structural(value) for key, value in schema.items()}
    if result.get("nullable") and isinstance(result.get("type"), str):
        result["type"] = [result["type"], "null"]
    if (
        "properties" in result
        and "additionalProperties" not in result
        and not result.get("x-kubernetes-preserve-unknown-fields")
    ):
        result["additionalProperties"] = False
    return result


class CrdSchemas:
    """(apiVersion, kind) → validator, from CustomResourceDefinition objects."""

    def __init__(self) -> None:
        self._schemas: dict[tuple[str, str], Draft202012Validator] = {}

    def add(self, docs: Iterable[Mapping[str, Any]]) -> None:
        for doc in docs:
            if doc.get("kind") != "CustomResourceDefinition":
                continue
            group, kind = doc["spec"]["group"], doc["spec"]["names"]["kind"]
            for version in doc["spec"]["versions"]:
                schema = structural(version["schema"]["openAPIV3Schema"])
                # apiVersion, kind and metadata (ObjectMeta) are the API server's, whatever the CRD says.
                schema.setdefault("properties", {}).update(
                    apiVersion={"type": "string"}, kind={"type": "string"}, metadata={"type": "object"}
                )
                self._schemas[(f"{group}/{version['name']}", kind)] = Draft202012Validator(schema)

    def add_upstream(self) -> None:
        """The reference CRDs (Argo CD, K3s, Prometheus Operator) and Flux's, from its controllers'
        modules where Go can fetch them (tests/flux/build.py)."""
        if UPSTREAM_CRDS.is_dir():
            for path in sorted(UPSTREAM_CRDS.glob("*.yaml")):
                self.add(objects(path.read_text(encoding="utf-8")))
        if flux_build.available():
            self.add(flux_build.crds())
        self.add(objects(argocd_crd()))

    def knows(self, obj: Mapping[str, Any]) -> bool:
        return (obj["apiVersion"], obj["kind"]) in self._schemas

    def problems(self, obj: Mapping[str, Any]) -> list[str]:
        validator = self._schemas[(obj["apiVersion"], obj["kind"])]
        return [
            f"{'.'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}"
            for e in validator.iter_errors(dict(obj))
        ]


# --- perturbations ----------------------------------------------------------------------------

Path_ = tuple[str | int, ...]


def leaves(values: Any, prefix: Path_ = ()) -> Iterator[tuple[Path_, Any]]:
    """Every leaf of a values tree; an empty map or list counts as a leaf."""
    if isinstance(values, Mapping) and values:
        for key, value in values.items():
            yield from leaves(value, (*prefix, key))
    elif isinstance(values, list) and values:
        for index, value in enumerate(values):
            yield from leaves(value, (*prefix, index))
    else:
        yield prefix, values


def perturbed(value: Any) -> Any:
    """Another value of the same type (so that a chart's values schema still accepts it)."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value + 1
    if isinstance(value, str):
        return f"{value}\n# {PROBE}\n" if "\n" in value else f"{value}-x"
    if isinstance(value, Mapping):
        return {PROBE: "x"}
    if isinstance(value, list):
        return [PROBE]
    return PROBE


def with_leaf(values: Mapping[str, Any], path: Path_, value: Any) -> dict[str, Any]:
    result = copy.deepcopy(dict(values))
    node: Any = result
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = value
    return result


def volatile_lines(first: str, second: str) -> frozenset[int]:
    """Lines that differ between two renders of the same values (random passwords, certificates)."""
    a, b = first.splitlines(), second.splitlines()
    assert len(a) == len(b), "two renders of the same values differ in length"
    return frozenset(i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y)


def changed(baseline: str, volatile: frozenset[int], other: str) -> bool:
    a, b = baseline.splitlines(), other.splitlines()
    if len(a) != len(b):
        return True
    return any(x != y for i, (x, y) in enumerate(zip(a, b, strict=True)) if i not in volatile)
