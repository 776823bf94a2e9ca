"""kustomize overlays are built before rules run (the built-in builder, no binary): rules judge
what an overlay deploys, findings point where the user acts (the patch that set or removed a
field, else the base), a base several overlays change is reported once, ``--fix`` never edits
a field a patch wrote, and without the binary no process is started.

Fixtures: tests/lint/fixtures/kustomize/ (each overlay's kustomization.yaml says what it does;
tests/lint/test_kustomize_binary.py proves ``kustomize build`` gives the same objects)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from gpustack.lint.engine import lint
from gpustack.lint.input import kustomizebin
from gpustack.lint.input.overlaid import overlaid
from gpustack.lint.policy.config import Config
from gpustack.lint.policy.selection import Choice, Selection

from lint_support import load_paths

FIXTURES = Path(__file__).parent / "fixtures" / "kustomize"


@pytest.fixture(autouse=True)
def no_binary(monkeypatch: pytest.MonkeyPatch) -> None:
    """The built-in builder: no kustomize on PATH, and no process may start."""
    monkeypatch.delenv("KUSTOMIZE", raising=False)
    monkeypatch.setattr(shutil, "which", lambda name, *args, **kwargs: None)
    kustomizebin.binary.cache_clear()

    def refused(*args: Any, **kwargs: Any) -> None:
        raise AssertionError(f"a process was started: {args}")

    monkeypatch.setattr(subprocess, "run", refused)
    yield
    kustomizebin.binary.cache_clear()


def findings(
    *folders: str, distribution: str = "k3s", turn_on: frozenset[str] = frozenset()
) -> list[tuple[str, int, int, str, str]]:
    """Findings of a default run, with the opt-in rules ``turn_on`` selected besides."""
    loaded = load_paths([str(FIXTURES / folder) for folder in folders], jobs=1)
    report = lint(loaded, Config(distribution=distribution, selection=Selection((Choice(on=turn_on),))), jobs=1)
    return [(str(Path(f.file).relative_to(FIXTURES)), f.line, f.column, f.rule, f.message) for f in report.findings]


def rules(found: list[tuple[str, int, int, str, str]]) -> list[str]:
    return [rule for _, _, _, rule, _ in found]


def test_a_runtime_class_and_gpu_an_overlay_adds_are_what_the_rules_judge() -> None:
    alone = findings("bare", turn_on=frozenset({"GS023"}))  # GS023 is opt-in
    overlaid_ = findings("bare", "adds", turn_on=frozenset({"GS023"}))
    assert "GS023" not in rules(alone)  # the base asks for no GPU
    assert ("bare/deployment.yaml", 13, 11, "GS023") in [f[:4] for f in overlaid_]  # the JSON 6902 GPU limit
    assert "GS004" not in rules(overlaid_)  # the strategic merge patch's runtimeClassName


def test_a_patch_that_removes_the_runtime_class_is_where_the_finding_points() -> None:
    by_merge = [f for f in findings("base", "removes") if f[3] == "GS004"]
    by_json = [f for f in findings("base", "json6902") if f[3] == "GS004"]
    assert [f[:3] for f in by_merge] == [("removes/no-runtime.yaml", 8, 7)]  # runtimeClassName: null
    assert [f[:3] for f in by_json] == [("json6902/kustomization.yaml", 17, 9)]  # - op: remove
    assert "GS004" not in rules(findings("base"))


def test_an_image_tag_from_images_is_judged_at_the_images_entry() -> None:
    found = findings("plugin")
    assert [f[:4] for f in found if f[3] == "GS022"] == [("plugin/floating/kustomization.yaml", 5, 5, "GS022")]
    assert "latest" in next(f[4] for f in found if f[3] == "GS022")


def test_a_base_two_overlays_change_is_reported_once_at_the_base() -> None:
    found = findings("plugin")  # floating and pinned both change the DaemonSet's image
    assert [f[:4] for f in found if f[3] == "GS004"] == [("plugin/base/daemonset.yaml", 11, 5, "GS004")]


def test_transformers_reach_the_findings_object() -> None:
    report = lint(load_paths([str(FIXTURES / "base"), str(FIXTURES / "transformers")], jobs=1),
                  Config(distribution="k3s"), jobs=1)
    objects = {str(finding.object) for finding in report.findings}
    assert objects == {"Deployment ml/prod-infer"}


def test_built_objects_replace_their_base_and_patch_files_are_no_objects() -> None:
    loaded = load_paths([str(FIXTURES / "base"), str(FIXTURES / "smp")], jobs=1)
    overlay = overlaid(loaded.resources, loaded.texts)
    files = sorted(Path(resource.file).name for resource in overlay.replaced)
    assert files == ["deployment.yaml", "gpu.yaml"]  # the base Deployment, the patch file
    (deployment,) = [resource for resource in overlay.built if resource.kind == "Deployment"]
    pod = deployment.data["spec"]["template"]["spec"]
    assert [container["name"] for container in pod["containers"]] == ["server", "warmup"]
    assert pod["containers"][0]["resources"]["limits"] == {"nvidia.com/gpu": 2}
    assert [env["name"] for env in pod["containers"][0]["env"]] == ["C", "A"]
    source, path = deployment.place(("spec", "template", "spec", "containers", 0, "resources", "limits", "nvidia.com/gpu"))
    assert (Path(source.file).name, source.locate(path)) == ("gpu.yaml", (16, 22))
    source, path = deployment.place(("spec", "template", "spec", "containers", 0, "image"))
    assert (Path(source.file).name, source.locate(path)) == ("deployment.yaml", (19, 11))


def test_fix_on_a_built_object_edits_its_base(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Both overlays change the device plugin's image; the runtime class GS004 adds goes into
    the base they share, and no kustomization or patch is touched."""
    from lint_support import gpustack

    copy = tmp_path / "plugin"
    shutil.copytree(FIXTURES / "plugin", copy)
    before = {path: path.read_text() for path in copy.rglob("kustomization.yaml")}
    code, _, err = gpustack(capsys, "lint", "--no-cache", "--distribution", "k3s", "--fix", str(copy))
    assert "fixed 1 finding" in err or "1 finding" in err, err
    assert "      runtimeClassName: nvidia\n" in (copy / "base" / "daemonset.yaml").read_text()
    assert {path: path.read_text() for path in before} == before


