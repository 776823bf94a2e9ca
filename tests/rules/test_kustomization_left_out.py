"""A file that the kustomization.yaml beside it does not list is not deployed: set rules do
not pair it (a device plugin kept in a folder with ``resources: []``, its entries commented
out, as in a home-lab repository that moved to the GPU Operator)."""

from __future__ import annotations

from gpustack.lint.engine import lint
from gpustack.lint.input.load import LoadResult, load_text
from gpustack.lint.policy.config import Config

OPERATOR = """\
apiVersion: helm.cattle.io/v1
kind: HelmChart
metadata: {name: gpu-operator, namespace: kube-system}
spec: {chart: gpu-operator, targetNamespace: gpu-operator}
"""
PLUGIN = """\
apiVersion: helm.cattle.io/v1
kind: HelmChart
metadata: {name: nvidia-device-plugin, namespace: kube-system}
spec: {chart: nvidia-device-plugin, targetNamespace: kube-system}
"""


def gs009_folders(plugin_kustomization: str) -> set[str]:
    files = [
        ("apps/gpu-operator/helmchart.yaml", OPERATOR),
        ("apps/gpu-operator/kustomization.yaml", "resources:\n  - ./helmchart.yaml\n"),
        ("apps/device-plugin/helmchart.yaml", PLUGIN),
        ("apps/device-plugin/kustomization.yaml", plugin_kustomization),
    ]
    report = lint(LoadResult.merge(load_text(name, text) for name, text in files), Config())
    return {f.file.split("/")[1] for f in report.findings if f.rule == "GS009"}


def test_a_plugin_its_kustomization_leaves_out_is_no_second_provider() -> None:
    assert gs009_folders("resources: []\n#  - ./helmchart.yaml\n") == set()


def test_a_plugin_its_kustomization_lists_is() -> None:
    # the pair once, on the file that sorts first (apps/device-plugin)
    assert gs009_folders("resources:\n  - helmchart.yaml\n") == {"device-plugin"}
    assert gs009_folders("resources: [../shared]\npatches:\n  - path: ./helmchart.yaml\n") == {"device-plugin"}


PRIVILEGED_GPU_POD = """\
apiVersion: v1
kind: Pod
metadata: {name: comfyui, namespace: home}
spec:
  containers: [{name: app, image: 'comfyui:1.0', securityContext: {privileged: true}, resources: {limits: {nvidia.com/mig-1g.10gb: 1}}}]
"""


def test_a_file_its_kustomization_leaves_out_gets_a_note_and_info_findings() -> None:
    """A backup copy kept beside the live file, which the kustomization does not list, is not
    deployed: its pitfalls are not the cluster's, only what applying it by hand would do. One
    note names it and its findings are info, without autofix; the live file is linted as it is."""
    files = [
        ("apps/comfyui/pod.yaml", PRIVILEGED_GPU_POD),
        ("apps/comfyui/bak.pod.yaml", PRIVILEGED_GPU_POD),
        ("apps/comfyui/kustomization.yaml", "resources:\n  - pod.yaml\n"),
    ]
    report = lint(LoadResult.merge(load_text(name, text) for name, text in files), Config())
    found = {f.file: f for f in report.findings if f.rule == "GS002"}
    assert str(found["apps/comfyui/pod.yaml"].severity) != "info"
    copy = found["apps/comfyui/bak.pod.yaml"]
    assert (str(copy.severity), copy.fixable, copy.edits) == ("info", False, ())
    assert copy.message.endswith("(the file is not deployed: apps/comfyui/kustomization.yaml does not list it)")
    [note] = [n for n in report.notes if n.file == "apps/comfyui/bak.pod.yaml"]
    assert note.message.startswith("not linted as deployed: apps/comfyui/kustomization.yaml does not list it")


def test_a_kustomization_under_another_file_name_governs_no_folder() -> None:
    """kustomize reads a folder's kustomization.yaml (.yml, Kustomization) only: a Kustomization
    object in a file of another name (a flattened copy of a repository) leaves nothing out."""
    files = [
        ("flat/pod.yaml", PRIVILEGED_GPU_POD),
        ("flat/lab__kustomization.yaml", "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: []\n"),
    ]
    report = lint(LoadResult.merge(load_text(name, text) for name, text in files), Config())
    assert [f.file for f in report.findings if f.rule == "GS002"] == ["flat/pod.yaml"]
    assert not [n for n in report.notes if n.message.startswith("not linted as deployed")]


FLUX_KS = """\
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {{name: {name}, namespace: flux-system}}
spec:
  path: {path}
  sourceRef: {{kind: GitRepository, name: flux-system}}
"""


def _flux_repo(parent: str, path: str = "./kubernetes/apps/kube-system/{app}/app") -> list[tuple[str, str]]:
    """A Flux repository laid out as home-ops templates lay it out: the namespace folder's
    kustomization lists each app's ks.yaml, whose Flux Kustomization deploys the app folder."""
    files = [("kubernetes/apps/kube-system/kustomization.yaml", parent)]
    for app in ("comfyui", "comfyui-old"):
        files += [
            (f"kubernetes/apps/kube-system/{app}/ks.yaml", FLUX_KS.format(name=app, path=path.format(app=app))),
            (f"kubernetes/apps/kube-system/{app}/app/kustomization.yaml", "resources: [./pod.yaml]\n"),
            (f"kubernetes/apps/kube-system/{app}/app/pod.yaml", PRIVILEGED_GPU_POD),
        ]
    return files


def _linted_apps(files: list[tuple[str, str]]) -> tuple[set[str], set[str]]:
    report = lint(LoadResult.merge(load_text(name, text) for name, text in files), Config())
    found = {f.file.split("/")[3] for f in report.findings if f.rule == "GS002" and str(f.severity) != "info"}
    noted = {n.file.split("/")[3] for n in report.notes if n.file and n.message.startswith("not linted as deployed")}
    return found, noted


def test_an_app_whose_ks_yaml_its_parent_leaves_out_is_not_deployed_nor_what_it_points_at() -> None:
    """The parent lists one app's ks.yaml and has the other's commented out: the Flux
    Kustomization in that ks.yaml is never applied, so its app folder is never deployed."""
    found, noted = _linted_apps(_flux_repo("resources:\n  - ./comfyui/ks.yaml\n  # - ./comfyui-old/ks.yaml\n"))
    assert (found, noted) == ({"comfyui"}, {"comfyui-old"})


def test_apps_the_parent_lists_are_deployed_through_their_flux_kustomization() -> None:
    found, noted = _linted_apps(_flux_repo("resources: [./comfyui/ks.yaml, ./comfyui-old/ks.yaml]\n"))
    assert (found, noted) == ({"comfyui", "comfyui-old"}, set())


def test_a_path_with_flux_variables_matches_any_folder_name_there() -> None:
    """``${APP}`` is substituted by Flux (postBuild): the path may point at any app folder, so
    a listed ks.yaml still deploys its app."""
    files = _flux_repo("resources: [./comfyui/ks.yaml, ./comfyui-old/ks.yaml]\n", "./kubernetes/apps/kube-system/${{APP}}/app")
    found, noted = _linted_apps(files)
    assert (found, noted) == ({"comfyui", "comfyui-old"}, set())


def test_without_any_kustomization_nothing_is_taken_as_undeployed() -> None:
    files = [(name, text) for name, text in _flux_repo("") if not name.endswith("kustomization.yaml")]
    found, noted = _linted_apps(files)
    assert (found, noted) == ({"comfyui", "comfyui-old"}, set())
