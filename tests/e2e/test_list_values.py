"""GS051 against the real charts: a map where the chart's values.yaml default is a list renders a
workload whose field is not the list Kubernetes wants, or whose list lacks what the map said
(dcgm-exporter's env: the map's entries land beside ``env`` as unknown container fields), while
the list renders right; gpustack reports the map."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from real_charts import charts_dir, find_helm, objects

from gpustack.lint.engine import lint
from gpustack.lint.input.load import load_text
from gpustack.lint.policy.config import Config

# chart package, the values key, a map given there, the field of the rendered DaemonSet's pod
CASES = [
    ("dcgm-exporter-4.8.2.tgz", "extraEnv", {"NVIDIA_VISIBLE_DEVICES": "all"}, ("containers", 0, "env")),
    ("nvidia-device-plugin-0.17.4.tgz", "tolerations", {"key": "nvidia.com/gpu", "operator": "Exists"}, ("tolerations",)),
]


def _render(helm: str, package: Path, values: dict[str, Any], tmp_path: Path) -> str:
    import subprocess

    values_file = tmp_path / "values.yaml"
    values_file.write_text(yaml.safe_dump(values), "utf-8")
    done = subprocess.run(
        [helm, "template", "gpu", str(package), "-n", "gpu", "-f", str(values_file)],
        capture_output=True, text=True, check=True,
    )
    return done.stdout


def _field(text: str, path: tuple[Any, ...]) -> Any:
    [daemonset] = [o for o in objects(text) if o["kind"] == "DaemonSet"][:1]
    node = daemonset["spec"]["template"]["spec"]
    for step in path:
        node = node[step]
    return node


@pytest.mark.parametrize(("package", "key", "mapping", "field"), CASES, ids=[case[1] for case in CASES])
def test_a_map_renders_no_list_and_gpustack_says_so(
    package: str, key: str, mapping: dict[str, Any], field: tuple[Any, ...], tmp_path: Path
) -> None:
    helm, chart = find_helm(), charts_dir() / package
    as_list = [{"name": name, "value": value} for name, value in mapping.items()] if key == "extraEnv" else [mapping]
    rendered = _field(_render(helm, chart, {key: as_list}, tmp_path), field)
    assert isinstance(rendered, list) and all(item in rendered for item in as_list)
    rendered = _field(_render(helm, chart, {key: mapping}, tmp_path), field)
    assert not isinstance(rendered, list) or not any(item in rendered for item in as_list)

    name, version = package.removesuffix(".tgz").rsplit("-", 1)
    release = (
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: x, namespace: gpu}\n"
        f"spec:\n  chart: {{spec: {{chart: {name}, version: {version}, sourceRef: {{kind: HelmRepository, name: r}}}}}}\n"
        f"  values:\n    {yaml.safe_dump({key: mapping}, default_flow_style=True).strip()}\n"
    )
    report = lint(load_text("hr.yaml", release), Config())
    assert [f.rule for f in report.findings if f.rule == "GS051"] == ["GS051"]