def test_no_fix_where_a_patch_removed_the_field() -> None:
    """The finding is in the patch and carries no edits: the base already has the field."""
    removed = lint(load_paths([str(FIXTURES / "base"), str(FIXTURES / "removes")], jobs=1),
                   Config(distribution="k3s"), jobs=1)
    (finding,) = [finding for finding in removed.findings if finding.rule == "GS004"]
    assert finding.file.endswith("no-runtime.yaml") and not finding.fixable and not finding.edits


def test_a_remote_resource_is_a_note(tmp_path: Path) -> None:
    (tmp_path / "kustomization.yaml").write_text(
        "resources:\n  - https://github.com/example/repo//deploy?ref=v1\n  - pod.yaml\nnamespace: gpu\n"
    )
    (tmp_path / "pod.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, image: x:1}]\n")
    report = lint(load_paths([str(tmp_path)], jobs=1), Config(), jobs=1)
    assert any("is remote: built without it" in note.message for note in report.notes)


def test_json_output_names_the_patch_file(capsys: pytest.CaptureFixture[str]) -> None:
    from lint_support import json_report

    out = json.loads(json_report(capsys, "--no-cache", "--distribution", "k3s", str(FIXTURES / "base"), str(FIXTURES / "removes")))
    files = {Path(finding["file"]).name for finding in out["findings"] if finding["rule"] == "GS004"}
    assert files == {"no-runtime.yaml"}


ODD_KUSTOMIZATIONS = [
    "resources: {a: b}\npatches: nope\n",
    "resources: [deployment.yaml]\npatches:\n  - 7\n  - {path: 3}\n  - {patch: '[unclosed'}\n  - {target: {name: '(['}, patch: '- {op: add, path: /x, value: 1}'}\n",
    "resources: [deployment.yaml]\npatches:\n  - target: {kind: Deployment}\n    patch: |-\n      - {op: remove, path: /spec/nothing/here}\n      - {op: move, from: /nowhere, path: /x}\n      - {op: bogus, path: /spec}\n      - just text\n",
    "resources: [deployment.yaml, ., ../.., 'git@github.com:a/b.git']\nimages: [1, {name: 2}, {name: nvcr.io/x, newTag: null}]\nreplicas: [{name: d}, 5]\n",
    "resources: [deployment.yaml]\nnamespace: 5\ncommonLabels: [a]\nlabels: [3, {pairs: 4}]\nnamePrefix: {a: 1}\npatchesStrategicMerge: [5, 'kind: Deployment\\nmetadata: {name: d}\\nspec: {$patch: delete}']\n",
    "resources: [deployment.yaml]\npatchesJson6902:\n  - {target: {kind: Deployment, name: d}, patch: '- {op: replace, path: /spec/replicas, value: [1, {a: null}]}'}\n",
]


