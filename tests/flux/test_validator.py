"""Every rendered Flux object decoded strictly into Flux's own API types (source-controller,
helm-controller and kustomize-controller API modules) and checked with what they offer."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.cluster.build import find_go
from tests.cluster.support import unavailable
from tests.flux import build
from tests.flux.support import EXAMPLES, FLUX_EXAMPLES, documents, flux_files, flux_variant

pytestmark = pytest.mark.flux
FLUX_GROUPS = ("source.toolkit.fluxcd.io/", "helm.toolkit.fluxcd.io/", "kustomize.toolkit.fluxcd.io/")


@pytest.fixture(scope="module")
def validator() -> Path:
    if find_go() is None and not build.cache_root().is_dir():
        unavailable("Go is not installed: the Flux tier builds its validator from Flux's API modules")
    return build.validator()


def validate(validator: Path, files: list[Path]) -> tuple[int, str]:
    done = subprocess.run([str(validator), *map(str, files)], capture_output=True, text=True, check=False)
    return done.returncode, done.stdout + done.stderr


def flux_object_count(files: list[Path]) -> int:
    return sum(1 for path in files for doc in documents(path) if doc["apiVersion"].startswith(FLUX_GROUPS))


def test_some_example_is_delivered_by_flux():
    assert FLUX_EXAMPLES, "no example enables gitops.flux"


@pytest.mark.parametrize("example", FLUX_EXAMPLES, ids=[p.stem for p in FLUX_EXAMPLES])
def test_committed_flux_objects_decode_into_fluxs_types(validator, example):
    files = flux_files(example.parents[1] / "output" / example.stem)
    code, out = validate(validator, files)
    assert code == 0, out
    assert json.loads(out) == {"checked": flux_object_count(files)}


@pytest.mark.parametrize("example", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_every_example_delivered_by_flux_at_its_defaults_decodes(validator, example, tmp_path):
    files = flux_files(flux_variant(example, tmp_path))
    code, out = validate(validator, files)
    assert code == 0, out
    assert json.loads(out)["checked"] == flux_object_count(files) > 0


def test_an_unknown_field_is_refused(validator, tmp_path):
    path = tmp_path / "release.yaml"
    path.write_text(
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: x, namespace: flux-system}\n"
        "spec:\n  interval: 10m\n  chartRef: {kind: OCIRepository, name: x}\n  install: {crd: Create}\n"
    )
    code, out = validate(validator, [path])
    assert code == 1
    assert 'unknown field "crd"' in out


def test_a_release_with_chart_and_chart_ref_is_refused(validator, tmp_path):
    path = tmp_path / "release.yaml"
    path.write_text(
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: x, namespace: flux-system}\n"
        "spec:\n  interval: 10m\n  chartRef: {kind: OCIRepository, name: x}\n"
        "  chart: {spec: {chart: x, sourceRef: {kind: HelmRepository, name: x}}}\n"
    )
    code, out = validate(validator, [path])
    assert code == 1
    assert "exactly one of spec.chart and spec.chartRef" in out