@pytest.mark.parametrize("kustomization", ODD_KUSTOMIZATIONS)
def test_odd_kustomizations_cost_no_run(tmp_path: Path, kustomization: str) -> None:
    (tmp_path / "kustomization.yaml").write_text(kustomization)
    (tmp_path / "deployment.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  replicas: 1\n  template:\n    spec:\n"
        "      containers: [{name: c, image: 'x:1', resources: {limits: {nvidia.com/gpu: 1}}}]\n"
    )
    report = lint(load_paths([str(tmp_path)], jobs=1), Config(distribution="k3s"), jobs=1)
    assert not [note for note in report.notes if "internal error" in note.message]
    assert not [error for error in report.errors if "internal error" in error.message]


def test_an_object_a_patch_deletes_is_not_linted(tmp_path: Path) -> None:
    shutil.copytree(FIXTURES / "base", tmp_path / "base")
    (tmp_path / "overlay").mkdir()
    (tmp_path / "overlay" / "kustomization.yaml").write_text(
        "resources: [../base]\npatches:\n  - patch: |-\n      apiVersion: apps/v1\n      kind: Deployment\n"
        "      metadata: {name: infer}\n      $patch: delete\n"
    )
    report = lint(load_paths([str(tmp_path)], jobs=1), Config(distribution="k3s"), jobs=1)
    assert not [finding for finding in report.findings if finding.object and finding.object.kind == "Deployment"]


def built_data(*folders: str) -> dict[tuple[str, str], dict[str, Any]]:
    loaded = load_paths([str(FIXTURES / folder) for folder in folders], jobs=1)
    return {(r.kind or "", r.ref.name or ""): dict(r.data) for r in overlaid(loaded.resources, loaded.texts).built}


def test_strategic_merge_replaces_lists_of_custom_resources_and_honours_directives() -> None:
    policy = built_data("crd")[("ClusterPolicy", "cluster-policy")]["spec"]
    assert policy["devicePlugin"]["env"] == [{"name": "MIG_STRATEGY", "value": "mixed"}]  # replaced, not merged
    assert policy["driver"] == {"enabled": False}
    legacy = built_data("base", "legacy")
    assert legacy[("Service", "infer")]["spec"]["selector"] == {"app.kubernetes.io/name": "infer"}  # $patch: replace
    pod = legacy[("Deployment", "infer")]["spec"]["template"]["spec"]
    assert "runtimeClassName" not in pod and pod["containers"][0]["resources"] == {"limits": {"memory": "64Gi"}}


def test_json6902_operations_apply_in_order() -> None:
    built = built_data("base", "json6902")
    pod = built[("Deployment", "infer")]["spec"]["template"]["spec"]
    assert pod["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == 4
    assert pod["containers"][0]["args"] == ["--tensor-parallel-size", "4"]
    assert pod["tolerations"][-1] == {"key": "nvidia.com/gpu", "operator": "Exists"}
    assert pod["containers"][1]["resources"] == {"limits": {"nvidia.com/gpu": 1}}
    assert built[("Service", "infer")]["spec"]["ports"][0]["port"] == 8080


def test_a_comment_in_the_patch_suppresses_the_finding_there(tmp_path: Path) -> None:
    shutil.copytree(FIXTURES / "base", tmp_path / "base")
    shutil.copytree(FIXTURES / "removes", tmp_path / "removes")
    patch = tmp_path / "removes" / "no-runtime.yaml"
    patch.write_text(patch.read_text().replace(
        "      runtimeClassName: null", "      # gpustack:ignore GS004: the nodes' default runtime is nvidia\n      runtimeClassName: null"))
    report = lint(load_paths([str(tmp_path)], jobs=1), Config(distribution="k3s"), jobs=1)
    assert not [finding for finding in report.findings if finding.rule == "GS004"]
    assert [item.finding.file for item in report.suppressed if item.finding.rule == "GS004"] == [str(patch)]
